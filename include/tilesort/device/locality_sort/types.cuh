// device/locality_sort/types.cuh — the records the early-exit merge sort's
// kernels share (device/locality_sort/merge.cuh): where a tile's keys lie
// (keys_out or the temp buffer), the list of segments being sorted, resolved
// merge jobs and the slices they read, and the counters of one sort
// (merge_control, zeroed before the first kernel; sort_stats is read from
// them). Also the two warp-aggregated atomics the job phases queue with.
// Nothing here launches anything.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../detail/config.cuh"
#include "../../detail/control.cuh"
#include "../../detail/merge_jobs.cuh"
#include "policy.cuh"
#include "../sort_stats.cuh"

namespace tilesort::detail {

// The window half widths in keys, ascending (plan_group's argument).
struct window_widths {
  int half[4];
};
template <typename Policy>
TILESORT_HD constexpr window_widths locality_window_widths() {
  constexpr int m = Policy::merge_tile_items;
  return {{m / Policy::window_divisors[0], m / Policy::window_divisors[1], m / Policy::window_divisors[2],
           m / Policy::window_divisors[3]}};
}

// keys_out / values_out (location in_output) and the temp buffers (in_temp).
template <typename Key, typename Value>
struct merge_buffers {
  Key* keys_out;
  Key* keys_temp;
  Value* values_out;
  Value* values_temp;
  TILESORT_HD Key* keys(std::uint8_t location) const { return location == in_temp ? keys_temp : keys_out; }
  TILESORT_HD Value* values(std::uint8_t location) const { return location == in_temp ? values_temp : values_out; }
};

// The segments being sorted, as the kernels see them: a device list (filled
// by segmented sort's classify kernel) or one segment [0, n).
struct merge_segment_list {
  const merge_segment* segments;   // nullptr: the single segment [0, n)
  const int* block_segment;        // blocksort entry -> index into segments
  const unsigned* block_count;     // number of blocksort entries (device)
  const unsigned* abandoned;       // non-zero (device): the list is unusable, sort nothing
  std::int64_t n;
  std::int64_t single_blocks;      // blocksort entries of the single segment
  TILESORT_DEVICE std::int64_t blocks() const {
    if (segments == nullptr) return single_blocks;
    return *abandoned ? 0 : static_cast<std::int64_t>(*block_count);
  }
  TILESORT_DEVICE merge_segment segment_of_block(std::int64_t block) const {
    return segments ? segments[block_segment[block]] : merge_segment{0, n, 0};
  }
};

// The key at an absolute position of segment `segment`, from whichever buffer
// holds its merge tile.
template <typename Key, typename Tiling>
struct located_keys {
  const Key* keys_out;
  const Key* keys_temp;
  const std::uint8_t* locations;
  merge_segment segment;
  TILESORT_HD Key operator()(std::int64_t position) const {
    return (locations[Tiling::entry_of(segment, position)] == in_temp ? keys_temp : keys_out)[position];
  }
};

// The keys of a pass whose tiles all lie in one buffer (see
// merge_pass_control::location_mix): one load per key instead of two
// dependent ones.
template <typename Key>
struct buffer_keys {
  const Key* keys;
  TILESORT_HD Key operator()(std::int64_t position) const { return keys[position]; }
};

// One queued job, resolved by the phase that queues it, so that the merge
// phase reads one record and nothing else before its keys: merge A
// (a_count keys from a_begin) and B (count - a_count keys from b_begin) into
// [out_begin, out_begin + count) of buffer `destination`. A merge tile's
// slices lie in at most two merge tiles each, whose buffers may differ: A's
// first a_split keys are in buffer a_before, the others in a_after (B
// likewise). A window merge runs in place: out_begin = a_begin, one buffer.
struct merge_job {
  std::int64_t a_begin;
  std::int64_t b_begin;
  std::int64_t out_begin;
  std::uint16_t count, a_count, a_split, b_split;
  std::uint8_t a_before, a_after, b_before, b_after, destination;
};

// Where the keys of one input slice [begin, end) live: merge tiles are
// M-aligned in their segment, so a slice of at most M keys lies in at most
// two, split at `boundary`.
struct slice_location {
  std::int64_t begin;
  std::int64_t boundary;
  std::uint8_t before;  // buffer of positions < boundary
  std::uint8_t after;   // and of the others
};

template <typename Tiling>
TILESORT_DEVICE slice_location locate_slice(const merge_segment& segment, std::int64_t begin, std::int64_t end,
                                            const std::uint8_t* locations, int uniform) {
  if (begin >= end) return {begin, begin, in_output, in_output};
  if (uniform >= 0) return {begin, begin, static_cast<std::uint8_t>(uniform), static_cast<std::uint8_t>(uniform)};
  const std::int64_t tile = Tiling::entry_of(segment, begin);
  const std::int64_t boundary = Tiling::tile_begin(segment, tile + 1);
  const std::uint8_t before = locations[tile];
  return {begin, boundary, before, end > boundary ? locations[tile + 1] : before};
}

// The job of a merge tile whose outputs src.out_begin .. src.out_end come
// from slices `a` and `b` (locate_slice), written to buffer `destination`.
TILESORT_DEVICE merge_job tile_job(const tile_sources& src, const slice_location& a, const slice_location& b,
                                   std::uint8_t destination) {
  const std::int64_t count = src.out_end - src.out_begin;
  const std::int64_t a_count = src.a_end - src.a_begin, b_count = src.b_end - src.b_begin;
  // Partitions that do not describe a merge can only follow an earlier wrong
  // merge: such a job merges nothing (count 0) rather than indexing shared
  // memory out of bounds, so the wrong keys show in the caller's checks and
  // the CUDA context survives.
  if (a_count < 0 || b_count < 0 || count > 0xffff) return {src.a_begin, src.b_begin, src.out_begin};
  const std::int64_t a_split = a.boundary - a.begin < a_count ? a.boundary - a.begin : a_count;
  const std::int64_t b_split = b.boundary - b.begin < b_count ? b.boundary - b.begin : b_count;
  return {src.a_begin,
          src.b_begin,
          src.out_begin,
          static_cast<std::uint16_t>(count),
          static_cast<std::uint16_t>(a_count),
          static_cast<std::uint16_t>(a_split),
          static_cast<std::uint16_t>(b_split),
          a.before,
          a.after,
          b.before,
          b.after,
          destination};
}

// The job of an in-place window merge of [begin, end) around `interface`,
// in buffer `location`.
TILESORT_DEVICE merge_job window_job(std::int64_t begin, std::int64_t interface, std::int64_t end,
                                     std::uint8_t location) {
  const auto a_count = static_cast<std::uint16_t>(interface - begin);
  return {begin,    interface, begin,    static_cast<std::uint16_t>(end - begin), a_count, a_count, 0, location,
          location, location,  location, location};
}

}  // namespace tilesort::detail
