// device/segments.cuh — the four ways to describe segments to the segmented
// sort (DESIGN.md): offsets (CUB style), heads (ModernGPU style), a head-flag
// bitfield, and uniform rows. Each is a small value type that only holds
// device pointers and counts; nothing here touches the GPU.
//
//   // rows of 1000 keys (the last one may be shorter)
//   tilesort::segmented_sort_keys(d_temp, temp_bytes, in, out, n, tilesort::segments::uniform(1000));
#pragma once

#include <cstdint>

namespace tilesort::segments {

// Segment i is [begin[i], end[i]) for i < count; device arrays of any integer type.
template <typename Offset>
struct offsets_t {
  const Offset* begin;
  const Offset* end;
  std::int64_t count;
};
template <typename Offset>
offsets_t<Offset> offsets(const Offset* begin, const Offset* end, std::int64_t num_segments) {
  return {begin, end, num_segments};
}

// Sorted device array of segment start indices; a head at 0 may be omitted.
template <typename Index>
struct heads_t {
  const Index* indices;
  std::int64_t count;
};
template <typename Index>
heads_t<Index> heads(const Index* indices, std::int64_t num_heads) {
  return {indices, num_heads};
}

// Bit i % 32 of word i / 32 is set where a segment starts.
struct flags_t {
  const std::uint32_t* bits;
};
inline flags_t flags(const std::uint32_t* bits) { return {bits}; }

// Every `length` consecutive keys form one segment; the last may be shorter.
struct uniform_t {
  std::int64_t length;
};
inline uniform_t uniform(std::int64_t length) { return {length}; }

}  // namespace tilesort::segments
