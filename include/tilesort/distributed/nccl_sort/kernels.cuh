// distributed/nccl_sort/kernels.cuh — the kernels of the distributed sort
// (distributed/nccl_sort.cuh), and the policy of its merge. No NCCL here:
// these run between the collectives that distributed/nccl_sort.cuh issues.
//
// Splitter search, per round (detail/nccl_sort_plan.cuh has the arithmetic):
//   cut_search_step_kernel   blocks per boundary: narrow the boundary's
//                            interval by the last round's probes (a 32-way
//                            search), then write this round's probes
//                            (positions and keys), a thread each;
//   probe_count_kernel       one thread per probe of every rank: how many of
//                            this rank's keys order before it (a binary search).
// Merge, per pass of pairwise merges over the received runs:
//   merge_plan_kernel        one thread: every pass's pair table (pointers,
//                            lengths, first tile), from the gathered cuts;
//   merge_split_kernel       one thread per tile boundary: its merge-path split;
//   merge_tile_kernel        one block per tile of outputs: load A's and B's
//                            parts (and values) into shared memory, then the
//                            device merge sort's merge steps (ties from A:
//                            stable in rank order).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../detail/config.cuh"
#include "../../detail/merge_path.cuh"
#include "../../detail/nccl_sort_plan.cuh"
#include "../../device/merge_sort/pairwise.cuh"

namespace tilesort {
namespace nccl {

/// Tuning of the distributed sort's merge of the received runs: threads per
/// block and outputs per thread of one merge tile, by key size. Not yet tuned
/// on a GPU: the shape follows the device merge sort's merge tiles (256
/// threads, 16 outputs of 4-byte keys per thread), halving the outputs per
/// thread as keys grow; a tile's keys, source indices and values sit in
/// shared memory (the merge sort's merge tile storage).
///
/// @code
/// static_assert(tilesort::nccl::merge_policy<std::uint32_t>::tile_items == 4096);
/// @endcode
template <typename Key>
struct merge_policy {
  /// Threads per merge block (64 for keys over 64 bytes).
  static constexpr int threads = sizeof(Key) > 64 ? 64 : 256;
  /// Outputs per thread.
  static constexpr int items = sizeof(Key) <= 4 ? 16 : sizeof(Key) <= 8 ? 8 : sizeof(Key) <= 16 ? 4 : sizeof(Key) <= 32 ? 2 : 1;
  /// Outputs per merge tile.
  static constexpr int tile_items = threads * items;
  static_assert(std::size_t(tile_items) * (sizeof(Key) + sizeof(int)) <= 48 * 1024,
                "keys past 700 bytes do not fit the distributed merge's shared-memory tile");
};

namespace detail {

using tilesort::detail::cut_interval;
using tilesort::detail::shard_header;

// The splitter search's device state (temp storage, nccl_sort_layout).
template <typename Key>
struct search_view {
  const shard_header* headers;
  int ranks;
  int me;
  std::int64_t n_total;
  std::int64_t probes;                // per boundary
  cut_interval* intervals;            // [2][ranks - 1]: round r reads set r % 2, writes set (r + 1) % 2
  std::int64_t* probe_positions_out;  // [ranks - 1][probes]: this rank's probes (-1: none)
  Key* probe_keys_out;                // [ranks - 1][probes]
  const unsigned char* probes_in;     // every rank's probe slot (positions, then keys), gathered
  std::size_t slot_bytes;
  std::size_t slot_keys_offset;
  std::int64_t* probe_counts;         // [ranks][ranks - 1][probes]: this rank's count for every probe
  const std::int64_t* probe_globals;  // [ranks - 1][probes]: global positions of this rank's probes
  std::int64_t* own_cuts;             // [ranks + 1]
};

// Grid (blocks per boundary, boundaries). Warp 0 of each block finds the
// boundary's interval: the first one (round 0), or the one the last round
// probed narrowed by a 32-way search for the first probe at or past the
// target (its global positions grow with the probe index). Then, if `probe`,
// each thread writes one probe (position and key); else (after the last
// round) block 0 writes the cut, -1 where it is not exact (the host rejects
// the cut matrix then). Every block of a boundary computes the same interval.
template <int Threads, typename Key>
__global__ void __launch_bounds__(Threads) cut_search_step_kernel(search_view<Key> v, const Key* run, int round, bool probe) {
  namespace plan = tilesort::detail;
  const int boundary = blockIdx.y;
  const int boundaries = v.ranks - 1;
  __shared__ cut_interval interval;
  if (threadIdx.x < 32) {
    const std::int64_t target = plan::shard_offset(v.headers, boundary + 1);
    cut_interval c = plan::first_cut_interval(target, v.headers[v.me].n_local, v.n_total);
    if (round > 0) {
      const cut_interval probed = v.intervals[(round % 2) * boundaries + boundary];
      const std::int64_t* globals = v.probe_globals + std::int64_t(boundary) * v.probes;
      const std::int64_t first = plan::partition_point_kway<32>(
          std::int64_t(0), plan::probes_used(probed, v.probes), [&](std::int64_t i) { return globals[i] >= target; },
          [](auto pred) { return __ballot_sync(0xffffffffu, pred(static_cast<int>(threadIdx.x))); });
      c = plan::narrowed_cut(probed, v.probes, first);
    }
    if (threadIdx.x == 0) interval = c;
  }
  __syncthreads();
  const cut_interval c = interval;
  const std::int64_t i = std::int64_t(blockIdx.x) * Threads + threadIdx.x;
  if (probe && i < v.probes) {
    const std::int64_t slot = std::int64_t(boundary) * v.probes + i;
    const std::int64_t position = plan::probe_position(c, v.probes, i);
    v.probe_positions_out[slot] = position;
    if (position >= 0) v.probe_keys_out[slot] = run[position];
  }
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  v.intervals[((round + 1) % 2) * boundaries + boundary] = c;
  if (!probe) {
    v.own_cuts[boundary + 1] = c.lo == c.hi ? c.lo : -1;
    if (boundary == 0) {
      v.own_cuts[0] = 0;
      v.own_cuts[v.ranks] = v.headers[v.me].n_local;
    }
  }
}

// Every probe of every rank: how many of this rank's keys come before it in
// (key, rank, index) order. A lower rank's equivalent keys come before the
// probe (an upper bound), a higher rank's after it (a lower bound); the
// probe's own rank counts its position.
template <typename Key, typename Compare>
__global__ void probe_count_kernel(search_view<Key> v, const Key* run, Compare comp) {
  const std::int64_t per_rank = std::int64_t(v.ranks - 1) * v.probes;
  const std::int64_t total = per_rank * v.ranks;
  const std::int64_t n_own = v.headers[v.me].n_local;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int owner = static_cast<int>(i / per_rank);
    const std::int64_t local = i - owner * per_rank;
    const unsigned char* slot = v.probes_in + std::size_t(owner) * v.slot_bytes;
    const std::int64_t position = reinterpret_cast<const std::int64_t*>(slot)[local];
    std::int64_t count = 0;
    if (position >= 0 && owner == v.me) {
      count = position;
    } else if (position >= 0) {
      Key probe;
      std::memcpy(&probe, slot + v.slot_keys_offset + std::size_t(local) * sizeof(Key), sizeof(Key));
      const bool ties_first = owner > v.me;
      count = tilesort::detail::partition_point_kway<1>(
          std::int64_t(0), n_own,
          [&](std::int64_t k) { return ties_first ? comp(probe, run[k]) : !comp(run[k], probe); },
          tilesort::detail::binary_search_tag{});
    }
    v.probe_counts[i] = count;
  }
}

// One pairwise merge of a pass: A = [a_keys, a_keys + a_count), B likewise,
// merged into out_keys; its tiles are first_tile, first_tile + 1, ...
template <typename Key, typename Value>
struct merge_pair_entry {
  const Key* a_keys;
  const Key* b_keys;
  const Value* a_values;
  const Value* b_values;
  Key* out_keys;
  Value* out_values;
  std::int64_t a_count;
  std::int64_t b_count;
  std::int64_t first_tile;
};

// The three buffers a pass reads or writes, indexed by merge_buffer (the
// values are null for keys alone).
template <typename Key, typename Value>
struct merge_buffers {
  Key* keys[3];
  Value* values[3];
};

// p + offset, or null for a null p (no values).
template <typename T>
__device__ T* advance(T* p, std::int64_t offset) {
  return p == nullptr ? nullptr : p + offset;
}

// One thread: the received runs' offsets (from column `me` of the cut
// matrix), then every pass's pairs. In pass 0 with the own run in place,
// the own run is read from the sorted buffer at own_run_offset.
template <typename Key, typename Value>
__global__ void merge_plan_kernel(const std::int64_t* cuts, std::int64_t* run_offsets, int ranks, int me,
                                  merge_buffers<Key, Value> buffers, merge_pair_entry<Key, Value>* pairs,
                                  std::int64_t tile_items) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  namespace plan = tilesort::detail;
  const int width = ranks + 1;
  run_offsets[0] = 0;
  for (int s = 0; s < ranks; ++s)
    run_offsets[s + 1] = run_offsets[s] + cuts[s * width + me + 1] - cuts[s * width + me];
  const std::int64_t own_offset = cuts[me * width + me];
  const bool in_place = plan::own_run_in_place(ranks);
  int entry = 0;
  for (int pass = 0; pass < plan::merge_passes(ranks); ++pass) {
    const int from = static_cast<int>(plan::merge_source(ranks, pass));
    const int to = static_cast<int>(plan::merge_destination(ranks, pass));
    std::int64_t tile = 0;
    for (int pair = 0; pair < plan::merge_pairs(ranks, pass); ++pair, ++entry) {
      const plan::merge_pair_span span = plan::merge_pair(run_offsets, ranks, pass, pair);
      merge_pair_entry<Key, Value> e;
      e.a_keys = buffers.keys[from] + span.a_begin;
      e.a_values = advance(buffers.values[from], span.a_begin);
      e.b_keys = buffers.keys[from] + span.a_end;
      e.b_values = advance(buffers.values[from], span.a_end);
      if (pass == 0 && in_place) {  // groups are single runs in pass 0
        const int sorted = static_cast<int>(plan::merge_buffer::sorted);
        if (span.a_run == me) {
          e.a_keys = buffers.keys[sorted] + own_offset;
          e.a_values = advance(buffers.values[sorted], own_offset);
        } else if (span.b_run == me) {
          e.b_keys = buffers.keys[sorted] + own_offset;
          e.b_values = advance(buffers.values[sorted], own_offset);
        }
      }
      e.out_keys = buffers.keys[to] + span.a_begin;
      e.out_values = advance(buffers.values[to], span.a_begin);
      e.a_count = span.a_end - span.a_begin;
      e.b_count = span.b_end - span.a_end;
      e.first_tile = tile;
      tile += plan::merge_pair_tiles(span, tile_items);
      pairs[entry] = e;
    }
  }
}

// One thread per split: pair i's split k is the number of A's keys among
// its first k * tile_items outputs.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void merge_split_kernel(const merge_pair_entry<Key, Value>* pairs, int pair_count, std::int64_t* splits,
                                   std::int64_t split_count, Compare comp) {
  namespace plan = tilesort::detail;
  const std::int64_t index = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (index >= split_count) return;
  const int pair = plan::pair_of_split([&](int i) { return pairs[i].first_tile; }, pair_count, index);
  const merge_pair_entry<Key, Value> e = pairs[pair];
  const std::int64_t diagonal =
      plan::split_diagonal(index - e.first_tile - pair, e.a_count + e.b_count, Policy::tile_items);
  splits[index] = plan::merge_path(e.a_keys, e.a_count, e.b_keys, e.b_count, diagonal, comp);
}

// One block per tile: the tile's parts of A and B (and their values) into
// shared memory, then the device merge sort's merge steps
// (merge_sort_merge_steps: each thread's merge-path split and serial merge,
// ties from A, so stable in rank order; blocked -> padded slots; striped
// stores, each value by its output's source).
template <typename Policy, typename Key, typename Value>
using merge_tile_storage = tilesort::detail::merge_sort_merge_storage<Key, Value, Policy::tile_items>;

template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::threads)
    merge_tile_kernel(const merge_pair_entry<Key, Value>* pairs, int pair_count, const std::int64_t* splits,
                      Compare comp) {
  namespace ts = tilesort::detail;
  constexpr int threads = Policy::threads;
  constexpr int items = Policy::items;
  constexpr int tile_items = Policy::tile_items;
  constexpr bool pairs_sorted = ts::has_values<Value>;
  auto& storage = *reinterpret_cast<merge_tile_storage<Policy, Key, Value>*>(ts::merge_sort_smem);

  const std::int64_t tile = blockIdx.x;
  const int pair = ts::pair_of_tile([&](int i) { return pairs[i].first_tile; }, pair_count, tile);
  const merge_pair_entry<Key, Value> e = pairs[pair];
  const std::int64_t local = tile - e.first_tile;
  const std::int64_t split = e.first_tile + pair + local;
  const std::int64_t a_begin = splits[split];
  const std::int64_t a_end = splits[split + 1];
  const std::int64_t out_begin = local * tile_items;
  const std::int64_t total = e.a_count + e.b_count;
  const int count = static_cast<int>((out_begin + tile_items < total ? out_begin + tile_items : total) - out_begin);
  const int a_count = static_cast<int>(a_end - a_begin);
  const std::int64_t b_begin = out_begin - a_begin;
  const int thread = static_cast<int>(threadIdx.x);

  // 1. A ++ B (A and B may live in different buffers).
  for (int i = thread; i < count; i += threads) {
    storage.keys[i] = i < a_count ? e.a_keys[a_begin + i] : e.b_keys[b_begin + (i - a_count)];
    if constexpr (pairs_sorted)
      storage.values[i] = i < a_count ? e.a_values[a_begin + i] : e.b_values[b_begin + (i - a_count)];
  }
  __syncthreads();

  // 2.-4. The merge sort's steps.
  using steps = ts::merge_sort_merge_steps<threads, items>;
  const ts::merge_tile_slices slices{a_begin,   a_end, b_begin, b_begin + (count - a_count),
                                     out_begin, out_begin + count};
  Key out[items];
  int source[items];
  steps::merge(&storage.keys[0], slices, thread, out, source, comp);
  __syncthreads();  // every thread is done reading A ++ B
  steps::template write_blocked<pairs_sorted>(storage.keys, storage.sources, thread, out, source);
  __syncthreads();
  steps::template store<false, pairs_sorted>(storage.keys, storage.sources, storage.values, slices, thread,
                                             e.out_keys, e.out_values);
}

// The shard header, written by a kernel so that the call stays asynchronous.
template <int Unused = 0>
__global__ void write_header_kernel(shard_header* slot, shard_header header) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *slot = header;
}

}  // namespace detail
}  // namespace nccl
}  // namespace tilesort
