// device/sort_stats.cuh — what the early-exit sorts (locality_sort_*,
// segmented_sort_*) report about their work, which algorithm the front door
// (sort_keys / sort_pairs) ran, and the options struct that asks for it.
//
// The statistics are written by the sort's own kernels, in stream order, with
// no host synchronisation inside the call: `options.stats` must point to
// memory the device can write — pinned host memory (cudaMallocHost /
// cudaHostAlloc), managed memory, or device memory that the caller copies
// back. Read it after synchronising the stream. (Captured in a CUDA graph,
// every replay rewrites it.)
//
//   tilesort::sort_stats* stats;
//   cudaMallocHost(&stats, sizeof *stats);
//   tilesort::sort_options options;
//   options.stats = stats;
//   tilesort::locality_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::less{}, stream, options);
//   cudaStreamSynchronize(stream);
//   std::puts(tilesort::format_sort_stats(*stats).c_str());
//
// The counts mirror the table ModernGPU prints with verbose = true: per merge
// pass, how many merge tiles were merged, and the totals as full-pass
// equivalents (keys written / n). Tiles that need no merge are never copied
// here (each tile records which buffer holds it), so where ModernGPU counts
// copy tiles per pass we count one final copy of the tiles left in the temp
// buffer, and the in-place "window merges" that replace a group's tile merges
// when only keys near the interface of its two runs move.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "../detail/control.cuh"
#include "../detail/sort_algorithm.cuh"

namespace tilesort {

/// What an early-exit sort (locality_sort_*, segmented_sort_*) did: tiles
/// sorted and merged, per merge pass and in total, written by the sort's own
/// kernels when sort_options::stats points here (see the top of this file).
///
/// @code
/// tilesort::sort_stats* stats;
/// cudaMallocHost(&stats, sizeof *stats);
/// tilesort::sort_options options;
/// options.stats = stats;
/// tilesort::locality_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::less{}, stream, options);
/// cudaStreamSynchronize(stream);
/// std::printf("%.2f merge passes\n", stats->merge_pass_equivalents());
/// @endcode
struct sort_stats {
  static constexpr int max_passes = detail::max_merge_passes;  ///< entries of `pass`

  /// The merges of one pass (or of the boundary windows before the first).
  struct pass_counts {
    std::int64_t merge_tiles;    ///< merge tiles merged out of place
    std::int64_t window_merges;  ///< in-place merges of the keys around one run interface
    std::int64_t merged_keys;    ///< keys written by both kinds of merge
  };

  std::int64_t n;                ///< keys sorted
  int tile_items;                ///< keys per merge tile (the unit of the tile counts)
  int blocksort_items;           ///< keys per blocksort tile
  std::int64_t full_pass_tiles;  ///< merge tiles in a full pass: ceil(n / tile_items)

  // Before the merge passes.
  std::int64_t direct_segments;  ///< segmented sort: segments sorted whole by one warp or one block
  std::int64_t direct_keys;      ///< segmented sort: keys of the direct_segments
  std::int64_t blocksort_tiles;  ///< blocksort tiles of the merge path (whole array / long segments)
  std::int64_t presorted_tiles;  ///< blocksort tiles already in order (not sorted again)
  std::int64_t blocksort_keys;   ///< keys of the blocksort tiles

  /// Before the first pass: window merges at blocksort-tile boundaries, all
  /// at once (merge_tiles stays 0). When they leave every boundary in order,
  /// no pass merges anything.
  pass_counts boundary;

  int merge_passes;              ///< merge passes launched: entries of `pass` in use
  pass_counts pass[max_passes];  ///< the merges of each pass

  std::int64_t final_copy_tiles;  ///< tiles copied from the temp buffer to the output at the end
  std::int64_t final_copy_keys;   ///< keys of the final_copy_tiles

  sort_algorithm algorithm;  ///< the algorithm sort_keys / sort_pairs ran

  /// Full-pass equivalents of the merges: keys written by merges / n.
  double merge_pass_equivalents() const {
    std::int64_t keys = boundary.merged_keys;
    for (int p = 0; p < merge_passes && p < max_passes; ++p) keys += pass[p].merged_keys;
    return n > 0 ? double(keys) / double(n) : 0.0;
  }
  /// Full-pass equivalents of the final copy: keys it wrote / n.
  double copy_pass_equivalents() const { return n > 0 ? double(final_copy_keys) / double(n) : 0.0; }
};

/// Options of the early-exit sorts' overloads that take them.
///
/// @code
/// tilesort::sort_options options;
/// options.check_segments = true;
/// tilesort::segmented_sort_keys(d_temp, temp_bytes, d_in, d_out, n, segs, tilesort::less{}, stream, options);
/// @endcode
struct sort_options {
  /// Filled by the sort's kernels (see sort_stats); nullptr: none.
  sort_stats* stats = nullptr;
  /// segmented_sort_*: validate the segment description first and return
  /// cudaErrorInvalidValue, with nothing written, when it is malformed. This
  /// reads the description back, so it synchronises the stream (and cannot
  /// be captured in a graph). Ignored by the other sorts.
  bool check_segments = false;
};

/// The statistics as a table, one line per merge pass, like ModernGPU's
/// verbose output. Host only; prints nothing itself.
///
/// @param s statistics written by a sort (after synchronising its stream)
/// @return the table, lines ending in '\n'
///
/// @code
/// std::puts(tilesort::format_sort_stats(*stats).c_str());
/// @endcode
inline std::string format_sort_stats(const sort_stats& s) {
  std::string out;
  char line[160];
  const double tiles = s.full_pass_tiles > 0 ? double(s.full_pass_tiles) : 1.0;
  const double keys = s.n > 0 ? double(s.n) : 1.0;
  if (s.algorithm != sort_algorithm::unspecified) {
    std::snprintf(line, sizeof line, "algorithm: %s\n", sort_algorithm_name(s.algorithm));
    out += line;
  }
  std::snprintf(line, sizeof line, "n = %lld, merge tile = %d keys (%lld per full pass), blocksort tile = %d keys\n",
                static_cast<long long>(s.n), s.tile_items, static_cast<long long>(s.full_pass_tiles),
                s.blocksort_items);
  out += line;
  if (s.direct_segments > 0) {
    std::snprintf(line, sizeof line, "direct:   %lld segments sorted whole, %lld keys (%6.2f%%)\n",
                  static_cast<long long>(s.direct_segments), static_cast<long long>(s.direct_keys),
                  100.0 * double(s.direct_keys) / keys);
    out += line;
  }
  std::snprintf(line, sizeof line, "blocksort: %lld tiles, %lld already in order, %lld keys (%6.2f%%)\n",
                static_cast<long long>(s.blocksort_tiles), static_cast<long long>(s.presorted_tiles),
                static_cast<long long>(s.blocksort_keys), 100.0 * double(s.blocksort_keys) / keys);
  out += line;
  out += "            merge tiles           window merges    merged keys\n";
  std::snprintf(line, sizeof line, "bounds : %9s %10s %12lld  %12lld (%7.2f%%)\n", "", "",
                static_cast<long long>(s.boundary.window_merges), static_cast<long long>(s.boundary.merged_keys),
                100.0 * double(s.boundary.merged_keys) / keys);
  out += line;
  std::int64_t merge_total = 0, window_total = s.boundary.window_merges, key_total = s.boundary.merged_keys;
  for (int p = 0; p < s.merge_passes && p < sort_stats::max_passes; ++p) {
    const auto& c = s.pass[p];
    std::snprintf(line, sizeof line, "pass %2d: %9lld (%7.2f%%) %12lld  %12lld (%7.2f%%)\n", p,
                  static_cast<long long>(c.merge_tiles), 100.0 * double(c.merge_tiles) / tiles,
                  static_cast<long long>(c.window_merges), static_cast<long long>(c.merged_keys),
                  100.0 * double(c.merged_keys) / keys);
    out += line;
    merge_total += c.merge_tiles;
    window_total += c.window_merges;
    key_total += c.merged_keys;
  }
  std::snprintf(line, sizeof line, "total  : %9lld (%7.2f%%) %12lld  %12lld (%7.2f%%)\n",
                static_cast<long long>(merge_total), 100.0 * double(merge_total) / tiles,
                static_cast<long long>(window_total), static_cast<long long>(key_total),
                100.0 * double(key_total) / keys);
  out += line;
  std::snprintf(line, sizeof line, "final copy: %lld tiles, %lld keys (%6.2f%%)\n",
                static_cast<long long>(s.final_copy_tiles), static_cast<long long>(s.final_copy_keys),
                100.0 * double(s.final_copy_keys) / keys);
  out += line;
  std::snprintf(line, sizeof line, "full-pass equivalents: merge %.2f, final copy %.2f\n", s.merge_pass_equivalents(),
                s.copy_pass_equivalents());
  out += line;
  return out;
}

}  // namespace tilesort
