// device/segments.cuh — the four ways to describe segments to the segmented
// sort: offsets (CUB style), heads (ModernGPU style), a head-flag
// bitfield, and uniform rows. Each is a small value type that only holds
// device pointers and counts, made by a factory function; nothing here
// touches the GPU.
#pragma once

#include <cstdint>

/// Segment descriptions for segmented_sort_keys / segmented_sort_pairs.
namespace tilesort::segments {

/// Segments as CUB describes them: segment i is [begin[i], end[i]) for
/// i < count; device arrays of any integer type. Made by offsets().
template <typename Offset>
struct offsets_t {
  const Offset* begin;  ///< device array: first key of each segment
  const Offset* end;    ///< device array: one past the last key of each segment
  std::int64_t count;   ///< number of segments
};
/// Segments [begin[i], end[i]) for i < num_segments (device arrays).
///
/// @param begin        device array of segment starts
/// @param end          device array of segment ends (often begin + 1)
/// @param num_segments number of segments
///
/// @code
/// auto segs = tilesort::segments::offsets(d_offsets, d_offsets + 1, num_segments);
/// tilesort::segmented_sort_keys(d_temp, temp_bytes, d_in, d_out, n, segs);
/// @endcode
template <typename Offset>
offsets_t<Offset> offsets(const Offset* begin, const Offset* end, std::int64_t num_segments) {
  return {begin, end, num_segments};
}

/// Segments as ModernGPU describes them: a sorted device array of segment
/// start indices; a head at 0 may be omitted. Made by heads().
template <typename Index>
struct heads_t {
  const Index* indices;  ///< device array of segment starts, ascending
  std::int64_t count;    ///< number of heads
};
/// Segments starting at indices[0 .. num_heads) (device array, ascending).
///
/// @code
/// tilesort::segmented_sort_keys(d_keys, d_keys, n, tilesort::segments::heads(d_heads, num_heads));
/// @endcode
template <typename Index>
heads_t<Index> heads(const Index* indices, std::int64_t num_heads) {
  return {indices, num_heads};
}

/// Segments as a head-flag bitfield: bit i % 32 of word i / 32 is set where
/// a segment starts. Made by flags().
struct flags_t {
  const std::uint32_t* bits;  ///< device array of ceil(n / 32) words
};
/// Segments starting at the set bits of `bits` (device array, ceil(n / 32) words).
///
/// @code
/// tilesort::segmented_sort_keys(d_keys, d_keys, n, tilesort::segments::flags(d_bits));
/// @endcode
inline flags_t flags(const std::uint32_t* bits) { return {bits}; }

/// Uniform rows: every `length` consecutive keys form one segment; the last
/// may be shorter. Made by uniform().
struct uniform_t {
  std::int64_t length;  ///< keys per row
};
/// Rows of `length` keys (the last one may be shorter).
///
/// @code
/// tilesort::segmented_sort_keys(d_temp, temp_bytes, in, out, n, tilesort::segments::uniform(1000));
/// @endcode
inline uniform_t uniform(std::int64_t length) { return {length}; }

}  // namespace tilesort::segments
