// device/locality_sort/merge.cuh — the merge sort with early exit that locality
// sort runs on the whole array and segmented sort runs on its long segments
// (each sorted on its own, tiles aligned to its first key). The decisions are
// detail/merge_jobs.cuh (host-tested); this file holds the temp layout and
// the launch sequence, the pieces are beside it:
//   policy.cuh     tuning, and where random keys' passes run
//   types.cuh      buffers, segment list, jobs (the counters are
//                  detail/control.cuh's merge_control)
//   blocksort.cuh  1. the blocksort kernel
//   phases.cuh     the passes kernel's phases
//   kernels.cuh    2. the passes kernel, 3. the dense passes, stats
// Tuning history: docs/tuning/locality_sort.md.
//
// Launches (P = merge passes, bounded on the host by the longest possible
// segment; passes a segment does not need cost it nothing):
//   1. blocksort     one block per blocksort tile of T keys: load, skip the
//                    sort when the tile is already in order, else block_sort;
//                    write to keys_out or the temp buffer (blocksort_to_temp)
//                    and record each merge tile's buffer.
//   2. passes        one cooperative launch of resident blocks, its phases
//                    separated by grid barriers:
//      boundaries    one thread per blocksort tile plans the boundary at its
//                    start (boundary_group): in order, a window merge, or out
//                    of order (counted); then every window merges at once,
//                    in place. Nearly sorted input is sorted here, and the
//                    passes below do not run.
//      per pass: jobs   a group of lanes per merge-tile boundary (a block's
//                       G groups decide G - 1 tiles): the group's plan (in
//                       order / window / tiles), the tile's partitions
//                       (a multi-lane merge-path search), merge or stay;
//                       merge and window jobs go to one queue (warp-
//                       aggregated atomics), resolved (slices, buffers,
//                       destination: merge_job); the buffer of every tile
//                       for the next pass.
//                merge  the blocks take the queue's jobs in a fixed order.
//      final copy    tiles left in the temp buffer move to keys_out.
//   3. dense passes  locality sort only: when no blocksort tile looked local
//                    (random keys), the passes kernel returns at once and
//                    this cooperative launch runs merge_sort's passes
//                    instead (every tile merged, every pass): its k-way
//                    passes for items of 4 bytes and more, its pairwise
//                    ones for smaller keys; otherwise it returns at once.
//                    Below dense_kernel_min_keys the passes kernel runs
//                    merge_sort's pairwise passes itself, and this launch
//                    is not made; from dense_kway_min_keys on (items of 4
//                    bytes and more) merge_sort's own k-way kernels run
//                    them instead, two launches per k-way pass, each
//                    returning at once unless the keys are random.
// 2 launches (3 in a locality sort of dense_kernel_min_keys keys or more, 2 +
// 2 per k-way pass from dense_kway_min_keys on); no
// host synchronisation, graph-capturable. Bytes moved:
// each key is read and written once by the blocksort (read only, for an
// in-order tile sorted in place), then only by the merges that need it.
//
// Shared memory: blocksort as merge_sort's (block_sort's temp_storage or the
// warp transposes) plus one key per warp; merge: M keys (+ M values), padded.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../block/block_sort.cuh"
#include "../../comparators.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/error.cuh"
#include "../../detail/merge_jobs.cuh"
#include "../../detail/merge_path.cuh"
#include "../../detail/segment_ranges.cuh"
#include "../../thread/thread_sort.cuh"
#include "../../warp/warp_shuffle.cuh"
#include "../../detail/merge_sort_plan.cuh"
#include "../merge_sort/kway.cuh"
#include "../sort_stats.cuh"
#include "kernels.cuh"
#include "policy.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ host side
// Temp storage of the passes for `blocks` blocksort entries at most.
struct locality_layout {
  std::int64_t blocks = 0;        // bound on blocksort entries
  std::int64_t tiles = 0;         // merge-tile entries: k x blocks
  std::size_t keys_offset = 0;    // n keys (the temp buffer)
  std::size_t values_offset = 0;  // n values (pairs)
  std::size_t locations_offset = 0;  // 2 x tiles bytes (this pass's, the next's)
  std::size_t jobs_offset = 0;    // tiles jobs, or the k-way dense passes' cuts where those take more
};

// Carves the buffers one after another from `offset`, 256-byte aligned;
// returns the offset past them.
// `cut_bytes`: the k-way dense passes' cuts, kept where the jobs would be.
template <typename Policy>
std::size_t plan_locality_layout(locality_layout& layout, std::size_t offset, std::int64_t n,
                                 std::int64_t blocks, std::size_t key_bytes, std::size_t value_bytes,
                                 std::size_t cut_bytes = 0) {
  layout.blocks = blocks;
  layout.tiles = blocks * locality_tiling<Policy>::merge_tiles_per_block;
  auto take = [&](std::size_t bytes) {
    const std::size_t at = offset;
    offset = align_temp(offset + bytes);
    return at;
  };
  layout.keys_offset = take(static_cast<std::size_t>(n) * key_bytes);
  layout.values_offset = take(static_cast<std::size_t>(n) * value_bytes);
  layout.locations_offset = take(2 * static_cast<std::size_t>(layout.tiles));
  const std::size_t job_bytes = static_cast<std::size_t>(layout.tiles) * sizeof(merge_job);
  layout.jobs_offset = take(job_bytes > cut_bytes ? job_bytes : cut_bytes);
  return offset;
}

// Random keys in a locality sort of dense_kway_min_keys keys or more:
// merge_sort's k-way passes, launched after the passes kernel, each kernel
// returning at once unless no blocksort tile looked local; the merge kernels
// are persistent (about the resident blocks, tiles taken from a counter per
// pass) and the cut kernels' grids a wave, so that a skipped pass costs two
// waves. Their cuts lie where the jobs would (no job is queued when they
// run).
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t launch_locality_dense_kway(const merge_buffers<Key, Value>& buffers, const kway_merge_sort_plan& plan,
                                       merge_job* jobs, merge_control* control, bool dependent, Compare comp,
                                       cudaStream_t stream) {
  using base = typename Policy::base;
  kway_pass_grids grids;
  TILESORT_RETURN_IF_ERROR((resident_kway_grids<base, Key, Value, Compare>(grids)));
  std::uint8_t source = blocksort_to_temp(false, plan.merge_passes) ? in_temp : in_output;
  for (int pass = 0; pass < plan.merge_passes; ++pass, source ^= 1u)
    TILESORT_RETURN_IF_ERROR((launch_kway_pass<base, true>(
        plan.pass_shape(pass), buffers.keys(source), buffers.keys(source ^ 1u), buffers.values(source),
        buffers.values(source ^ 1u), reinterpret_cast<std::int64_t*>(jobs), &control->local_tiles, dependent, comp,
        stream, &control->kway_tiles_taken[pass], grids)));
  return cudaSuccess;
}

// The same passes in one cooperative launch (locality_dense_kway_kernel),
// below dense_kway_min_keys.
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t launch_locality_dense_kway_kernel(const merge_buffers<Key, Value>& buffers,
                                              const kway_merge_sort_plan& plan, merge_job* jobs,
                                              merge_control* control, bool dependent, Compare comp,
                                              cudaStream_t stream) {
  using base = typename Policy::base;
  using storage = merge_sort_kway_storage<Key, Value, base::merge_tile_items>;
  static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
  locality_kway_shapes shapes;
  shapes.passes = plan.merge_passes;
  for (int p = 0; p < plan.merge_passes; ++p) shapes.pass[p] = plan.pass_shape(p);
  auto* kernel = locality_dense_kway_kernel<Policy, Key, Value, Compare>;
  if constexpr (Policy::merge_prefers_shared)  // as the passes kernel before it
    TILESORT_RETURN_IF_ERROR(
        set_kernel_attribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  unsigned grid = 0;
  TILESORT_RETURN_IF_ERROR(
      cooperative_grid(kernel, base::merge_threads, sizeof(storage), Policy::dense_kway_min_blocks, INT_MAX, grid));
  return launch_cooperative_kernel(kernel, grid, base::merge_threads, sizeof(storage), stream, dependent, buffers,
                                   shapes, reinterpret_cast<std::int64_t*>(jobs), control, comp);
}

// Blocksort, then the passes kernel: boundary windows, up to `passes` merge
// passes and the final copy of the segments in `list` (at most layout.blocks
// blocksort entries). `control` is zeroed. `DensePasses` false: one
// segment takes no dense passes either (the front door probed its keys), and
// their kernels are not compiled.
template <typename Policy, bool DensePasses = true, typename Key, typename Value, typename Compare>
cudaError_t launch_locality_merge(const Key* keys_in, const Value* values_in, const merge_buffers<Key, Value>& buffers,
                                  const merge_segment_list& list, const locality_layout& layout, void* temp,
                                  int passes, merge_control* control, Compare comp, cudaStream_t stream) {
  if (layout.blocks <= 0) return cudaSuccess;
  if (passes > max_merge_passes || layout.blocks > INT_MAX) return cudaErrorInvalidValue;
  char* base = static_cast<char*>(temp);
  std::uint8_t* locations = reinterpret_cast<std::uint8_t*>(base + layout.locations_offset);
  merge_job* jobs = reinterpret_cast<merge_job*>(base + layout.jobs_offset);
  // One segment (locality sort): the dense passes, for random keys.
  static_assert(Policy::dense_kernel_min_keys <= Policy::dense_kway_min_keys, "the k-way passes follow the own kernel");
  const dense_passes dense = locality_dense_choice<Policy>(DensePasses && list.segments == nullptr, list.n);

  // The k-way dense passes' plan (merge_passes 0: not these), worked out once.
  const kway_merge_sort_plan kway =
      takes_kway_passes(dense) ? locality_dense_plan<Policy>(list.n) : kway_merge_sort_plan{};
  if (kway.merge_passes > max_merge_passes) return cudaErrorInvalidValue;
  // A locality sort's passes (`passes` is merge_passes_for(n) there).
  const locality_list_passes list_passes{passes, takes_kway_passes(dense) ? kway.merge_passes : passes};

  const auto blocksort = [&](auto shape) {
    using blocksort_policy = decltype(shape);
    using shared = locality_blocksort_shared<blocksort_policy, Key, Value>;
    auto* kernel = locality_blocksort_kernel<blocksort_policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(kernel, shared::bytes));
    return launch_kernel(kernel, static_cast<unsigned>(layout.blocks), blocksort_policy::block_threads, shared::bytes,
                         stream, false, keys_in, values_in, buffers, list, list_passes, locations, control, comp);
  };
  if constexpr (Policy::wide_blocksort) {  // not where merge_sort's k-way passes may follow
    TILESORT_RETURN_IF_ERROR(dense == dense_passes::kway_kernels ? blocksort(Policy{})
                                                                 : blocksort(locality_wide_blocksort<Policy>{}));
  } else {
    TILESORT_RETURN_IF_ERROR(blocksort(Policy{}));
  }
  if (passes == 0) return cudaSuccess;  // every tile was written to keys_out

  using storage_type = locality_merge_storage<Key, Value, Policy::merge_tile_items>;
  static_assert(alignof(storage_type) <= 16, "dynamic shared memory is 16-byte aligned");
  auto* kernel = locality_passes_kernel<Policy, Key, Value, Compare>;
  if constexpr (Policy::merge_prefers_shared)
    TILESORT_RETURN_IF_ERROR(
        set_kernel_attribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  unsigned grid = 0;
  TILESORT_RETURN_IF_ERROR(cooperative_grid(kernel, Policy::merge_threads, sizeof(storage_type),
                                            Policy::merge_min_blocks, layout.tiles, grid));
  // A dependent of the blocksort (detail/launch.cuh): its blocks
  // become resident while the blocksort's last wave runs.
  bool dependent = false;
  TILESORT_RETURN_IF_ERROR(dependent_launch_supported(dependent));
  TILESORT_RETURN_IF_ERROR(launch_cooperative_kernel(kernel, grid, Policy::merge_threads, sizeof(storage_type),
                                                     stream, dependent, buffers, list, locations, layout.tiles,
                                                     jobs, passes, dense, control, comp));
  if constexpr (!DensePasses) {
    return cudaSuccess;
  } else if constexpr (Policy::base::merge_ways > 2) {
    if (dense == dense_passes::kway_kernels)
      return launch_locality_dense_kway<Policy>(buffers, kway, jobs, control, dependent, comp, stream);
    if (dense == dense_passes::kway_kernel)
      return launch_locality_dense_kway_kernel<Policy>(buffers, kway, jobs, control, dependent, comp, stream);
  } else {  // merge_ways == 2: the only items that take the own kernel
    if (dense != dense_passes::own_kernel) return cudaSuccess;
    auto* dense_kernel = locality_dense_passes_kernel<Policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(cooperative_grid(dense_kernel, Policy::merge_threads, sizeof(storage_type),
                                              Policy::dense_min_blocks,
                                              ceil_div(list.n, std::int64_t(Policy::merge_tile_items)), grid));
    return launch_cooperative_kernel(dense_kernel, grid, Policy::merge_threads, sizeof(storage_type), stream,
                                     dependent, buffers, list.n, passes, control, comp);
  }
  return cudaSuccess;
}

}  // namespace tilesort::detail
