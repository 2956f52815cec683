// detail/segment_ranges.cuh — what the general segmented sort computes about
// segments without a GPU: the key range of segment i for each description
// (offsets, heads, uniform; flags are first turned into heads), the gaps
// between offsets segments, which sorter takes a segment of a given length
// (the bins), the packed form of a binned segment, and the capacity bounds that
// size the temp storage. All __host__ __device__, host-tested
// (tests/host/segmented_plan.cu).
//
// Segment ranges are clamped into [0, n): a malformed description (when the
// caller did not ask for checking) may give an unspecified order, but never
// makes the sort touch memory outside the keys.
#pragma once

#include <cstdint>

#include "config.cuh"

namespace tilesort::detail {

struct key_range {
  std::int64_t begin;
  std::int64_t end;
  TILESORT_HD constexpr std::int64_t size() const { return end > begin ? end - begin : 0; }
};

TILESORT_HD constexpr std::int64_t clamp_index(std::int64_t x, std::int64_t lo, std::int64_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// Any integer offset type as a signed 64-bit position. Unsigned values past
// INT64_MAX become negative, which the clamps and the checks treat as invalid.
template <typename Offset>
TILESORT_HD constexpr std::int64_t position_of(Offset value) {
  return static_cast<std::int64_t>(value);
}

// ------------------------------------------------------------------ offsets
// Segment i (0 <= i < count) is [begin[i], end[i]).
template <typename Offset>
TILESORT_HD key_range offsets_segment(const Offset* begin, const Offset* end, std::int64_t i, std::int64_t n) {
  const std::int64_t b = clamp_index(position_of(begin[i]), 0, n);
  return {b, clamp_index(position_of(end[i]), b, n)};
}

// Gap i (0 <= i <= count): the keys before segment i that follow segment i - 1
// (gap 0 starts at 0, gap `count` ends at n). Keys outside every segment lie
// in exactly one gap when the segments are well formed; out of place, the
// sort copies them through.
template <typename Offset>
TILESORT_HD key_range offsets_gap(const Offset* begin, const Offset* end, std::int64_t i, std::int64_t count,
                                  std::int64_t n) {
  const std::int64_t b = i == 0 ? 0 : clamp_index(position_of(end[i - 1]), 0, n);
  const std::int64_t e = i == count ? n : clamp_index(position_of(begin[i]), 0, n);
  return {b, e > b ? e : b};
}

// Well formed: 0 <= begin[i] <= end[i] <= n and end[i] <= begin[i + 1]
// (position order, no overlap; empty segments anywhere).
template <typename Offset>
TILESORT_HD bool offsets_well_formed_at(const Offset* begin, const Offset* end, std::int64_t i, std::int64_t count,
                                        std::int64_t n) {
  const std::int64_t b = position_of(begin[i]);
  const std::int64_t e = position_of(end[i]);
  if (b < 0 || e < b || e > n) return false;
  return i + 1 >= count || e <= position_of(begin[i + 1]);
}

// ------------------------------------------------------------------ heads
// `count` head indices give count + 1 segments: [0, h[0]), [h[0], h[1]), ...,
// [h[count - 1], n). A head at 0 (or a repeated head) gives an empty segment.
template <typename Index>
TILESORT_HD key_range heads_segment(const Index* heads, std::int64_t i, std::int64_t count, std::int64_t n) {
  const std::int64_t b = i == 0 ? 0 : clamp_index(position_of(heads[i - 1]), 0, n);
  return {b, i == count ? n : clamp_index(position_of(heads[i]), b, n)};
}

// Well formed: 0 <= h[i] <= h[i + 1] <= n.
template <typename Index>
TILESORT_HD bool heads_well_formed_at(const Index* heads, std::int64_t i, std::int64_t count, std::int64_t n) {
  const std::int64_t h = position_of(heads[i]);
  if (h < 0 || h > n) return false;
  return i + 1 >= count || h <= position_of(heads[i + 1]);
}

// ------------------------------------------------------------------ flags
// Set bits of a head-flag bitfield that start a segment: bit i % 32 of word
// i / 32 for 0 < i < n (position 0 always starts one; bits at n and past it are
// ignored). Word `word` of `words` = ceil(n / 32).
TILESORT_HD std::uint32_t head_bits_of_word(std::uint32_t bits, std::int64_t word, std::int64_t n) {
  if (word == 0) bits &= ~1u;
  const std::int64_t valid = n - word * 32;  // bits of this word inside [0, n)
  if (valid < 32) bits &= valid <= 0 ? 0u : ((1u << valid) - 1u);
  return bits;
}

// ------------------------------------------------------------------ uniform
TILESORT_HD constexpr key_range uniform_segment(std::int64_t i, std::int64_t length, std::int64_t n) {
  const std::int64_t b = i * length;
  return {b, n - b < length ? n : b + length};
}

// ------------------------------------------------------------------ bins
// A segment of `length` keys goes to the first sorter whose capacity holds it
// (capacities ascending, `bin_count` of them). Segments of 0 or 1 keys need no
// sorting (trivial_bin); longer than every capacity: the merge path (returns
// bin_count).
inline constexpr int trivial_bin = -1;

TILESORT_HD constexpr int bin_of_length(std::int64_t length, const int* capacities, int bin_count) {
  if (length <= 1) return trivial_bin;
  for (int b = 0; b < bin_count; ++b)
    if (length <= capacities[b]) return b;
  return bin_count;
}

// The shortest segment a bin can hold (2 for the first).
TILESORT_HD constexpr std::int64_t bin_min_length(const int* capacities, int bin) {
  return bin == 0 ? 2 : std::int64_t(capacities[bin - 1]) + 1;
}

// A binned segment in one 64-bit word: begin << 16 | (length - 1). Holds
// begin < 2^48 and 1 <= length <= 65536 (bins hold at most 65536 keys).
inline constexpr int packed_length_bits = 16;
inline constexpr std::int64_t max_packed_begin = std::int64_t(1) << (64 - packed_length_bits);

TILESORT_HD constexpr std::uint64_t pack_segment(std::int64_t begin, std::int64_t length) {
  return (static_cast<std::uint64_t>(begin) << packed_length_bits) | static_cast<std::uint64_t>(length - 1);
}
TILESORT_HD constexpr std::int64_t packed_begin(std::uint64_t packed) {
  return static_cast<std::int64_t>(packed >> packed_length_bits);
}
TILESORT_HD constexpr int packed_length(std::uint64_t packed) {
  return static_cast<int>(packed & ((std::uint64_t(1) << packed_length_bits) - 1)) + 1;
}

// ------------------------------------------------------------------ capacity bounds
// At most how many of `segments` segments, disjoint inside n keys, have at
// least `min_length` keys.
TILESORT_HD constexpr std::int64_t segments_of_at_least(std::int64_t n, std::int64_t min_length,
                                                        std::int64_t segments) {
  const std::int64_t fit = min_length > 0 ? n / min_length : n;
  return fit < segments ? fit : segments;
}

// Tiles of `tile_items` that cover ranges totalling at most n keys, split into
// at most `ranges` ranges, each range's tiles starting at its first key.
TILESORT_HD constexpr std::int64_t tiles_of_ranges(std::int64_t n, int tile_items, std::int64_t ranges) {
  return n / tile_items + ranges;
}

// Merge passes a range of `length` keys needs after its tiles of `tile_items`
// keys are sorted: ceil(log2(ceil(length / tile_items))), 0 for one tile.
TILESORT_HD constexpr int merge_passes_for(std::int64_t length, int tile_items) {
  const std::int64_t tiles = length <= 0 ? 0 : (length - 1) / tile_items + 1;
  int passes = 0;
  while ((std::int64_t(1) << passes) < tiles) ++passes;
  return passes;
}

}  // namespace tilesort::detail
