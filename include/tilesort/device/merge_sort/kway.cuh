// device/merge_sort/kway.cuh — the k-way merge passes of the device merge
// sort (device/merge_sort.cuh), for items of 4 bytes and more: pass p merges
// groups of K = merge_ways runs of T·K^p keys, in two launches. The cut
// kernel ranks every cut_stride-th key of each run (a sample) among its
// group's samples and, at every cut_samples-th rank, finds the split in each
// run: a tile of at most (cut_samples + K) x cut_stride keys
// (detail/merge_sort_plan.cuh, kway_pass_shape). The merge kernel copies a
// tile's K slices into shared memory (cp.async, or through registers for
// items whose size or alignment is not a multiple of 4 bytes), merges them
// pairwise in log2(K) rounds of merge_items outputs per thread, skipping
// rounds with nothing to merge, and stores the tile coalesced. ceil(log_K(runs))
// passes, one read and one write of every item each. The locality sort runs
// these passes on grids of about a wave (persistent merge blocks, striding
// cut lanes) so that input that needs no pass skips them cheaply.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "../../detail/async_copy.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/merge_path.cuh"
#include "../../detail/merge_sort_plan.cuh"
#include "pairwise.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ k-way merge pass
// Cuts of a k-way pass (kway_pass_shape): Ways lanes per sample slot, lane
// m answering for run m. Each lane counts the samples of its run that come
// before the sample (a binary search); when the sum (the sample's rank among
// its group's samples) is a multiple of cut_samples, each lane finds its
// run's split by a search between two samples and writes it.
// One lane (`lane` / Ways is its sample slot, below sample_slots()).
template <int Ways, typename Key, typename Compare>
TILESORT_DEVICE void merge_sort_cut_lane(const Key* keys, const kway_pass_shape& pass, std::int64_t* cuts,
                                         std::int64_t lane, Compare comp) {
  const std::int64_t slot = lane / Ways;
  constexpr unsigned members = Ways == 32 ? 0xffffffffu : (1u << Ways) - 1u;
  const unsigned mask = members << (threadIdx.x % 32 / Ways * Ways);
  const int m = static_cast<int>(threadIdx.x % Ways);
  const std::int64_t group = slot >> (pass.run_samples_shift + log2_floor(Ways));
  const int j = static_cast<int>(slot >> pass.run_samples_shift) % Ways;
  const std::int64_t s = slot & (pass.run_samples() - 1);
  const std::int64_t position = s << pass.stride_shift;
  if (position >= pass.run_length(group, j)) return;  // past n: whole groups of lanes
  const Key x = keys[pass.run_begin(group, j) + position];
  const Key* run = keys + pass.run_begin(group, m);
  const std::int64_t length = pass.run_length(group, m);
  const std::int64_t before = m == j ? s : kway_samples_before(run, length, m, x, j, pass.stride_shift, comp);
  std::int64_t rank = before;
TILESORT_UNROLL
  for (int offset = 1; offset < Ways; offset *= 2) rank += __shfl_xor_sync(mask, rank, offset, Ways);
  // rank / cut_samples, in 32 bits where it fits (a 64-bit division costs dozens of instructions)
  const std::int64_t cut = rank < (std::int64_t(1) << 32)
                               ? std::int64_t(static_cast<unsigned>(rank) / static_cast<unsigned>(pass.cut_samples))
                               : rank / pass.cut_samples;
  if (cut * pass.cut_samples != rank) return;  // whole groups of lanes
  const std::int64_t split = m == j ? position : kway_split(run, length, m, x, j, before, pass.stride_shift, comp);
  cuts[(group * pass.cuts_per_group + cut) * Ways + m] = split;
}

// The lanes stride over the grid (a multiple of Ways threads per block), so
// whole groups of lanes run each step: one lane per thread in merge_sort, a
// wave of blocks where the pass may be skipped. `skip_unless_zero`: null, or
// a device counter that must be 0 for the kernel to run (the locality sort's
// count of blocksort tiles that looked local).
template <int Ways, typename Key, typename Compare>
TILESORT_DEVICE void merge_sort_cut_lanes(const Key* keys, const kway_pass_shape& pass, std::int64_t* cuts,
                                          Compare comp) {
  const std::int64_t lanes = pass.sample_slots() * Ways;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t lane = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; lane < lanes; lane += stride)
    merge_sort_cut_lane<Ways>(keys, pass, cuts, lane, comp);
}

template <int Ways, typename Key, typename Compare>
__global__ void merge_sort_cut_kernel(const Key* keys, kway_pass_shape pass, std::int64_t* cuts,
                                      const unsigned* skip_unless_zero, Compare comp) {
  if (!begin_dependent_kernel(skip_unless_zero)) return;  // keys are the previous kernel's output
  merge_sort_cut_lanes<Ways>(keys, pass, cuts, comp);
}

// A sorted list in the padded shared-memory tile, seen from index `base`.
template <typename Key>
struct padded_list {
  const Key* keys;
  int base;
  TILESORT_HD const Key& operator[](int i) const { return keys[transpose_slot<Key>(base + i)]; }
};

template <typename Key, typename Value, int TileItems>
struct merge_sort_kway_storage {
  static constexpr bool pairs = has_values<Value>;
  Key keys[transpose_slots<Key>(TileItems)];                    // the tile, padded
  int sources[pairs ? transpose_slots<int>(TileItems) : 1];     // where each key was loaded
  Value values[pairs ? TileItems : 1];                          // as loaded
};

// bounds[index] for an index known only at run time (no local-memory array).
template <int Count>
TILESORT_DEVICE int kway_bound(const int (&bounds)[Count], int index) {
  int value = bounds[0];
TILESORT_UNROLL
  for (int q = 1; q < Count; ++q)
    if (index == q) value = bounds[q];
  return value;
}

// One tile of a k-way pass (a block's): the K slices between two cuts are
// loaded into shared memory (slice m at [bounds[m], bounds[m + 1])), merged
// pairwise in log2(K) rounds (each thread merging Items outputs of a round
// into registers, then writing them back), and stored coalesced.
template <typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_kway_tile(merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>& storage,
                                          const Key* keys_src, Key* keys_dst, const Value* values_src,
                                          Value* values_dst, const std::int64_t* cuts, const kway_pass_shape& pass,
                                          unsigned tile, Compare comp) {
  constexpr int K = Policy::merge_ways;
  constexpr int Threads = Policy::merge_threads;
  constexpr int Items = Policy::merge_items;
  constexpr bool pairs = has_values<Value>;
  // Padded slots without per-item arithmetic: a thread's blocked run of Items
  // never crosses a pad, and striped items lie a fixed number of slots apart.
  static_assert(transpose_pad_period<Key> % Items == 0 && transpose_pad_period<int> % Items == 0 &&
                    Threads % transpose_pad_period<Key> == 0 && Threads % transpose_pad_period<int> == 0,
                "constant padded offsets");
  constexpr int striped_step = transpose_slot<Key>(Threads);
  constexpr int sources_step = transpose_slot<int>(Threads);
  const auto per_group = static_cast<unsigned>(pass.cuts_per_group);  // a 32-bit division: tiles fit 32 bits
  const std::int64_t group = tile / per_group;
  const std::int64_t cut = tile - group * per_group;
  const std::int64_t last_cut = pass.group_cuts(group) - 1;
  if (cut > last_cut) return;
  const std::int64_t* here = cuts + (group * per_group + cut) * K;
  int bounds[K + 1];
  bounds[0] = 0;
  std::int64_t out_begin = pass.run_begin(group, 0);
  std::int64_t src_offset[K];  // slice m's key j (tile index) is keys_src[src_offset[m] + j]
TILESORT_UNROLL
  for (int m = 0; m < K; ++m) {
    const std::int64_t begin = here[m];
    const std::int64_t end = cut < last_cut ? here[K + m] : pass.run_length(group, m);
    src_offset[m] = pass.run_begin(group, m) + begin - bounds[m];
    bounds[m + 1] = bounds[m] + static_cast<int>(end - begin);
    out_begin += begin;
  }
  const int count = bounds[K];
  const int thread = static_cast<int>(threadIdx.x);

  if constexpr (copies_to_shared_async<Key> && (!pairs || copies_to_shared_async<Value>)) {
    // Load slice by slice, straight to shared memory (cp.async): this
    // thread's items k of slice m form one range of k, each copied from one
    // base plus k x Threads. Faster than the register load below by 3-10%
    // and no staging registers (docs/tuning/merge_sort.md).
    constexpr int thread_shift = log2_floor(Threads);
    const auto first_item_at = [&](int bound) {  // the first k with thread + k x Threads >= bound
      return bound > thread ? (bound - thread + Threads - 1) >> thread_shift : 0;
    };
    Key* keys_striped = storage.keys + transpose_slot<Key>(thread);  // item k at keys_striped[k * striped_step]
    int k = 0;
TILESORT_UNROLL
    for (int m = 0; m < K; ++m) {
      const int k_end = first_item_at(bounds[m + 1]);
      const Key* src = keys_src + src_offset[m] + thread;
      const Value* values = pairs ? values_src + src_offset[m] + thread : values_src;
      for (; k < k_end; ++k) {
        copy_to_shared_async(keys_striped + k * striped_step, src + k * Threads);
        if constexpr (pairs) copy_to_shared_async(storage.values + thread + k * Threads, values + k * Threads);
      }
    }
    wait_for_shared_copies();  // the barrier before the first round makes every thread's copies visible
  } else {  // load, striped, through registers (a key or value of a size or alignment not a multiple of 4 bytes)
    Key items[Items];
    Value vitems[pairs ? Items : 1];
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      std::int64_t offset = src_offset[0];
TILESORT_UNROLL
      for (int q = 1; q < K; ++q)
        if (j >= bounds[q]) offset = src_offset[q];
      if (j < count) {
        items[k] = keys_src[offset + j];
        if constexpr (pairs) vitems[k] = values_src[offset + j];
      }
    }
    // Item k's slot as one base plus constants, except for keys of 8 bytes
    // or more, where the base took registers the loads needed (it spilled).
    Key* keys_striped = storage.keys + transpose_slot<Key>(thread);  // item k at keys_striped[k * striped_step]
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (j < count) {
        if constexpr (sizeof(Key) < 8) {
          keys_striped[k * striped_step] = items[k];
        } else {
          storage.keys[transpose_slot<Key>(j)] = items[k];
        }
        if constexpr (pairs) storage.values[j] = vitems[k];
      }
    }
  }

  const int first = thread * Items;
TILESORT_UNROLL
  for (int width = 1; width < K; width *= 2) {
    __syncthreads();  // the tile (or the previous round) is in shared memory
    // A later round in which no pair has two non-empty lists leaves the tile
    // as it is: the last pass when a group has fewer than K runs (K = 4 with
    // an odd log2 of the run count: every power-of-two n with T = 8192).
    // The first round always runs: it writes the sources that pairs store by.
    if (width > 1) {
      bool idle = true;
TILESORT_UNROLL
      for (int q = 0; q < K / (2 * width); ++q) {
        const int mid = bounds[2 * width * q + width];
        if (bounds[2 * width * q] < mid && mid < bounds[2 * width * q + 2 * width]) idle = false;
      }
      if (idle) continue;  // block-uniform: the bounds are the tile's
    }
    Key out[Items];
    int source[Items];
    if (first < count) {
      // The pair of lists that holds output `first`: lists [bounds[2wi], bounds[2wi + w]) and
      // [bounds[2wi + w], bounds[2wi + 2w]).
      int pair = 0;
TILESORT_UNROLL
      for (int q = 1; q < K / (2 * width); ++q)
        if (first >= bounds[2 * width * q]) pair = q;
      int a = kway_bound(bounds, 2 * width * pair);
      int a_end = kway_bound(bounds, 2 * width * pair + width);
      int b_end = kway_bound(bounds, 2 * width * pair + 2 * width);
      const int diagonal = first - a;
      const int split = merge_path<int>(padded_list<Key>{storage.keys, a}, a_end - a,
                                        padded_list<Key>{storage.keys, a_end}, b_end - a_end, diagonal, comp);
      int b = a_end + diagonal - split;
      a += split;
      // As serial_merge (thread/thread_sort.cuh): branch-free, one read per
      // output at an index clamped into the tile; a thread whose outputs
      // cross into the next pair of lists moves on to it.
      const int last = count - 1;
      const auto read = [&](int i) { return storage.keys[transpose_slot<Key>(i < last ? i : last)]; };
      Key a_key = read(a);
      Key b_key = read(b);
TILESORT_UNROLL
      for (int k = 0; k < Items; ++k) {
        while (a >= a_end && b >= b_end && pair + 1 < K / (2 * width)) {  // this pair is done
          ++pair;
          a = b_end;
          a_end = kway_bound(bounds, 2 * width * pair + width);
          b = a_end;
          b_end = kway_bound(bounds, 2 * width * pair + 2 * width);
          a_key = read(a);
          b_key = read(b);
        }
        const bool take_b = b < b_end && (a >= a_end || comp(b_key, a_key));
        out[k] = take_b ? b_key : a_key;
        if constexpr (pairs) {
          const int from = take_b ? b : a;
          source[k] = width == 1 ? from : storage.sources[transpose_slot<int>(from < last ? from : last)];
        }
        b += take_b ? 1 : 0;
        a += take_b ? 0 : 1;
        const Key next = read(take_b ? b : a);
        b_key = take_b ? next : b_key;
        a_key = take_b ? a_key : next;
      }
    }
    __syncthreads();  // every thread has read this round's lists
    Key* keys_blocked = storage.keys + transpose_slot<Key>(first);  // output first + k at keys_blocked[k]
    int* sources_blocked = storage.sources + (pairs ? transpose_slot<int>(first) : 0);
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      if (first + k < count) {
        keys_blocked[k] = out[k];
        if constexpr (pairs) sources_blocked[k] = source[k];
      }
    }
  }
  __syncthreads();
  const Key* keys_striped = storage.keys + transpose_slot<Key>(thread);
  const int* sources_striped = storage.sources + (pairs ? transpose_slot<int>(thread) : 0);
TILESORT_UNROLL
  for (int k = 0; k < Items; ++k) {
    const int j = thread + k * Threads;
    if (j < count) {
      keys_dst[out_begin + j] = keys_striped[k * striped_step];
      if constexpr (pairs) values_dst[out_begin + j] = storage.values[sources_striped[k * sources_step]];
    }
  }
}

// The tiles of a k-way pass taken in turn by a grid of resident blocks: tile
// blockIdx.x first, then the grid's next from *tiles_taken (zeroed), fetched
// while the block merges.
template <typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_kway_tiles(merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>& storage,
                                           const Key* keys_src, Key* keys_dst, const Value* values_src,
                                           Value* values_dst, const std::int64_t* cuts, const kway_pass_shape& pass,
                                           unsigned* tiles_taken, Compare comp) {
  __shared__ unsigned next_tile;
  const auto tiles = static_cast<unsigned>(pass.tiles());
  unsigned tile = blockIdx.x;
  while (tile < tiles) {
    unsigned following = 0;
    if (threadIdx.x == 0) following = atomicAdd(tiles_taken, 1u) + gridDim.x;  // in flight during the merge
    merge_sort_kway_tile<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, tile, comp);
    __syncthreads();  // every thread is done with shared memory and with next_tile
    if (threadIdx.x == 0) next_tile = following;
    __syncthreads();
    tile = next_tile;
  }
}

// A k-way pass's merge kernel: one block per tile, or (`Persistent`, for a
// pass that may be skipped: `skip_unless_zero` as merge_sort_cut_kernel's)
// about the resident blocks, each taking tile after tile from a counter
// (`tiles_taken`, zeroed; the first tile of a block is its own index), the
// next one fetched while the current one merges. A skipped pass then costs
// a launch of a wave instead of a block per tile. When it merges, the
// persistent kernel is slower than one block per tile, so merge_sort keeps
// the latter (docs/tuning/merge_sort.md).
template <typename Policy, bool Persistent, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::merge_min_blocks)
    merge_sort_kway_kernel(const Key* keys_src, Key* keys_dst, const Value* values_src, Value* values_dst,
                           const std::int64_t* cuts, kway_pass_shape pass, const unsigned* skip_unless_zero,
                           unsigned* tiles_taken, Compare comp) {
  using storage_type = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  if (!begin_dependent_kernel(skip_unless_zero)) return;  // cuts and keys_src are earlier kernels' output
  auto& storage = *reinterpret_cast<storage_type*>(merge_sort_smem);
  if constexpr (Persistent) {
    merge_sort_kway_tiles<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, tiles_taken, comp);
  } else {
    merge_sort_kway_tile<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, blockIdx.x, comp);
  }
}

// ------------------------------------------------------------------ host side
// The k-way merge kernel's shared memory, allowed once before its launches.
template <typename Policy, bool Persistent, typename Key, typename Value, typename Compare>
cudaError_t merge_sort_allow_kway_smem() {
  using storage = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
  return allow_dynamic_shared_memory(merge_sort_kway_kernel<Policy, Persistent, Key, Value, Compare>, sizeof(storage));
}

// The grids of a pass that may be skipped: at most these many blocks of the
// cut kernel and of the persistent merge kernel (about a wave of each).
struct kway_pass_grids {
  std::int64_t cut_blocks = 0;
  std::int64_t merge_blocks = 0;
};

// One k-way pass: its cut kernel, then its merge kernel (dependent launches
// when `dependent`), both skipped on the device unless *skip_unless_zero is 0
// (null: never skipped). `cuts` holds K entries per tile of the pass. The
// persistent merge kernel takes tiles from *tiles_taken (zeroed); its grid
// and the cut kernel's are capped by `most` (otherwise one block per tile
// and per 256 cut lanes).
template <typename Policy, bool Persistent, typename Key, typename Value, typename Compare>
cudaError_t launch_kway_pass(const kway_pass_shape& shape, const Key* keys_src, Key* keys_dst, const Value* values_src,
                             Value* values_dst, std::int64_t* cuts, const unsigned* skip_unless_zero, bool dependent,
                             Compare comp, cudaStream_t stream, unsigned* tiles_taken = nullptr,
                             const kway_pass_grids& most = {}) {
  using storage = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  static_assert(merge_sort_partition_threads % Policy::merge_ways == 0, "whole groups of cut lanes per block");
  const auto capped = [](std::int64_t blocks, std::int64_t cap) { return cap > 0 && cap < blocks ? cap : blocks; };
  const std::int64_t cut_blocks =
      capped(ceil_div(shape.sample_slots() * Policy::merge_ways, merge_sort_partition_threads), most.cut_blocks);
  TILESORT_RETURN_IF_ERROR(launch_kernel(merge_sort_cut_kernel<Policy::merge_ways, Key, Compare>,
                                         static_cast<unsigned>(cut_blocks), merge_sort_partition_threads, 0, stream,
                                         dependent, keys_src, shape, cuts, skip_unless_zero, comp));
  const std::int64_t grid = Persistent ? capped(shape.tiles(), most.merge_blocks) : shape.tiles();
  return launch_kernel(merge_sort_kway_kernel<Policy, Persistent, Key, Value, Compare>, static_cast<unsigned>(grid),
                       Policy::merge_threads, sizeof(storage), stream, dependent, keys_src, keys_dst, values_src,
                       values_dst, cuts, shape, skip_unless_zero, tiles_taken, comp);
}


// The grids of k-way passes that may be skipped (launch_kway_pass's `most`):
// the resident blocks of the cut kernel and of the persistent merge kernel,
// whose shared memory this also allows.
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t resident_kway_grids(kway_pass_grids& grids) {
  using storage = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
  unsigned cut_blocks = 0, merge_blocks = 0;
  TILESORT_RETURN_IF_ERROR(cooperative_grid(merge_sort_cut_kernel<Policy::merge_ways, Key, Compare>,
                                            merge_sort_partition_threads, 0, INT_MAX, INT_MAX, cut_blocks));
  TILESORT_RETURN_IF_ERROR(cooperative_grid(merge_sort_kway_kernel<Policy, true, Key, Value, Compare>,
                                            Policy::merge_threads, sizeof(storage), INT_MAX, INT_MAX, merge_blocks));
  grids = kway_pass_grids{cut_blocks, merge_blocks};
  return cudaSuccess;
}

}  // namespace tilesort::detail
