// device/bitonic_sort/kernels.cuh — the kernels of the device bitonic sort
// (device/bitonic_sort.cuh launches them; detail/bitonic_plan.cuh says which
// stages each pass runs): sort_tiles (every tile sorted on chip), the merge
// passes (global, tile and fused: a merge's stages across runs of keys
// gathered into one block's registers), and the one-launch sort of up to 16
// tiles by one thread block cluster whose stages across blocks go through
// distributed shared memory (sm_90). Each kernel loads its tile, calls the
// tile engine (block/bitonic_tile.cuh) and stores it; every merge pass is a
// dependent launch of the one before.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../../block/bitonic_tile.cuh"
#include "../../detail/bitonic_plan.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "policy.cuh"

namespace tilesort::detail {

// ---------------------------------------------------------------- kernels
// WarpFirst: each warp's first merges by its shuffle network (one-block sorts
// of n <= 1024 keys; see bitonic_sort_policy).
template <typename Tile, typename Compare, bool WarpFirst = false>
__global__ void __launch_bounds__(Tile::threads, bitonic_min_blocks<Tile>)
    bitonic_sort_tiles_kernel(const typename Tile::key_type* keys_in, typename Tile::key_type* keys_out,
                              const typename Tile::value_type* values_in, typename Tile::value_type* values_out,
                              bitonic_plan plan, bitonic_pass pass, Compare comp) {
  allow_next_kernel();  // the first merge pass waits for this grid to finish
  extern __shared__ __align__(16) unsigned char bitonic_shared[];
  auto& storage = *reinterpret_cast<typename Tile::temp_storage*>(bitonic_shared);
  typename Tile::registers registers;
  const bitonic_device_threads<typename Tile::registers> ex{registers};
  const bitonic_block_map map = plan.block_map(pass, blockIdx.x);
  Tile::template sort_tile<WarpFirst>(ex, storage, keys_in, keys_out, values_in, values_out, map, comp);
}

// Strided: a merge_global pass (Flip: the merge's first); else merge_tiles.
// FusedRun = A > 0: a merge_fused pass, the tail of merge m and the head of
// merge m+1 on runs of 2^A keys (Flip, not Strided).
template <typename Policy, bool Flip, bool Strided, int FusedRun, typename Compare,
          typename Tile = std::conditional_t<Strided, typename Policy::strided_tile, typename Policy::tile>>
__global__ void __launch_bounds__(Tile::threads, bitonic_min_blocks<Tile>)
    bitonic_merge_kernel(typename Policy::key_type* keys, typename Policy::value_type* values, bitonic_plan plan,
                         bitonic_pass pass, Compare comp) {
  static_assert(FusedRun == 0 || (Flip && !Strided), "a fused pass starts the next merge with its flip, tile by tile");
  allow_next_kernel();
  wait_for_previous_kernel();  // keys are the previous pass's output
  extern __shared__ __align__(16) unsigned char bitonic_shared[];
  auto& storage = *reinterpret_cast<typename Tile::temp_storage*>(bitonic_shared);
  typename Tile::registers registers;
  const bitonic_device_threads<typename Tile::registers> ex{registers};
  const bitonic_block_map map = plan.block_map(pass, blockIdx.x);
  if constexpr (FusedRun > 0) {
    Tile::template fused_tile<FusedRun>(ex, storage, keys, values, map, comp);
  } else {
    Tile::template merge_tile<Flip, Strided>(ex, storage, keys, values, map, pass.stages, comp);
  }
}

// ---------------------------------------------------------------- clusters (sm_90)
// The one-launch sort of 2 .. 16 tiles: one thread block cluster, block r on
// the tile at r * 2^G. Each block sorts its tile (merges 1..G); each merge
// m = G+1 .. G+c (2^c blocks) runs its stages with bits G .. m-1 across
// blocks - they pair keys of two blocks: each block publishes its keys in
// shared memory and reads its partner's through distributed shared memory
// (bitonic_tile::cross_exchange) - and its stage bits G-1 .. 0 inside each
// block. Slots past n get the largest key of the input, which the flip form
// never moves (see bitonic_tile), so no stage needs a predicate. Each stage
// publishes into a buffer of its own, two in turn: one cluster barrier per
// stage.
template <typename Tile>
struct bitonic_cluster_storage {
  typename Tile::temp_storage local;         // the block's own layout exchanges
  typename Tile::temp_storage published[2];  // keys for the partner block, stage by stage in turn
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Slots >= valid := the largest key of the input (blocks [0, filled) hold keys).
template <typename Tile, typename Exec, typename Compare>
__device__ void bitonic_cluster_pad(const Exec& ex, const cooperative_groups::cluster_group& cluster,
                                    typename Tile::temp_storage& local, int valid, int filled, Compare comp) {
  using Key = typename Tile::key_type;
  if (valid > 0) Tile::template max_to_slot0<0, 0>(ex, local, valid, comp);
  cluster.sync();
  Key largest = cluster.map_shared_rank(&local, 0)->keys[0];
  for (int r = 1; r < filled; ++r) {
    const Key other = cluster.map_shared_rank(&local, r)->keys[0];
    if (comp(largest, other)) largest = other;
  }
  cluster.sync();  // every block has read the others' slot 0
  if (threadIdx.x == 0) local.keys[0] = largest;
  ex.barrier();
  ex.each(typename Tile::template fill_padding<0, 0>{&local, valid});
  ex.barrier();
}

// Stages (m, m-1) .. (m, G) across the cluster's blocks, the first one merge
// m's flip; keys in registers in the striped layout.
template <typename Tile, typename Exec, typename Compare>
__device__ void bitonic_cluster_stages(const Exec& ex, const cooperative_groups::cluster_group& cluster,
                                       bitonic_cluster_storage<Tile>& shared, int& stage, int rank, int m,
                                       Compare comp) {
  constexpr int G = Tile::tile_log;
  for (int p = m - 1; p >= G; --p, ++stage) {
    typename Tile::temp_storage& out = shared.published[stage & 1];
    ex.each(typename Tile::template store_shared<Tile::striped_window, 0>{&out});
    cluster.sync();  // the partner's keys are published (and nobody still reads this buffer's previous keys)
    const bool flip = p == m - 1;
    const int partner = flip ? rank ^ ((1 << (m - G)) - 1) : rank ^ (1 << (p - G));
    ex.each(typename Tile::template cross_exchange<Compare>{cluster.map_shared_rank(&out, partner), flip,
                                                            rank < partner, comp});
  }
}
#endif

// The grid is one cluster of 2, 4, 8 or 16 blocks.
template <typename Tile, typename Compare>
__global__ void __launch_bounds__(Tile::threads)
    bitonic_cluster_sort_kernel(const typename Tile::key_type* keys_in, typename Tile::key_type* keys_out,
                                const typename Tile::value_type* values_in, typename Tile::value_type* values_out,
                                std::int64_t n, Compare comp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int blocks = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  extern __shared__ __align__(16) unsigned char bitonic_shared[];
  auto& shared = *reinterpret_cast<bitonic_cluster_storage<Tile>*>(bitonic_shared);
  typename Tile::registers registers;
  const bitonic_device_threads<typename Tile::registers> ex{registers};
  constexpr int tile = Tile::tile_items;
  const std::int64_t base = std::int64_t(rank) * tile;
  const int valid = static_cast<int>(n - base <= 0 ? 0 : n - base < tile ? n - base : tile);
  if (valid > 0) {
    ex.each(typename Tile::load_striped{keys_in + base, Tile::has_values ? values_in + base : nullptr, &shared.local,
                                        valid});
    ex.barrier();
    ex.each(typename Tile::template load_shared<0, 0>{&shared.local});
  }
  if (n < std::int64_t(blocks) * tile)  // the same answer in every block
    bitonic_cluster_pad<Tile>(ex, cluster, shared.local, valid, static_cast<int>((n + tile - 1) / tile), comp);
  // Merges 1 .. ceil(log2(valid)) sort the block: the slots above hold only
  // padding, equal keys no merge moves. (Also faster than all G merges for
  // full blocks, from the code generated for the shorter loop.)
  Tile::sort(ex, shared.local, valid, valid > 1 ? ceil_log2(valid) : 0, comp);
  int stage = 0;
  for (int m = Tile::tile_log + 1; m <= Tile::tile_log + log2_floor(blocks); ++m) {
    Tile::template exchange<0, 0, Tile::striped_window, 0>(ex, shared.local);
    bitonic_cluster_stages<Tile>(ex, cluster, shared, stage, rank, m, comp);
    Tile::merge_registers(ex, shared.local, valid, comp);
  }
  ex.barrier();
  ex.each(typename Tile::template store_shared<0, 0>{&shared.local});
  ex.barrier();
  if (valid > 0)
    ex.each(typename Tile::store_striped{keys_out + base, Tile::has_values ? values_out + base : nullptr,
                                         &shared.local, valid});
  cluster.sync();  // no block exits while a partner may still read its published keys
#endif
}

}  // namespace tilesort::detail
