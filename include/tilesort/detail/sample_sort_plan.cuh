// detail/sample_sort_plan.cuh — the host-testable arithmetic of the sample
// sort (device/sample_sort.cuh): how many splitters and buckets for n keys,
// where the samples are drawn, the splitter tree and the classification of a
// key, the bucket bookkeeping (counts, offsets, the exclusive scan's chunks)
// and the temp-storage layout.
//
// Buckets: S = 2^levels - 1 sorted splitters s_0 <= ... <= s_{S-1} make
// 2S + 1 buckets. Bucket 2j holds the keys strictly between s_{j-1} and s_j
// (open ends at 0 and 2S); bucket 2j + 1 holds the keys equivalent to s_j.
// Those equal buckets need no sorting (their keys are equivalent and arrive
// in input order), so a value that fills many splitters (all equal, few
// distinct, Zipf) costs a copy, not a giant bucket to sort.
// The splitter tree is the implicit (Eytzinger) binary search tree of the
// splitters: slot 1 is the root, the children of slot i are 2i and 2i + 1;
// a key walks `levels` steps, one comparison each, to the number of
// splitters not after it, and one more comparison with that splitter (found
// in the same tree by its rank) tells "between" from "equal".
// Counts and offsets: one 64-bit entry per (bucket, scatter block), bucket
// major, so an exclusive scan over the flat array gives each block the first
// output position of its keys of each bucket, buckets in order and blocks in
// input order (hence stable). The more buckets, the fewer scatter blocks
// (about n / (buckets x keys_per_counter), at least min_scatter_blocks), so
// the counters grow slower than the keys.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.cuh"
#include "error.cuh"

namespace tilesort::detail {

// The tuning a plan needs (from sample_sort_policy).
struct sample_sort_shape {
  int bucket_tile;         // keys one block sorts in registers (a bucket up to this is one pass)
  int scatter_tile;        // keys a scatter block classifies at once (ranks fit 32 bits with the bucket)
  int min_scatter_blocks;  // scatter blocks (each takes consecutive tiles): at least this many (to fill the GPU),
  int max_scatter_blocks;  // at most this many,
  int keys_per_counter;    // and about n / (buckets x keys_per_counter) in between
  int max_levels;          // splitter tree depth: at most 2^max_levels - 1 splitters
  int sample_tile;         // samples sorted by one block
  int oversampling;        // samples per bucket (fewer when sample_tile is reached)
  int scan_chunk;          // counters one block of the scan sums
};

// The deepest splitter tree whose 2^levels - 1 keys of key_bytes fit
// tree_bytes, at most 12 levels (8191 buckets: 13 bits of a scatter code).
TILESORT_HD constexpr int sample_sort_max_levels(std::size_t key_bytes, std::size_t tree_bytes) {
  int levels = 1;
  while (levels < 12 && (std::size_t(2) << levels) * key_bytes <= tree_bytes) ++levels;
  return levels;
}

// Bits of a scatter rank: (bucket << position_bits) | position in the tile.
TILESORT_HD constexpr int sample_sort_position_bits(int scatter_tile) { return log2_floor(next_pow2(scatter_tile)); }

struct sample_sort_plan {
  std::int64_t n = 0;
  bool direct = true;             // n <= bucket_tile: one block sorts everything, no temp storage
  int levels = 0;                 // splitter tree depth
  int splitters = 0;              // 2^levels - 1
  int buckets = 0;                // 2 x splitters + 1
  int samples = 0;                // keys sampled and sorted
  std::int64_t tiles = 0;         // scatter tiles
  std::int64_t tiles_per_block = 0;
  std::int64_t scatter_blocks = 0;
  std::int64_t counters = 0;      // buckets x scatter_blocks
  std::int64_t scan_chunks = 0;   // ceil(counters / scan_chunk)
  // Temp layout (256-byte aligned offsets).
  std::size_t keys_offset = 0;
  std::size_t values_offset = 0;
  std::size_t splitters_offset = 0;
  std::size_t counters_offset = 0;
  std::size_t partials_offset = 0;
  std::size_t total_bytes = 1;

  // Counter of (bucket, block).
  TILESORT_HD std::int64_t counter(int bucket, std::int64_t block) const {
    return std::int64_t(bucket) * scatter_blocks + block;
  }
  // Scatter tiles [first_tile(b), end_tile(b)) belong to block b.
  TILESORT_HD std::int64_t first_tile(std::int64_t block) const { return block * tiles_per_block; }
  TILESORT_HD std::int64_t end_tile(std::int64_t block) const {
    const std::int64_t end = (block + 1) * tiles_per_block;
    return end < tiles ? end : tiles;
  }
};

// The plan for n keys of key_bytes (+ value_bytes) with the given shape.
TILESORT_HD sample_sort_plan make_sample_sort_plan(std::int64_t n, std::size_t key_bytes,
                                                          std::size_t value_bytes, const sample_sort_shape& shape) {
  sample_sort_plan p;
  p.n = n < 0 ? 0 : n;
  p.direct = p.n <= shape.bucket_tile;
  if (p.direct) return p;
  // Aim at buckets of half a tile on average: 2^levels >= 2n / bucket_tile.
  int levels = 1;
  while (levels < shape.max_levels && (std::int64_t(1) << levels) * shape.bucket_tile < 2 * p.n) ++levels;
  p.levels = levels;
  p.splitters = (1 << levels) - 1;
  p.buckets = 2 * p.splitters + 1;
  const std::int64_t wanted = std::int64_t(shape.oversampling) * (p.splitters + 1);
  std::int64_t samples = wanted < shape.sample_tile ? wanted : shape.sample_tile;
  p.samples = static_cast<int>(samples < p.n ? samples : p.n);
  p.tiles = ceil_div(p.n, shape.scatter_tile);
  std::int64_t blocks = p.n / (std::int64_t(p.buckets) * shape.keys_per_counter);
  if (blocks < shape.min_scatter_blocks) blocks = shape.min_scatter_blocks;
  if (blocks > shape.max_scatter_blocks) blocks = shape.max_scatter_blocks;
  p.tiles_per_block = ceil_div(p.tiles, blocks);
  p.scatter_blocks = ceil_div(p.tiles, p.tiles_per_block);
  p.counters = std::int64_t(p.buckets) * p.scatter_blocks;
  p.scan_chunks = ceil_div(p.counters, shape.scan_chunk);
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at = align_temp(at + bytes);
    return here;
  };
  p.keys_offset = take(static_cast<std::size_t>(p.n) * key_bytes);
  p.values_offset = take(static_cast<std::size_t>(p.n) * value_bytes);
  p.splitters_offset = take(static_cast<std::size_t>(p.splitters) * key_bytes);
  p.counters_offset = take(static_cast<std::size_t>(p.counters) * sizeof(std::int64_t));
  p.partials_offset = take(static_cast<std::size_t>(p.scan_chunks) * sizeof(std::int64_t));
  p.total_bytes = at;
  return p;
}

// Where sample i of `samples` is drawn: one position in each of `samples`
// equal strata of [0, n), at a hashed offset inside its stratum (random
// enough for the splitters, and the same every call).
TILESORT_HD std::uint64_t sample_sort_hash(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
TILESORT_HD std::int64_t sample_position(int i, int samples, std::int64_t n) {
  const std::int64_t stratum = n / samples;  // >= 1: samples <= n
  return std::int64_t(i) * stratum + static_cast<std::int64_t>(sample_sort_hash(std::uint64_t(i)) % std::uint64_t(stratum));
}

// Splitter j is the sorted sample of this rank (evenly spaced, the last
// sample never taken so the top bucket gets its share).
TILESORT_HD int splitter_sample_rank(int j, int samples, int splitters) {
  return static_cast<int>(std::int64_t(j + 1) * samples / (splitters + 1));
}

// Rank (in the sorted splitters) of the splitter at tree slot `slot`
// (1 <= slot <= 2^levels - 1).
TILESORT_HD int splitter_tree_rank(int slot, int levels) {
  const int depth = log2_floor(slot);
  const int index_in_level = slot - (1 << depth);
  return ((2 * index_in_level + 1) << (levels - 1 - depth)) - 1;
}

// Tree slot of the splitter of rank `rank` (0 <= rank <= 2^levels - 2), the
// inverse of splitter_tree_rank: in-order position rank + 1 = (odd) << height,
// where height counts the levels below the slot.
TILESORT_HD int splitter_tree_slot(int rank, int levels) {
  const int position = rank + 1;
  const int height = lowest_set_bit(static_cast<unsigned>(position));
  return (1 << (levels - 1 - height)) | (position >> (height + 1));
}

// The buckets of Items keys: tree[1 .. 2^levels - 1] holds the splitters in
// tree order (slot 0 unused). The walks advance level by level together, so
// a thread's tree loads overlap.
template <int Items, typename Key, typename Compare>
TILESORT_HD void classify_keys(const Key* tree, int levels, const Key (&keys)[Items], int (&buckets)[Items],
                               Compare comp) {
  int slot[Items];
  TILESORT_UNROLL
  for (int k = 0; k < Items; ++k) slot[k] = 1;
  for (int level = 0; level < levels; ++level) {
    TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) slot[k] = 2 * slot[k] + (comp(keys[k], tree[slot[k]]) ? 0 : 1);
  }
  TILESORT_UNROLL
  for (int k = 0; k < Items; ++k) {
    const int not_after = slot[k] - (1 << levels);  // splitters s with !(key < s)
    const bool equal = not_after > 0 && !comp(tree[splitter_tree_slot(not_after - 1, levels)], keys[k]);
    buckets[k] = equal ? 2 * not_after - 1 : 2 * not_after;
  }
}

// The bucket of one key.
template <typename Key, typename Compare>
TILESORT_HD int classify_key(const Key* tree, int levels, const Key& key, Compare comp) {
  const Key keys[1] = {key};
  int buckets[1];
  classify_keys(tree, levels, keys, buckets, comp);
  return buckets[0];
}

TILESORT_HD constexpr bool is_equal_bucket(int bucket) { return bucket % 2 == 1; }

// Merge passes one block runs over a bucket of `size` keys sorted in chunks
// of `tile` (0 when it fits one tile).
TILESORT_HD int bucket_merge_passes(std::int64_t size, int tile) {
  int passes = 0;
  for (std::int64_t run = tile; run < size; run *= 2) ++passes;
  return passes;
}

}  // namespace tilesort::detail
