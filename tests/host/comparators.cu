// Host tests for tilesort::less / greater: NaN last, -0.0 == +0.0, all types;
// detail::last_key, the padding key of block_sort::sort_padded.
#include <tilesort/comparators.cuh>

#include <cmath>

#include "common/test_util.cuh"

namespace {

template <typename T>
class FloatComparators : public ::testing::Test {};
using float_types = ::testing::Types<float, double, __half, __nv_bfloat16>;
TYPED_TEST_SUITE(FloatComparators, float_types);

TYPED_TEST(FloatComparators, NanLastZerosEqual) {
  using T = TypeParam;
  const T nan = static_cast<T>(NAN), one = static_cast<T>(1.0f), inf = static_cast<T>(INFINITY);
  const T pz = static_cast<T>(0.0f), nz = static_cast<T>(-0.0f), neg = static_cast<T>(-2.0f);
  tilesort::less lt;
  tilesort::greater gt;
  EXPECT_TRUE(lt(one, nan));
  EXPECT_TRUE(lt(inf, nan));
  EXPECT_FALSE(lt(nan, one));
  EXPECT_FALSE(lt(nan, nan));
  EXPECT_FALSE(lt(pz, nz));
  EXPECT_FALSE(lt(nz, pz));
  EXPECT_TRUE(lt(neg, pz));
  // Descending, NaN still last.
  EXPECT_TRUE(gt(one, neg));
  EXPECT_TRUE(gt(neg, nan));
  EXPECT_FALSE(gt(nan, neg));
  EXPECT_FALSE(gt(nan, nan));
  EXPECT_FALSE(gt(pz, nz));
  EXPECT_FALSE(gt(nz, pz));
}

TEST(Comparators, SortsNanLastOnHost) {
  const auto seed = tilesort_test::fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  auto keys = tilesort_test::make_keys<float>(1000, tilesort_test::distribution::nan_and_zero, seed);
  std::sort(keys.begin(), keys.end(), tilesort::less{});
  std::size_t first_nan = keys.size();
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (std::isnan(keys[i])) {
      first_nan = i;
      break;
    }
  for (std::size_t i = first_nan; i < keys.size(); ++i) EXPECT_TRUE(std::isnan(keys[i])) << i;
  EXPECT_LT(first_nan, keys.size()) << "the generator made no NaN";
}

TEST(Comparators, IntegersUseOperatorLess) {
  EXPECT_TRUE(tilesort::less{}(-3, 2));
  EXPECT_TRUE(tilesort::greater{}(std::uint64_t(5), std::uint64_t(2)));
  EXPECT_TRUE((tilesort::detail::equivalence_is_identity<int, tilesort::less>));
  EXPECT_FALSE((tilesort::detail::equivalence_is_identity<float, tilesort::less>));
}

// detail::last_key (the padding of block_sort::sort_padded): no key of the
// type orders after it, under less or greater.
template <typename T, typename Compare>
void expect_last_key(std::uint64_t seed) {
  const T last = tilesort::detail::last_key<T, Compare>();
  for (T key : tilesort_test::make_keys<T>(1000, tilesort_test::distribution::random, seed)) {
    EXPECT_FALSE(Compare{}(last, key)) << +key;
  }
  const T extremes[] = {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), T(0)};
  for (T key : extremes) EXPECT_FALSE(Compare{}(last, key)) << +key;
}

TEST(Comparators, LastKeyOrdersAfterEveryKey) {
  const auto seed = tilesort_test::fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  EXPECT_EQ(std::numeric_limits<std::uint32_t>::max(), (tilesort::detail::last_key<std::uint32_t, tilesort::less>()));
  EXPECT_EQ(std::numeric_limits<std::int16_t>::lowest(), (tilesort::detail::last_key<std::int16_t, tilesort::greater>()));
  expect_last_key<std::uint32_t, tilesort::less>(seed);
  expect_last_key<std::uint32_t, tilesort::greater>(seed);
  expect_last_key<std::int8_t, tilesort::less>(seed);
  expect_last_key<std::int16_t, tilesort::greater>(seed);
  expect_last_key<std::int64_t, tilesort::less>(seed);
  expect_last_key<std::uint64_t, tilesort::greater>(seed);
}

}  // namespace
