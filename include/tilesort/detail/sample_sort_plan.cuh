// detail/sample_sort_plan.cuh — the host-testable arithmetic of the sample
// sort (device/sample_sort.cuh): how many splitters and buckets for n keys,
// where the samples are drawn, the splitter tree and the classification of a
// key, the bucket bookkeeping of both classification levels (counts,
// offsets, the exclusive scan's chunks) and the temp-storage layout.
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
// in the same tree by its rank) tells "between" from "equal". A tree of 0
// levels sends every key to bucket 0.
//
// Level 1 classifies the whole input with one tree of at most 2^max_levels
// - 1 splitters (few buckets, so a scatter tile's writes to a bucket are long
// runs). Its counts and offsets: one 64-bit entry per (bucket, scatter
// block), bucket major, so an exclusive scan over the flat array gives each
// block the first output position of its keys of each bucket, buckets in
// order and blocks in input order (hence stable).
// When one level cannot make buckets of half a bucket tile (n > 2^(max_levels
// - 1) x bucket_tile), level 2 classifies every level-1 bucket again with its
// own tree, as deep as that bucket's size asks (none for a bucket that fits a
// tile or holds equal keys: it is only moved). Its work comes in chunks of at
// most `chunk` keys of one bucket, in order; its counters are one region per
// level-1 bucket b, max_buckets entries per chunk of b, sub-bucket major
// (entry (s, c) = region + s x chunks_b + c), so the same flat exclusive scan
// gives absolute output positions (regions follow the buckets, whose sizes
// sum to the bucket's first position). The level-2 grids are bounds known
// on the host (chunks <= n / chunk + buckets); blocks past the real count
// exit. The bucket sorts then take range_blocks blocks per level-1 range
// bucket (as many as an average bucket has range sub-buckets), block y
// sorting its range sub-buckets y, y + range_blocks, ... (equal ones stay as
// they are).
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.cuh"
#include "error.cuh"

namespace tilesort::detail {

// The tuning a plan needs (from sample_sort_policy).
struct sample_sort_shape {
  int bucket_tile;         // keys one block sorts in registers (a bucket up to this is one pass)
  int scatter_tile;        // keys a scatter block classifies and ranks at once
  int min_scatter_blocks;  // level-1 scatter blocks (each takes consecutive tiles): at least this many (to fill the
  int max_scatter_blocks;  // GPU), at most this many,
  int keys_per_counter;    // and about n / (buckets x keys_per_counter) in between
  int max_levels;          // splitter tree depth of one level: at most 2^max_levels - 1 splitters
  int sample_tile;         // samples sorted by one block
  int oversampling;        // samples per bucket (fewer when sample_tile is reached)
  int scan_chunk;          // counters one block of the scan sums
  int chunk_tiles;         // level 2: scatter tiles per chunk (one block's share of a bucket)
};

TILESORT_HD constexpr bool is_equal_bucket(int bucket) { return bucket % 2 == 1; }

// Buckets of a tree of `levels` levels: 2 (2^levels - 1) + 1; 1 for none.
TILESORT_HD constexpr int sample_sort_buckets(int levels) { return levels == 0 ? 1 : (2 << levels) - 1; }

// Depth of the tree that makes buckets of half a tile on average out of
// `size` keys, at most max_levels (at least 1).
TILESORT_HD int sample_sort_levels_for(std::int64_t size, int bucket_tile, int max_levels) {
  int levels = 1;
  while (levels < max_levels && (std::int64_t(1) << levels) * bucket_tile < 2 * size) ++levels;
  return levels;
}

// Level 2's tree depth for a level-1 bucket: none when the bucket fits a tile
// or holds keys equal to a splitter.
TILESORT_HD int sample_sort_level2_levels(std::int64_t size, bool equal_bucket, int bucket_tile, int max_levels) {
  if (equal_bucket || size <= bucket_tile) return 0;
  return sample_sort_levels_for(size, bucket_tile, max_levels);
}

// What level 2 knows of a level-1 bucket (one entry per bucket, and one past
// the last with the total in first_chunk).
struct sample_sort_bucket_info {
  std::int64_t begin;        // first position (in the level-1 output)
  std::int64_t size;         // keys
  std::int64_t first_chunk;  // level-2 chunks before this bucket's
  int levels;                // level-2 tree depth (0: the bucket is moved whole)
  int groups;                // range buckets: the bucket sorts' groups (sample_sort_pack)
};

// Keys sampled for a tree of `splitters` over `size` keys.
TILESORT_HD int sample_sort_sample_count(int splitters, std::int64_t size, int oversampling, int sample_tile) {
  std::int64_t samples = std::int64_t(oversampling) * (splitters + 1);
  if (samples > sample_tile) samples = sample_tile;
  return static_cast<int>(samples < size ? samples : size);
}

// Keys [begin, end) that one bucket sort takes.
struct sample_sort_group {
  std::int64_t begin, end;
};

struct sample_sort_plan {
  std::int64_t n = 0;
  bool direct = true;             // n <= bucket_tile: one block sorts everything, no temp storage
  bool two_level = false;         // a second classification level
  int levels = 0;                 // level-1 splitter tree depth
  int splitters = 0;              // 2^levels - 1
  int buckets = 0;                // 2 x splitters + 1
  int samples = 0;                // level-1 keys sampled and sorted
  int max_levels = 0;             // deepest tree of either level
  int max_buckets = 0;            // buckets of the deepest tree (level-2 counters per chunk)
  std::int64_t tiles = 0;         // level-1 scatter tiles
  std::int64_t tiles_per_block = 0;
  std::int64_t scatter_blocks = 0;
  std::int64_t counters = 0;      // buckets x scatter_blocks
  std::int64_t scan_chunks = 0;   // ceil(counters / scan_chunk)
  std::int64_t chunk = 0;         // level 2: keys per chunk
  std::int64_t chunks_bound = 0;  // level 2: at least the chunks of all buckets together
  std::int64_t counters2 = 0;     // chunks_bound x max_buckets
  std::int64_t scan_chunks2 = 0;  // ceil(counters2 / scan_chunk)
  int range_blocks = 0;           // bucket-sort blocks per level-1 range bucket (about its groups at average size)
  // Temp layout (256-byte aligned offsets; level-2 parts empty for one level).
  std::size_t keys_offset = 0;
  std::size_t values_offset = 0;
  std::size_t splitters_offset = 0;
  std::size_t counters_offset = 0;
  std::size_t partials_offset = 0;
  std::size_t infos_offset = 0;       // buckets + 1 sample_sort_bucket_info
  std::size_t splitters2_offset = 0;  // 2^max_levels - 1 splitters per level-1 bucket
  std::size_t counters2_offset = 0;
  std::size_t partials2_offset = 0;
  std::size_t groups_offset = 0;      // max_buckets sample_sort_group per level-1 range bucket
  std::size_t total_bytes = 1;

  // Level-1 counter of (bucket, block).
  TILESORT_HD std::int64_t counter(int bucket, std::int64_t block) const {
    return std::int64_t(bucket) * scatter_blocks + block;
  }
  // Level-1 scatter tiles [first_tile(b), end_tile(b)) belong to block b.
  TILESORT_HD std::int64_t first_tile(std::int64_t block) const { return block * tiles_per_block; }
  TILESORT_HD std::int64_t end_tile(std::int64_t block) const {
    const std::int64_t end = (block + 1) * tiles_per_block;
    return end < tiles ? end : tiles;
  }
  // Level-2 chunks of a bucket of `size` keys.
  TILESORT_HD std::int64_t chunks_of(std::int64_t size) const { return ceil_div(size, chunk); }
  // Level-2 counter of (sub-bucket s, chunk c) of the bucket of `info`.
  TILESORT_HD std::int64_t counter2(const sample_sort_bucket_info& info, int s, std::int64_t c) const {
    return info.first_chunk * max_buckets + std::int64_t(s) * chunks_of(info.size) + c;
  }
};

// The plan for n keys of key_bytes (+ value_bytes) with the given shape.
TILESORT_HD sample_sort_plan make_sample_sort_plan(std::int64_t n, std::size_t key_bytes,
                                                          std::size_t value_bytes, const sample_sort_shape& shape) {
  sample_sort_plan p;
  p.n = n < 0 ? 0 : n;
  p.direct = p.n <= shape.bucket_tile;
  if (p.direct) return p;
  p.levels = sample_sort_levels_for(p.n, shape.bucket_tile, shape.max_levels);
  p.two_level = (std::int64_t(1) << p.levels) * shape.bucket_tile < 2 * p.n;
  p.splitters = (1 << p.levels) - 1;
  p.buckets = 2 * p.splitters + 1;
  p.max_levels = shape.max_levels;
  p.max_buckets = sample_sort_buckets(shape.max_levels);
  p.samples = sample_sort_sample_count(p.splitters, p.n, shape.oversampling, shape.sample_tile);
  p.tiles = ceil_div(p.n, shape.scatter_tile);
  std::int64_t blocks = p.n / (std::int64_t(p.buckets) * shape.keys_per_counter);
  if (blocks < shape.min_scatter_blocks) blocks = shape.min_scatter_blocks;
  if (blocks > shape.max_scatter_blocks) blocks = shape.max_scatter_blocks;
  p.tiles_per_block = ceil_div(p.tiles, blocks);
  p.scatter_blocks = ceil_div(p.tiles, p.tiles_per_block);
  p.counters = std::int64_t(p.buckets) * p.scatter_blocks;
  p.scan_chunks = ceil_div(p.counters, shape.scan_chunk);
  if (p.two_level) {
    p.chunk = std::int64_t(shape.chunk_tiles) * shape.scatter_tile;
    p.chunks_bound = ceil_div(p.n, p.chunk) + p.buckets;  // each bucket's last chunk may be partial
    p.counters2 = p.chunks_bound * p.max_buckets;
    p.scan_chunks2 = ceil_div(p.counters2, shape.scan_chunk);
    const int average_levels = sample_sort_level2_levels(p.n / (p.splitters + 1), false, shape.bucket_tile,
                                                         p.max_levels);
    p.range_blocks = average_levels > 1 ? 1 << (average_levels - 1) : 1;  // packing about halves the sorts
  }
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
  if (p.two_level) {
    p.infos_offset = take(static_cast<std::size_t>(p.buckets + 1) * sizeof(sample_sort_bucket_info));
    p.splitters2_offset = take(static_cast<std::size_t>(p.buckets) * ((std::size_t(1) << p.max_levels) - 1) * key_bytes);
    p.counters2_offset = take(static_cast<std::size_t>(p.counters2) * sizeof(std::int64_t));
    p.partials2_offset = take(static_cast<std::size_t>(p.scan_chunks2) * sizeof(std::int64_t));
    p.groups_offset = take(static_cast<std::size_t>(p.splitters + 1) * p.max_buckets * sizeof(sample_sort_group));
  }
  p.total_bytes = at;
  return p;
}

// Level-1 bucket b as the level-2 bucket table holds it, from the level-1
// offsets (scanned counters); first_chunk is an exclusive sum over the
// buckets of chunks_of(size), made by the caller.
TILESORT_HD sample_sort_bucket_info sample_sort_bucket_of(const sample_sort_plan& plan, const std::int64_t* offsets,
                                                         int b, int bucket_tile) {
  sample_sort_bucket_info info{};
  info.begin = offsets[plan.counter(b, 0)];
  const std::int64_t end = b + 1 < plan.buckets ? offsets[plan.counter(b + 1, 0)] : plan.n;
  info.size = end - info.begin;
  info.levels = sample_sort_level2_levels(info.size, is_equal_bucket(b), bucket_tile, plan.max_levels);
  return info;
}

// The bucket whose level-2 chunks hold chunk k: the last b <= plan.buckets
// with infos[b].first_chunk <= k (infos[0].first_chunk is 0). k past the last
// chunk gives plan.buckets (the totals).
TILESORT_HD int sample_sort_find_bucket(const sample_sort_bucket_info* infos, int buckets, std::int64_t k) {
  int lo = 0, hi = buckets;  // infos[lo].first_chunk <= k; the answer is in [lo, hi]
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (infos[mid].first_chunk <= k) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Level-2 chunk k (k < plan.chunks_bound): keys [begin, end) of level-1
// bucket `bucket`, classified with a tree of `levels` levels; its count of
// sub-bucket s is counter2 base + s x stride. False when k is past the last
// chunk (the block only zeroes counter2 [k x max_buckets, (k + 1) x
// max_buckets)).
struct sample_sort_chunk {
  int bucket = 0;
  int levels = 0;
  std::int64_t begin = 0, end = 0;
  std::int64_t base = 0, stride = 1;
};
TILESORT_HD bool sample_sort_chunk_of(const sample_sort_plan& plan, const sample_sort_bucket_info* infos,
                                      std::int64_t k, sample_sort_chunk& chunk) {
  chunk.bucket = sample_sort_find_bucket(infos, plan.buckets, k);
  if (chunk.bucket == plan.buckets) return false;
  const sample_sort_bucket_info info = infos[chunk.bucket];
  const std::int64_t c = k - info.first_chunk;
  const std::int64_t end = info.begin + info.size;
  chunk.levels = info.levels;
  chunk.begin = info.begin + c * plan.chunk;
  chunk.end = chunk.begin + plan.chunk < end ? chunk.begin + plan.chunk : end;
  chunk.base = plan.counter2(info, 0, c);
  chunk.stride = plan.chunks_of(info.size);
  return true;
}

// The bucket sorts of a level-1 bucket that level 2 classified into `subs`
// sub-buckets (starts[s]: the first position of sub-bucket s; the last ends
// at `end`). Consecutive sub-buckets are in order with each other, so a run
// of them can be sorted as one: greedily, runs of at most `tile` keys (a
// sub-bucket larger than a tile alone). Equal-key sub-buckets join a run
// when small (sorting them keeps their order) and are left out when larger
// than tile / 8 (no work for them). Writes the runs to groups (at most
// subs) and returns how many.
TILESORT_HD int sample_sort_pack(const std::int64_t* starts, int subs, std::int64_t end, int tile,
                                 sample_sort_group* groups) {
  int count = 0;
  bool open = false;
  sample_sort_group run{0, 0};
  for (int s = 0; s < subs; ++s) {
    const std::int64_t begin = starts[s], stop = s + 1 < subs ? starts[s + 1] : end;
    if (stop == begin) continue;
    if (is_equal_bucket(s) && stop - begin > tile / 8) {  // left as it is
      if (open) groups[count++] = run;
      open = false;
      continue;
    }
    if (open && stop - run.begin <= tile) {
      run.end = stop;
      continue;
    }
    if (open) groups[count++] = run;
    run = sample_sort_group{begin, stop};
    open = true;
  }
  if (open) groups[count++] = run;
  return count;
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

// Merge passes one block runs over a bucket of `size` keys sorted in chunks
// of `tile` (0 when it fits one tile).
TILESORT_HD int bucket_merge_passes(std::int64_t size, int tile) {
  int passes = 0;
  for (std::int64_t run = tile; run < size; run *= 2) ++passes;
  return passes;
}

}  // namespace tilesort::detail
