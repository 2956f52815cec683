// Host tests for detail/sample_sort_plan.cuh: the splitter tree (its slots
// are the sorted splitters in order), classification against a brute-force
// answer (repeated splitters, equal-key buckets), sample positions, the plan
// (levels, blocks, counters, temp layout, also past 2^31), and a simulation
// of the whole sort from the plan alone (sample, classify, scan, stable
// scatter, bucket sorts) checked index for index against std::stable_sort.
#include <algorithm>
#include <numeric>
#include <random>
#include <tilesort/detail/sample_sort_plan.cuh>
#include <tilesort/device/sample_sort.cuh>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort_test::fresh_seed;

using u32_policy = tilesort::sample_sort_policy<4, 0>;
using pair_policy = tilesort::sample_sort_policy<8, 4>;
using wide_policy = tilesort::sample_sort_policy<16, 4>;

// ------------------------------------------------------------------ splitter tree
TEST(SampleSortTree, SlotsAreAPermutationInSortedOrder) {
  for (int levels = 1; levels <= 12; ++levels) {
    const int splitters = (1 << levels) - 1;
    std::vector<int> ranks;
    for (int slot = 1; slot <= splitters; ++slot) ranks.push_back(splitter_tree_rank(slot, levels));
    std::vector<int> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < splitters; ++i) ASSERT_EQ(i, sorted[i]) << "levels " << levels;
    // In-order traversal of the implicit tree visits ranks 0, 1, 2, ...
    std::vector<int> in_order;
    std::vector<int> stack;
    int slot = 1;
    while (slot <= splitters || !stack.empty()) {
      while (slot <= splitters) {
        stack.push_back(slot);
        slot *= 2;
      }
      slot = stack.back();
      stack.pop_back();
      in_order.push_back(splitter_tree_rank(slot, levels));
      slot = 2 * slot + 1;
    }
    for (int i = 0; i < splitters; ++i) ASSERT_EQ(i, in_order[i]) << "levels " << levels;
  }
}

TEST(SampleSortTree, SlotOfRankInvertsRankOfSlot) {
  for (int levels = 1; levels <= 12; ++levels)
    for (int slot = 1; slot < (1 << levels); ++slot)
      ASSERT_EQ(slot, splitter_tree_slot(splitter_tree_rank(slot, levels), levels)) << "levels " << levels;
}

// Brute force: buckets 2j between s_{j-1} and s_j, 2j + 1 equal to s_j.
int brute_bucket(const std::vector<int>& sorted, int key) {
  const int not_after = static_cast<int>(std::upper_bound(sorted.begin(), sorted.end(), key) - sorted.begin());
  if (not_after > 0 && sorted[not_after - 1] == key) return 2 * not_after - 1;
  return 2 * not_after;
}

std::vector<int> tree_of(const std::vector<int>& sorted, int levels) {
  std::vector<int> tree(sorted.size() + 1, 0);
  for (int slot = 1; slot <= static_cast<int>(sorted.size()); ++slot) tree[slot] = sorted[splitter_tree_rank(slot, levels)];
  return tree;
}

TEST(SampleSortTree, ClassifyMatchesBruteForce) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int levels = 1; levels <= 12; ++levels) {
    for (int spread : {3, 20, 1000}) {  // few values: many repeated splitters
      const int count = (1 << levels) - 1;
      std::vector<int> sorted(count);
      for (int& s : sorted) s = static_cast<int>(rng() % spread);
      std::sort(sorted.begin(), sorted.end());
      const std::vector<int> tree = tree_of(sorted, levels);
      for (int key = -2; key < spread + 2; ++key) {
        const int bucket = classify_key(tree.data(), levels, key, tilesort::less{});
        ASSERT_EQ(brute_bucket(sorted, key), bucket) << "levels " << levels << " key " << key;
        ASSERT_LT(bucket, 2 * count + 1);
        if (is_equal_bucket(bucket)) ASSERT_EQ(key, sorted[(bucket - 1) / 2]);
      }
      // Several keys at once: the same buckets.
      for (int round = 0; round < 50; ++round) {
        int keys[5];
        int buckets[5];
        for (int& k : keys) k = static_cast<int>(rng() % (spread + 4)) - 2;
        classify_keys(tree.data(), levels, keys, buckets, tilesort::less{});
        for (int k = 0; k < 5; ++k) ASSERT_EQ(brute_bucket(sorted, keys[k]), buckets[k]) << "key " << keys[k];
      }
    }
  }
}

TEST(SampleSortTree, AllSplittersEqualLeaveThreeBuckets) {
  const int levels = 4;
  const std::vector<int> sorted(15, 7);
  const std::vector<int> tree = tree_of(sorted, levels);
  EXPECT_EQ(0, classify_key(tree.data(), levels, 6, tilesort::less{}));
  EXPECT_EQ(29, classify_key(tree.data(), levels, 7, tilesort::less{}));  // equal to the last
  EXPECT_EQ(30, classify_key(tree.data(), levels, 8, tilesort::less{}));
}

TEST(SampleSortTree, GreaterOrderReversesBuckets) {
  const int levels = 3;
  std::vector<int> sorted = {90, 70, 50, 30, 30, 20, 10};  // sorted by greater
  std::vector<int> tree(8);
  for (int slot = 1; slot <= 7; ++slot) tree[slot] = sorted[splitter_tree_rank(slot, levels)];
  int last = -1;
  for (int key = 100; key >= 0; --key) {  // descending keys: buckets never go back
    const int bucket = classify_key(tree.data(), levels, key, tilesort::greater{});
    ASSERT_GE(bucket, last);
    last = bucket;
  }
  EXPECT_EQ(14, last);
}

// ------------------------------------------------------------------ samples and plan
TEST(SampleSortPlan, SamplePositionsOnePerStratum) {
  for (std::int64_t n : {std::int64_t(9000), std::int64_t(1) << 24, (std::int64_t(1) << 31) + 5, std::int64_t(1) << 40}) {
    const int samples = 8192 < n ? 8192 : static_cast<int>(n);
    const std::int64_t stratum = n / samples;
    for (int i = 0; i < samples; ++i) {
      const std::int64_t p = sample_position(i, samples, n);
      ASSERT_GE(p, std::int64_t(i) * stratum);
      ASSERT_LT(p, std::int64_t(i + 1) * stratum);
      ASSERT_LT(p, n);
    }
  }
  for (int splitters : {1, 3, 1023})
    for (int samples : {2 * (splitters + 1), 8192}) {
      int previous = -1;
      for (int j = 0; j < splitters; ++j) {
        const int r = splitter_sample_rank(j, samples, splitters);
        ASSERT_GT(r, previous);
        ASSERT_LT(r, samples);
        previous = r;
      }
    }
}

template <typename Policy>
void check_plan(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes) {
  SCOPED_TRACE("n=" + std::to_string(n));
  const auto shape = Policy::shape();
  const sample_sort_plan p = make_sample_sort_plan(n, key_bytes, value_bytes, shape);
  if (n <= Policy::bucket_tile) {
    EXPECT_TRUE(p.direct);
    EXPECT_EQ(1u, p.total_bytes);
    return;
  }
  EXPECT_FALSE(p.direct);
  EXPECT_GE(p.levels, 1);
  EXPECT_LE(p.levels, Policy::max_levels);
  EXPECT_EQ((1 << p.levels) - 1, p.splitters);
  EXPECT_EQ(2 * p.splitters + 1, p.buckets);
  EXPECT_EQ(sample_sort_buckets(p.levels), p.buckets);
  EXPECT_EQ(sample_sort_buckets(Policy::max_levels), p.max_buckets);
  // One level while it makes buckets of at most half a tile on average; the
  // second level exactly when the first is full and cannot.
  const bool fits = 2 * n <= (std::int64_t(1) << p.levels) * Policy::bucket_tile;
  EXPECT_EQ(!fits, p.two_level);
  if (p.two_level) EXPECT_EQ(Policy::max_levels, p.levels);
  if (p.levels > 1) EXPECT_GT(2 * n, (std::int64_t(1) << (p.levels - 1)) * Policy::bucket_tile);
  EXPECT_GE(p.samples, p.splitters + 1);
  EXPECT_LE(p.samples, Policy::sample_tile);
  EXPECT_LE(p.samples, n);
  EXPECT_EQ(ceil_div(n, Policy::scatter_tile), p.tiles);
  EXPECT_LE(p.scatter_blocks, Policy::max_scatter_blocks);
  // As many blocks as n / (buckets x keys_per_counter) asks for, within
  // [min_scatter_blocks, max_scatter_blocks] and at most one per tile (the
  // ceiling of tiles per block may leave fewer, never under half).
  std::int64_t wanted = n / (std::int64_t(p.buckets) * Policy::keys_per_counter);
  wanted = std::min<std::int64_t>(std::max<std::int64_t>(wanted, Policy::min_scatter_blocks),
                                  Policy::max_scatter_blocks);
  EXPECT_LE(p.scatter_blocks, std::min(wanted, p.tiles));
  EXPECT_GT(2 * p.scatter_blocks, std::min(wanted, p.tiles));
  EXPECT_EQ(0, p.first_tile(0));
  EXPECT_EQ(p.tiles, p.end_tile(p.scatter_blocks - 1));
  EXPECT_LT(p.first_tile(p.scatter_blocks - 1), p.tiles);  // no block without a tile
  EXPECT_EQ(std::int64_t(p.buckets) * p.scatter_blocks, p.counters);
  EXPECT_EQ(p.counter(p.buckets - 1, p.scatter_blocks - 1), p.counters - 1);
  EXPECT_GE(p.scan_chunks * Policy::scan_chunk, p.counters);
  if (p.two_level) {
    EXPECT_EQ(std::int64_t(Policy::chunk_tiles) * Policy::scatter_tile, p.chunk);
    EXPECT_GE(p.chunks_bound, ceil_div(n, p.chunk) + p.buckets);  // every bucket's partial last chunk
    EXPECT_EQ(p.chunks_bound * p.max_buckets, p.counters2);
    EXPECT_GE(p.scan_chunks2 * Policy::scan_chunk, p.counters2);
    EXPECT_LT(p.chunks_bound, std::int64_t(1) << 31);  // a grid
    // Bucket blocks per level-1 range bucket: about its groups at the
    // average size, a power of two within a grid's y (65535).
    EXPECT_GE(p.range_blocks, 1);
    EXPECT_LE(p.range_blocks, 1 << Policy::max_levels);
    EXPECT_TRUE(is_pow2(p.range_blocks));
    const int average_levels = sample_sort_level2_levels(n / (p.splitters + 1), false, Policy::bucket_tile,
                                                         Policy::max_levels);
    EXPECT_EQ(average_levels > 1 ? 1 << (average_levels - 1) : 1, p.range_blocks);
  } else {
    EXPECT_EQ(0, p.counters2);
  }
  // Layout: aligned, in order, no overlap; n keys + n values + small bookkeeping.
  for (std::size_t offset : {p.keys_offset, p.values_offset, p.splitters_offset, p.counters_offset, p.partials_offset,
                             p.infos_offset, p.splitters2_offset, p.counters2_offset, p.partials2_offset,
                             p.groups_offset})
    EXPECT_EQ(0u, offset % 256);
  EXPECT_GE(p.values_offset, p.keys_offset + std::size_t(n) * key_bytes);
  EXPECT_GE(p.splitters_offset, p.values_offset + std::size_t(n) * value_bytes);
  EXPECT_GE(p.counters_offset, p.splitters_offset + std::size_t(p.splitters) * key_bytes);
  EXPECT_GE(p.partials_offset, p.counters_offset + std::size_t(p.counters) * 8);
  std::size_t level1_end = p.partials_offset + std::size_t(p.scan_chunks) * 8;
  std::size_t level2_bytes = 0;
  if (p.two_level) {
    EXPECT_GE(p.infos_offset, level1_end);
    EXPECT_GE(p.splitters2_offset, p.infos_offset + std::size_t(p.buckets + 1) * sizeof(sample_sort_bucket_info));
    EXPECT_GE(p.counters2_offset, p.splitters2_offset + std::size_t(p.buckets) * 255 * key_bytes);
    EXPECT_GE(p.partials2_offset, p.counters2_offset + std::size_t(p.counters2) * 8);
    EXPECT_GE(p.groups_offset, p.partials2_offset + std::size_t(p.scan_chunks2) * 8);
    const std::size_t groups_bytes = std::size_t(p.splitters + 1) * p.max_buckets * sizeof(sample_sort_group);
    level1_end = p.groups_offset + groups_bytes;
    // Level 2's bookkeeping: 511 counters per chunk, the table and the splitters.
    level2_bytes = std::size_t(p.counters2) * 8 + std::size_t(p.counters2) * 8 / Policy::scan_chunk + 8 +
                   std::size_t(p.buckets + 1) * sizeof(sample_sort_bucket_info) +
                   std::size_t(p.buckets) * 255 * key_bytes + groups_bytes + 5 * 256;
    // ... under an eighth of the keys for keys of >= 4 bytes (chunks of 16 K keys).
    EXPECT_LE(std::size_t(p.counters2) * 8, std::size_t(n) * key_bytes / 8 + std::size_t(p.buckets) * 511 * 8);
  }
  EXPECT_GE(p.total_bytes, level1_end);
  // Level-1 counters: at most max(buckets x min_scatter_blocks, n / keys_per_counter).
  const std::int64_t max_counters =
      std::max<std::int64_t>(std::int64_t(p.buckets) * Policy::min_scatter_blocks, n / Policy::keys_per_counter);
  EXPECT_LE(p.counters, max_counters);
  const std::size_t bookkeeping = std::size_t(max_counters) * 8 + std::size_t(max_counters) * 8 / Policy::scan_chunk +
                                  8 + std::size_t(p.splitters) * key_bytes + 5 * 256 + level2_bytes;
  EXPECT_LE(p.total_bytes, std::size_t(n) * (key_bytes + value_bytes) + bookkeeping);
}

TEST(SampleSortPlan, EveryShape) {
  for (std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(8191), std::int64_t(8192), std::int64_t(8193),
                         std::int64_t(16385), std::int64_t(1) << 20, (std::int64_t(1) << 20) + 1,
                         (std::int64_t(1) << 22) + 1, std::int64_t(1) << 24, std::int64_t(1) << 28,
                         (std::int64_t(1) << 31) + 5, std::int64_t(1) << 36}) {
    check_plan<u32_policy>(n, 4, 0);
    check_plan<pair_policy>(n, 8, 4);
    check_plan<wide_policy>(n, 16, 4);
  }
}

TEST(SampleSortPlan, SecondLevelPastOneFullTree) {
  // 255 splitters hold 128 tiles at half a tile each.
  const std::int64_t full = 128 * std::int64_t(u32_policy::bucket_tile);
  EXPECT_FALSE(make_sample_sort_plan(full, 4, 0, u32_policy::shape()).two_level);
  EXPECT_TRUE(make_sample_sort_plan(full + 1, 4, 0, u32_policy::shape()).two_level);
  // Level 2's trees: none for a bucket that fits a tile or holds equal keys,
  // else buckets of at most half a tile on average.
  const int tile = u32_policy::bucket_tile;
  EXPECT_EQ(0, sample_sort_level2_levels(tile, false, tile, 8));
  EXPECT_EQ(0, sample_sort_level2_levels(std::int64_t(1) << 30, true, tile, 8));
  for (std::int64_t size : {std::int64_t(tile) + 1, std::int64_t(2) * tile, std::int64_t(2) * tile + 1,
                            std::int64_t(100000), std::int64_t(1) << 20, std::int64_t(1) << 21,
                            std::int64_t(1) << 30}) {
    const int levels = sample_sort_level2_levels(size, false, tile, 8);
    ASSERT_GE(levels, 1);
    ASSERT_LE(levels, 8);
    if (levels < 8) EXPECT_LE(2 * size, (std::int64_t(1) << levels) * tile) << size;
  }
}

TEST(SampleSortPlan, BucketMergePasses) {
  EXPECT_EQ(0, bucket_merge_passes(1, 8192));
  EXPECT_EQ(0, bucket_merge_passes(8192, 8192));
  EXPECT_EQ(1, bucket_merge_passes(8193, 8192));
  EXPECT_EQ(1, bucket_merge_passes(16384, 8192));
  EXPECT_EQ(2, bucket_merge_passes(16385, 8192));
  EXPECT_EQ(19, bucket_merge_passes(std::int64_t(1) << 32, 8192));
}

TEST(SampleSortPlan, ScatterStorageFitsThreeBlocksPerSm) {
  // 228 KB of shared memory per SM on an H100 / H200, 1 KB reserved per block.
  constexpr std::size_t sm_bytes = 228 * 1024, reserved = 1024;
  using tilesort::detail::no_value;
  EXPECT_LE(3 * (sizeof(sample_sort_scatter_storage<std::uint32_t, no_value, u32_policy>) + reserved), sm_bytes);
  EXPECT_LE(3 * (sizeof(sample_sort_scatter_storage<std::uint64_t, std::uint32_t, pair_policy>) + reserved),
            sm_bytes);
  EXPECT_LE(3 * (sizeof(sample_sort_scatter_storage<std::uint64_t, no_value, tilesort::sample_sort_policy<8, 0>>) +
                 reserved),
            sm_bytes);
  EXPECT_LE(3 * (sizeof(sample_sort_scatter_storage<std::uint32_t, std::uint32_t, tilesort::sample_sort_policy<4, 4>>) +
                 reserved),
            sm_bytes);
  struct big_key {
    char bytes[100];
  };
  EXPECT_LE(3 * (sizeof(sample_sort_scatter_storage<big_key, no_value, tilesort::sample_sort_policy<100, 0>>) +
                 reserved),
            sm_bytes);
}

TEST(SampleSortPlan, BucketShapesHalveTheTile) {
  EXPECT_EQ(u32_policy::bucket_tile, 2 * u32_policy::bucket_threads * u32_policy::bucket_items_half);
  EXPECT_EQ(u32_policy::bucket_tile, 4 * u32_policy::bucket_threads * u32_policy::bucket_items_quarter);
  EXPECT_EQ(wide_policy::bucket_tile, 2 * wide_policy::bucket_threads * wide_policy::bucket_items_half);
  using widest = tilesort::sample_sort_policy<16, 16>;
  EXPECT_EQ(1, widest::bucket_items_quarter);
}

TEST(SampleSortPlan, PackJoinsSubBucketsUpToATile) {
  // Sub-bucket sizes (even: range, odd: equal keys) and the runs expected
  // with a tile of 100: range sub-buckets join while the run stays <= 100,
  // small equal ones join too, an equal one above 100 / 8 is left out, and
  // a range sub-bucket above a tile is a run of its own.
  const std::vector<std::int64_t> sizes = {40, 0, 50, 5, 30, 20, 60, 0, 150, 0, 10, 13, 7};
  std::vector<std::int64_t> starts(sizes.size());
  std::int64_t at = 1000;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    starts[s] = at;
    at += sizes[s];
  }
  std::vector<sample_sort_group> groups(sizes.size());
  const int count = sample_sort_pack(starts.data(), static_cast<int>(sizes.size()), at, 100, groups.data());
  // [40 + 50 + 5] [30] (20: equal, left out) [60] [150] [10] (13: left out) [7]
  const std::vector<std::pair<std::int64_t, std::int64_t>> expected = {
      {1000, 1095}, {1095, 1125}, {1145, 1205}, {1205, 1355}, {1355, 1365}, {1378, 1385}};
  ASSERT_EQ(static_cast<int>(expected.size()), count);
  for (int g = 0; g < count; ++g) {
    EXPECT_EQ(expected[g].first, groups[g].begin) << g;
    EXPECT_EQ(expected[g].second, groups[g].end) << g;
  }
  EXPECT_EQ(0, sample_sort_pack(starts.data(), 0, 1000, 100, groups.data()));
}

TEST(SampleSortPlan, FindBucketTakesTheLastNonEmptyOne) {
  // Chunks per bucket 2, 0, 0, 3, 0 (then the totals): chunk k belongs to the
  // bucket whose first_chunk is the last <= k; empty buckets own none.
  const std::int64_t chunks[] = {2, 0, 0, 3, 0};
  std::vector<sample_sort_bucket_info> infos(6);
  std::int64_t before = 0;
  for (int b = 0; b < 6; ++b) {
    infos[b].first_chunk = before;
    if (b < 5) before += chunks[b];
  }
  const int expected[] = {0, 0, 3, 3, 3, 5, 5};
  for (int k = 0; k < 7; ++k)
    EXPECT_EQ(expected[k], sample_sort_find_bucket(infos.data(), 5, k)) << k;
}

// ------------------------------------------------------------------ the whole sort, simulated
// From the plan alone: samples, splitters, classification, counters per
// (bucket, block), exclusive scan, stable scatter; with two levels the bucket
// table, each bucket's splitters, the chunks, their counters and scatter;
// then the bucket sorts (equal buckets untouched). Keys are compared by
// value and carried as original indices, so the result can be compared with
// std::stable_sort index for index. `largest` (if given) receives the size of
// the largest final range bucket.
using index_vector = std::vector<std::uint32_t>;

// Splitters of keys[order[begin, begin + size)] for a tree of `levels`.
std::vector<int> splitters_of(const std::vector<int>& keys, const index_vector& order, std::int64_t begin,
                              std::int64_t size, int levels, int samples) {
  std::vector<int> sample(samples);
  for (int i = 0; i < samples; ++i) sample[i] = keys[order[begin + sample_position(i, samples, size)]];
  std::sort(sample.begin(), sample.end());
  const int count = (1 << levels) - 1;
  std::vector<int> sorted(count);
  for (int j = 0; j < count; ++j) sorted[j] = sample[splitter_sample_rank(j, samples, count)];
  return sorted;
}

// Exclusive scan in place; returns the total.
std::int64_t exclusive_scan(std::vector<std::int64_t>& v) {
  std::int64_t running = 0;
  for (auto& c : v) {
    const std::int64_t count = c;
    c = running;
    running += count;
  }
  return running;
}

void simulate(const std::vector<int>& keys, std::int64_t* largest = nullptr) {
  using policy = u32_policy;
  const auto n = static_cast<std::int64_t>(keys.size());
  const sample_sort_plan p = make_sample_sort_plan(n, 4, 0, policy::shape());
  ASSERT_FALSE(p.direct);
  index_vector identity(n);
  std::iota(identity.begin(), identity.end(), 0u);
  const std::vector<int> tree = tree_of(splitters_of(keys, identity, 0, n, p.levels, p.samples), p.levels);
  std::vector<std::int64_t> counters(p.counters, 0);
  std::vector<int> bucket_of(n);
  for (std::int64_t block = 0; block < p.scatter_blocks; ++block)
    for (std::int64_t i = p.first_tile(block) * policy::scatter_tile;
         i < std::min(n, p.end_tile(block) * policy::scatter_tile); ++i) {
      bucket_of[i] = classify_key(tree.data(), p.levels, keys[i], tilesort::less{});
      ++counters[p.counter(bucket_of[i], block)];
    }
  ASSERT_EQ(n, exclusive_scan(counters));
  std::vector<std::int64_t> next = counters;
  index_vector scattered(n);  // original indices
  for (std::int64_t block = 0; block < p.scatter_blocks; ++block)
    for (std::int64_t i = p.first_tile(block) * policy::scatter_tile;
         i < std::min(n, p.end_tile(block) * policy::scatter_tile); ++i)
      scattered[next[p.counter(bucket_of[i], block)]++] = static_cast<std::uint32_t>(i);
  // The final buckets: [begin, end) of `result`, and whether they keep their
  // order (keys equal to a splitter).
  struct final_bucket {
    std::int64_t begin, end;
    bool in_order;
  };
  std::vector<final_bucket> finals;
  index_vector result;
  if (!p.two_level) {
    result = scattered;
    for (int b = 0; b < p.buckets; ++b) {
      const std::int64_t end = b + 1 < p.buckets ? counters[p.counter(b + 1, 0)] : n;
      finals.push_back({counters[p.counter(b, 0)], end, is_equal_bucket(b)});
    }
  } else {
    // The table, as the last level-2 sample block writes it.
    std::vector<sample_sort_bucket_info> infos(p.buckets + 1);
    std::int64_t chunks = 0;
    for (int b = 0; b < p.buckets; ++b) {
      infos[b] = sample_sort_bucket_of(p, counters.data(), b, policy::bucket_tile);
      infos[b].first_chunk = chunks;
      chunks += p.chunks_of(infos[b].size);
    }
    infos[p.buckets] = {n, 0, chunks, 0};
    ASSERT_LE(chunks, p.chunks_bound);
    std::vector<std::vector<int>> trees(p.buckets);
    for (int b = 0; b < p.buckets; ++b) {
      const sample_sort_bucket_info& info = infos[b];
      if (info.levels == 0) continue;
      const int count = (1 << info.levels) - 1;
      const int samples = sample_sort_sample_count(count, info.size, policy::oversampling, policy::sample_tile);
      trees[b] = tree_of(splitters_of(keys, scattered, info.begin, info.size, info.levels, samples), info.levels);
    }
    // Counters: every block writes max_buckets entries (zeros past its tree
    // or when idle); they must cover counters2 exactly once.
    std::vector<std::int64_t> counters2(p.counters2, -1);
    std::vector<int> sub_of(n);
    for (std::int64_t k = 0; k < p.chunks_bound; ++k) {
      sample_sort_chunk chunk;
      if (!sample_sort_chunk_of(p, infos.data(), k, chunk)) {
        for (int s = 0; s < p.max_buckets; ++s) {
          ASSERT_EQ(-1, counters2[k * p.max_buckets + s]);
          counters2[k * p.max_buckets + s] = 0;
        }
        continue;
      }
      std::vector<std::int64_t> counts(p.max_buckets, 0);
      for (std::int64_t i = chunk.begin; i < chunk.end; ++i) {
        sub_of[i] = chunk.levels == 0 ? 0
                                      : classify_key(trees[chunk.bucket].data(), chunk.levels, keys[scattered[i]],
                                                     tilesort::less{});
        ASSERT_LT(sub_of[i], sample_sort_buckets(chunk.levels));
        ++counts[sub_of[i]];
      }
      for (int s = 0; s < p.max_buckets; ++s) {
        ASSERT_EQ(-1, counters2[chunk.base + s * chunk.stride]) << "chunk " << k << " sub-bucket " << s;
        counters2[chunk.base + s * chunk.stride] = counts[s];
      }
    }
    for (std::int64_t c : counters2) ASSERT_NE(-1, c);
    ASSERT_EQ(n, exclusive_scan(counters2));
    result.assign(n, 0);
    for (std::int64_t k = 0; k < chunks; ++k) {
      sample_sort_chunk chunk;
      ASSERT_TRUE(sample_sort_chunk_of(p, infos.data(), k, chunk));
      std::vector<std::int64_t> to(sample_sort_buckets(chunk.levels));
      for (int s = 0; s < static_cast<int>(to.size()); ++s) to[s] = counters2[chunk.base + s * chunk.stride];
      for (std::int64_t i = chunk.begin; i < chunk.end; ++i) result[to[sub_of[i]]++] = scattered[i];
    }
    // The bucket kernel's view: per level-1 range bucket, the packed runs of
    // its sub-buckets (or the whole bucket); between runs, equal-key
    // sub-buckets left in place.
    std::int64_t covered = 0;
    for (int b = 0; b < p.buckets; ++b) {
      const sample_sort_bucket_info& info = infos[b];
      ASSERT_EQ(covered, info.begin);
      covered = info.begin + info.size;
      if (is_equal_bucket(b) || info.levels == 0) {
        finals.push_back({info.begin, info.begin + info.size, is_equal_bucket(b)});
        continue;
      }
      const int subs = sample_sort_buckets(info.levels);
      std::vector<std::int64_t> starts(subs);
      for (int sub = 0; sub < subs; ++sub) starts[sub] = sub == 0 ? info.begin : counters2[p.counter2(info, sub, 0)];
      std::vector<sample_sort_group> groups(subs);
      const int count = sample_sort_pack(starts.data(), subs, covered, policy::bucket_tile, groups.data());
      ASSERT_LE(count, subs);
      std::int64_t at = info.begin;
      for (int g = 0; g < count; ++g) {
        ASSERT_LE(at, groups[g].begin);
        ASSERT_LT(groups[g].begin, groups[g].end);
        at = groups[g].end;
        finals.push_back({groups[g].begin, groups[g].end, false});
      }
      ASSERT_LE(at, covered);
    }
    ASSERT_EQ(n, covered);
  }
  for (const final_bucket& f : finals) {
    ASSERT_LE(f.begin, f.end);
    if (f.in_order) {
      for (std::int64_t i = f.begin + 1; i < f.end; ++i) ASSERT_EQ(keys[result[f.begin]], keys[result[i]]);
    } else {
      std::stable_sort(result.begin() + f.begin, result.begin() + f.end,
                       [&](std::uint32_t x, std::uint32_t y) { return keys[x] < keys[y]; });
      if (largest != nullptr) *largest = std::max(*largest, f.end - f.begin);
    }
  }
  index_vector reference(n);
  std::iota(reference.begin(), reference.end(), 0u);
  std::stable_sort(reference.begin(), reference.end(), [&](std::uint32_t x, std::uint32_t y) { return keys[x] < keys[y]; });
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(reference[i], result[i]) << "at " << i << " of " << n;
}

TEST(SampleSortSimulation, MatchesStableSort) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::int64_t n : {std::int64_t(8193), std::int64_t(20000), std::int64_t(100003), std::int64_t(1) << 20,
                         (std::int64_t(1) << 20) + 1, (std::int64_t(1) << 21) + 3}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::vector<int> keys(n);
    for (auto& k : keys) k = static_cast<int>(rng() % 1000000007);
    // Splitters are `per_bucket` sample ranks apart, so a range bucket of
    // more than 8x its share n / (S + 1) needs a key interval holding 8x
    // its share of the input but at most per_bucket (>= 8) samples, where 64
    // are expected: probability below 1e-17 per bucket (Poisson tail), so
    // this bound does not fail by chance, and does fail when the samples or
    // splitters are drawn badly (e.g. from one part of the input). With two
    // levels, a level-2 bucket averages at most half a tile with 16 samples
    // each: one of more than two tiles (4x its share, 64 samples expected,
    // at most 16 seen) has probability below 1e-12.
    const sample_sort_plan p = make_sample_sort_plan(n, 4, 0, u32_policy::shape());
    const std::int64_t per_bucket = p.samples / (p.splitters + 1);
    ASSERT_GE(per_bucket, 8);
    std::int64_t largest = 0;
    simulate(keys, &largest);
    if (p.two_level) {
      EXPECT_LE(largest, 2 * u32_policy::bucket_tile) << "random keys: a final bucket far above half a tile";
    } else {
      EXPECT_LE(largest, 8 * n / (p.splitters + 1)) << "random keys: a range bucket far above its share";
    }
    for (auto& k : keys) k = static_cast<int>(rng() % 5);  // all splitters among 5 values
    simulate(keys);
    std::fill(keys.begin(), keys.end(), 42);
    simulate(keys);
    for (std::int64_t i = 0; i < n; ++i) keys[i] = static_cast<int>(i % 1000);  // sawtooth
    simulate(keys);
    for (std::int64_t i = 0; i < n; ++i) keys[i] = static_cast<int>(std::min(i, n - i));  // organ pipe
    simulate(keys);
    std::fill(keys.begin(), keys.end(), 0);
    keys[n / 3] = 1;  // a single outlier
    simulate(keys);
  }
}

}  // namespace
