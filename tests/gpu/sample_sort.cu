// GPU tests for device/sample_sort.cuh: sample_sort_keys / sample_sort_pairs
// against std::stable_sort, bit for bit (stability included), over key types,
// payloads, comparators, sizes around the bucket, scatter and sample tiles,
// every distribution and the inputs that break sample sorts, in place and
// copy, both overloads, graph capture, every error path, and a size past
// 2^31 checked on the device (tests/common/device_sort_cases.cuh).
#include <tilesort/device/sample_sort.cuh>

#include "common/device_sort_cases.cuh"

namespace {

using namespace tilesort_test;

struct sample_sorter {
  template <typename... Args>
  static cudaError_t keys(Args&&... args) {
    return tilesort::sample_sort_keys(std::forward<Args>(args)...);
  }
  template <typename... Args>
  static cudaError_t pairs(Args&&... args) {
    return tilesort::sample_sort_pairs(std::forward<Args>(args)...);
  }
};

template <typename Key, typename Value = void>
using policy_for = tilesort::detail::sample_sort_policy_for<
    Key, std::conditional_t<std::is_void_v<Value>, tilesort::detail::no_value, Value>>;

// Sizes around every edge: tiny, the scatter tile, the bucket tile (the
// direct sort ends there), one more level of splitters at each doubling,
// buckets larger than a tile (few splitters for many keys), primes, and
// (large cases) both sides of the second classification level (2^19 keys of
// 4 or 8 bytes fill one tree of 255 splitters at half a tile per bucket) and
// well past it.
template <typename Policy>
std::vector<std::int64_t> edge_sizes(bool with_large) {
  const std::int64_t b = Policy::bucket_tile, s = Policy::scatter_tile;
  std::vector<std::int64_t> sizes = {0, 1, 2, 3, 31, 32, 33, 100, s - 1, s, s + 1, b - 1, b, b + 1, 2 * b - 1,
                                     2 * b + 1, 3 * b + 7, 17 * b + 1};
  if (small_run()) return sizes;
  for (std::int64_t n : {std::int64_t(7919), std::int64_t(65521), std::int64_t(65537), std::int64_t(131071),
                         std::int64_t(1000003)})
    sizes.push_back(n);
  if (with_large)
    for (std::int64_t n : {(std::int64_t(1) << 19) - 1, (std::int64_t(1) << 19) + 1, (std::int64_t(1) << 20) + 1,
                           (std::int64_t(1) << 22) + 3,
                           std::int64_t(4194301), (std::int64_t(1) << 23) + 5})
      sizes.push_back(n);
  return sizes;
}

template <typename Key>
constexpr bool is_large_case = std::is_same_v<Key, std::uint32_t> || std::is_same_v<Key, std::uint64_t>;

template <typename Key>
class SampleSortTyped : public ::testing::Test {};
using key_types = ::testing::Types<std::uint8_t, std::int16_t, std::int32_t, std::uint32_t, std::uint64_t, float,
                                   double, __half, user_key>;
TYPED_TEST_SUITE(SampleSortTyped, key_types);

TYPED_TEST(SampleSortTyped, KeysAllSizes) {
  REQUIRE_GPU();
  check_sizes<sample_sorter, TypeParam, false>(edge_sizes<policy_for<TypeParam>>(is_large_case<TypeParam>));
}

TYPED_TEST(SampleSortTyped, PairsAllSizes) {
  REQUIRE_GPU();
  check_sizes<sample_sorter, TypeParam, true>(
      edge_sizes<policy_for<TypeParam, std::uint32_t>>(is_large_case<TypeParam>));
}

TYPED_TEST(SampleSortTyped, KeysAllDistributions) {
  REQUIRE_GPU();
  const std::int64_t b = policy_for<TypeParam>::bucket_tile;
  check_distributions<sample_sorter, TypeParam, false>({b + 1, small_run() ? 3 * b + 1 : 40 * b + 3});
}

TYPED_TEST(SampleSortTyped, PairsAllDistributions) {
  REQUIRE_GPU();
  const std::int64_t b = policy_for<TypeParam, std::uint32_t>::bucket_tile;
  check_distributions<sample_sorter, TypeParam, true>({b - 1, small_run() ? 3 * b + 1 : 40 * b + 3});
}

TEST(SampleSort, DistributionsAtAMillion) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "skipped in the small (sanitizer) run";
  check_distributions<sample_sorter, std::uint32_t, false>({(std::int64_t(1) << 20) + 5});
  check_distributions<sample_sorter, std::uint64_t, true>({(std::int64_t(1) << 20) - 3});
}

// The second classification level in the small (sanitizer) run too: 129
// bucket tiles of 4-byte keys, every distribution (all equal, few distinct,
// sorted, ...: level-1 buckets of equal keys, buckets that fit a tile and
// buckets that are classified again, side by side).
TEST(SampleSort, TwoLevelsAllDistributions) {
  REQUIRE_GPU();
  const std::int64_t b = policy_for<std::uint32_t>::bucket_tile;
  check_distributions<sample_sorter, std::uint32_t, false>({129 * b + 3});
}

TEST(SampleSort, GreaterAndUserComparators) {
  REQUIRE_GPU();
  const std::int64_t b = policy_for<std::uint32_t>::bucket_tile;
  check_comparators<sample_sorter>({1, 33, b, b + 1, 3 * b + 7, small_run() ? 4 * b : 300007});
}

TEST(SampleSort, WidePayloads) {
  REQUIRE_GPU();
  const std::int64_t b = policy_for<std::uint32_t, wide_payload>::bucket_tile;
  // 129 x b + 5: two levels (wide items make small tiles).
  check_wide_payloads<sample_sorter>({2, b, b + 1, 5 * b + 3, small_run() ? 3 * b : 200003, 129 * b + 5});
}

TEST(SampleSort, ConvenienceOverload) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t b = policy_for<std::uint32_t>::bucket_tile;
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(5), b, b + 1, 6 * b - 5,
                               small_run() ? 2 * b : std::int64_t(1) << 20}) {
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, true, stream};
      check_keys<sample_sorter>(make_keys<std::uint32_t>(n, distribution::random, seed + n), tilesort::less{}, o);
      check_pairs<sample_sorter>(make_keys<std::uint64_t>(n, distribution::few_distinct, seed + n), tilesort::less{},
                                 o);
      check_keys<sample_sorter>(make_keys<user_key>(n, distribution::random, seed + n, user_key_less{}),
                                user_key_less{}, o);
    }
  }
  CUDA_ASSERT(cudaStreamDestroy(stream));
}

TEST(SampleSort, NZeroAndOneNeedNoPointers) {
  REQUIRE_GPU();
  check_zero_and_one<sample_sorter>();
}

TEST(SampleSort, CapturedInAGraph) {
  REQUIRE_GPU();
  check_graph_capture<sample_sorter>(small_run() ? 3 * policy_for<std::uint32_t, std::uint32_t>::bucket_tile + 1
                                                 : 1200007);  // two levels
}

TEST(SampleSort, ErrorsLeaveEverythingUntouched) {
  REQUIRE_GPU();
  check_errors<sample_sorter>(3 * policy_for<std::uint32_t, std::uint32_t>::bucket_tile + 5);
}

TEST(SampleSort, FailedAllocationLeavesEverythingUntouched) {
  REQUIRE_GPU();
  check_failed_allocation<sample_sorter>();
}

TEST(SampleSortHuge, KeysPast2To31) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "skipped in the small (sanitizer) run";
  check_keys_past_2_31<sample_sorter>();
}

}  // namespace
