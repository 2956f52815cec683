// device/locality_sort/kernels.cuh — the kernels of the early-exit merge sort
// after its blocksort (device/locality_sort/merge.cuh launches them): the
// passes kernel (one cooperative launch running the phases of
// device/locality_sort/phases.cuh: boundary windows, then per pass jobs and
// merges, then the final copy), the dense passes kernel that runs
// merge_sort's passes for random keys in a locality sort (pairwise, or
// k-way in one cooperative launch), and the kernel that writes sort_stats
// from the counters.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../detail/config.cuh"
#include "../../detail/merge_jobs.cuh"
#include "../../detail/launch.cuh"
#include "blocksort.cuh"
#include "phases.cuh"
#include "../sort_stats.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ dense passes
// Random keys in a locality sort (one segment, no blocksort tile looked
// local): every tile lies where merge_sort's ping-pong puts it
// (blocksort_to_temp), nothing is in order or fixable by a window, and
// every pass merges every tile. So these are merge_sort's passes, in one
// cooperative launch at an occupancy the passes kernel (80 registers, 3
// blocks per SM) does not reach: its job and merge phases were slower than
// merge_sort's two kernels on every pass.
// Block b merges the same contiguous run of merge tiles in every pass (the
// tiles split evenly, the first ones one more) and finds their partitions
// itself, up to job_groups - 1 tiles at a time (a group of job_ways lanes
// per partition, as merge_sort_partition_kernel): one grid barrier per pass,
// no partition array. Run by a kernel of its own, launched after the passes
// kernel (from dense_kernel_min_keys keys on), or by the passes kernel itself.
template <typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void locality_dense_passes(const merge_buffers<Key, Value>& buffers, std::int64_t n, int passes,
                                           merge_control* control, Compare comp) {
  constexpr int threads = Policy::merge_threads;
  constexpr int ways = Policy::job_ways;
  constexpr int groups = Policy::job_groups;
  constexpr int m = Policy::merge_tile_items;
  using storage_type = locality_merge_storage<Key, Value, m>;
  auto& storage = *reinterpret_cast<storage_type*>(locality_smem);
  __shared__ std::int64_t partitions[groups];
  const int group = static_cast<int>(threadIdx.x) / ways;
  const search_lanes<ways> lanes;
  const std::int64_t merge_tiles = ceil_div(n, std::int64_t(m));
  const std::int64_t share = merge_tiles / gridDim.x, extra = merge_tiles % gridDim.x;
  const std::int64_t first = blockIdx.x * share + (blockIdx.x < extra ? blockIdx.x : extra);
  const std::int64_t end = first + share + (blockIdx.x < extra ? 1 : 0);
  grid_barrier barrier{&control->barrier_arrivals};
  std::uint8_t source = blocksort_to_temp(false, passes) ? in_temp : in_output;
  for (int pass = 0; pass < passes; ++pass, source ^= 1u) {
    const std::int64_t run = std::int64_t(Policy::tile_items) << pass;
    for (std::int64_t chunk = first; chunk < end; chunk += groups - 1) {
      const int tiles = static_cast<int>(end - chunk < groups - 1 ? end - chunk : groups - 1);
      if (group <= tiles) {
        const std::int64_t partition =
            merge_sort_partition<ways>(buffers.keys(source), n, run, m, chunk + group, comp, lanes);
        if (lanes.member == 0) partitions[group] = partition;
      }
      __syncthreads();
      for (int t = 0; t < tiles; ++t) {
        const merge_tile_slices slices = merge_tile_range(chunk + t, m, run, n, partitions[t], partitions[t + 1]);
        merge_sort_merge_tile<false, threads, Policy::merge_items>(storage, slices, buffers.keys(source),
                                                                   buffers.keys(source ^ 1u), buffers.values(source),
                                                                   buffers.values(source ^ 1u), comp);
        __syncthreads();  // the tile's shared-memory reads come before the next one's writes
      }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      control->pass[pass].merge_tiles = static_cast<unsigned long long>(merge_tiles);
      control->pass[pass].merged_keys = static_cast<unsigned long long>(n);
    }
    barrier.sync();  // the pass's keys are written
  }
}

// The passes kernel's call (below dense_kernel_min_keys keys): a function of
// its own, so that no merge is inlined twice in one kernel (see
// merge_sort_merge_kernel).
template <typename Policy, typename Key, typename Value, typename Compare>
__device__ __noinline__ void locality_dense_passes_call(const merge_buffers<Key, Value>& buffers, std::int64_t n,
                                                        int passes, merge_control* control, Compare comp) {
  locality_dense_passes<Policy>(buffers, n, passes, control, comp);
}

// The dense passes' own kernel: returns at once unless the keys are random.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::dense_min_blocks)
    locality_dense_passes_kernel(merge_buffers<Key, Value> buffers, std::int64_t n, int passes,
                                 merge_control* control, Compare comp) {
  wait_for_previous_kernel();  // the passes kernel, and through it the blocksort
  if (control->local_tiles != 0) return;
  locality_dense_passes<Policy>(buffers, n, passes, control, comp);
}

// The phases of locality_dense_kway_kernel, functions of their own so that
// the pass loop's registers do not add to theirs.
template <int Ways, typename Key, typename Compare>
__device__ __noinline__ void locality_dense_cuts(const Key* keys, const kway_pass_shape& pass, std::int64_t* cuts,
                                                 Compare comp) {
  merge_sort_cut_lanes<Ways>(keys, pass, cuts, comp);
}
template <typename Policy, typename Key, typename Value, typename Compare>
__device__ __noinline__ void locality_dense_merges(const Key* keys_src, Key* keys_dst, const Value* values_src,
                                                   Value* values_dst, const std::int64_t* cuts,
                                                   const kway_pass_shape& pass, unsigned* tiles_taken,
                                                   Compare comp) {
  using storage_type = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  auto& storage = *reinterpret_cast<storage_type*>(locality_smem);
  merge_sort_kway_tiles<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, tiles_taken, comp);
}

// The shapes of the k-way dense passes, a kernel parameter (read from the
// constant bank like merge_sort's per-pass shapes, not held in registers).
struct locality_kway_shapes {
  int passes = 0;
  kway_pass_shape pass[max_merge_passes];
};

// merge_sort's k-way passes in one cooperative launch of resident blocks
// (below dense_kway_min_keys): returns at once unless the keys are random;
// per pass, the cut lanes strided over the grid, a grid barrier, the tiles
// taken in turn (merge_sort_kway_tiles), a grid barrier.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::base::merge_threads, Policy::dense_kway_min_blocks)
    locality_dense_kway_kernel(merge_buffers<Key, Value> buffers, const __grid_constant__ locality_kway_shapes shapes,
                               std::int64_t* cuts, merge_control* control, Compare comp) {
  using base = typename Policy::base;
  wait_for_previous_kernel();  // the passes kernel, and through it the blocksort
  if (control->local_tiles != 0) return;
  grid_barrier barrier{&control->barrier_arrivals};  // the passes kernel returned before its barriers
  std::uint8_t source = blocksort_to_temp(false, shapes.passes) ? in_temp : in_output;
  for (int pass = 0; pass < shapes.passes; ++pass, source ^= 1u) {
    const kway_pass_shape& shape = shapes.pass[pass];
    locality_dense_cuts<base::merge_ways>(buffers.keys(source), shape, cuts, comp);
    barrier.sync();
    locality_dense_merges<base>(buffers.keys(source), buffers.keys(source ^ 1u), buffers.values(source),
                                buffers.values(source ^ 1u), cuts, shape, &control->kway_tiles_taken[pass], comp);
    barrier.sync();
  }
}

// ------------------------------------------------------------------ passes
// Everything after the blocksort, in one cooperative launch (all blocks
// resident, merge_min_blocks per SM at most) whose phases are separated by
// grid barriers: the boundary plans, their window merges, then per pass the
// jobs and their merges, then the final copy. A pass that nothing needs
// (every boundary in order after the windows, or past the passes any
// segment needs) ends the loop in every block at once: the counters it
// reads are final at the barrier before. One launch instead of 2P + 2: the
// launches of passes with little or nothing to merge were most of the time
// of sorted, nearly sorted and small inputs. The boundary, job and copy
// phases are functions of their own (noinline), so that their registers do
// not add to the merge loop's (-Xptxas -v, nvcc 13.0, u32 keys at 64
// registers: 360 bytes of spill inlined, 196 as calls; at 80 registers the
// merge loop keeps everything in registers; the spill left is the saves
// around the calls).
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::merge_min_blocks)
    locality_passes_kernel(merge_buffers<Key, Value> buffers, merge_segment_list list, std::uint8_t* location_arrays,
                           std::int64_t array_stride, merge_job* jobs, int passes, dense_passes dense,
                           merge_control* control, Compare comp) {
  allow_next_kernel();         // the dense passes kernel, when it follows, waits for this grid to finish
  wait_for_previous_kernel();  // the blocksort's keys, locations and counters
  if (dense != dense_passes::none && control->local_tiles == 0) {  // random keys in a locality sort
    if (dense == dense_passes::in_passes_kernel)
      locality_dense_passes_call<Policy>(buffers, list.n, passes, control, comp);
    return;
  }
  if (control->unfinished_tiles == 0) return;  // sorted input: every tile is final in keys_out
  using tiling = locality_tiling<Policy>;
  constexpr int threads = Policy::merge_threads;
  const auto locations_of = [&](int pass) { return location_arrays + (pass & 1) * array_stride; };
  // Merge-tile entries (a segment list's count is on the device).
  const auto tiles = [&] { return list.blocks() * tiling::merge_tiles_per_block; };
  grid_barrier barrier{&control->barrier_arrivals};
  const std::int64_t stride = gridDim.x;

  for (std::int64_t first = blockIdx.x * std::int64_t(threads); first < list.blocks(); first += stride * threads)
    locality_plan_boundaries<Policy>(first, buffers.keys_out, buffers.keys_temp, list, locations_of(0),
                                     locations_of(1), jobs, control, comp);
  barrier.sync();
  locality_merge_jobs<false, Policy>(buffers, jobs, control->boundary.job_count, comp);
  barrier.sync();

  // Passes run while some boundary is out of order after the windows (none:
  // the boundary plans left both location arrays alike) and some segment
  // needs them. Their merges gather with cp.async (faster for random keys),
  // the windows' with registers (faster for nearly sorted input). Written
  // with one merge call site for the windows and the passes, this kernel
  // sorted wrongly on sm_90 (cause not found; merge_sort_merge_kernel notes
  // a like case), so the two call sites stay.
  int pass = 0;
  for (;; ++pass) {
    const unsigned needed = control->out_of_order_boundaries == 0 ? 0u : control->needed_passes;
    if (pass >= passes || static_cast<unsigned>(pass) >= needed) break;
    const std::int64_t job_blocks = ceil_div(tiles(), std::int64_t(Policy::job_groups - 1));
    for (std::int64_t job_block = blockIdx.x; job_block < job_blocks; job_block += stride)
      locality_plan_jobs<Policy>(job_block, tiles(), pass, buffers.keys_out, buffers.keys_temp, list,
                                 locations_of(pass), locations_of(pass + 1), jobs, control, comp);
    barrier.sync();
    locality_merge_jobs<true, Policy>(buffers, jobs, control->pass[pass].job_count, comp);
    barrier.sync();
  }
  locality_final_copy<Policy>(buffers, list, tiles(), locations_of(pass), control);
}

// ------------------------------------------------------------------ statistics
// What the statistics kernel reads: the merge's counters (null: no merge
// ran), its shape, and the segmented sort's direct sorts, as device
// counters or, where they are null, numbers known on the host.
struct locality_stats_inputs {
  const merge_control* control = nullptr;
  std::int64_t n = 0;
  int tile_items = 0;       // keys per merge tile
  int blocksort_items = 0;  // keys per blocksort tile
  int passes = 0;           // merge passes launched
  const unsigned long long* direct_segments = nullptr;
  const unsigned long long* direct_keys = nullptr;
  std::int64_t host_direct_segments = 0;
  std::int64_t host_direct_keys = 0;
};

// The statistics of n keys with merge tiles of Policy, before any counter.
template <typename Policy>
locality_stats_inputs merge_stats_inputs(std::int64_t n) {
  locality_stats_inputs inputs;
  inputs.n = n;
  inputs.tile_items = Policy::merge_tile_items;
  inputs.blocksort_items = Policy::tile_items;
  return inputs;
}

// Writes *stats from the counters (one thread). Segmented sort adds the
// counts of its direct sorts (device counters, or known on the host).
// `dense`: the k-way dense passes of a locality sort (merge_passes 0: none),
// which count when no blocksort tile looked local.
template <int Unused = 0>
__global__ void locality_stats_kernel(sort_stats* stats, locality_stats_inputs in, kway_merge_sort_plan dense) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const merge_control* control = in.control;
  const std::int64_t n = in.n;
  const int tile_items = in.tile_items, passes = in.passes;
  sort_stats s{};
  s.n = n;
  s.tile_items = tile_items;
  s.blocksort_items = in.blocksort_items;
  s.full_pass_tiles = n > 0 ? (n - 1) / tile_items + 1 : 0;
  s.direct_segments = in.direct_segments ? static_cast<std::int64_t>(*in.direct_segments) : in.host_direct_segments;
  s.direct_keys = in.direct_keys ? static_cast<std::int64_t>(*in.direct_keys) : in.host_direct_keys;
  s.merge_passes = passes < max_merge_passes ? passes : max_merge_passes;
  if (control) {
    s.blocksort_tiles = static_cast<std::int64_t>(control->blocksort_tiles);
    s.presorted_tiles = static_cast<std::int64_t>(control->presorted_tiles);
    s.blocksort_keys = static_cast<std::int64_t>(control->blocksort_keys);
    s.boundary.merge_tiles = 0;
    s.boundary.window_merges = static_cast<std::int64_t>(control->boundary.window_merges);
    s.boundary.merged_keys = static_cast<std::int64_t>(control->boundary.merged_keys);
    for (int p = 0; p < s.merge_passes; ++p) {
      s.pass[p].merge_tiles = static_cast<std::int64_t>(control->pass[p].merge_tiles);
      s.pass[p].window_merges = static_cast<std::int64_t>(control->pass[p].window_merges);
      s.pass[p].merged_keys = static_cast<std::int64_t>(control->pass[p].merged_keys);
    }
    s.final_copy_tiles = static_cast<std::int64_t>(control->final_copy_tiles);
    s.final_copy_keys = static_cast<std::int64_t>(control->final_copy_keys);
    if (dense.merge_passes > 0 && control->local_tiles == 0) {  // merge_sort's k-way passes ran
      s.merge_passes = dense.merge_passes < max_merge_passes ? dense.merge_passes : max_merge_passes;
      for (int p = 0; p < s.merge_passes; ++p) {
        const kway_pass_shape shape = dense.pass_shape(p);
        s.pass[p].merge_tiles = (shape.groups - 1) * shape.cuts_per_group + shape.last_group_cuts;
        s.pass[p].window_merges = 0;
        s.pass[p].merged_keys = n;
      }
    }
  } else {
    s.merge_passes = 0;
  }
  *stats = s;
}

// Enqueue the statistics kernel when the caller asked for statistics.
inline cudaError_t write_sort_stats(sort_stats* stats, const locality_stats_inputs& inputs, cudaStream_t stream,
                                    const kway_merge_sort_plan& dense = {}) {
  if (stats == nullptr) return cudaSuccess;
  return launch_kernel(locality_stats_kernel<>, 1, 32, 0, stream, false, stats, inputs, dense);
}

}  // namespace tilesort::detail
