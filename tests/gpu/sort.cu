// GPU tests for device/sort.cuh, the front door sort_keys / sort_pairs:
// against std::stable_sort on both sides of every crossover of the choice
// table (so each algorithm it routes to runs; u32 and u64 keys under less
// take the bitonic sort up to its bound and the radix sort from its start,
// user keys neither), the distributions that break
// sample sorts, comparators, both overloads, graph capture, the error paths
// (tests/common/device_sort_cases.cuh), sort_stats naming the algorithm, and
// the probe: from its row's probe_from on, keys that look sorted take the
// locality sort, others the table's sort, with the stable sort's result
// either way (also where the probe cannot see the disorder).
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
// bound, the radix sort's start for keys it takes, the sample sort's
// start), and sizes either side.
std::vector<std::int64_t> crossover_sizes(std::size_t key_bytes, std::size_t value_bytes, bool radix) {
  const auto& row = tilesort::detail::sort_choice_for(key_bytes, value_bytes);
  const std::int64_t from = radix ? row.radix_from : row.sample_from;
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

// Keys the front door radix-sorts (keys alone: the row of 4-byte values
// agrees for the types here).
template <typename Key>
constexpr bool radix_keys = tilesort::detail::radix_sortable<Key, typename comparator_for<Key>::type> &&
                            tilesort::detail::sort_choice_for(sizeof(Key), 0).radix_from != tilesort::detail::radix_never;

template <typename Key>
class SortTyped : public ::testing::Test {};
using key_types = ::testing::Types<std::uint32_t, std::uint64_t, user_key>;
TYPED_TEST_SUITE(SortTyped, key_types);

TYPED_TEST(SortTyped, KeysEitherSideOfTheCrossover) {
  REQUIRE_GPU();
  check_sizes<front_door, TypeParam, false>(crossover_sizes(sizeof(TypeParam), 0, radix_keys<TypeParam>));
}

TYPED_TEST(SortTyped, PairsEitherSideOfTheCrossover) {
  REQUIRE_GPU();
  check_sizes<front_door, TypeParam, true>(crossover_sizes(sizeof(TypeParam), 4, radix_keys<TypeParam>));
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
    using no_value = tilesort::detail::no_value;
    EXPECT_EQ((tilesort::detail::front_door_choice<std::uint32_t, no_value, tilesort::less>(n)), stats->algorithm);
    expect_stable_sorted(keys, d.download(), tilesort::less{});
    d.upload(keys);  // random again: sorted keys could take the locality sort where the front door probes
    std::memset(stats, 0xA5, sizeof *stats);
    ASSERT_EQ(cudaSuccess, tilesort::sort_pairs(d.data(), d.data(), v.data(), v.data(), n, tilesort::less{},
                                                cudaStream_t(0), options));
    CUDA_ASSERT(cudaDeviceSynchronize());
    EXPECT_EQ((tilesort::detail::front_door_choice<std::uint32_t, std::uint32_t, tilesort::less>(n)), stats->algorithm);
  }
  CUDA_EXPECT(cudaFreeHost(stats));
}

// u32 keys with 8-byte values (their own row: the radix sort from its
// radix_from, probed from radix_probe_from): either side of both bounds,
// random and sorted keys, values that map back to positions; the algorithm
// that ran is the table's, or the locality sort for sorted keys it probes.
TEST(Sort, EightByteValuesEitherSideOfTheirRow) {
  REQUIRE_GPU();
  using row_value = std::uint64_t;
  const auto& row = tilesort::detail::sort_choice_for(4, sizeof(row_value));
  std::vector<std::int64_t> sizes = {row.radix_from - 1, row.radix_from + 5};
  if (!small_run()) sizes.push_back(row.radix_probe_from + 5);
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  tilesort::sort_options options;
  options.stats = stats;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  for (const std::int64_t n : sizes)
    for (const distribution d : {distribution::random, distribution::sorted}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " " + name(d));
      const auto keys = make_keys<std::uint32_t>(n, d, seed + n);
      const std::vector<row_value> values = position_tags(n);
      device_buffer<std::uint32_t> k(keys);
      device_buffer<row_value> v(values);
      std::memset(stats, 0xA5, sizeof *stats);
      ASSERT_EQ(cudaSuccess, tilesort::sort_pairs(k.data(), k.data(), v.data(), v.data(), n, tilesort::less{},
                                                  cudaStream_t(0), options));
      CUDA_ASSERT(cudaDeviceSynchronize());
      const bool probed = tilesort::detail::front_door_probes<std::uint32_t, row_value, tilesort::less>(n);
      const sort_algorithm table = tilesort::detail::front_door_choice<std::uint32_t, row_value, tilesort::less>(n);
      EXPECT_EQ(probed && d == distribution::sorted ? sort_algorithm::locality : table, stats->algorithm);
      EXPECT_EQ(n >= row.radix_from ? sort_algorithm::radix : sort_algorithm::merge, table);
      expect_stable_pairs(keys, k.download(), tagged_positions(values, v.download()), tilesort::less{});
    }
  CUDA_EXPECT(cudaFreeHost(stats));
}

// The front door with options.stats set (the same two-phase and convenience
// forms): the sort's result, and the algorithm that ran in *stats.
struct front_door_with_stats {
  static inline tilesort::sort_stats* stats = nullptr;
  template <typename... Args>
  static cudaError_t keys(Args&&... args) {
    tilesort::sort_options options;
    options.stats = stats;
    return tilesort::sort_keys(std::forward<Args>(args)..., options);
  }
  template <typename... Args>
  static cudaError_t pairs(Args&&... args) {
    tilesort::sort_options options;
    options.stats = stats;
    return tilesort::sort_pairs(std::forward<Args>(args)..., options);
  }
};

// n probed keys of each distribution, keys alone and with u32 indices as
// values, copy and in place: the stable sort's result, and the locality sort
// for the inputs that look sorted (sorted, nearly sorted, all equal, and
// sorted but for a reversed run shorter than the probe's distance, which the
// probe cannot see), the table's algorithm for random and reversed keys.
template <typename Key, bool Pairs>
void check_probe_routes(std::int64_t n) {
  using value = std::conditional_t<Pairs, std::uint32_t, tilesort::detail::no_value>;
  using compare = typename comparator_for<Key>::type;
  ASSERT_TRUE((tilesort::detail::front_door_probes<Key, value, compare>(n))) << "n=" << n << " is not probed";
  const sort_algorithm table = tilesort::detail::front_door_choice<Key, value, compare>(n);
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  front_door_with_stats::stats = stats;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed) + " n=" + std::to_string(n) + (Pairs ? " pairs" : " keys"));
  const auto check = [&](const std::vector<Key>& keys, bool looks_sorted, bool check_route, const run_options& o) {
    std::memset(stats, 0xA5, sizeof *stats);
    check_sorted<front_door_with_stats, Key, Pairs>(keys, o);
    if (!check_route) return;
    EXPECT_EQ(n, stats->n);
    EXPECT_EQ(looks_sorted ? sort_algorithm::locality : table, stats->algorithm)
        << (o.in_place ? "in place" : "copy") << (o.convenience ? " convenience" : "");
  };
  // Large n: the three distributions that decide the route, one form each.
  const bool large = n > (std::int64_t(1) << 24);
  for (const distribution d : all_distributions) {
    if (large && d != distribution::random && d != distribution::sorted && d != distribution::nearly_sorted) continue;
    SCOPED_TRACE(name(d));
    const auto keys = make_keys<Key>(n, d, seed + static_cast<std::uint64_t>(d), compare{});
    const bool looks_sorted =
        d == distribution::sorted || d == distribution::nearly_sorted || d == distribution::all_equal;
    const bool check_route = looks_sorted || d == distribution::random || d == distribution::reversed;
    if (!large || d != distribution::sorted) check(keys, looks_sorted, check_route, run_options{false, false, 0});
    if (!large || d == distribution::sorted) check(keys, looks_sorted, check_route, run_options{true, true, 0});
  }
  {  // Sorted but for a reversed run of 1000 keys in the middle: no probe pair sees it.
    SCOPED_TRACE("sorted with a reversed run");
    auto keys = make_keys<Key>(n, distribution::sorted, seed + 99, compare{});
    std::reverse(keys.begin() + n / 2, keys.begin() + n / 2 + 1000);
    check(keys, true, true, run_options{false, false, 0});
  }
  CUDA_EXPECT(cudaFreeHost(stats));
  front_door_with_stats::stats = nullptr;
}

// The first probed size of each row (in the small run too), and in the full
// run a larger one: past the sample sort's crossover where there is one, else
// where the merge sort behind the probe turns persistent (keys the radix sort
// takes: its own probe bound, and twice it).
template <typename Key, bool Pairs>
std::vector<std::int64_t> probed_sizes() {
  const auto& row = tilesort::detail::sort_choice_for(sizeof(Key), Pairs ? 4 : 0);
  const std::int64_t first = radix_keys<Key> ? row.radix_probe_from : row.probe_from;
  std::vector<std::int64_t> sizes = {first + 5};
  if (small_run()) return sizes;
  const std::int64_t persistent = tilesort::detail::sort_probe_policy::persistent_merge_from;
  if (radix_keys<Key>)
    sizes.push_back(2 * first + 3);
  else
    sizes.push_back(row.sample_from == tilesort::detail::sample_never ? std::max(persistent, row.probe_from) + 3
                                                                         : row.sample_from + 3);
  return sizes;
}

TYPED_TEST(SortTyped, ProbeRoutesKeysBySortedness) {
  REQUIRE_GPU();
  for (const std::int64_t n : probed_sizes<TypeParam, false>()) check_probe_routes<TypeParam, false>(n);
}

TYPED_TEST(SortTyped, ProbeRoutesPairsBySortedness) {
  REQUIRE_GPU();
  for (const std::int64_t n : probed_sizes<TypeParam, true>()) check_probe_routes<TypeParam, true>(n);
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
