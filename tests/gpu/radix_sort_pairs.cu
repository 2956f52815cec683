// GPU tests for device/radix_sort.cuh, pairs and the API's edges:
// radix_sort_pairs with values = input positions (so the result must be
// std::stable_sort's permutation) for every native key type, 4- and 8-byte
// and 16-byte payloads, both orders; the index sort the Python package uses
// (positions made by the sort, stored as int64); float bit patterns against
// merge_sort_keys itself; buffers off 16-byte alignment; n = 0 and 1, graph
// capture, every error path, a failed allocation; and a wrapping look-back
// ring for pairs.
#include <numeric>

#include <tilesort/device/merge_sort.cuh>
#include <tilesort/device/radix_sort.cuh>

#include "common/device_sort_cases.cuh"
#include "common/radix_cases.cuh"

namespace {

using namespace tilesort_test;

template <typename Key>
class RadixSortPairs : public ::testing::Test {};
using key_types = ::testing::Types<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t,
                                   std::int64_t, std::uint64_t, float, double, __half, __nv_bfloat16>;
TYPED_TEST_SUITE(RadixSortPairs, key_types);

TYPED_TEST(RadixSortPairs, AllSizes) {
  REQUIRE_GPU();
  using policy = tilesort::detail::radix_policy_for<TypeParam, std::uint32_t>;
  check_radix_sizes<radix_sorter, TypeParam, true>(radix_edge_sizes(policy::tile_items, false), tilesort::less{});
}

TYPED_TEST(RadixSortPairs, AllDistributions) {
  REQUIRE_GPU();
  using policy = tilesort::detail::radix_policy_for<TypeParam, std::uint32_t>;
  const std::int64_t tile = policy::tile_items;
  check_distributions<radix_sorter, TypeParam, true>({tile - 1, small_run() ? 3 * tile + 5 : 40 * tile + 3});
}

TEST(RadixSortPairs, DescendingAndWideKeys) {
  REQUIRE_GPU();
  for (const std::int64_t n : {std::int64_t(5), std::int64_t(6529), std::int64_t(small_run() ? 20011 : 2000003)}) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed=" + std::to_string(seed));
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, false, 0};
      check_pairs<radix_sorter>(make_keys<std::uint32_t>(n, distribution::few_distinct, seed), tilesort::greater{}, o);
      check_pairs<radix_sorter>(make_keys<std::uint64_t>(n, distribution::random, seed), tilesort::greater{}, o);
      check_pairs<radix_sorter>(raw_float_patterns<float>(n, seed), tilesort::greater{}, o);
      check_pairs<radix_sorter>(make_keys<std::int16_t>(n, distribution::random, seed), tilesort::greater{}, o);
    }
  }
}

// 8-byte values with 4- and 8-byte keys (the benchmark's u32 + u64 and
// u64 + u64 rows): values that are the position times an odd constant.
TEST(RadixSortPairs, EightByteValues) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  using policy = tilesort::detail::radix_policy_for<std::uint64_t, std::uint64_t>;
  for (const std::int64_t n : radix_edge_sizes(policy::tile_items, true))
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, false, 0};
      SCOPED_TRACE(describe(n, o));
      const auto values = position_tags(n);
      const auto k32 = make_keys<std::uint32_t>(n, distribution::random, seed + n);
      const auto k64 = make_keys<std::uint64_t>(n, distribution::random, seed + n);
      const auto [keys32, values32] = device_sort_pairs<radix_sorter>(k32, values, tilesort::less{}, o);
      const auto [keys64, values64] = device_sort_pairs<radix_sorter>(k64, values, tilesort::less{}, o);
      expect_stable_pairs(k32, keys32, tagged_positions(values, values32), tilesort::less{});
      expect_stable_pairs(k64, keys64, tagged_positions(values, values64), tilesort::less{});
    }
}

TEST(RadixSortPairs, WidePayloads) {
  REQUIRE_GPU();
  using policy = tilesort::detail::radix_policy_for<std::uint32_t, wide_payload>;
  const std::int64_t tile = policy::tile_items;
  check_wide_payloads<radix_sorter>({2, tile, tile + 1, 5 * tile + 3, small_run() ? 3 * tile : 200003});
}

// The result is the merge sort's, bit for bit: NaNs of both signs and any
// payload, +-0, +-inf, denormals, keys alone and with positions.
TEST(RadixSortPairs, FloatBitsMatchTheMergeSort) {
  REQUIRE_GPU();
  const std::int64_t n = small_run() ? 10007 : 1000003;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const auto keys = raw_float_patterns<float>(n, seed);
  device_buffer<float> in(keys), radix_out(n), merge_out(n);
  const auto compare = [&](auto order) {
    radix_out.poison();
    merge_out.poison();
    ASSERT_EQ(cudaSuccess, tilesort::radix_sort_keys(in.data(), radix_out.data(), n, order));
    ASSERT_EQ(cudaSuccess, tilesort::merge_sort_keys(in.data(), merge_out.data(), n, order));
    CUDA_ASSERT(cudaDeviceSynchronize());
    EXPECT_TRUE(bitwise_equal(merge_out.download(), radix_out.download()));
  };
  compare(tilesort::less{});
  compare(tilesort::greater{});
}

// The Python package's index sort: the sort makes the positions (4 bytes
// while the passes move them) and stores them as int64.
template <typename Key, typename Order>
void check_index_sort(const std::vector<Key>& keys, Order order, bool in_place) {
  const auto n = static_cast<std::int64_t>(keys.size());
  SCOPED_TRACE(describe(n, run_options{in_place, false, 0}) + " index sort");
  using policy = tilesort::detail::radix_policy_for<Key, std::uint32_t>;
  guarded_buffer<Key> keys_in(n), keys_out(n);
  guarded_buffer<std::int64_t> index(n);
  keys_in.upload(keys);
  Key* out = in_place ? keys_in.data() : keys_out.data();
  std::size_t bytes = 0;
  const auto sort = [&](void* temp) {
    return tilesort::detail::radix_sort_two_phase<policy, Key, std::uint32_t, std::int64_t>(
        temp, bytes, keys_in.data(), out, static_cast<const std::uint32_t*>(nullptr), index.data(), n, order, 0, true);
  };
  ASSERT_EQ(cudaSuccess, sort(nullptr));
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  ASSERT_EQ(cudaSuccess, sort(temp.data()));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(keys_in.guards_intact() && keys_out.guards_intact() && index.guards_intact());
  const std::vector<std::int64_t> got = index.download();
  std::vector<std::int64_t> expected(n);
  std::iota(expected.begin(), expected.end(), std::int64_t(0));
  std::stable_sort(expected.begin(), expected.end(),
                   [&](std::int64_t a, std::int64_t b) { return order(keys[a], keys[b]); });
  EXPECT_EQ(expected, got);
  expect_stable_sorted(keys, in_place ? keys_in.download() : keys_out.download(), order);
}

TEST(RadixSortPairs, IndexSortMakesInt64Positions) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(2), std::int64_t(7297), std::int64_t(small_run() ? 30011 : 3000017)})
    for (const bool in_place : {false, true}) {
      check_index_sort(raw_float_patterns<float>(n, seed), tilesort::less{}, in_place);
      check_index_sort(raw_float_patterns<float>(n, seed), tilesort::greater{}, in_place);
      check_index_sort(make_keys<std::int32_t>(n, distribution::few_distinct, seed), tilesort::less{}, in_place);
      check_index_sort(make_keys<std::int64_t>(n, distribution::random, seed), tilesort::greater{}, in_place);
      check_index_sort(make_keys<__half>(n, distribution::nan_and_zero, seed), tilesort::less{}, in_place);
      std::vector<std::int64_t> equal(n, -7);  // every pass skipped: the positions come from the copy
      check_index_sort(equal, tilesort::greater{}, in_place);
    }
}

TEST(RadixSortPairs, SmallRingWrapsManyTimes) {
  REQUIRE_GPU();
  using policy = tiny_ring_policy<tilesort::radix_sort_policy<8, 4>>;
  const std::int64_t n = (small_run() ? 19 : 257) * policy::tile_items + 3;
  for (const bool in_place : {false, true})
    check_pairs<radix_sorter_with<policy>>(make_keys<std::uint64_t>(n, distribution::random, fresh_seed()),
                                           tilesort::greater{}, run_options{in_place, false, 0});
}

// Buffers that start off 16-byte alignment (1 or 3 elements into larger
// allocations: off for every key size, 8-byte keys included): the
// onesweep pass then prefetches its tiles item by item (cp.async of 4 or 8
// bytes) or, for 1- and 2-byte items, by plain copies, instead of in 16-byte
// pieces. Keys alone and with their positions, several tiles.
template <typename Key>
void check_unaligned(std::uint64_t seed) {
  using policy = tilesort::detail::radix_policy_for<Key, std::uint32_t>;
  const std::int64_t n = 3 * policy::tile_items + 5;
  SCOPED_TRACE("key bytes=" + std::to_string(sizeof(Key)) + " n=" + std::to_string(n));
  const auto keys = make_keys<Key>(n, distribution::random, seed);
  std::vector<std::uint32_t> positions(n);
  std::iota(positions.begin(), positions.end(), 0u);
  device_buffer<Key> keys_in(n + 3), keys_out(n + 3);
  device_buffer<std::uint32_t> values_in(n + 3), values_out(n + 3);
  CUDA_ASSERT(cudaMemcpy(keys_in.data() + 1, keys.data(), n * sizeof(Key), cudaMemcpyHostToDevice));
  CUDA_ASSERT(cudaMemcpy(values_in.data() + 3, positions.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  std::size_t bytes = 0;
  CUDA_ASSERT(tilesort::radix_sort_pairs(nullptr, bytes, keys_in.data() + 1, keys_out.data() + 3, values_in.data() + 3,
                                         values_out.data() + 1, n, tilesort::less{}, 0));
  device_buffer<unsigned char> temp(bytes);
  CUDA_ASSERT(tilesort::radix_sort_pairs(temp.data(), bytes, keys_in.data() + 1, keys_out.data() + 3,
                                         values_in.data() + 3, values_out.data() + 1, n, tilesort::less{}, 0));
  std::vector<Key> sorted(n);
  std::vector<std::uint32_t> index(n);
  CUDA_ASSERT(cudaMemcpy(sorted.data(), keys_out.data() + 3, n * sizeof(Key), cudaMemcpyDeviceToHost));
  CUDA_ASSERT(cudaMemcpy(index.data(), values_out.data() + 1, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  expect_stable_pairs(keys, sorted, index, tilesort::less{});
  CUDA_ASSERT(tilesort::radix_sort_keys(nullptr, bytes, keys_in.data() + 1, keys_out.data() + 3, n, tilesort::less{}, 0));
  device_buffer<unsigned char> keys_temp(bytes);
  CUDA_ASSERT(
      tilesort::radix_sort_keys(keys_temp.data(), bytes, keys_in.data() + 1, keys_out.data() + 3, n, tilesort::less{}, 0));
  CUDA_ASSERT(cudaMemcpy(sorted.data(), keys_out.data() + 3, n * sizeof(Key), cudaMemcpyDeviceToHost));
  expect_stable_sorted(keys, sorted, tilesort::less{});
}

TEST(RadixSortPairs, BuffersOffSixteenByteAlignment) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  check_unaligned<std::uint8_t>(seed);
  check_unaligned<std::int16_t>(seed);
  check_unaligned<std::uint32_t>(seed);
  check_unaligned<float>(seed);
  check_unaligned<std::uint64_t>(seed);
}

TEST(RadixSort, ZeroAndOne) {
  REQUIRE_GPU();
  check_zero_and_one<radix_sorter>();
}

TEST(RadixSort, CapturedInAGraph) {
  REQUIRE_GPU();
  check_graph_capture<radix_sorter>(small_run() ? 20001 : 3000001);
}

TEST(RadixSort, BadArgumentsWriteNothing) {
  REQUIRE_GPU();
  check_errors<radix_sorter>(20000);
  std::size_t bytes = 0;
  const std::uint32_t* in = nullptr;
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::radix_sort_keys(static_cast<void*>(nullptr), bytes, in,
                                                             static_cast<std::uint32_t*>(nullptr),
                                                             tilesort::detail::radix_max_keys + 1));
}

TEST(RadixSort, FailedAllocation) {
  REQUIRE_GPU();
  check_failed_allocation<radix_sorter>();
}

}  // namespace
