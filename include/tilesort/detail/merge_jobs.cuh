// detail/merge_jobs.cuh — the decisions of the early-exit merge passes that
// locality sort and the long segments of segmented sort share, as integer
// arithmetic and comparisons over a key accessor; no GPU needed
// (tests/host/merge_jobs.cu runs the whole pass structure on the host).
//
// Vocabulary. The sort works on independent ranges of keys ("segments": the
// whole array for locality sort, each long segment for segmented sort). Inside
// a segment, positions are counted from its first key:
//
//   blocksort tile j   [j·T, (j+1)·T)   sorted on chip first
//   merge tile j       [j·M, (j+1)·M)   one unit of merge work; M divides T
//   pass p             runs of R = T << p merge in pairs (groups of 2R):
//                      group = A ++ B, A = [g, g + R), B = [g + R, g + 2R)
//                      (clamped to the segment; B may be short or empty)
//
// Early exit (what ModernGPU's segmented sort and locality sort do with merge
// and copy queues, adapted):
//   * a group whose last A key is not after its first B key is in order: no
//     tile of it moves (one comparison);
//   * otherwise, if every key that moves lies within h of the interface
//     between A and B (A[..lo) precedes all of B and B[hi..) follows all of A,
//     checked with two comparisons per candidate h), one block merges the
//     window [lo, hi) in place: a "window merge";
//   * otherwise every merge tile gets its two partitions (where its outputs
//     start in A and B: a merge-path search, with O(1) shortcuts for
//     boundaries in the untouched prefix of A or suffix of B — the analogue of
//     ModernGPU's segmented merge path clamped to the active range), and only
//     a tile whose outputs are not exactly its own keys is merged ("merge
//     tile"); the others stay.
// Stationary tiles are never copied: every merge tile records which buffer
// holds its keys (keys_out or the temp buffer), a merged tile is written to
// the other buffer (no tile of the pass reads there at its positions, so the
// pass needs no ordering between tiles), and after the last pass only the
// tiles left in the temp buffer are copied to keys_out.
#pragma once

#include <cstdint>
#include <type_traits>

#include "config.cuh"
#include "merge_path.cuh"

namespace tilesort::detail {

// One independently sorted range, and its first blocksort-tile entry in the
// flat list of blocksort tiles of all segments. Merge-tile entry
// k·first_block + j is merge tile j of the segment (k = T / M merge tiles per
// blocksort tile; entries past the segment's last tile are empty).
struct merge_segment {
  std::int64_t begin;
  std::int64_t end;
  std::int64_t first_block;
};

template <int TileItems, int MergeTileItems>
struct merge_tiling {
  static_assert(TileItems % MergeTileItems == 0 && is_pow2(TileItems / MergeTileItems),
                "a blocksort tile is a power-of-two number of merge tiles");
  static constexpr int tile_items = TileItems;
  static constexpr int merge_tile_items = MergeTileItems;
  static constexpr int merge_tiles_per_block = TileItems / MergeTileItems;

  // Merge-tile entry of the tile holding `position` of segment s.
  TILESORT_HD static constexpr std::int64_t entry_of(const merge_segment& s, std::int64_t position) {
    return merge_tiles_per_block * s.first_block + (position - s.begin) / MergeTileItems;
  }
  // The outputs of merge-tile entry e of segment s (empty past the segment).
  TILESORT_HD static constexpr std::int64_t tile_begin(const merge_segment& s, std::int64_t e) {
    return s.begin + (e - merge_tiles_per_block * s.first_block) * MergeTileItems;
  }
  TILESORT_HD static constexpr std::int64_t tile_end(const merge_segment& s, std::int64_t e) {
    const std::int64_t end = tile_begin(s, e) + MergeTileItems;
    return end < s.end ? end : s.end;
  }
  // Blocksort tile b (an entry of the flat list) of segment s.
  TILESORT_HD static constexpr std::int64_t block_begin(const merge_segment& s, std::int64_t b) {
    return s.begin + (b - s.first_block) * TileItems;
  }
  TILESORT_HD static constexpr std::int64_t blocks_of(std::int64_t length) {
    return length <= 0 ? 0 : (length - 1) / TileItems + 1;
  }
};

// ------------------------------------------------------------------ groups
struct run_group {
  std::int64_t begin;  // A's first key
  std::int64_t a_end;  // end of A = B's first key
  std::int64_t end;    // end of B
};

// The group of pass `run` (run length R) that holds position x of segment s.
TILESORT_HD constexpr run_group run_group_of(const merge_segment& s, std::int64_t x, std::int64_t run) {
  const std::int64_t g = s.begin + (x - s.begin) / (2 * run) * (2 * run);
  const std::int64_t a_end = g + run < s.end ? g + run : s.end;
  return {g, a_end, g + 2 * run < s.end ? g + 2 * run : s.end};
}

// ------------------------------------------------------------------ partitions
// Keys of one run through a position accessor: at[i] = key_at(base + i).
template <typename KeyAt>
struct run_keys {
  const KeyAt& key_at;
  std::int64_t base;
  TILESORT_HD auto operator[](std::int64_t i) const { return key_at(base + i); }
};

// Where the outputs from position x on (g.begin <= x <= g.end) start in A: the
// absolute index g.begin + (A keys among outputs [g.begin, x)) of a stable
// merge (ties take A first). key_at(p) reads the key at absolute position p.
// Boundaries in the untouched prefix of A or suffix of B cost one or two
// comparisons; the others a search over the diagonal: binary by one thread,
// or Ways-way by a group of lanes (`ballot`, see merge_path_kway; every
// member calls it alike and gets the answer).
template <int Ways = 32, typename KeyAt, typename Compare, typename Ballot = binary_search_tag>
TILESORT_HD std::int64_t merge_partition(const run_group& g, std::int64_t x, const KeyAt& key_at, Compare comp,
                                         Ballot ballot = {}) {
  if (x <= g.begin) return g.begin;
  if (x >= g.end) return g.a_end;
  if (g.a_end == g.end) return x;  // no B: A's keys stay
  const auto b_first = key_at(g.a_end);
  if (x <= g.a_end && !comp(b_first, key_at(x - 1))) return x;  // A[.., x) precedes all of B
  const auto a_last = key_at(g.a_end - 1);
  if (x >= g.a_end && !comp(key_at(x), a_last)) return g.a_end;  // B[x - a_end, ..) follows all of A
  const run_keys<KeyAt> a{key_at, g.begin}, b{key_at, g.a_end};
  const std::int64_t a_len = g.a_end - g.begin, b_len = g.end - g.a_end, diagonal = x - g.begin;
  if constexpr (std::is_same_v<Ballot, binary_search_tag>) {
    return g.begin + merge_path<std::int64_t>(a, a_len, b, b_len, diagonal, comp);
  } else {
    return g.begin + merge_path_kway<Ways, std::int64_t>(a, a_len, b, b_len, diagonal, comp, ballot);
  }
}

// ------------------------------------------------------------------ tiles
// The inputs of the merge tile with outputs [out_begin, out_end) of group g,
// from its partitions (p_begin = merge_partition at out_begin, p_end at
// out_end): A[a_begin, a_end) and B[b_begin, b_end), together exactly
// out_end - out_begin keys.
struct tile_sources {
  std::int64_t a_begin, a_end;
  std::int64_t b_begin, b_end;
  std::int64_t out_begin, out_end;

  // The tile's outputs are its own keys, unchanged: nothing to do.
  TILESORT_HD constexpr bool stays() const {
    if (b_begin == b_end) return a_begin == out_begin;
    if (a_begin == a_end) return b_begin == out_begin;
    return false;
  }
};

TILESORT_HD constexpr tile_sources tile_sources_of(const run_group& g, std::int64_t out_begin, std::int64_t out_end,
                                                   std::int64_t p_begin, std::int64_t p_end) {
  return {p_begin, p_end, g.a_end + (out_begin - p_begin), g.a_end + (out_end - p_end), out_begin, out_end};
}

// ------------------------------------------------------------------ groups: the plan
enum class group_plan : int {
  in_order,  // nothing moves
  window,    // one in-place merge of [window.begin, window.end)
  tiles,     // merge tiles decided one by one from their partitions
};

struct group_decision {
  group_plan plan;
  std::int64_t window_begin;
  std::int64_t window_end;
};

// Half widths h are tried in ascending order; the window of the first that
// holds is [max(g.begin, a_end - h), min(g.end, a_end + h)). `window_allowed`
// is false when the two merge tiles around the interface live in different
// buffers (an in-place merge needs one buffer). Every comparison of every h is
// independent of the others, so a device evaluates them all at once.
template <int Levels, typename KeyAt, typename Compare>
TILESORT_HD group_decision plan_group(const run_group& g, const KeyAt& key_at, const int (&half_widths)[Levels],
                                      bool window_allowed, Compare comp) {
  if (g.a_end == g.end) return {group_plan::in_order, 0, 0};
  const auto a_last = key_at(g.a_end - 1);
  const auto b_first = key_at(g.a_end);
  if (!comp(b_first, a_last)) return {group_plan::in_order, 0, 0};
  group_decision decision{group_plan::tiles, 0, 0};
  if (!window_allowed) return decision;
  TILESORT_UNROLL
  for (int level = Levels - 1; level >= 0; --level) {  // the smallest h that holds wins
    const std::int64_t lo = g.a_end - half_widths[level] > g.begin ? g.a_end - half_widths[level] : g.begin;
    const std::int64_t hi = g.a_end + half_widths[level] < g.end ? g.a_end + half_widths[level] : g.end;
    const bool prefix_stays = lo == g.begin || !comp(b_first, key_at(lo - 1));
    const bool suffix_stays = hi == g.end || !comp(key_at(hi), a_last);
    if (prefix_stays && suffix_stays) decision = {group_plan::window, lo, hi};
  }
  return decision;
}

// ------------------------------------------------------------------ boundaries
// Before the first pass every blocksort-tile boundary of a segment is planned
// once, as a group with A = the tile before it and B = the tile after it
// (clamped to the segment), and every window it gets is merged in place at
// once. The windows cannot overlap: their half widths are at most T / 2 and
// boundaries are T apart. Afterwards a boundary that was in order or got a
// window is in order, and a tile's keys between two windows stay between
// them (a window's A keys precede the B key at its end, its B keys follow
// the A key before its start): when no boundary planned `tiles`, the segment
// is sorted and no merge pass has anything to do.
TILESORT_HD constexpr run_group boundary_group(const merge_segment& s, std::int64_t boundary, std::int64_t tile) {
  return {boundary - tile > s.begin ? boundary - tile : s.begin, boundary,
          boundary + tile < s.end ? boundary + tile : s.end};
}

// ------------------------------------------------------------------ blocksort
// Which buffer the blocksort writes a tile to. Tiles that look local (their
// keys already lie near their sorted place, see looks_local) go to keys_out:
// later passes will mostly leave them where they are. The others go where
// `segment_passes` flips (one per merge pass, as for random keys) leave them
// in keys_out. Either way a wrong guess costs only a final copy.
TILESORT_HD constexpr bool blocksort_to_temp(bool local, int segment_passes) {
  return !local && (segment_passes & 1) != 0;
}

// A tile looks local when at least `num / den` of the sampled pairs of keys a
// fixed distance apart (in input order) are already in order, out of
// `min_pairs` samples at least: a short tile's few samples of random keys are
// all in order too often, and one tile that looks local sends a whole
// locality sort of random keys down the early-exit passes instead of the
// dense ones (device/locality_sort/merge.cuh).
TILESORT_HD constexpr bool looks_local(int in_order_pairs, int pairs, int num, int den, int min_pairs) {
  return pairs >= min_pairs && static_cast<long long>(in_order_pairs) * den >= static_cast<long long>(pairs) * num;
}

// Buffers: location 0 is keys_out (and values_out), 1 the temp buffer.
inline constexpr std::uint8_t in_output = 0;
inline constexpr std::uint8_t in_temp = 1;

// The buffer that holds every tile of a pass's input, from the OR of
// 1 << location over its tiles; -1 when both buffers hold some (or no tile
// was recorded). Random keys keep every tile in one buffer: each pass merges
// every tile into the other one.
TILESORT_HD constexpr int uniform_location(unsigned location_mix) {
  return location_mix == (1u << in_output) ? in_output : location_mix == (1u << in_temp) ? in_temp : -1;
}

}  // namespace tilesort::detail
