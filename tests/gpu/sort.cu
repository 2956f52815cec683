// GPU tests for device/sort.cuh, the front door sort_keys / sort_pairs:
// against std::stable_sort on both sides of every crossover of the choice
// table (so each algorithm it routes to runs; u32 and u64 keys under less
// take the bitonic sort up to its bound, user keys never), the distributions that break
// sample sorts, comparators, both overloads, graph capture, the error paths
// (tests/common/device_sort_cases.cuh), and sort_stats naming the algorithm.
#include <tilesort/device/sort.cuh>

#include "common/device_sort_cases.cuh"

namespace {

using namespace tilesort_test;
using tilesort::sort_algorithm;

struct front_door {
  template <typename... Args>
  static cudaError_t keys(Args&&... args) {
    return tilesort::sort_keys(std::forward<Args>(args)...);
  }
  template <typename... Args>
  static cudaError_t pairs(Args&&... args) {
    return tilesort::sort_pairs(std::forward<Args>(args)...);
  }
};

// The crossovers of the table row for these sizes (the bitonic sort's
// bound, the sample sort's start), and sizes either side.
std::vector<std::int64_t> crossover_sizes(std::size_t key_bytes, std::size_t value_bytes) {
  const auto& row = tilesort::detail::sort_choice_for(key_bytes, value_bytes);
  const std::int64_t from = row.sample_from;
  std::vector<std::int64_t> sizes = {0, 1, 2, 33, 1000, 8193, 100003};
  if (row.bitonic_up_to > 0)
    for (std::int64_t n : {row.bitonic_up_to - 1, row.bitonic_up_to, row.bitonic_up_to + 1}) sizes.push_back(n);
  if (small_run()) return sizes;
  if (from == tilesort::detail::sample_never) {
    sizes.push_back((std::int64_t(1) << 21) + 1);  // no crossover: the merge sort at a large n
    return sizes;
  }
  for (std::int64_t n : {from - 1, from, from + 1}) sizes.push_back(n);
  return sizes;
}

template <typename Key>
class SortTyped : public ::testing::Test {};
using key_types = ::testing::Types<std::uint32_t, std::uint64_t, user_key>;
TYPED_TEST_SUITE(SortTyped, key_types);

TYPED_TEST(SortTyped, KeysEitherSideOfTheCrossover) {
  REQUIRE_GPU();
  check_sizes<front_door, TypeParam, false>(crossover_sizes(sizeof(TypeParam), 0));
}

TYPED_TEST(SortTyped, PairsEitherSideOfTheCrossover) {
  REQUIRE_GPU();
  check_sizes<front_door, TypeParam, true>(crossover_sizes(sizeof(TypeParam), 4));
}

TYPED_TEST(SortTyped, Distributions) {
  REQUIRE_GPU();
  const std::int64_t from = tilesort::detail::sort_choice_for(sizeof(TypeParam), 0).sample_from;
  // Past a crossover of at most 2^22 (larger ones: the crossover test above
  // and the algorithm's own distribution tests).
  const std::int64_t large = from <= (std::int64_t(1) << 22) ? from + 3 : (std::int64_t(1) << 21) + 3;
  check_distributions<front_door, TypeParam, false>({20000, small_run() ? 30000 : large});
}

TEST(Sort, Comparators) {
  REQUIRE_GPU();
  check_comparators<front_door>({1, 5000, small_run() ? 30000 : (std::int64_t(1) << 21) + 1});
}

TEST(Sort, WidePayloads) {
  REQUIRE_GPU();
  check_wide_payloads<front_door>({3, 70001, small_run() ? 30000 : (std::int64_t(1) << 21) + 9});
}

TEST(Sort, NZeroAndOneNeedNoPointers) {
  REQUIRE_GPU();
  check_zero_and_one<front_door>();
}

TEST(Sort, CapturedInAGraph) {
  REQUIRE_GPU();
  check_graph_capture<front_door>(small_run() ? 30000 : (std::int64_t(1) << 21) + 3);
}

TEST(Sort, ErrorsLeaveEverythingUntouched) {
  REQUIRE_GPU();
  check_errors<front_door>(small_run() ? 30000 : (std::int64_t(1) << 21) + 5);
}

// sort_stats::algorithm is the table's choice, written in stream order.
TEST(Sort, StatsNameTheAlgorithm) {
  REQUIRE_GPU();
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(1000), std::int64_t(3) << 20}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const auto keys = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
    device_buffer<std::uint32_t> d(keys), v(iota_indices(n));
    tilesort::sort_options options;
    options.stats = stats;
    std::memset(stats, 0xA5, sizeof *stats);
    ASSERT_EQ(cudaSuccess, tilesort::sort_keys(d.data(), d.data(), n, tilesort::less{}, cudaStream_t(0), options));
    CUDA_ASSERT(cudaDeviceSynchronize());
    EXPECT_EQ(n, stats->n);
    EXPECT_EQ(tilesort::detail::choose_sort_algorithm(n, 4, 0, true), stats->algorithm);  // u32 under less
    expect_stable_sorted(keys, d.download(), tilesort::less{});
    std::memset(stats, 0xA5, sizeof *stats);
    ASSERT_EQ(cudaSuccess, tilesort::sort_pairs(d.data(), d.data(), v.data(), v.data(), n, tilesort::less{},
                                                cudaStream_t(0), options));
    CUDA_ASSERT(cudaDeviceSynchronize());
    EXPECT_EQ(tilesort::detail::choose_sort_algorithm(n, 4, 4), stats->algorithm);
  }
  CUDA_EXPECT(cudaFreeHost(stats));
}

TEST(Sort, FailedAllocationLeavesEverythingUntouched) {
  REQUIRE_GPU();
  check_failed_allocation<front_door>();
}

TEST(SortHuge, KeysPast2To31) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "skipped in the small (sanitizer) run";
  check_keys_past_2_31<front_door>();
}

}  // namespace
