// Host tests for detail/radix_order.cuh and detail/radix_sort_plan.cuh: the
// key images order exactly like tilesort::less / greater (every 16-bit
// pattern, random and special 32- and 64-bit ones), the pass schedule (every
// pattern of skipped digits, in place and copy), the look-back words, the
// temp layout, and a simulation of the whole sort from the schedule alone
// (histogram, skipped passes, stable per-digit scatters tile by tile,
// ping-pong buffers, the final copy) checked against std::stable_sort.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <tilesort/comparators.cuh>
#include <tilesort/detail/radix_order.cuh>
#include <tilesort/detail/radix_sort_plan.cuh>
#include <tilesort/device/radix_sort/policy.cuh>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort_test::fresh_seed;

template <typename Key>
Key from_bits(std::uint64_t bits) {
  Key k;
  std::memcpy(&k, &bits, sizeof k);
  return k;
}
template <typename Key>
std::uint64_t to_bits(const Key& k) {
  std::uint64_t b = 0;
  std::memcpy(&b, &k, sizeof k);
  return b;
}

// Sorting by image, stably, is the comparator's stable sort: checked on
// neighbours in image order (both orders are transitive): never a descent,
// and a strict step in the image exactly where the comparator sees one.
template <typename Key, typename Compare, bool Descending>
void expect_image_orders(std::vector<Key> keys, Compare comp) {
  const radix_native_image<Key, Descending> image;
  std::stable_sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) { return image(a) < image(b); });
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    const Key a = keys[i], b = keys[i + 1];
    ASSERT_FALSE(comp(b, a)) << "bits " << std::hex << to_bits(a) << " then " << to_bits(b);
    ASSERT_EQ(image(a) < image(b), comp(a, b)) << "bits " << std::hex << to_bits(a) << " and " << to_bits(b);
  }
  // And the image sort equals the comparator's stable sort, bit for bit.
  std::vector<Key> by_comp = keys;
  std::stable_sort(by_comp.begin(), by_comp.end(), comp);
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(to_bits(keys[i]), to_bits(by_comp[i])) << i;
}

template <typename Key>
std::vector<Key> all_patterns_16() {
  std::vector<Key> keys;
  for (std::uint64_t b = 0; b < 65536; ++b) keys.push_back(from_bits<Key>(b));
  return keys;
}

template <typename Key>
class RadixImage16 : public ::testing::Test {};
using keys_16 = ::testing::Types<__half, __nv_bfloat16, std::int16_t, std::uint16_t>;
TYPED_TEST_SUITE(RadixImage16, keys_16);

TYPED_TEST(RadixImage16, EveryPatternOrdersLikeTheComparator) {
  expect_image_orders<TypeParam, tilesort::less, false>(all_patterns_16<TypeParam>(), tilesort::less{});
  expect_image_orders<TypeParam, tilesort::greater, true>(all_patterns_16<TypeParam>(), tilesort::greater{});
}

// Random patterns with the special values mixed in: every NaN payload and
// sign, +-0, +-inf, denormals, the extremes.
template <typename Key>
std::vector<Key> wide_patterns(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Key> keys;
  const int bits = 8 * sizeof(Key);
  const std::uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  const std::uint64_t sign = 1ull << (bits - 1);
  const std::uint64_t exponent = sizeof(Key) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull;
  const std::uint64_t specials[] = {0, sign, exponent, exponent | sign, exponent | 1, exponent | sign | 1,
                                    exponent | (exponent >> 1 & ~exponent), 1, sign | 1, mask, mask >> 1, sign - 1};
  for (int r = 0; r < 4; ++r)
    for (std::uint64_t s : specials) keys.push_back(from_bits<Key>(s & mask));
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t b = rng() & mask;
    if (i % 5 == 0) b = (b & ~exponent) | exponent;  // NaN or inf
    if (i % 7 == 0) b &= sign | (exponent >> 4);     // small: denormals and zeros
    keys.push_back(from_bits<Key>(b));
  }
  return keys;
}

template <typename Key>
class RadixImageWide : public ::testing::Test {};
using keys_wide = ::testing::Types<float, double, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t>;
TYPED_TEST_SUITE(RadixImageWide, keys_wide);

TYPED_TEST(RadixImageWide, RandomAndSpecialPatternsOrderLikeTheComparator) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  expect_image_orders<TypeParam, tilesort::less, false>(wide_patterns<TypeParam>(seed), tilesort::less{});
  expect_image_orders<TypeParam, tilesort::greater, true>(wide_patterns<TypeParam>(seed), tilesort::greater{});
}

TEST(RadixImage, EightBitKeys) {
  std::vector<std::int8_t> s;
  std::vector<std::uint8_t> u;
  for (int b = 0; b < 256; ++b) {
    s.push_back(from_bits<std::int8_t>(b));
    u.push_back(from_bits<std::uint8_t>(b));
  }
  expect_image_orders<std::int8_t, tilesort::less, false>(s, tilesort::less{});
  expect_image_orders<std::int8_t, tilesort::greater, true>(s, tilesort::greater{});
  expect_image_orders<std::uint8_t, tilesort::less, false>(u, tilesort::less{});
  expect_image_orders<std::uint8_t, tilesort::greater, true>(u, tilesort::greater{});
  const radix_native_image<bool, false> up;
  const radix_native_image<bool, true> down;
  EXPECT_LT(up(false), up(true));
  EXPECT_LT(down(true), down(false));
}

TEST(RadixImage, NanIsLastInBothOrders) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float negative_nan = -nan;
  const radix_native_image<float, false> up;
  const radix_native_image<float, true> down;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(up(nan), up(negative_nan));
  EXPECT_EQ(down(nan), down(negative_nan));
  EXPECT_LT(up(inf), up(negative_nan));
  EXPECT_LT(down(-inf), down(negative_nan));
  EXPECT_EQ(up(0.0f), up(-0.0f));
  EXPECT_EQ(down(0.0f), down(-0.0f));
}

TEST(RadixImage, UserBitsOrder) {
  struct low_half {
    __host__ __device__ std::uint16_t operator()(const std::uint32_t& k) const { return std::uint16_t(k); }
  };
  const auto order = tilesort::order_by_bits(low_half{});
  const radix_user_image<std::uint32_t, low_half> image{low_half{}};
  static_assert(std::is_same_v<decltype(image)::bits_type, std::uint16_t>);
  EXPECT_TRUE(order(0x10002u, 0x00003u));
  EXPECT_FALSE(order(0x00003u, 0x10002u));
  EXPECT_EQ(2u, image(0x10002u));
}

TEST(RadixImage, DigitsLeastSignificantFirst) {
  EXPECT_EQ(0x34u, radix_digit<8>(std::uint32_t(0x12345634u), 0));
  EXPECT_EQ(0x56u, radix_digit<8>(std::uint32_t(0x12345634u), 1));
  EXPECT_EQ(0x12u, radix_digit<8>(std::uint32_t(0x12345634u), 3));
  EXPECT_EQ(0xf0u, radix_digit<8>(std::uint64_t(0xf000000000000000ull), 7));
}

// ------------------------------------------------------------------ schedule
// Follows the schedule's buffers: every executed pass reads where the last
// one wrote, never writes the buffer it reads (nor, in place, the input),
// and the keys end in the output (directly or by the copy).
void expect_schedule_sound(const bool* varies, int passes, bool in_place) {
  radix_schedule s{};
  radix_schedule_passes(varies, passes, in_place, s);
  int executed = 0, where = radix_input, last_executed = -1;
  for (int p = 0; p < radix_max_passes; ++p) {
    const radix_pass& pass = s.pass[p];
    const bool runs = p < passes && varies[p];
    ASSERT_EQ(runs ? 1 : 0, pass.executed) << "pass " << p;
    if (!runs) continue;
    ASSERT_EQ(where, pass.source) << "pass " << p;
    ASSERT_NE(pass.source, pass.destination);
    ASSERT_NE(radix_input, pass.destination);
    if (in_place) ASSERT_FALSE(pass.source == radix_input && pass.destination == radix_output);
    ASSERT_EQ(executed == 0 ? 1 : 0, pass.first);
    ASSERT_EQ(executed % 2, pass.parity);
    where = pass.destination;
    last_executed = p;
    ++executed;
  }
  ASSERT_EQ(executed, s.executed);
  for (int p = 0; p < passes; ++p)
    if (s.pass[p].executed) ASSERT_EQ(p == last_executed ? 1 : 0, s.pass[p].last);
  if (executed == 0) {
    EXPECT_EQ(radix_input, s.copy_source);
    EXPECT_EQ(0, s.copy_after_last);
    return;
  }
  if (!in_place) {
    EXPECT_EQ(radix_output, where) << "out of place, the last pass writes the output";
    EXPECT_EQ(radix_none, s.copy_source);
  } else {
    EXPECT_EQ(where == radix_output ? radix_none : radix_alternate, s.copy_source);
    EXPECT_EQ(executed % 2 == 1 ? radix_alternate : radix_none, s.copy_source);
  }
  EXPECT_EQ(s.copy_source != radix_none && varies[passes - 1] ? 1 : 0, s.copy_after_last);
}

TEST(RadixSchedule, EveryPatternOfSkippedDigits) {
  for (int passes = 1; passes <= radix_max_passes; ++passes)
    for (unsigned mask = 0; mask < (1u << passes); ++mask)
      for (const bool in_place : {false, true}) {
        bool varies[radix_max_passes] = {};
        for (int p = 0; p < passes; ++p) varies[p] = (mask >> p) & 1;
        SCOPED_TRACE("passes " + std::to_string(passes) + " mask " + std::to_string(mask) +
                     (in_place ? " in place" : " copy"));
        expect_schedule_sound(varies, passes, in_place);
      }
}

// ------------------------------------------------------------------ look-back words
TEST(RadixLookback, WordsCarryCountFlagAndTag) {
  const unsigned long long tag = radix_lookback::tag(4, 1);
  const unsigned long long count = radix_lookback::count_mask;
  const auto word = radix_lookback::word(tag, radix_lookback::flag_inclusive, count);
  EXPECT_TRUE(radix_lookback::is_for(word, tag));
  EXPECT_TRUE(radix_lookback::is_inclusive(word));
  EXPECT_EQ(count, radix_lookback::count(word));
  const auto aggregate = radix_lookback::word(tag, radix_lookback::flag_aggregate, 7);
  EXPECT_FALSE(radix_lookback::is_inclusive(aggregate));
  EXPECT_EQ(7u, radix_lookback::count(aggregate));
  // Another cycle of the same slot, or the other parity, is another tile.
  EXPECT_FALSE(radix_lookback::is_for(word, radix_lookback::tag(3, 1)));
  EXPECT_FALSE(radix_lookback::is_for(word, radix_lookback::tag(4, 0)));
  // The zeroed ring holds no tile's word, and no done word is 0.
  EXPECT_FALSE(radix_lookback::is_for(0, radix_lookback::tag(0, 0)));
  for (unsigned cycle : {0u, 1u, 1023u, 70000u})
    for (int parity : {0, 1}) EXPECT_NE(0u, radix_lookback::done(cycle, parity));
  EXPECT_NE(radix_lookback::done(3, 0), radix_lookback::done(4, 0));
  EXPECT_NE(radix_lookback::done(3, 0), radix_lookback::done(3, 1));
  EXPECT_EQ(std::int64_t(1) << 40, radix_max_keys);
}

TEST(RadixLookback, RingSlotsAndCycles) {
  const radix_ring flat{100, 0, false};
  EXPECT_EQ(57u, flat.slot(57));
  EXPECT_EQ(0u, flat.cycle(57));
  const radix_ring wrapping{4096, 12, true};
  EXPECT_EQ(5u, wrapping.slot(4096 * 3 + 5));
  EXPECT_EQ(3u, wrapping.cycle(4096 * 3 + 5));
}

// ------------------------------------------------------------------ plan
TEST(RadixPlan, LayoutIsAlignedDisjointAndSmall) {
  using policy = tilesort::radix_sort_policy<4, 0>;
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(1000), std::int64_t(policy::tile_items),
                               std::int64_t(1) << 20, std::int64_t(1) << 24, std::int64_t(1) << 28,
                               (std::int64_t(1) << 34) + 3}) {
    SCOPED_TRACE(n);
    const radix_sort_shape shape{policy::tile_items, policy::ring_tiles, policy::window, 4, {}};
    const radix_sort_plan plan = make_radix_sort_plan(n, 4, 4, shape);
    EXPECT_EQ(ceil_div(n, policy::tile_items), plan.tiles);
    EXPECT_EQ(std::min<std::int64_t>(plan.tiles, policy::ring_tiles), std::int64_t(plan.ring.slots));
    EXPECT_EQ(plan.tiles > policy::ring_tiles, plan.ring.wraps);
    if (plan.ring.wraps) EXPECT_EQ(plan.ring.slots, 1u << plan.ring.shift);
    for (std::size_t offset : {plan.keys_offset, plan.values_offset, plan.control_offset, plan.ring_offset,
                               plan.done_offset})
      EXPECT_EQ(0u, offset % 256);
    EXPECT_GE(plan.values_offset, plan.keys_offset + std::size_t(n) * 4);
    EXPECT_GE(plan.control_offset, plan.values_offset + std::size_t(n) * 4);
    EXPECT_GE(plan.ring_offset, plan.control_offset + sizeof(radix_control));
    EXPECT_GE(plan.done_offset, plan.ring_offset + std::size_t(plan.ring.slots) * radix_bins * 8);
    EXPECT_GE(plan.total_bytes, plan.done_offset + std::size_t(plan.ring.slots) * 4);
    EXPECT_EQ(plan.total_bytes, plan.zero_offset + plan.zero_bytes);
    // Beyond one copy of the keys and values: at most the control block and
    // a 32 MB ring (plus alignment).
    const std::size_t extra = plan.total_bytes - 2 * align_temp(std::size_t(n) * 4);
    EXPECT_LE(extra, align_temp(sizeof(radix_control)) + align_temp(std::size_t(policy::ring_tiles) * radix_bins * 8) +
                         align_temp(policy::ring_tiles * 4));
  }
}

// The hybrid plan: the bucket starts inside the zeroed bytes (empty
// buckets unless the sort writes them), the bucket sort's temp after them.
TEST(RadixPlan, HybridLayoutZeroesTheBucketStarts) {
  using policy = tilesort::radix_sort_policy<8, 0>;
  for (const int digits : {1, 2}) {
    const std::int64_t n = std::int64_t(1) << 24;
    const radix_sort_shape shape{policy::tile_items, policy::ring_tiles, policy::window, 8,
                                 radix_hybrid_limits{digits, policy::largest_bucket, 1}};
    const std::size_t bucket_bytes = 12345;
    const radix_sort_plan plan = make_radix_sort_plan(n, 8, 0, shape, bucket_bytes);
    EXPECT_EQ(std::int64_t(1) << (8 * digits), plan.buckets);
    EXPECT_GE(plan.offsets_offset, plan.done_offset + std::size_t(plan.ring.slots) * 4);
    EXPECT_LE(plan.zero_offset, plan.offsets_offset);
    EXPECT_GE(plan.zero_offset + plan.zero_bytes, plan.offsets_offset + std::size_t(plan.buckets + 1) * 8);
    EXPECT_GE(plan.buckets_offset, plan.zero_offset + plan.zero_bytes);
    EXPECT_EQ(plan.total_bytes, plan.buckets_offset + align_temp(bucket_bytes));
  }
  const radix_sort_shape lsd{policy::tile_items, policy::ring_tiles, policy::window, 8, {}};
  const radix_sort_plan plain = make_radix_sort_plan(1000, 8, 0, lsd, 12345);
  EXPECT_EQ(0, plain.buckets);
  EXPECT_EQ(plain.total_bytes, plain.zero_offset + plain.zero_bytes) << "no bucket temp without buckets";
}

// The bucket tiles: the first shape that holds 1.5 x the mean bucket and
// 64 keys, from the policy's mean on; their ends after the bucket sort's
// temp, only where a shape was chosen.
TEST(RadixPlan, BucketTilesTakeTheFirstShapeThatHoldsTheSpread) {
  using policy = tilesort::radix_sort_policy<8, 0>;
  constexpr int shapes = policy::bucket_tile_shapes;
  int capacity[shapes];
  for (int k = 0; k < shapes; ++k) capacity[k] = policy::bucket_tile_capacity(k);
  for (int k = 1; k < shapes; ++k) EXPECT_GT(capacity[k], capacity[k - 1]);
  const std::int64_t buckets = 65536, min_mean = policy::bucket_tile_min_mean;
  EXPECT_EQ(-1, radix_bucket_tile_for(0, buckets, capacity, shapes, min_mean));
  EXPECT_EQ(-1, radix_bucket_tile_for(buckets * (min_mean - 1), buckets, capacity, shapes, min_mean));
  for (int log_n = 23; log_n <= 30; ++log_n) {
    SCOPED_TRACE(log_n);
    const std::int64_t n = std::int64_t(1) << log_n;
    const std::int64_t wanted = n / buckets + n / buckets / 2 + 64;
    const int shape = radix_bucket_tile_for(n, buckets, capacity, shapes, min_mean);
    if (shape < 0) {
      EXPECT_LT(capacity[shapes - 1], wanted);
      continue;
    }
    EXPECT_GE(capacity[shape], wanted);
    if (shape > 0) EXPECT_LT(capacity[shape - 1], wanted) << "the smallest shape that holds it";
  }
  EXPECT_EQ(0, radix_bucket_tile_for(std::int64_t(1) << 24, buckets, capacity, shapes, min_mean));
  EXPECT_EQ(1, radix_bucket_tile_for(std::int64_t(1) << 26, buckets, capacity, shapes, min_mean));
  EXPECT_EQ(2, radix_bucket_tile_for(std::int64_t(1) << 28, buckets, capacity, shapes, min_mean));
  EXPECT_EQ(-1, radix_bucket_tile_for(std::int64_t(1) << 29, buckets, capacity, shapes, min_mean));
  EXPECT_EQ(0, radix_bucket_tile_for(3000, buckets, capacity, shapes, 0)) << "any mean where min_mean is 0";

  const radix_sort_shape hybrid{policy::tile_items, policy::ring_tiles, policy::window, 8,
                                radix_hybrid_limits{2, policy::largest_bucket, 1}};
  const std::int64_t n = std::int64_t(1) << 24;
  const radix_sort_plan none = make_radix_sort_plan(n, 8, 0, hybrid, 12345);
  EXPECT_EQ(-1, none.bucket_tile);
  const radix_sort_plan tiles = make_radix_sort_plan(n, 8, 0, hybrid, 12345, 1);
  EXPECT_EQ(1, tiles.bucket_tile);
  EXPECT_EQ(tiles.ends_offset, tiles.buckets_offset + align_temp(12345));
  EXPECT_EQ(tiles.total_bytes, tiles.ends_offset + align_temp(std::size_t(tiles.buckets) * 8));
  EXPECT_EQ(none.total_bytes + align_temp(std::size_t(tiles.buckets) * 8), tiles.total_bytes);
  const radix_sort_shape lsd{policy::tile_items, policy::ring_tiles, policy::window, 8, {}};
  EXPECT_EQ(-1, make_radix_sort_plan(1000, 8, 0, lsd, 0, 1).bucket_tile) << "no tiles without buckets";
}

// The choice between LSD and buckets from each digit's largest bin.
TEST(RadixChooseBuckets, TopVaryingDigitsWhenTheKeysSpread) {
  const std::int64_t n = std::int64_t(1) << 24;
  bool run[8] = {};
  int digit[radix_bucket_digits] = {-1, -1};
  const bool all[8] = {true, true, true, true, true, true, true, true};
  std::int64_t spread[8];
  for (auto& l : spread) l = n / 256 + 1000;
  // Random 8-byte keys: the top two digits, LSD passes over them alone.
  ASSERT_TRUE(radix_choose_buckets(all, spread, 8, n, radix_hybrid_limits{2, 8192, 1}, run, digit));
  EXPECT_EQ(7, digit[0]);
  EXPECT_EQ(6, digit[1]);
  for (int p = 0; p < 8; ++p) EXPECT_EQ(p >= 6, run[p]) << p;
  // One digit.
  ASSERT_TRUE(radix_choose_buckets(all, spread, 8, n, radix_hybrid_limits{1, 1 << 20, 1}, run, digit));
  EXPECT_EQ(7, digit[0]);
  for (int p = 0; p < 8; ++p) EXPECT_EQ(p == 7, run[p]) << p;
  // Constant digits (the top three, and digit 4) are not bucket digits.
  const bool some[8] = {true, true, true, true, false, true, false, false};
  ASSERT_TRUE(radix_choose_buckets(some, spread, 8, n, radix_hybrid_limits{2, 8192, 1}, run, digit));
  EXPECT_EQ(5, digit[0]);
  EXPECT_EQ(3, digit[1]);
  for (int p = 0; p < 8; ++p) EXPECT_EQ(p == 5 || p == 3, run[p]) << p;
  // Skewed top digit: the estimated largest bucket (n x 1/2 x ~1/256) is
  // too big: LSD, every varying digit runs.
  std::int64_t skewed[8];
  for (auto& l : skewed) l = n / 256 + 1000;
  skewed[7] = n / 2;
  EXPECT_FALSE(radix_choose_buckets(all, skewed, 8, n, radix_hybrid_limits{2, 8192, 1}, run, digit));
  for (int p = 0; p < 8; ++p) EXPECT_TRUE(run[p]) << p;
  EXPECT_TRUE(radix_choose_buckets(all, skewed, 8, n, radix_hybrid_limits{2, 40000, 1}, run, digit));
  // As many varying digits as bucket digits, or none allowed: LSD.
  const bool two[8] = {true, false, false, false, false, false, false, true};
  EXPECT_FALSE(radix_choose_buckets(two, spread, 8, n, radix_hybrid_limits{2, 1 << 30, 1}, run, digit));
  EXPECT_TRUE(run[0] && run[7] && !run[3]);
  EXPECT_FALSE(radix_choose_buckets(all, spread, 8, n, radix_hybrid_limits{0, 1 << 30, 1}, run, digit));
  // Three varying digits (20 varying bits): two bucket digits save one pass,
  // fewer than asked for: LSD.
  const bool three[8] = {true, true, true, false, false, false, false, false};
  EXPECT_TRUE(radix_choose_buckets(three, spread, 8, n, radix_hybrid_limits{2, 1 << 30, 1}, run, digit));
  EXPECT_FALSE(radix_choose_buckets(three, spread, 8, n, radix_hybrid_limits{2, 1 << 30, 4}, run, digit));
  for (int p = 0; p < 8; ++p) EXPECT_EQ(p < 3, run[p]) << p;
  EXPECT_TRUE(radix_choose_buckets(all, spread, 8, n, radix_hybrid_limits{2, 1 << 30, 4}, run, digit));
  EXPECT_TRUE(radix_choose_buckets(all, spread, 8, n, radix_hybrid_limits{2, 1 << 30, 6}, run, digit));
  EXPECT_FALSE(radix_choose_buckets(all, spread, 8, n, radix_hybrid_limits{2, 1 << 30, 7}, run, digit));
}

TEST(RadixChooseBuckets, BucketOfAnImage) {
  const int digits[2] = {3, 1};
  EXPECT_EQ(0xab, radix_bucket_of(std::uint32_t(0xab00ff00u), digits, 1));
  EXPECT_EQ(0xabff, radix_bucket_of(std::uint32_t(0xab00ff00u), digits, 2));
  const int wide[2] = {7, 6};
  EXPECT_EQ(0xfedc, radix_bucket_of(std::uint64_t(0xfedcba9876543210ull), wide, 2));
}

TEST(RadixPlan, RingWaitCoversTheSlotsPreviousReaders) {
  const unsigned ring = 16384;
  const int window = 512;
  // Tile t reuses slot t % ring, last used by t - ring; the tiles that may
  // still read that word look back at most `window` tiles.
  for (const std::int64_t t : {std::int64_t(16384), std::int64_t(20000), std::int64_t(99999)}) {
    EXPECT_EQ(t - ring, radix_ring_wait_first(t, ring));
    EXPECT_EQ(t - ring + window, radix_ring_wait_last(t, ring, window));
    EXPECT_LT(radix_ring_wait_last(t, ring, window), t) << "never waits for itself or a later tile";
  }
}

// ------------------------------------------------------------------ simulation
// The whole sort on the host from the schedule: the histogram's counts and
// starts, skipped digits, a stable scatter per executed pass in tile order
// (what look-back computes), the buffers the schedule names, and the copy.
// With `hybrid`: the histogram's choice (radix_choose_buckets), the passes
// it keeps, the bucket starts as radix_bucket_starts_kernel finds them, and
// a stable sort of each bucket by image (the segmented sort's result).
template <typename Key, bool Descending>
std::vector<Key> simulate(const std::vector<Key>& in, bool in_place, int tile, radix_hybrid_limits hybrid = {},
                          bool* chose_buckets = nullptr) {
  const radix_native_image<Key, Descending> image;
  const int passes = int(sizeof(Key));
  const std::int64_t n = std::int64_t(in.size());
  std::vector<Key> input = in, output(in_place ? 0 : n), alternate(n);
  std::vector<Key>& out = in_place ? input : output;
  const auto buffer = [&](int b) -> std::vector<Key>& { return b == radix_input ? input : b == radix_output ? out : alternate; };
  bool varies[radix_max_passes] = {}, run[radix_max_passes] = {};
  std::int64_t largest[radix_max_passes] = {};
  std::vector<std::int64_t> starts(passes * 256);
  for (int p = 0; p < passes; ++p) {
    std::vector<std::int64_t> count(256);
    for (const Key& k : in) ++count[radix_digit<8>(image(k), p)];
    varies[p] = std::none_of(count.begin(), count.end(), [&](std::int64_t c) { return c == n; });
    largest[p] = *std::max_element(count.begin(), count.end());
    std::exclusive_scan(count.begin(), count.end(), starts.begin() + p * 256, std::int64_t(0));
  }
  radix_schedule s{};
  int bucket_digit[radix_bucket_digits] = {};
  const bool buckets = radix_choose_buckets(varies, largest, passes, n, hybrid, run, bucket_digit);
  if (chose_buckets != nullptr) *chose_buckets = buckets;
  radix_schedule_passes(run, passes, in_place, s);
  for (int p = 0; p < passes; ++p) {
    if (!s.pass[p].executed) continue;
    const std::vector<Key> src = buffer(s.pass[p].source);  // a snapshot: tiles read before anyone writes
    std::vector<Key>& dst = buffer(s.pass[p].destination);
    std::vector<std::int64_t> before(256, 0);  // keys of earlier tiles per digit (look-back)
    for (std::int64_t base = 0; base < n; base += tile) {
      const std::int64_t end = std::min(n, base + tile);
      std::vector<std::int64_t> mine(256, 0);
      for (std::int64_t i = base; i < end; ++i) {
        const unsigned d = radix_digit<8>(image(src[i]), p);
        dst[starts[p * 256 + d] + before[d] + mine[d]++] = src[i];
      }
      for (int d = 0; d < 256; ++d) before[d] += mine[d];
    }
  }
  if (s.copy_source != radix_none) {
    const std::vector<Key> src = buffer(s.copy_source);
    out = src;
  }
  if (buckets) {
    const int digits = hybrid.bucket_digits;
    const std::int64_t count = std::int64_t(1) << (8 * digits);
    std::vector<std::int64_t> bucket_start(count + 1, -1);
    for (std::int64_t i = 0; i <= n; ++i) {
      const std::int64_t mine = i < n ? radix_bucket_of(image(out[i]), bucket_digit, digits) : count;
      const std::int64_t left = i > 0 ? radix_bucket_of(image(out[i - 1]), bucket_digit, digits) : -1;
      EXPECT_LE(left, mine) << "buckets in order at " << i;
      for (std::int64_t b = left + 1; b <= mine; ++b) bucket_start[b] = i;
    }
    EXPECT_TRUE(std::none_of(bucket_start.begin(), bucket_start.end(), [](std::int64_t b) { return b < 0; }))
        << "every bucket's start is written";
    for (std::int64_t b = 0; b < count; ++b)
      std::stable_sort(out.begin() + bucket_start[b], out.begin() + bucket_start[b + 1],
                       [&](const Key& x, const Key& y) { return image(x) < image(y); });
  }
  return out;
}

template <typename Key, bool Descending, typename Compare>
void expect_simulation_sorts(const std::vector<Key>& keys, Compare comp) {
  std::vector<Key> expected = keys;
  std::stable_sort(expected.begin(), expected.end(), comp);
  const std::int64_t everything = std::int64_t(1) << 40;
  for (const bool in_place : {false, true})
    for (const radix_hybrid_limits hybrid : {radix_hybrid_limits{0, 0, 1}, radix_hybrid_limits{1, everything, 1},
                                             radix_hybrid_limits{2, everything, 1}, radix_hybrid_limits{2, 64, 1}}) {
      SCOPED_TRACE(std::string(in_place ? "in place" : "copy") + ", bucket digits " +
                   std::to_string(hybrid.bucket_digits) + " up to " + std::to_string(hybrid.largest_bucket));
      const std::vector<Key> got = simulate<Key, Descending>(keys, in_place, 1000, hybrid);
      ASSERT_EQ(expected.size(), got.size());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(to_bits(expected[i]), to_bits(got[i])) << i;
    }
}

TEST(RadixSimulation, SortsLikeStableSort) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  using tilesort_test::distribution;
  for (const distribution d : tilesort_test::all_distributions) {
    SCOPED_TRACE(tilesort_test::name(d));
    expect_simulation_sorts<float, false>(tilesort_test::make_keys<float>(5003, d, seed), tilesort::less{});
    expect_simulation_sorts<float, true>(tilesort_test::make_keys<float>(4999, d, seed), tilesort::greater{});
    expect_simulation_sorts<std::int32_t, false>(tilesort_test::make_keys<std::int32_t>(3001, d, seed),
                                                 tilesort::less{});
    expect_simulation_sorts<__half, true>(tilesort_test::make_keys<__half>(2001, d, seed), tilesort::greater{});
  }
  // Skipped digits: small values in wide keys, one varying high byte.
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> small(4000), high(4000);
  for (auto& k : small) k = rng() % 1000;
  for (auto& k : high) k = (rng() % 7) << 56 | 0x1234;
  expect_simulation_sorts<std::uint64_t, false>(small, tilesort::less{});
  expect_simulation_sorts<std::uint64_t, true>(small, tilesort::greater{});
  expect_simulation_sorts<std::uint64_t, false>(high, tilesort::less{});
  expect_simulation_sorts<std::uint64_t, false>(std::vector<std::uint64_t>(100, 42), tilesort::less{});
  // Buckets: all keys in one top bucket, two top buckets, the lowest bit.
  std::vector<std::uint32_t> one(5000), two(5000), lowest(5000);
  for (auto& k : one) k = 0x80000000u | std::uint32_t(rng() & 0xffff);
  for (auto& k : two) k = (rng() & 1 ? 0x80000000u : 0x40000000u) | std::uint32_t(rng() & 0xfffff);
  for (auto& k : lowest) k = 0x5a5a5a5au | std::uint32_t(rng() & 1);
  for (const auto* keys : {&one, &two, &lowest}) {
    expect_simulation_sorts<std::uint32_t, false>(*keys, tilesort::less{});
    expect_simulation_sorts<std::uint32_t, true>(*keys, tilesort::greater{});
  }
}

// Random keys take buckets where allowed; skewed ones stay LSD.
TEST(RadixSimulation, ChoosesBucketsForSpreadKeys) {
  std::mt19937_64 rng(fresh_seed());
  std::vector<std::uint64_t> spread(1 << 16), skewed(1 << 16);
  for (auto& k : spread) k = rng();
  for (auto& k : skewed) k = rng() % 4 == 0 ? rng() : 0x7700000000000000ull | (rng() & 0xffffffff);
  bool chose = false;
  simulate<std::uint64_t, false>(spread, false, 1000, radix_hybrid_limits{2, 64, 1}, &chose);
  EXPECT_TRUE(chose);
  simulate<std::uint64_t, false>(skewed, false, 1000, radix_hybrid_limits{2, 64, 1}, &chose);
  EXPECT_FALSE(chose);
}

}  // namespace
