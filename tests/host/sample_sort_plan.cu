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
  // Buckets of at most half a tile on average, unless the tree is full.
  if (p.levels < Policy::max_levels) EXPECT_LE(2 * n, (std::int64_t(1) << p.levels) * Policy::bucket_tile);
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
  // Layout: aligned, in order, no overlap; n keys + n values + small bookkeeping.
  for (std::size_t offset : {p.keys_offset, p.values_offset, p.splitters_offset, p.counters_offset, p.partials_offset})
    EXPECT_EQ(0u, offset % 256);
  EXPECT_GE(p.values_offset, p.keys_offset + std::size_t(n) * key_bytes);
  EXPECT_GE(p.splitters_offset, p.values_offset + std::size_t(n) * value_bytes);
  EXPECT_GE(p.counters_offset, p.splitters_offset + std::size_t(p.splitters) * key_bytes);
  EXPECT_GE(p.partials_offset, p.counters_offset + std::size_t(p.counters) * 8);
  EXPECT_GE(p.total_bytes, p.partials_offset + std::size_t(p.scan_chunks) * 8);
  // Counters: at most max(buckets x min_scatter_blocks, n / keys_per_counter).
  const std::int64_t max_counters =
      std::max<std::int64_t>(std::int64_t(p.buckets) * Policy::min_scatter_blocks, n / Policy::keys_per_counter);
  EXPECT_LE(p.counters, max_counters);
  const std::size_t bookkeeping = std::size_t(max_counters) * 8 + std::size_t(max_counters) * 8 / Policy::scan_chunk +
                                  8 + std::size_t(p.splitters) * key_bytes + 5 * 256;
  EXPECT_LE(p.total_bytes, std::size_t(n) * (key_bytes + value_bytes) + bookkeeping);
}

TEST(SampleSortPlan, EveryShape) {
  for (std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(8191), std::int64_t(8192), std::int64_t(8193),
                         std::int64_t(16385), std::int64_t(1) << 20, (std::int64_t(1) << 22) + 1, std::int64_t(1) << 24,
                         std::int64_t(1) << 28, (std::int64_t(1) << 31) + 5, std::int64_t(1) << 36}) {
    check_plan<u32_policy>(n, 4, 0);
    check_plan<pair_policy>(n, 8, 4);
    check_plan<wide_policy>(n, 16, 4);
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

TEST(SampleSortPlan, ScatterCodesFit) {
  for (int tile : {u32_policy::scatter_tile, pair_policy::scatter_tile, wide_policy::scatter_tile}) {
    const int bits = sample_sort_position_bits(tile);
    EXPECT_GE(1 << bits, tile);
    const unsigned largest = (8190u << bits) | unsigned(tile - 1);
    EXPECT_LT(largest, 0xffffffffu);
  }
}

TEST(SampleSortPlan, TreeDepthFollowsKeySize) {
  EXPECT_EQ(12, sample_sort_max_levels(1, 16384));
  EXPECT_EQ(12, sample_sort_max_levels(4, 16384));
  EXPECT_EQ(11, sample_sort_max_levels(8, 16384));
  EXPECT_EQ(10, sample_sort_max_levels(12, 16384));
  EXPECT_EQ(10, sample_sort_max_levels(16, 16384));
  EXPECT_EQ(9, sample_sort_max_levels(32, 16384));
  EXPECT_EQ(1, sample_sort_max_levels(16384, 16384));
  for (std::size_t key_bytes : {1, 2, 4, 8, 12, 16, 32, 100}) {
    const int levels = sample_sort_max_levels(key_bytes, 16384);
    if (levels > 1) EXPECT_LE(((std::size_t(1) << levels) - 1) * key_bytes, 16384u) << key_bytes;
  }
  EXPECT_EQ(12, u32_policy::max_levels);
  EXPECT_EQ(11, pair_policy::max_levels);
  EXPECT_EQ(10, wide_policy::max_levels);
  // 4-byte keys: buckets of at most half a tile on average up to 2^24 keys.
  const sample_sort_plan p = make_sample_sort_plan(std::int64_t(1) << 24, 4, 0, u32_policy::shape());
  EXPECT_EQ(12, p.levels);
  EXPECT_LE(2 * p.n, std::int64_t(p.splitters + 1) * u32_policy::bucket_tile);
}

TEST(SampleSortPlan, ScatterStorageFitsTwoBlocksPerSm) {
  // 228 KB of shared memory per SM on an H100 / H200, 1 KB reserved per block.
  constexpr std::size_t sm_bytes = 228 * 1024, reserved = 1024;
  EXPECT_LE(2 * (sizeof(sample_sort_scatter_storage<std::uint32_t, u32_policy>) + reserved), sm_bytes);
  EXPECT_LE(2 * (sizeof(sample_sort_scatter_storage<std::uint64_t, pair_policy>) + reserved), sm_bytes);
  EXPECT_LE(2 * (sizeof(sample_sort_scatter_storage<std::uint64_t, tilesort::sample_sort_policy<8, 0>>) + reserved),
            sm_bytes);
  EXPECT_LE(2 * (sizeof(sample_sort_scatter_storage<std::uint32_t, tilesort::sample_sort_policy<4, 4>>) + reserved),
            sm_bytes);
}

TEST(SampleSortPlan, BucketShapesHalveTheTile) {
  EXPECT_EQ(u32_policy::bucket_tile, 2 * u32_policy::bucket_threads * u32_policy::bucket_items_half);
  EXPECT_EQ(u32_policy::bucket_tile, 4 * u32_policy::bucket_threads * u32_policy::bucket_items_quarter);
  EXPECT_EQ(wide_policy::bucket_tile, 2 * wide_policy::bucket_threads * wide_policy::bucket_items_half);
  using widest = tilesort::sample_sort_policy<16, 16>;
  EXPECT_EQ(1, widest::bucket_items_quarter);
}

// ------------------------------------------------------------------ the whole sort, simulated
// From the plan alone: samples, splitters, classification, counters per
// (bucket, block), exclusive scan, stable scatter, bucket sorts (equal
// buckets untouched). Keys are (value, original index) so the result can be
// compared with std::stable_sort index for index.
// `largest` (if given) receives the size of the largest range bucket.
void simulate(const std::vector<int>& keys, std::int64_t* largest = nullptr) {
  using policy = u32_policy;
  const auto n = static_cast<std::int64_t>(keys.size());
  const sample_sort_plan p = make_sample_sort_plan(n, 4, 0, policy::shape());
  ASSERT_FALSE(p.direct);
  std::vector<int> samples(p.samples);
  for (int i = 0; i < p.samples; ++i) samples[i] = keys[sample_position(i, p.samples, n)];
  std::sort(samples.begin(), samples.end());
  std::vector<int> sorted(p.splitters);
  for (int j = 0; j < p.splitters; ++j) sorted[j] = samples[splitter_sample_rank(j, p.samples, p.splitters)];
  const std::vector<int> tree = tree_of(sorted, p.levels);
  std::vector<std::int64_t> counters(p.counters, 0);
  std::vector<int> bucket_of(n);
  for (std::int64_t block = 0; block < p.scatter_blocks; ++block)
    for (std::int64_t i = p.first_tile(block) * policy::scatter_tile;
         i < std::min(n, p.end_tile(block) * policy::scatter_tile); ++i) {
      bucket_of[i] = classify_key(tree.data(), p.levels, keys[i], tilesort::less{});
      ++counters[p.counter(bucket_of[i], block)];
    }
  std::int64_t running = 0;
  for (auto& c : counters) {
    const std::int64_t count = c;
    c = running;
    running += count;
  }
  ASSERT_EQ(n, running);
  std::vector<std::int64_t> next = counters;
  std::vector<std::uint32_t> scattered(n);  // original indices
  for (std::int64_t block = 0; block < p.scatter_blocks; ++block)
    for (std::int64_t i = p.first_tile(block) * policy::scatter_tile;
         i < std::min(n, p.end_tile(block) * policy::scatter_tile); ++i)
      scattered[next[p.counter(bucket_of[i], block)]++] = static_cast<std::uint32_t>(i);
  for (int b = 0; b < p.buckets; ++b) {
    const std::int64_t begin = counters[p.counter(b, 0)];
    const std::int64_t end = b + 1 < p.buckets ? counters[p.counter(b + 1, 0)] : n;
    if (is_equal_bucket(b)) {
      for (std::int64_t i = begin + 1; i < end; ++i) ASSERT_EQ(keys[scattered[begin]], keys[scattered[i]]);
    } else {
      std::stable_sort(scattered.begin() + begin, scattered.begin() + end,
                       [&](std::uint32_t x, std::uint32_t y) { return keys[x] < keys[y]; });
      if (largest != nullptr) *largest = std::max(*largest, end - begin);
    }
  }
  std::vector<std::uint32_t> reference(n);
  std::iota(reference.begin(), reference.end(), 0u);
  std::stable_sort(reference.begin(), reference.end(), [&](std::uint32_t x, std::uint32_t y) { return keys[x] < keys[y]; });
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(reference[i], scattered[i]) << "at " << i << " of " << n;
}

TEST(SampleSortSimulation, MatchesStableSort) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::int64_t n : {std::int64_t(8193), std::int64_t(20000), std::int64_t(100003), std::int64_t(1) << 20}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::vector<int> keys(n);
    for (auto& k : keys) k = static_cast<int>(rng() % 1000000007);
    // Splitters are `per_bucket` sample ranks apart, so a range bucket of
    // more than 8x its share n / (S + 1) needs a key interval holding 8x
    // its share of the input but at most per_bucket (>= 8) samples, where 64
    // are expected: probability below 1e-17 per bucket (Poisson tail), so
    // this bound does not fail by chance, and does fail when the samples or
    // splitters are drawn badly (e.g. from one part of the input).
    const sample_sort_plan p = make_sample_sort_plan(n, 4, 0, u32_policy::shape());
    const std::int64_t per_bucket = p.samples / (p.splitters + 1);
    ASSERT_GE(per_bucket, 8);
    std::int64_t largest = 0;
    simulate(keys, &largest);
    EXPECT_LE(largest, 8 * n / (p.splitters + 1)) << "random keys: a range bucket far above its share";
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
