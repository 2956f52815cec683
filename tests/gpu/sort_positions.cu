// GPU tests for detail::sort_positions (device/sort.cuh), the front door's
// sort of keys with their int64 input positions made by the sort (the Python
// package's 1-D sort and argsort): the positions are std::stable_sort's
// permutation and the keys its result, bit for bit, for random, sorted,
// nearly sorted, reversed and all-equal keys below and from the probe's
// bound (there, keys that look sorted take the locality sort), copy and in
// place; below the radix sort's start it does nothing and says so.
#include <numeric>

#include <tilesort/device/sort.cuh>

#include "common/device_sort_cases.cuh"

namespace {

using namespace tilesort_test;

template <typename Key, typename Order>
void check_positions(const std::vector<Key>& keys, Order order, bool in_place) {
  const auto n = static_cast<std::int64_t>(keys.size());
  SCOPED_TRACE(describe(n, run_options{in_place, false, 0}));
  guarded_buffer<Key> keys_in(n), keys_out(n);
  guarded_buffer<std::int64_t> positions(n);
  keys_in.upload(keys);
  Key* out = in_place ? keys_in.data() : keys_out.data();
  std::size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, tilesort::detail::sort_positions(nullptr, bytes, keys_in.data(), out, positions.data(), n,
                                                          order, cudaStream_t(0)));
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  ASSERT_EQ(cudaSuccess, tilesort::detail::sort_positions(temp.data(), bytes, keys_in.data(), out, positions.data(),
                                                          n, order, cudaStream_t(0)));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(keys_in.guards_intact() && keys_out.guards_intact() && positions.guards_intact());
  std::vector<std::int64_t> expected(n);
  std::iota(expected.begin(), expected.end(), std::int64_t(0));
  std::stable_sort(expected.begin(), expected.end(),
                   [&](std::int64_t a, std::int64_t b) { return order(keys[a], keys[b]); });
  EXPECT_EQ(expected, positions.download());
  expect_stable_sorted(keys, in_place ? keys_in.download() : keys_out.download(), order);
}

template <typename Key>
class SortPositions : public ::testing::Test {};
using key_types = ::testing::Types<std::uint32_t, float, std::int64_t, std::uint16_t>;
TYPED_TEST_SUITE(SortPositions, key_types);

TYPED_TEST(SortPositions, EveryDistributionEitherSideOfTheProbe) {
  REQUIRE_GPU();
  using carried = std::uint32_t;
  const auto& row = tilesort::detail::sort_choice_for(sizeof(TypeParam), sizeof(carried));
  const std::int64_t probe_from =
      row.radix_from != tilesort::detail::radix_never ? row.radix_probe_from : row.probe_from;
  std::vector<std::int64_t> sizes = {tilesort::detail::positions_radix_from(sizeof(TypeParam)) + 1};
  if (!small_run()) sizes.push_back(probe_from + 5);
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  for (const std::int64_t n : sizes)
    for (const distribution d : {distribution::random, distribution::sorted, distribution::nearly_sorted,
                                 distribution::reversed, distribution::all_equal}) {
      SCOPED_TRACE(name(d));
      const auto keys = make_keys<TypeParam>(n, d, seed + n);
      check_positions(keys, tilesort::less{}, false);
      check_positions(keys, tilesort::greater{}, true);
    }
}

TEST(SortPositions, NotSupportedBelowTheRadixSort) {
  REQUIRE_GPU();
  std::size_t bytes = 12345;
  const std::uint32_t* in = nullptr;
  EXPECT_EQ(cudaErrorNotSupported,
            tilesort::detail::sort_positions(nullptr, bytes, in, static_cast<std::uint32_t*>(nullptr),
                                             static_cast<std::int64_t*>(nullptr),
                                             tilesort::detail::positions_radix_from(sizeof(std::uint32_t)) - 1, tilesort::less{},
                                             cudaStream_t(0)));
  EXPECT_EQ(std::size_t(12345), bytes);
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
}

}  // namespace
