// device/bitonic_sort.cuh — Batcher's bitonic sort of a whole device array.
// Not stable; any comparator (ascending or descending through it); any n.
//
// Cost: n log2(P) (log2(P) + 1) / 4 comparisons for P = next_pow2(n), none of
// them on the virtual padding past n (the flip form of the network skips
// them; detail/bitonic_plan.cuh). Passes over global memory, for tiles of
// 2^G keys per block (G = 14 for 4-byte keys, 13 for 8-byte keys or 4+4-byte
// pairs):
//   * n <= 2^G: ONE launch, all stages on chip (registers + shared memory);
//     on sm_90, 4096 < n <= 16 * 4096 (u32): ONE launch of one thread block
//     cluster of up to 16 blocks, whose stages across blocks go through
//     distributed shared memory (more SMs on a small sort: lower latency);
//   * else: one sort_tiles launch, then passes that each run as many
//     consecutive stages as 2^G keys gathered in runs of consecutive keys
//     allow (detail/bitonic_plan.cuh): global passes of up to G - 5 stages
//     across runs of 32 keys, tile passes, and fused passes that finish one
//     merge inside runs of 2^A keys and start the next across them. 2^20 /
//     2^24 / 2^28 u32 keys: 10 / 18 / 27 launches (13 / 22 / 34 without fused
//     passes); detail::bitonic_plan::pass_count() has the count for any n.
// Works in place in keys_out (the first launch reads keys_in and writes
// keys_out, so out-of-place costs nothing extra); needs no scratch memory.
//
// Temp storage: bitonic sort needs none, but a size query still reports one
// byte (detail::min_temp_bytes, never read or written) so that the query
// (d_temp == nullptr) and the run stay two different calls; the run then
// needs a non-null d_temp with temp_bytes >= 1.
//
//   std::size_t bytes = 0;
//   tilesort::bitonic_sort_keys(nullptr, bytes, d_in, d_out, n);      // bytes = 1
//   cudaMalloc(&d_temp, bytes);
//   tilesort::bitonic_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::greater{}, stream);
//   tilesort::bitonic_sort_pairs(d_keys, d_keys, d_vals, d_vals, n);  // in place, allocates itself
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../block/bitonic_tile.cuh"
#include "../comparators.cuh"
#include "../detail/bitonic_plan.cuh"
#include "../detail/config.cuh"
#include "../detail/launch.cuh"
#include "../detail/error.cuh"
#include "../detail/temp_storage.cuh"
#include "../thread/thread_sort.cuh"

namespace tilesort {
namespace detail {

// Tuning, in one place. Chosen for sm_90 (228 KB shared memory, 64K
// registers per SM) from the resource budget and -Xptxas -v (no spills with
// tilesort::less/greater), and checked on an H100 against CUB; the
// measurements and what was tried are in docs/tuning/bitonic_sort.md.
//   * Tile 2^G keys: 512 threads, each with 128 bytes of keys (+ values) in
//     registers: 32 u32 keys (G = 14, 66 KB of shared memory with the bank
//     padding), 16 u64 keys or u32 pairs (G = 13); see bitonic_sort_policy_for
//     for narrow keys and user structs. Two blocks per SM (<= 64 registers per
//     thread): one block's loads overlap the other's compute.
//   * Register-fusion depth R = log2(keys per thread): stages run R at a time
//     between two trips through shared memory (5 for u32 keys).
//   * Global passes fuse H = G - L stages, reading runs of 2^L consecutive
//     keys: runs of at least 128 bytes (64-byte runs were slower), so L = 5
//     (H = 9 for u32 keys, 8 for u32 pairs) and L = 4 for 8-byte keys (H =
//     9). A block of the same tile, reshaped to 1024 threads x half the keys
//     (the 32-key flip pass sits at the 64-register edge and spills), runs
//     them in registers alone when there are at most log2(keys per thread).
//   * Fused passes (runs of 2^6, 2^8, 2^11 keys; detail::bitonic_fused_runs)
//     save launches and passes over DRAM at every size but 2^20, where a
//     pass costs one block's latency.
//   * n <= 1024, 4096, 8192: one block of 128 x 8, 256 x 16 or 512 x 16
//     keys (more threads holding keys: 2-3x less latency than the big tile).
//     n <= 1024: each warp first sorts its 256 keys with its shuffle network
//     (small_warp_first). On sm_90, 4096 < n <= 16 x 4096: one cluster of up
//     to 16 blocks of 256 x 16, each sorting only the merges its keys need
//     (ceil(log2(valid))). Other cluster shapes, and clusters for the passes
//     of large n, were slower.
template <typename Key, typename Value, int Threads, int Items, int RunLog = bitonic_run_log>
struct bitonic_policy {
  using key_type = Key;
  using value_type = Value;
  static constexpr int run_log = RunLog;
  static constexpr int strided_items = Items / 2 >= 2 ? Items / 2 : 2;
  using tile = bitonic_tile<Key, Value, Threads, Items, RunLog>;  // sort_tiles, merge_tiles
  using strided_tile = bitonic_tile<Key, Value, Threads * Items / strided_items, strided_items, RunLog>;  // merge_global
  // Sorts of up to 1024, 4096 or 8192 keys are one block of a smaller shape:
  // more threads with keys, fewer stages (latency, not throughput).
  using tile_1k = bitonic_tile<Key, Value, 128, (Items < 8 ? Items : 8), RunLog>;
  using tile_4k = bitonic_tile<Key, Value, 256, (Items < 16 ? Items : 16), RunLog>;
  using tile_8k = bitonic_tile<Key, Value, 512, (Items < 16 ? Items : 16), RunLog>;
  // Sorts of tile_4k < n <= 16 tile_4k keys are one launch of one thread
  // block cluster on sm_90: up to 16 blocks of tile_4k.
  static constexpr int cluster_blocks = 16;
  // n <= tile_1k: each warp's first merges (its 32 x 8 keys) by the warp's
  // shuffle network rather than register rounds and shared-memory exchanges.
  static constexpr bool small_warp_first = true;
  // merge_fused passes: runs of 2^A keys for the A in bitonic_fused_runs that
  // leave the tail a register round (A > R) and the head a stage (A < G).
  static constexpr unsigned fused_runs = bitonic_fused_runs & bitonic_fused_runs_for(tile::tile_log, tile::item_log, RunLog);
  static_assert(tile::tile_log == strided_tile::tile_log, "one tile, two block shapes");
  static_assert(sizeof(typename tile::temp_storage) <= 227 * 1024, "tile does not fit in shared memory");
};

// Blocks per SM that __launch_bounds__ asks for: 64 registers per thread.
template <typename Tile>
inline constexpr int bitonic_min_blocks = 65536 / (Tile::threads * 64) > 0 ? 65536 / (Tile::threads * 64) : 1;

template <typename Key, typename Value>
struct bitonic_sort_policy_for {
  // Built-in keys take max(4, sizeof) bytes of registers each; keys narrower
  // than 4 bytes stop at 16 per thread and user structs get half the count
  // (their fields take registers of their own): both spill at 32 otherwise.
  static constexpr bool builtin = std::is_arithmetic_v<Key> || is_floating_key<Key>::value;
  static constexpr std::size_t key_bytes = builtin && sizeof(Key) < 4 ? 4 : sizeof(Key);
  static constexpr std::size_t payload = key_bytes + value_bytes_of<Value>;
  static constexpr int by_bytes = payload <= 4 ? 32 : payload <= 8 ? 16 : payload <= 16 ? 8 : payload <= 32 ? 4 : 2;
  static constexpr int capped = builtin && sizeof(Key) < 4 && by_bytes > 16 ? 16 : by_bytes;
  static constexpr int items = builtin || capped == 2 ? capped : capped / 2;
  using type = bitonic_policy<Key, Value, 512, items, sizeof(Key) >= 8 ? 4 : 5>;
};

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

// ---------------------------------------------------------------- host side
// More than 48 KB of dynamic shared memory must be allowed per kernel and
// device first (allow_dynamic_shared_memory), and so must clusters of more
// than 8 blocks; both are capture-safe (detail/launch.cuh). They are made
// once per kernel and device (a host call on every pass would add to the
// latency of small sorts); `again` forces them, for a launch that was
// refused because the device was reset since.
template <auto Kernel>
cudaError_t bitonic_kernel_attributes(std::size_t bytes, bool clusters, bool again) {
  if (bytes <= 48 * 1024 && !clusters) return cudaSuccess;
  static std::atomic<std::uint64_t> devices_done{0};
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  const std::uint64_t bit = device < 64 ? std::uint64_t(1) << device : 0;
  if (!again && (devices_done.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
  TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(Kernel, bytes));
  if (clusters) TILESORT_RETURN_IF_ERROR(set_kernel_attribute(Kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  devices_done.fetch_or(bit, std::memory_order_release);
  return cudaSuccess;
}

// Launch one pass and check the launch; `dependent`: as a dependent of the
// previous pass (detail/launch.cuh), so that no launch gap separates
// the passes.
// cluster > 0: in thread block clusters of `cluster` blocks.
template <auto Kernel, typename... Args>
cudaError_t bitonic_launch(std::int64_t blocks, int threads, std::size_t shared, cudaStream_t stream, bool dependent,
                           int cluster, Args... args) {
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  cudaError_t error = cudaSuccess;
  for (int attempt = 0; attempt < 2; ++attempt) {
    TILESORT_RETURN_IF_ERROR(bitonic_kernel_attributes<Kernel>(shared, cluster > 0, attempt > 0));
    error = cluster > 0 ? launch_cluster_kernel(Kernel, static_cast<unsigned>(blocks), static_cast<unsigned>(cluster),
                                                static_cast<unsigned>(threads), shared, stream, dependent, args...)
                    : launch_kernel(Kernel, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), shared,
                                    stream, dependent, args...);
    if (error == cudaSuccess || (shared <= 48 * 1024 && cluster == 0)) break;
  }
  return error;
}

// Whether Kernel's code on the current device was compiled for sm_90 or later
// (a binary for an older GPU, or PTX of an older one JIT-compiled, has an
// empty cluster kernel). Asked once per kernel and device.
template <auto Kernel>
cudaError_t bitonic_cluster_code(bool& usable) {
  static std::atomic<std::uint64_t> asked{0}, yes{0};
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  const std::uint64_t bit = device < 64 ? std::uint64_t(1) << device : 0;
  if ((asked.load(std::memory_order_acquire) & bit) != 0) {
    usable = (yes.load(std::memory_order_relaxed) & bit) != 0;
    return cudaSuccess;
  }
  cudaFuncAttributes attributes{};
  TILESORT_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, Kernel));
  usable = attributes.ptxVersion >= 90 && attributes.binaryVersion >= 90;
  if (usable) yes.fetch_or(bit, std::memory_order_relaxed);
  asked.fetch_or(bit, std::memory_order_release);
  return cudaSuccess;
}

// n keys (1 < n <= 16 tiles of Tile) in one cluster launch of 2 .. 16 blocks; `launched`
// is false when this device or build cannot (the caller sorts another way).
template <typename Tile, typename Compare>
cudaError_t bitonic_sort_cluster(const typename Tile::key_type* keys_in, typename Tile::key_type* keys_out,
                                 const typename Tile::value_type* values_in, typename Tile::value_type* values_out,
                                 std::int64_t n, Compare comp, cudaStream_t stream, bool& launched) {
  constexpr auto kernel = bitonic_cluster_sort_kernel<Tile, Compare>;
  launched = false;
  bool usable = false;
  TILESORT_RETURN_IF_ERROR(bitonic_cluster_code<kernel>(usable));
  if (!usable) return cudaSuccess;
  int blocks = 2;
  while (std::int64_t(blocks) * Tile::tile_items < n) blocks *= 2;
  const cudaError_t error =
      bitonic_launch<kernel>(blocks, Tile::threads, sizeof(bitonic_cluster_storage<Tile>), stream, false,
                             blocks, keys_in, keys_out, values_in, values_out, n, comp);
  // A cluster the device cannot place (a partitioned GPU) leaves the sort to the other path.
  if (error == cudaErrorInvalidClusterSize || error == cudaErrorLaunchOutOfResources) return cudaSuccess;
  TILESORT_RETURN_IF_ERROR(error);
  launched = true;
  return cudaSuccess;
}

// 2 <= n <= the policy's tile: one launch, one block, of the smallest shape that holds n.
template <typename Policy, typename Compare>
cudaError_t bitonic_sort_one_tile(const typename Policy::key_type* keys_in, typename Policy::key_type* keys_out,
                                  const typename Policy::value_type* values_in, typename Policy::value_type* values_out,
                                  std::int64_t n, Compare comp, cudaStream_t stream) {
  using tile_1k = typename Policy::tile_1k;
  using tile_4k = typename Policy::tile_4k;
  using tile_8k = typename Policy::tile_8k;
  using tile = typename Policy::tile;
  const auto launch = [&](auto shape, auto warp_first) {
    using shape_tile = decltype(shape);
    const bitonic_plan plan = bitonic_plan::make(n, shape_tile::tile_log, Policy::run_log);
    return bitonic_launch<bitonic_sort_tiles_kernel<shape_tile, Compare, decltype(warp_first)::value>>(
        1, shape_tile::threads, sizeof(typename shape_tile::temp_storage), stream, false, 0, keys_in, keys_out, values_in,
        values_out, plan, plan.pass(0), comp);
  };
  if (tile_1k::tile_items < tile::tile_items && n <= tile_1k::tile_items)
    return launch(tile_1k{}, std::bool_constant<Policy::small_warp_first>{});
  if (tile_4k::tile_items < tile::tile_items && n <= tile_4k::tile_items) return launch(tile_4k{}, std::false_type{});
  if (tile_8k::tile_items < tile::tile_items && n <= tile_8k::tile_items) return launch(tile_8k{}, std::false_type{});
  return launch(tile{}, std::false_type{});
}

// The whole sort for checked arguments, n >= 0. Public so that tests can run
// small policies (many passes at small n).
template <typename Policy, typename Compare>
cudaError_t bitonic_sort_run(const typename Policy::key_type* keys_in, typename Policy::key_type* keys_out,
                             const typename Policy::value_type* values_in, typename Policy::value_type* values_out,
                             std::int64_t n, Compare comp, cudaStream_t stream) {
  using Key = typename Policy::key_type;
  using Value = typename Policy::value_type;
  if (n == 0) return cudaSuccess;
  if (n == 1) {
    if (keys_out != keys_in)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (has_values<Value>) {
      if (values_out != values_in)
        TILESORT_RETURN_IF_ERROR(
            cudaMemcpyAsync(values_out, values_in, sizeof(Value), cudaMemcpyDeviceToDevice, stream));
    }
    return cudaSuccess;
  }
  using tile = typename Policy::tile;
  using strided_tile = typename Policy::strided_tile;
  if (n <= tile::tile_items) return bitonic_sort_one_tile<Policy>(keys_in, keys_out, values_in, values_out, n, comp, stream);
  const bitonic_plan plan = bitonic_plan::make(n, tile::tile_log, Policy::run_log, Policy::fused_runs);
  constexpr std::size_t shared = sizeof(typename tile::temp_storage);
  constexpr std::size_t strided_shared = sizeof(typename strided_tile::temp_storage);
  const int passes = plan.pass_count();
  bool dependent = false;  // every pass after the first
  TILESORT_RETURN_IF_ERROR(dependent_launch_supported(dependent));
  for (int i = 0; i < passes; ++i) {
    const bitonic_pass pass = plan.pass(i);
    const std::int64_t blocks = plan.blocks(pass);
    if (pass.kind == bitonic_pass_kind::sort_tiles) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_sort_tiles_kernel<tile, Compare>>(
          blocks, tile::threads, shared, stream, false, 0, keys_in, keys_out, values_in, values_out, plan, pass, comp)));
    } else if (pass.kind == bitonic_pass_kind::merge_tiles) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, false, false, 0, Compare>>(
          blocks, tile::threads, shared, stream, dependent, 0, keys_out, values_out, plan, pass, comp)));
    } else if (pass.kind == bitonic_pass_kind::merge_fused) {
      cudaError_t error = cudaErrorInvalidValue;  // a run the policy has no kernel for (the plan never asks)
      static_for<1, tile::tile_log - 1, 1>([&](auto a) {
        constexpr int A = decltype(a)::value;
        if constexpr (((Policy::fused_runs >> A) & 1u) != 0) {
          if (pass.run == A)
            error = bitonic_launch<bitonic_merge_kernel<Policy, true, false, A, Compare>>(blocks, tile::threads, shared, stream,
                                                                             dependent, 0, keys_out, values_out, plan,
                                                                             pass, comp);
        }
      });
      TILESORT_RETURN_IF_ERROR(error);
    } else if (pass.flip) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, true, true, 0, Compare>>(
          blocks, strided_tile::threads, strided_shared, stream, dependent, 0, keys_out, values_out, plan, pass, comp)));
    } else {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, false, true, 0, Compare>>(
          blocks, strided_tile::threads, strided_shared, stream, dependent, 0, keys_out, values_out, plan, pass, comp)));
    }
  }
  return cudaSuccess;
}

// Two-phase entry shared by keys and pairs: validate, answer the size query, run.
template <typename Policy, typename Compare>
cudaError_t bitonic_sort_two_phase(void* d_temp, std::size_t& temp_bytes, const typename Policy::key_type* keys_in,
                                   typename Policy::key_type* keys_out, const typename Policy::value_type* values_in,
                                   typename Policy::value_type* values_out, std::int64_t n, Compare comp,
                                   cudaStream_t stream) {
  constexpr bool pairs = has_values<typename Policy::value_type>;
  if (n < 0) return cudaErrorInvalidValue;
  if (d_temp == nullptr) {
    temp_bytes = min_temp_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, pairs, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, min_temp_bytes));
  // The cluster launch is chosen here, not in bitonic_sort_run, so that the
  // tests' small policies still reach the multi-pass path at small n.
  using cluster_tile = typename Policy::tile_4k;
  if (n > cluster_tile::tile_items && n <= Policy::cluster_blocks * std::int64_t(cluster_tile::tile_items)) {
    bool launched = false;
    TILESORT_RETURN_IF_ERROR(
        (bitonic_sort_cluster<cluster_tile>(keys_in, keys_out, values_in, values_out, n, comp, stream, launched)));
    if (launched) return cudaSuccess;
  }
  return bitonic_sort_run<Policy>(keys_in, keys_out, values_in, values_out, n, comp, stream);
}

}  // namespace detail

/// Sort n keys (not stable). keys_out may equal keys_in. d_temp == nullptr:
/// set temp_bytes (1) and return; nothing else happens.
///
/// @param d_temp     non-null for the run (never read or written), nullptr for the size query
/// @param temp_bytes set to 1 by the size query; at least 1 for the run
/// @param keys_in    device input keys
/// @param keys_out   device output keys
/// @param n          number of keys (64-bit)
/// @param comp       comparator (tilesort::less, tilesort::greater or any strict weak order)
/// @param stream     stream the kernels run on
/// @return cudaSuccess, or the first CUDA or argument error (nothing launched then)
///
/// @code
/// tilesort::bitonic_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n);   // in place, ascending
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t bitonic_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                              std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  using policy = typename detail::bitonic_sort_policy_for<Key, detail::no_value>::type;
  return detail::bitonic_sort_two_phase<policy>(d_temp, temp_bytes, keys_in, keys_out,
                                                static_cast<const detail::no_value*>(nullptr),
                                                static_cast<detail::no_value*>(nullptr), n, comp, stream);
}

/// Sort n (key, value) pairs by key (not stable: equal keys' values may come
/// out in any order). keys_out may equal keys_in, values_out values_in.
///
/// @code
/// tilesort::bitonic_sort_pairs(d_temp, temp_bytes, d_keys, d_keys, d_vals, d_vals, n, tilesort::greater{});
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t bitonic_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                               const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                               cudaStream_t stream = 0) {
  using policy = typename detail::bitonic_sort_policy_for<Key, Value>::type;
  return detail::bitonic_sort_two_phase<policy>(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n,
                                                comp, stream);
}

/// Convenience overloads: temp storage is allocated and freed on `stream`
/// (cudaMallocAsync / cudaFreeAsync; one byte, see above).
///
/// @code
/// tilesort::bitonic_sort_keys(d_in, d_out, n, tilesort::greater{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t bitonic_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                              cudaStream_t stream = 0) {
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return bitonic_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream);
  });
}

/// bitonic_sort_pairs with temp storage allocated and freed on `stream`, as
/// the bitonic_sort_keys overload without d_temp.
///
/// @code
/// tilesort::bitonic_sort_pairs(d_keys, d_keys, d_vals, d_vals, n);   // in place
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t bitonic_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                               std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return bitonic_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  });
}

}  // namespace tilesort
