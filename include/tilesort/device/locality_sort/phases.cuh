// device/locality_sort/phases.cuh — the phases of the early-exit merge sort's
// passes kernel (device/locality_sort/kernels.cuh), each run by every block of
// a cooperative grid between grid barriers:
//   boundaries  one thread per blocksort tile plans the boundary at its
//               start (detail/merge_jobs.cuh, boundary_group): in order, a
//               window merge (queued), or out of order (counted);
//   jobs        a group of job_ways lanes per merge-tile boundary plans its
//               group (in order / window / tiles), searches the tile's
//               partition and queues resolved merge jobs (merge_job);
//   merge       the blocks take the queued jobs in a fixed order and merge
//               them in shared memory (a window in place, a tile into the
//               other buffer);
//   final copy  tiles that some pass left in the temp buffer move to keys_out.
// Work is done only where keys are out of order: a pass that merges nothing
// costs its plans.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../detail/config.cuh"
#include "../../detail/merge_jobs.cuh"
#include "../../detail/merge_path.cuh"
#include "../../warp/warp_atomics.cuh"
#include "types.cuh"
#include "../merge_sort/kway.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ boundaries
// One thread per blocksort entry (entries first .. first + threads - 1 for a
// block's call; `first` is block-uniform) plans the boundary at the start of its tile
// (none at a segment's first tile) as detail/merge_jobs.cuh's boundary_group:
// in order, a window merge (queued), or `tiles`, which it counts in
// out_of_order_boundaries. It also copies its tile's locations to the next
// pass's array (the windows merge in place), so that both arrays are right
// when the passes find nothing to do. The phase waits on each plan's chain
// of dependent loads, so spreading the plans over more blocks did not help.
template <typename Policy, typename Key, typename Compare>
__device__ __noinline__ void locality_plan_boundaries(std::int64_t first, const Key* keys_out, const Key* keys_temp,
                                                const merge_segment_list& list, const std::uint8_t* locations,
                                                std::uint8_t* next_locations, merge_job* jobs,
                                                merge_control* control, Compare comp) {
  using tiling = locality_tiling<Policy>;
  constexpr auto widths = locality_window_widths<Policy>();
  constexpr int k = tiling::merge_tiles_per_block;
  const std::int64_t block = first + threadIdx.x;
  bool window = false, unfixable = false;
  merge_job job{};
  if (block < list.blocks()) {
TILESORT_UNROLL
    for (int i = 0; i < k; ++i) next_locations[block * k + i] = locations[block * k + i];
    const merge_segment segment = list.segment_of_block(block);
    const std::int64_t boundary = tiling::block_begin(segment, block);
    if (boundary > segment.begin) {
      const located_keys<Key, tiling> key_at{keys_out, keys_temp, locations, segment};
      const std::int64_t entry = tiling::entry_of(segment, boundary);
      const group_decision decision = plan_group(boundary_group(segment, boundary, Policy::tile_items), key_at,
                                                 widths.half, locations[entry - 1] == locations[entry], comp);
      window = decision.plan == group_plan::window;
      unfixable = decision.plan == group_plan::tiles;
      job = window_job(decision.window_begin, boundary, decision.window_end, locations[entry]);
    }
  }
  merge_pass_control& counters = control->boundary;
  const unsigned slot = warp_reserve(&counters.job_count, window);
  if (window) jobs[slot] = job;
  warp_add(&counters.window_merges, window ? 1u : 0u);
  warp_add(&counters.merged_keys, static_cast<unsigned long long>(window ? job.count : 0));
  const unsigned unfixed = __ballot_sync(0xffffffffu, unfixable);
  if (unfixed != 0 && lane_id() == 0) atomicAdd(&control->out_of_order_boundaries, __popc(unfixed));
}

// ------------------------------------------------------------------ jobs
// A group of Ways lanes per merge-tile boundary: the lanes of a block's call
// for job block b (block-uniform) handle the boundaries at the start of
// merge-tile entries b·(G - 1) + g, g < G = merge_threads / Ways; groups 0 .. G - 2 decide their tile (the last group's
// partition is its left neighbour's end). Every lane of a group computes the
// same decision (their loads coincide); they differ only in the probes of the
// merge-path search, and member 0 writes.
template <typename Policy, typename Key, typename Compare>
__device__ __noinline__ void locality_plan_jobs(std::int64_t job_block, std::int64_t tiles, int pass, const Key* keys_out,
                                          const Key* keys_temp, const merge_segment_list& list,
                                          const std::uint8_t* locations, std::uint8_t* next_locations,
                                          merge_job* jobs, merge_control* control, Compare comp) {
  using tiling = locality_tiling<Policy>;
  constexpr int ways = Policy::job_ways;
  constexpr int groups = Policy::job_groups;
  constexpr auto widths = locality_window_widths<Policy>();
  __shared__ std::int64_t partitions[groups];
  const std::int64_t first_entry = job_block * (groups - 1);
  const int group_index = static_cast<int>(threadIdx.x) / ways;
  const search_lanes<ways> lanes;
  const int member = lanes.member;
  const std::int64_t entry = first_entry + group_index;
  const std::int64_t run = std::int64_t(Policy::tile_items) << pass;

  // Every tile in one buffer (random keys): its keys are read directly.
  const int uniform = uniform_location(control->pass[pass].location_mix);
  std::int64_t out_begin = 0, out_end = 0, p_begin = 0;
  merge_segment segment{};
  run_group group{0, 0, 0};
  group_decision decision{group_plan::in_order, 0, 0};
  std::uint8_t location = in_output;
  bool holds_keys = false;  // an entry past its segment's end holds none
  if (entry < tiles) {
    segment = list.segment_of_block(entry / tiling::merge_tiles_per_block);
    out_begin = tiling::tile_begin(segment, entry);
    out_end = tiling::tile_end(segment, entry);
    holds_keys = out_begin < segment.end;
    location = uniform >= 0 ? static_cast<std::uint8_t>(uniform) : locations[entry];
    if (holds_keys && run < segment.end - segment.begin) {
      group = run_group_of(segment, out_begin, run);
      if (group.a_end < group.end) {
        const auto decide = [&](const auto& key_at, bool one_buffer) {
          decision = plan_group(group, key_at, widths.half, one_buffer, comp);
          if (decision.plan == group_plan::tiles)
            p_begin = merge_partition<ways>(group, out_begin, key_at, comp, lanes);
        };
        if (uniform >= 0) {
          decide(buffer_keys<Key>{uniform == in_temp ? keys_temp : keys_out}, true);
        } else {
          decide(located_keys<Key, tiling>{keys_out, keys_temp, locations, segment},
                 locations[tiling::entry_of(segment, group.a_end - 1)] ==
                     locations[tiling::entry_of(segment, group.a_end)]);
        }
      }
    }
  }
  if (member == 0) partitions[group_index] = p_begin;
  __syncthreads();

  bool merge = false;
  bool window = false;
  merge_job job{};
  if (member == 0 && group_index < groups - 1 && entry < tiles) {
    if (decision.plan == group_plan::tiles) {
      // A tile that ends its group takes the rest of A; otherwise its right
      // neighbour (same group) starts where it ends.
      const std::int64_t p_end = out_end == group.end ? group.a_end : partitions[group_index + 1];
      const tile_sources src = tile_sources_of(group, out_begin, out_end, p_begin, p_end);
      merge = !src.stays();
      if (merge)
        job = tile_job(src, locate_slice<tiling>(segment, src.a_begin, src.a_end, locations, uniform),
                       locate_slice<tiling>(segment, src.b_begin, src.b_end, locations, uniform),
                       static_cast<std::uint8_t>(location ^ 1u));
    } else if (decision.plan == group_plan::window && out_begin == group.a_end) {
      window = true;
      job = window_job(decision.window_begin, out_begin, decision.window_end, location);
    }
    next_locations[entry] = merge ? static_cast<std::uint8_t>(location ^ 1u) : location;
  }
  // The block's decisions go to its first warp (lane g: group g), which
  // queues the jobs and adds the counters with one atomic each per block:
  // per-warp atomics on these few addresses serialised in L2 and took a
  // large part of the job kernel this phase was.
  __shared__ merge_job decided_jobs[groups];
  __shared__ std::int64_t decided_keys[groups];  // keys the job writes
  __shared__ unsigned decided_kind[groups];  // bit 0 merge, bit 1 window, bits 2-3: 1 << next location
  if (member == 0) {
    const bool keeps = group_index < groups - 1 && holds_keys;
    decided_jobs[group_index] = job;
    decided_keys[group_index] = merge || window ? job.count : 0;
    decided_kind[group_index] = (merge ? 1u : 0u) | (window ? 2u : 0u) |
                                (keeps ? (1u << (merge ? location ^ 1u : location)) << 2 : 0u);
  }
  __syncthreads();
  if (threadIdx.x >= 32) return;
  static_assert(groups <= 32, "one warp gathers the block's decisions");
  const unsigned kind = threadIdx.x < groups ? decided_kind[threadIdx.x] : 0u;
  const bool queue_merge = (kind & 1u) != 0, queue_window = (kind & 2u) != 0;
  const merge_job mine = threadIdx.x < groups ? decided_jobs[threadIdx.x] : merge_job{};
  const unsigned next_mix = __reduce_or_sync(0xffffffffu, kind >> 2);
  if (threadIdx.x == 0 && next_mix != 0 && pass + 1 < max_merge_passes)
    atomicOr(&control->pass[pass + 1].location_mix, next_mix);
  merge_pass_control& counters = control->pass[pass];
  const unsigned slot = warp_reserve(&counters.job_count, queue_merge || queue_window);
  if (queue_merge || queue_window) jobs[slot] = mine;
  warp_add(&counters.merge_tiles, queue_merge ? 1u : 0u);
  warp_add(&counters.window_merges, queue_window ? 1u : 0u);
  warp_add(&counters.merged_keys,
           static_cast<unsigned long long>(threadIdx.x < groups ? decided_keys[threadIdx.x] : 0));
}

// ------------------------------------------------------------------ merge
// A merge tile's shared memory and its steps after the load are
// merge_sort's (device/merge_sort/pairwise.cuh): keys and each output's source index
// through padded slots, values gathered by source in the striped store.
template <typename Key, typename Value, int TileItems>
using locality_merge_storage = merge_sort_merge_storage<Key, Value, TileItems>;

// The merges here copy a T with cp.async where one copy moves it (4, 8 or
// 16 bytes, as aligned), as measured (see locality_passes_kernel).
template <typename T>
inline constexpr bool locality_copies_async = copies_to_shared_async<T> && async_copy_chunk<T> == sizeof(T);

// Merge job `job`'s A and B into its outputs. Every global read happens
// before the barrier that precedes the first global write, so the output may
// overlap the inputs (window merges run in place). Async: A ++ B goes
// straight to shared memory (cp.async, for keys and values of 4, 8 or 16
// bytes), no key staged in registers.
template <bool Async, bool Full, typename Policy, typename Key, typename Value, typename Storage, typename Compare>
TILESORT_DEVICE void locality_merge_slices(Storage& storage, const merge_buffers<Key, Value>& buffers,
                                           const merge_job& job, Compare comp) {
  constexpr int threads = Policy::merge_threads;
  constexpr int items = Policy::merge_items;
  constexpr bool pairs = has_values<Value>;
  Key* keys_dst = buffers.keys(job.destination);
  Value* values_dst = buffers.values(job.destination);
  const int count = job.count;
  const int a_count = job.a_count;
  // 1. A ++ B into shared memory, striped (coalesced reads): item j < a_count
  //    is A's key a_begin + j, the others B's b_begin + j - a_count, each from
  //    the buffer its side of the slice's split names. Four predicated
  //    sweeps (A before, A after, B before, B after the split) address
  //    every load as one base plus a constant and issue all of them before
  //    the first shared-memory store (see merge_sort_merge_steps::load).
  const int thread = static_cast<int>(threadIdx.x);
  const int a_split = job.a_split;
  const int b_split = a_count + job.b_split;
  const auto gather = [&](auto* dst, auto buffer_of) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(buffer_of(job.a_before))>>;
    const struct {
      const T* base;
      int lo, hi;
    } sweeps[4] = {{buffer_of(job.a_before) + job.a_begin + thread, 0, a_split},
                   {buffer_of(job.a_after) + job.a_begin + thread, a_split, a_count},
                   {buffer_of(job.b_before) + (job.b_begin - a_count) + thread, a_count, b_split},
                   {buffer_of(job.b_after) + (job.b_begin - a_count) + thread, b_split, count}};
    if constexpr (Async && locality_copies_async<T>) {
TILESORT_UNROLL
      for (int w = 0; w < 4; ++w) {
TILESORT_UNROLL
        for (int k = 0; k < items; ++k) {
          const int j = thread + k * threads;
          if (j >= sweeps[w].lo && j < sweeps[w].hi) copy_to_shared_async(dst + j, sweeps[w].base + k * threads);
        }
      }
      wait_for_shared_copies();  // slots past count stay unwritten: nothing reads them
    } else {
      T loaded[items];
TILESORT_UNROLL
      for (int w = 0; w < 4; ++w) {
TILESORT_UNROLL
        for (int k = 0; k < items; ++k) {
          const int j = thread + k * threads;
          if (j >= sweeps[w].lo && j < sweeps[w].hi) loaded[k] = sweeps[w].base[k * threads];
        }
      }
      // Unconditional stores: slots past count get junk that nothing reads.
TILESORT_UNROLL
      for (int k = 0; k < items; ++k) dst[thread + k * threads] = loaded[k];
    }
  };
  gather(storage.keys, [&](std::uint8_t location) { return buffers.keys(location); });
  if constexpr (pairs) gather(storage.values, [&](std::uint8_t location) { return buffers.values(location); });
  __syncthreads();

  // 2.-4. merge_sort's steps: merge, blocked -> padded slots, striped stores.
  using steps = merge_sort_merge_steps<threads, items>;
  const merge_tile_slices slices{job.a_begin,   job.a_begin + a_count, job.b_begin, job.b_begin + (count - a_count),
                                 job.out_begin, job.out_begin + count};
  Key out[items];
  int source[items];
  steps::merge(storage.keys, slices, thread, out, source, comp);
  __syncthreads();  // every thread is done reading A ++ B
  steps::template write_blocked<pairs>(storage.keys, storage.sources, thread, out, source);
  __syncthreads();
  steps::template store<Full, pairs>(storage.keys, storage.sources, storage.values, slices, thread, keys_dst,
                                     values_dst);
}

// The grid's blocks take the `queued` jobs in a fixed order (block b: jobs b,
// b + grid, ...): no atomics, and no barrier to share a job (every thread
// reads it). A job is resolved (merge_job): a block reads it and then its
// keys, nothing else. A merge tile reads its
// slices from the buffers that hold them and writes the other buffer at its
// own positions (nothing else reads there in this pass); a window merge
// rewrites its window in place. Async: see locality_merge_slices.
template <bool Async, typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void locality_merge_jobs(const merge_buffers<Key, Value>& buffers, const merge_job* jobs,
                                         unsigned queued, Compare comp) {
  static_assert(Policy::merge_tile_items <= 0xffff, "merge_job counts are 16-bit");
  using storage_type = locality_merge_storage<Key, Value, Policy::merge_tile_items>;
  auto& storage = *reinterpret_cast<storage_type*>(locality_smem);
  for (unsigned next = blockIdx.x; next < queued; next += gridDim.x) {
    const merge_job job = jobs[next];
    __syncthreads();  // the previous job's last shared-memory reads are done
    // Bounds-checked path only (see merge_sort_merge_kernel); one merge
    // for tiles and windows alike.
    if (job.a_count <= job.count && job.count <= Policy::merge_tile_items)
      locality_merge_slices<Async, false, Policy>(storage, buffers, job, comp);
  }
}

// ------------------------------------------------------------------ final copy
// A tile that some pass left alone (in order, or a run without a partner in
// its group) may end in the temp buffer (the locations the last pass wrote
// say so); those move to keys_out (values likewise). The blocks take the
// merge tiles in turn (block b: entries b, b + grid, ...), and a block
// copies a tile whole: all its loads, then all its stores (a thread per
// tile, copying a key per step, was far slower).
template <typename Policy, typename Key, typename Value>
__device__ __noinline__ void locality_final_copy(const merge_buffers<Key, Value>& buffers, const merge_segment_list& list,
                                           std::int64_t tiles, const std::uint8_t* locations,
                                           merge_control* control) {
  using tiling = locality_tiling<Policy>;
  constexpr int threads = Policy::merge_threads;
  constexpr int items = (Policy::merge_tile_items + threads - 1) / threads;
  unsigned long long copied_tiles = 0, copied_keys = 0;
  for (std::int64_t entry = blockIdx.x; entry < tiles; entry += gridDim.x) {
    if (locations[entry] != in_temp) continue;  // the same for the whole block
    const merge_segment segment = list.segment_of_block(entry / tiling::merge_tiles_per_block);
    const std::int64_t begin = tiling::tile_begin(segment, entry);
    if (begin >= segment.end) continue;
    const int count = static_cast<int>(tiling::tile_end(segment, entry) - begin);
    const auto copy = [&](const auto* src, auto* dst) {
      std::remove_const_t<std::remove_pointer_t<decltype(src)>> staged[items];
TILESORT_UNROLL
      for (int k = 0; k < items; ++k) {
        const int j = static_cast<int>(threadIdx.x) + k * threads;
        if (j < count) staged[k] = src[begin + j];
      }
TILESORT_UNROLL
      for (int k = 0; k < items; ++k) {
        const int j = static_cast<int>(threadIdx.x) + k * threads;
        if (j < count) dst[begin + j] = staged[k];
      }
    };
    copy(buffers.keys_temp, buffers.keys_out);
    if constexpr (has_values<Value>) copy(buffers.values_temp, buffers.values_out);
    ++copied_tiles;
    copied_keys += static_cast<unsigned long long>(count);
  }
  if (threadIdx.x == 0 && copied_tiles > 0) {
    atomicAdd(&control->final_copy_tiles, copied_tiles);
    atomicAdd(&control->final_copy_keys, copied_keys);
  }
}
}  // namespace tilesort::detail
