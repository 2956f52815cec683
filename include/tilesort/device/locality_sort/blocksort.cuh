// device/locality_sort/blocksort.cuh — the first launch of the early-exit merge
// sort (device/locality_sort/merge.cuh): one block per blocksort entry (a tile
// of T keys aligned to its segment's first key) loads its tile with
// merge_sort's warp transposes, checks whether it is already in order (then
// it skips the sort and, out of place, warps store their keys at once),
// else sorts it with block_sort; it samples pairs of keys 16 threads apart
// to decide whether the tile looks local, writes the tile where the passes
// that follow expect it (keys_out, or the temp buffer for tiles random keys
// will merge), and records each merge tile's buffer and the counters the
// passes kernel starts from. One read and one write of every key (read only
// for an in-order tile sorted in place).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../block/block_sort.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/merge_jobs.cuh"
#include "../../detail/segment_ranges.cuh"
#include "../../warp/warp_shuffle.cuh"
#include "types.cuh"
#include "../merge_sort/blocksort.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ blocksort
// merge_sort's blocksort pieces (block_sort, the warp transposes between
// striped global memory and blocked registers, their shared storage), plus
// one key per warp for the in-order check.
template <typename Policy, typename Key, typename Value>
struct locality_blocksort_shared {
  using parts = merge_sort_blocksort_parts<Key, Value, Policy::block_threads, Policy::block_items>;
  using storage = typename parts::storage;
  using transpose = typename parts::transpose;
  static constexpr bool pairs = parts::pairs;
  static constexpr int warps = parts::warps;
  static constexpr int warp_items = parts::warp_items;
  static constexpr std::size_t last_keys_offset = (sizeof(storage) + alignof(Key) - 1) / alignof(Key) * alignof(Key);
  static constexpr std::size_t bytes = last_keys_offset + warps * sizeof(Key);
  static_assert(alignof(storage) <= 16 && alignof(Key) <= 16, "dynamic shared memory is 16-byte aligned");
};

// What a blocksort tile needs after its sort, kept in shared memory across
// the sort (block-uniform values; keeping them in registers made the sort
// spill).
struct locality_tile_state {
  std::int64_t begin;
  int valid;
  int passes;               // flips of the passes random keys run (blocksort_to_temp)
  std::uint8_t* locations;  // the tile's merge tiles' entries
  std::uint8_t location;    // where the tile goes
  bool ordered;             // it was in order already
  bool follows_tile;        // a tile of its segment comes before it
};

template <bool Full, typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void locality_blocksort_tile(locality_tile_state& state, const Key* keys_in,
                                             const Value* values_in, const merge_buffers<Key, Value>& buffers,
                                             merge_control* control, Compare comp) {
  using shared = locality_blocksort_shared<Policy, Key, Value>;
  using transpose = typename shared::transpose;
  constexpr int items = Policy::block_items;
  constexpr bool pairs = shared::pairs;
  auto& storage = *reinterpret_cast<typename shared::storage*>(locality_smem);
  Key* warp_last = reinterpret_cast<Key*>(locality_smem + shared::last_keys_offset);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp_offset = warp * shared::warp_items;
  const int first = static_cast<int>(threadIdx.x) * items;  // this thread's first tile position

  Key keys[items];
  Value values[items];
  int valid = state.valid;
  {
    const std::int64_t begin = state.begin;
    const int warp_valid = valid - warp_offset;
    Key* key_region = storage.transpose.keys[warp];
    Value* value_region = storage.transpose.values[warp];
    transpose::template load_striped<Full>(keys_in + begin + warp_offset, warp_valid, key_region, lane);
    if constexpr (pairs)
      transpose::template load_striped<Full>(values_in + begin + warp_offset, warp_valid, value_region, lane);
    __syncwarp();
    transpose::template read_blocked<Full>(key_region, warp_valid, lane, keys, keys_in + begin);
    if constexpr (pairs) transpose::template read_blocked<Full>(value_region, warp_valid, lane, values, values_in + begin);
  }

  // Already in order? Each thread checks its own keys and its predecessor's last.
  bool ordered = true;
TILESORT_UNROLL
  for (int i = 0; i + 1 < items; ++i)
    if ((Full || first + i + 1 < valid) && comp(keys[i + 1], keys[i])) ordered = false;
  const Key previous = shuffle_from(keys[items - 1], lane - 1);
  if (lane == 31) warp_last[warp] = keys[items - 1];
  // A full tile sorted out of place: a warp whose keys are in order (each
  // lane's and lane to lane; the boundary with the warp before is checked
  // below) stores them to keys_out now, from its transpose region, which
  // still holds them as loaded. An in-order tile is local, so keys_out is
  // where it goes, and it is not written again below; any other tile's
  // sorted keys, or the passes, overwrite what was stored early. Sorted
  // input out of place gains 5-10% (docs/tuning/locality_sort.md).
  const bool early_keys = Full && buffers.keys(in_output) != keys_in;
  const bool early_values = Full && pairs && buffers.values(in_output) != values_in;
  if (early_keys || early_values) {
    const bool thread_in_order = ordered && (lane == 0 || !comp(keys[0], previous));
    if (__all_sync(0xffffffffu, thread_in_order)) {
      const std::int64_t at = state.begin + warp_offset;
      if (early_keys)
        transpose::template store_striped<true>(storage.transpose.keys[warp], 0, buffers.keys(in_output) + at, lane);
      if constexpr (pairs)
        if (early_values)
          transpose::template store_striped<true>(storage.transpose.values[warp], 0, buffers.values(in_output) + at,
                                                  lane);
    }
  }
  // Locality sample: this key against the one 16 threads later, in input order.
  const Key later = shuffle_from(keys[0], lane + 16);
  const bool sampled = lane < 16 && (Full || first + 16 * items < valid);
  const bool sample_in_order = sampled && !comp(later, keys[0]);
  __syncthreads();  // warp_last written; every warp is done with its transpose region
  if (first > 0 && first < valid && comp(keys[0], lane > 0 ? previous : warp_last[warp - 1])) ordered = false;
  const bool tile_ordered = __syncthreads_and(ordered) != 0;
  const int in_order_samples = __syncthreads_count(sample_in_order);
  const int samples = __syncthreads_count(sampled);
  const bool local =
      looks_local(in_order_samples, samples, Policy::local_num, Policy::local_den, Policy::local_min_samples);
  if (threadIdx.x == 0) {
    state.location = blocksort_to_temp(local, state.passes) ? in_temp : in_output;
    state.ordered = tile_ordered;
    if (local) atomicAdd(&control->local_tiles, 1u);
  }

  // A local tile tries block_sort's boundary windows before its block rounds.
  if (!tile_ordered)
    merge_sort_sort_registers<Full, typename shared::parts>(storage, keys, values, valid, comp, local);
  __syncthreads();  // the transposes below reuse the sort's shared memory; `state` is complete

  valid = state.valid;
  const std::int64_t begin = state.begin;
  const std::uint8_t location = state.location;
  const bool in_order = state.ordered;
  const int warp_valid = valid - warp_offset;
  Key* keys_dst = buffers.keys(location) + begin;
  Value* values_dst = nullptr;
  if constexpr (pairs) values_dst = buffers.values(location) + begin;
  // An in-order tile sorted in place is already where it belongs; out of
  // place, its warps stored it early.
  const bool store_keys = !(in_order && (keys_dst == keys_in + begin || early_keys));
  bool store_values = false;
  if constexpr (pairs) store_values = !(in_order && (values_dst == values_in + begin || early_values));
  Key* key_region = storage.transpose.keys[warp];
  Value* value_region = storage.transpose.values[warp];
  if (store_keys) transpose::write_blocked(key_region, lane, keys);
  if constexpr (pairs)
    if (store_values) transpose::write_blocked(value_region, lane, values);
  __syncwarp();
  if (store_keys) transpose::template store_striped<Full>(key_region, warp_valid, keys_dst + warp_offset, lane);
  if constexpr (pairs)
    if (store_values) transpose::template store_striped<Full>(value_region, warp_valid, values_dst + warp_offset, lane);
  if (threadIdx.x < locality_tiling<Policy>::merge_tiles_per_block) state.locations[threadIdx.x] = location;
  if (threadIdx.x == 0) {
    // Final: in order, in keys_out, and after the previous tile's last key.
    // That key is read from the input, where it is still the tile's own when
    // that tile was in order (sorted in place, an in-order tile is not
    // written); a tile that was not in order counts itself, and what is read
    // of it then does not matter.
    const bool final_tile =
        in_order && location == in_output && (!state.follows_tile || !comp(keys[0], keys_in[begin - 1]));
    if (!final_tile) atomicAdd(&control->unfinished_tiles, 1u);
    atomicOr(&control->pass[0].location_mix, 1u << location);
    atomicAdd(&control->blocksort_tiles, 1ull);
    if (in_order) atomicAdd(&control->presorted_tiles, 1ull);
    atomicAdd(&control->blocksort_keys, static_cast<unsigned long long>(valid));
  }
}

// The passes of a list of one segment (a locality sort), worked out on the
// host: the blocksort's blocks would each repeat their 64-bit divisions
// before loading their tile (thread 0, the rest of the block waiting), the
// k-way plan's from 2^24 keys on (docs/tuning/locality_sort.md).
struct locality_list_passes {
  int needed = 0;  // pairwise passes of the whole list (merge_passes_for)
  int random = 0;  // flips of the passes random keys run: merge_sort's k-way ones or those
};

// One block per blocksort entry (the grid is the host's bound on them).
// keys_in may be keys_out: a block reads its whole tile before the barrier
// that precedes its first write, and no other block touches the tile.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::block_threads, Policy::block_min_blocks)
    locality_blocksort_kernel(const Key* keys_in, const Value* values_in, merge_buffers<Key, Value> buffers,
                              merge_segment_list list, locality_list_passes list_passes, std::uint8_t* locations,
                              merge_control* control, Compare comp) {
  allow_next_kernel();  // the passes kernel waits for this grid to finish
  using tiling = locality_tiling<Policy>;
  __shared__ locality_tile_state state;
  const std::int64_t block = blockIdx.x;
  if (block >= list.blocks() || control->probe.looks_unsorted != 0) return;
  if (threadIdx.x == 0) {
    const merge_segment segment = list.segment_of_block(block);
    state.begin = tiling::block_begin(segment, block);
    const std::int64_t left = segment.end - state.begin;
    state.valid = static_cast<int>(left < Policy::tile_items ? left : Policy::tile_items);
    const bool one_segment = list.segments == nullptr;
    const int passes =
        one_segment ? list_passes.needed : merge_passes_for(segment.end - segment.begin, Policy::tile_items);
    // A tile that does not look local goes where the passes that random keys
    // run leave it in keys_out (segmented sort: its segment's passes).
    state.passes = one_segment ? list_passes.random : passes;
    state.locations = locations + block * tiling::merge_tiles_per_block;
    state.follows_tile = state.begin > segment.begin;
    if (block == segment.first_block) atomicMax(&control->needed_passes, static_cast<unsigned>(passes));
  }
  __syncthreads();
  if (state.valid == Policy::tile_items) {
    locality_blocksort_tile<true, Policy>(state, keys_in, values_in, buffers, control, comp);
  } else {
    locality_blocksort_tile<false, Policy>(state, keys_in, values_in, buffers, control, comp);
  }
}

}  // namespace tilesort::detail
