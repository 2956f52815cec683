// GPU tests for device/radix_sort.cuh, keys alone: radix_sort_keys against
// std::stable_sort with the same comparator (the merge sort's result), bit for
// bit, for every native key type under tilesort::less and tilesort::greater,
// sizes around the tile and the look-back ring, every distribution (NaN,
// +-0 and payloads included), skipped digits, a user key under a bits_order,
// a ring small enough to wrap many times (also in the sanitizer run), and
// 2^31 + 1000 byte keys checked on the device. Pairs, the index sort and the
// API's edges: tests/gpu/radix_sort_pairs.cu.
#include <tilesort/device/radix_sort.cuh>

#include "common/device_sort_cases.cuh"
#include "common/radix_cases.cuh"

namespace {

using namespace tilesort_test;

template <typename Key>
class RadixSortKeys : public ::testing::Test {};
using key_types = ::testing::Types<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t,
                                   std::uint32_t, std::int64_t, std::uint64_t, float, double, __half, __nv_bfloat16>;
TYPED_TEST_SUITE(RadixSortKeys, key_types);

TYPED_TEST(RadixSortKeys, AllSizesBothOrders) {
  REQUIRE_GPU();
  using policy = tilesort::detail::radix_policy_for<TypeParam, tilesort::detail::no_value>;
  const auto sizes = radix_edge_sizes(policy::tile_items, radix_is_large_case<TypeParam>);
  check_radix_sizes<radix_sorter, TypeParam, false>(sizes, tilesort::less{});
  check_radix_sizes<radix_sorter, TypeParam, false>(sizes, tilesort::greater{});
}

TYPED_TEST(RadixSortKeys, AllDistributions) {
  REQUIRE_GPU();
  using policy = tilesort::detail::radix_policy_for<TypeParam, tilesort::detail::no_value>;
  const std::int64_t tile = policy::tile_items;
  check_distributions<radix_sorter, TypeParam, false>({tile + 1, small_run() ? 3 * tile + 5 : 40 * tile + 3});
}

// bool keys (kept apart: std::vector<bool> has no storage to upload).
TEST(RadixSortKeys, BoolKeys) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const std::int64_t n : {std::int64_t(2), std::int64_t(1000), std::int64_t(small_run() ? 30011 : 1000003)}) {
    std::vector<unsigned char> bytes(n);
    for (auto& b : bytes) b = static_cast<unsigned char>(rng() & 1);
    device_buffer<unsigned char> in(bytes), out(n);
    const bool* keys_in = reinterpret_cast<const bool*>(in.data());
    bool* keys_out = reinterpret_cast<bool*>(out.data());
    for (const bool descending : {false, true}) {
      out.poison();
      ASSERT_EQ(cudaSuccess, descending ? tilesort::radix_sort_keys(keys_in, keys_out, n, tilesort::greater{})
                                        : tilesort::radix_sort_keys(keys_in, keys_out, n, tilesort::less{}));
      CUDA_ASSERT(cudaDeviceSynchronize());
      std::vector<unsigned char> expected = bytes;
      std::sort(expected.begin(), expected.end());
      if (descending) std::reverse(expected.begin(), expected.end());
      EXPECT_TRUE(bitwise_equal(expected, out.download())) << "n=" << n << (descending ? " greater" : " less");
    }
  }
}

TEST(RadixSortKeys, RawFloatBitPatterns) {
  REQUIRE_GPU();
  const std::int64_t n = small_run() ? 20011 : 1000003;
  for (const bool in_place : {false, true}) {
    const run_options o{in_place, false, 0};
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    check_keys<radix_sorter>(raw_float_patterns<float>(n, seed), tilesort::less{}, o);
    check_keys<radix_sorter>(raw_float_patterns<float>(n, seed), tilesort::greater{}, o);
    check_keys<radix_sorter>(raw_float_patterns<double>(n, seed), tilesort::greater{}, o);
    check_keys<radix_sorter>(raw_float_patterns<__half>(n, seed), tilesort::less{}, o);
    check_keys<radix_sorter>(raw_float_patterns<__nv_bfloat16>(n, seed), tilesort::greater{}, o);
  }
}

// Digits that are the same in every key are skipped: small values in wide
// keys, one varying high byte, 20 varying bits, negative and positive small
// integers, all equal.
TEST(RadixSortKeys, SkippedDigits) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t n = small_run() ? 30001 : 3000017;
  std::vector<std::uint64_t> small(n), high(n), twenty(n), equal(n, 0x0123456789abcdefull);
  std::vector<std::int64_t> signed_small(n);
  for (std::int64_t i = 0; i < n; ++i) {
    small[i] = rng() % 1000;
    high[i] = (rng() % 5) << 56 | 0xabcdef;
    twenty[i] = 0xfedc000000000000ull | (rng() & 0xfffff);
    signed_small[i] = std::int64_t(rng() % 2001) - 1000;
  }
  for (const bool in_place : {false, true}) {
    const run_options o{in_place, false, 0};
    for (const auto* keys : {&small, &high, &twenty, &equal}) {
      check_keys<radix_sorter>(*keys, tilesort::less{}, o);
      check_keys<radix_sorter>(*keys, tilesort::greater{}, o);
    }
    check_keys<radix_sorter>(signed_small, tilesort::less{}, o);
    check_keys<radix_sorter>(signed_small, tilesort::greater{}, o);
  }
}

// A user key by its bits: major (signed) only, so minor shows stability.
TEST(RadixSortKeys, UserKeyByBits) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const auto order = tilesort::order_by_bits(user_key_bits{});
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(1000), std::int64_t(small_run() ? 20000 : 2000003)})
    for (const bool in_place : {false, true}) {
      const auto keys = make_keys<user_key>(n, distribution::random, seed + n, user_key_less{});
      check_keys<radix_sorter>(keys, order, run_options{in_place, false, 0});
      check_pairs<radix_sorter>(keys, order, run_options{in_place, true, 0});
    }
}

// A ring of 4 tiles and a window of 2: tiles wait for the slot's earlier
// readers and look back only two tiles, over and over.
TEST(RadixSortKeys, SmallRingWrapsManyTimes) {
  REQUIRE_GPU();
  using policy = tiny_ring_policy<tilesort::radix_sort_policy<4, 0>>;
  const std::int64_t tiles = small_run() ? 23 : 301;
  for (const distribution d : {distribution::random, distribution::few_distinct, distribution::sorted})
    for (const bool in_place : {false, true}) {
      SCOPED_TRACE(name(d));
      check_keys<radix_sorter_with<policy>>(make_keys<std::uint32_t>(tiles * policy::tile_items - 5, d, fresh_seed()),
                                            tilesort::less{}, run_options{in_place, false, 0});
    }
}

TEST(RadixSortKeys, PastTwoToThe31) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "skipped in the small (sanitizer) run";
  check_keys_past_2_31<radix_sorter>();
}

}  // namespace
