// GPU tests for the hybrid radix sort (detail/radix_sort_plan.cuh,
// radix_choose_buckets; device/radix_sort/buckets.cuh): passes over the top
// varying digits, then every bucket sorted by the segmented sort. Checked
// against std::stable_sort with the same comparator, bit for bit, and as a
// permutation (pairs carry positions):
//   * policies that force the hybrid sort on small inputs (one and two
//     bucket digits, no bound on the largest bucket): every distribution and
//     pattern, and keys that stress the buckets: all in one top bucket, two
//     top buckets, keys differing in the lowest bit only, zipf, empty
//     buckets between full ones, buckets just above a block's tile (these
//     take the segmented sort's merge path);
//   * the library's own policies at sizes where they choose the hybrid sort
//     (random keys) or stay LSD (skewed keys), around the switch point,
//     keys and pairs with 4-, 8- and 16-byte values, in place and copy;
//   * the index sort (4-byte positions moved, int64 stored) through buckets;
//   * the bucket tiles of integer keys alone: policies that take them at any
//     mean bucket (every distribution, the stress patterns, every shape) and
//     the library's own policy at the sizes where it takes them.
#include <tilesort/device/radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/device_sort_cases.cuh"
#include "common/radix_cases.cuh"

namespace {

using namespace tilesort_test;

// The hybrid sort whenever enough digits vary: Digits bucket digits.
template <typename Base, int Digits>
struct forced_buckets : Base {
  static constexpr std::int64_t hybrid_min_keys = 2;
  static constexpr std::int64_t hybrid_max_keys = std::int64_t(1) << 40;
  static constexpr int one_digit_bucket_keys = Digits == 1 ? (1 << 30) : 1;
  static constexpr int largest_bucket = 1 << 30;
  static constexpr int hybrid_min_passes_saved = 1;
};

template <typename Key, typename Value = tilesort::detail::no_value>
using base_policy = tilesort::detail::radix_policy_for<Key, Value>;

// Forced buckets, and for integer keys alone the bucket tiles at any mean
// bucket (radix_sort/buckets.cuh): the smallest shape that holds the spread.
template <typename Base, int Digits>
struct forced_tiles : forced_buckets<Base, Digits> {
  static constexpr std::int64_t bucket_tile_min_mean = 0;
};

// Keys that stress the buckets, as 64-bit patterns cut to the key's width
// (the top byte of a 4-byte key is bits 24-31).
enum class stress { one_top_bucket, two_top_buckets, lowest_bit, zipf, sparse_buckets, just_above_tile };
constexpr stress all_stress[] = {stress::one_top_bucket, stress::two_top_buckets, stress::lowest_bit,
                                 stress::zipf,           stress::sparse_buckets,  stress::just_above_tile};
const char* name(stress s) {
  switch (s) {
    case stress::one_top_bucket: return "one_top_bucket";
    case stress::two_top_buckets: return "two_top_buckets";
    case stress::lowest_bit: return "lowest_bit";
    case stress::zipf: return "zipf";
    case stress::sparse_buckets: return "sparse_buckets";
    case stress::just_above_tile: return "just_above_tile";
  }
  return "?";
}

template <typename Key>
std::vector<Key> make_stress(std::int64_t n, stress s, std::uint64_t seed, int tile) {
  using bits_type = typename tilesort::detail::unsigned_bits<sizeof(Key)>::type;
  constexpr int width = 8 * sizeof(Key);
  const std::uint64_t top_bit = std::uint64_t(1) << (width - 1);
  std::mt19937_64 rng(seed);
  std::vector<Key> keys(n);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng();
    std::uint64_t b = 0;
    switch (s) {
      case stress::one_top_bucket: b = top_bit | (r & 0xffff); break;
      case stress::two_top_buckets: b = (r & 1 ? top_bit : top_bit >> 1) | (r >> 8 & 0xfffff); break;
      case stress::lowest_bit: b = (0x5a5a5a5a5a5a5a5aull & ~std::uint64_t(1)) | (r & 1); break;
      case stress::zipf: {  // bucket k with probability about 1/k: one huge bucket, a long tail
        const double u = double(r >> 11) * 0x1.0p-53;
        const std::uint64_t k = static_cast<std::uint64_t>(std::pow(65536.0, u)) - 1;
        b = k << (width - 16) | (rng() & 0xffff);
        break;
      }
      case stress::sparse_buckets: b = (r % 5) * 0x3000 << (width - 16) | (rng() >> 40); break;
      case stress::just_above_tile:  // buckets of tile + 1 keys, then one short one
        b = std::uint64_t(i / (tile + 1)) << (width - 16) | (r & 0xffff);
        break;
    }
    const bits_type bits = static_cast<bits_type>(b);
    std::memcpy(&keys[i], &bits, sizeof(Key));
  }
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}

template <typename Sorter, typename Key, bool Pairs>
void check_stress(std::int64_t n, int tile) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  int index = 0;
  for (const stress s : all_stress) {
    SCOPED_TRACE(name(s));
    const auto keys = make_stress<Key>(n, s, seed + index, tile);
    const run_options o{(index++ % 2) == 1, false, 0};
    for (const bool descending : {false, true}) {
      if constexpr (Pairs) {
        descending ? check_pairs<Sorter>(keys, tilesort::greater{}, o) : check_pairs<Sorter>(keys, tilesort::less{}, o);
      } else {
        descending ? check_keys<Sorter>(keys, tilesort::greater{}, o) : check_keys<Sorter>(keys, tilesort::less{}, o);
      }
    }
  }
}

template <typename Key>
class RadixHybrid : public ::testing::Test {};
using hybrid_key_types = ::testing::Types<std::int32_t, std::uint32_t, float, std::int64_t, std::uint64_t, double>;
TYPED_TEST_SUITE(RadixHybrid, hybrid_key_types);

TYPED_TEST(RadixHybrid, ForcedBucketsEveryDistribution) {
  REQUIRE_GPU();
  using two = forced_buckets<base_policy<TypeParam>, 2>;
  check_distributions<radix_sorter_with<two>, TypeParam, false>({3000, small_run() ? 20011 : 1000003});
}

TYPED_TEST(RadixHybrid, ForcedBucketsStress) {
  REQUIRE_GPU();
  using two = forced_buckets<base_policy<TypeParam>, 2>;
  const int tile = two::on_chip_bucket;
  check_stress<radix_sorter_with<two>, TypeParam, false>(small_run() ? 3 * (tile + 1) + 5 : 40 * (tile + 1) + 7,
                                                         tile);
}

// One bucket digit: buckets of a block's tile and just above it (the
// segmented sort's merge path).
TEST(RadixHybrid, OneBucketDigit) {
  REQUIRE_GPU();
  using u64 = forced_buckets<base_policy<std::uint64_t>, 1>;
  check_distributions<radix_sorter_with<u64>, std::uint64_t, false>({small_run() ? 20011 : 300007});
  check_stress<radix_sorter_with<u64>, std::uint64_t, false>(3 * (u64::on_chip_bucket + 1) + 5, u64::on_chip_bucket);
}

// The bucket tiles: every distribution and stress pattern through the
// smallest shape (buckets past it, and buckets whose keys do not spread,
// go to the segmented sort); the larger shapes by one bucket digit (mean
// buckets of half the tile); the library's own policy where it takes them
// (8-byte integers from a mean bucket of bucket_tile_min_mean keys).
TYPED_TEST(RadixHybrid, BucketTilesEveryDistribution) {
  REQUIRE_GPU();
  using tiles = forced_tiles<base_policy<TypeParam>, 2>;
  check_distributions<radix_sorter_with<tiles>, TypeParam, false>({3000, small_run() ? 20011 : 1000003});
  const int tile = tiles::bucket_tile_capacity(0);
  check_stress<radix_sorter_with<tiles>, TypeParam, false>(small_run() ? 3 * (tile + 1) + 5 : 40 * (tile + 1) + 7,
                                                           tile);
}

TEST(RadixHybrid, BucketTilesOfEveryShape) {
  REQUIRE_GPU();
  using u64 = forced_tiles<base_policy<std::uint64_t>, 1>;
  using i64 = forced_tiles<base_policy<std::int64_t>, 1>;
  for (int shape = 1; shape < u64::bucket_tile_shapes; ++shape) {
    const int capacity = u64::bucket_tile_capacity(shape);
    const std::int64_t n = 256 * std::int64_t(capacity / 2) + 77;  // a mean bucket of half the tile
    SCOPED_TRACE("shape " + std::to_string(shape));
    check_sizes<radix_sorter_with<u64>, std::uint64_t, false>({n});
    check_sizes<radix_sorter_with<i64>, std::int64_t, false>({n + 1});
    if (small_run()) continue;  // one sort a shape and key type under the sanitizers
    check_distributions<radix_sorter_with<i64>, std::int64_t, false>({n});
    check_stress<radix_sorter_with<u64>, std::uint64_t, false>(n, capacity);
  }
}

TEST(RadixHybrid, BucketTilesOwnPolicy) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "sizes where the library takes the tiles are too large for the sanitizer run";
  using policy = base_policy<std::uint64_t>;
  const std::int64_t from = 65536 * policy::bucket_tile_min_mean;
  check_sizes<radix_sorter, std::uint64_t, false>({from - 1, from + 3});
  check_sizes<radix_sorter, std::int64_t, false>({4 * from + 11});
}

// Pairs with positions as values (stability) through the buckets.
TEST(RadixHybrid, PairsThroughBuckets) {
  REQUIRE_GPU();
  using u32 = forced_buckets<base_policy<std::uint32_t, std::uint32_t>, 2>;
  check_distributions<radix_sorter_with<u32>, std::uint32_t, true>({small_run() ? 20011 : 300007});
  check_stress<radix_sorter_with<u32>, std::uint32_t, true>(3 * (u32::on_chip_bucket + 1) + 5, u32::on_chip_bucket);
}

TYPED_TEST(RadixHybrid, OwnPolicyAroundTheSwitch) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "sizes past the switch point are too large for the sanitizer run";
  using policy = base_policy<TypeParam>;
  if (policy::hybrid_min_keys == 0) GTEST_SKIP() << "keys of this size stay LSD";
  const std::int64_t from = policy::hybrid_min_keys;
  check_sizes<radix_sorter, TypeParam, false>({from - 1, from, from + 4099});
  check_sizes<radix_sorter, TypeParam, true>({from + 17});
  check_stress<radix_sorter, TypeParam, false>(from + 33, policy::on_chip_bucket);
}

// Pairs with 8- and 16-byte values: the buckets carry them through the
// segmented sort (positions in the first member, checked for stability).
struct wide_value {
  std::int64_t position;
  std::int64_t check;
};

template <typename Key, typename Value, typename Policy>
void check_wide_pairs(std::int64_t n, bool in_place) {
  SCOPED_TRACE(describe(n, run_options{in_place, false, 0}) + " " + std::to_string(sizeof(Value)) + "-byte values");
  const auto keys = make_keys<Key>(n, distribution::random, fresh_seed(), tilesort::less{});
  std::vector<Value> values(n);
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<Value, wide_value>) {
      values[i] = wide_value{i, ~i};
    } else {
      values[i] = static_cast<Value>(i);
    }
  }
  device_buffer<Key> keys_in(keys), keys_out(n);
  device_buffer<Value> values_in(values), values_out(n);
  Key* k_out = in_place ? keys_in.data() : keys_out.data();
  Value* v_out = in_place ? values_in.data() : values_out.data();
  std::size_t bytes = 0;
  const auto sort = [&](void* temp) {
    return tilesort::detail::radix_sort_two_phase<Policy>(temp, bytes, keys_in.data(), k_out, values_in.data(), v_out,
                                                          n, tilesort::less{}, 0);
  };
  ASSERT_EQ(cudaSuccess, sort(nullptr));
  device_buffer<unsigned char> temp(bytes);
  temp.poison();
  ASSERT_EQ(cudaSuccess, sort(temp.data()));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got_keys = in_place ? keys_in.download() : keys_out.download();
  const auto got_values = in_place ? values_in.download() : values_out.download();
  std::vector<std::uint32_t> positions(n);
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<Value, wide_value>) {
      positions[i] = static_cast<std::uint32_t>(got_values[i].position);
      ASSERT_EQ(~got_values[i].position, got_values[i].check) << "value " << i << " torn";
    } else {
      positions[i] = static_cast<std::uint32_t>(got_values[i]);
    }
  }
  expect_stable_pairs(keys, got_keys, positions, tilesort::less{});
}

TEST(RadixHybrid, PairsWithWideValues) {
  REQUIRE_GPU();
  const std::int64_t n = small_run() ? 20011 : 1000003;
  for (const bool in_place : {false, true}) {
    check_wide_pairs<std::uint64_t, std::uint64_t, forced_buckets<base_policy<std::uint64_t, std::uint64_t>, 2>>(
        n, in_place);
    check_wide_pairs<double, wide_value, forced_buckets<base_policy<double, wide_value>, 2>>(n, in_place);
  }
  if (small_run()) return;
  // The library's policies past their switch points.
  check_wide_pairs<std::uint32_t, std::uint32_t, base_policy<std::uint32_t, std::uint32_t>>(std::int64_t(1) << 23,
                                                                                            true);
  check_wide_pairs<std::uint64_t, std::uint64_t, base_policy<std::uint64_t, std::uint64_t>>(
      (std::int64_t(1) << 22) + 5, false);
  check_wide_pairs<std::uint32_t, std::uint64_t, base_policy<std::uint32_t, std::uint64_t>>(
      (std::int64_t(1) << 22) + 5, true);
}

// The index sort: positions made by the first pass (4 bytes), stored as
// int64 by the last, then sorted with their keys in the buckets.
TEST(RadixHybrid, IndexSortThroughBuckets) {
  REQUIRE_GPU();
  using policy = forced_buckets<base_policy<std::int64_t, std::uint32_t>, 2>;
  const std::int64_t n = small_run() ? 20011 : 1000003;
  const auto keys = make_keys<std::int64_t>(n, distribution::random, fresh_seed(), tilesort::less{});
  for (const bool in_place : {false, true}) {
    SCOPED_TRACE(describe(n, run_options{in_place, false, 0}));
    device_buffer<std::int64_t> keys_in(keys), keys_out(n), index(n);
    std::int64_t* out = in_place ? keys_in.data() : keys_out.data();
    std::size_t bytes = 0;
    const auto sort = [&](void* temp) {
      return tilesort::detail::radix_sort_two_phase<policy, std::int64_t, std::uint32_t, std::int64_t>(
          temp, bytes, keys_in.data(), out, static_cast<const std::uint32_t*>(nullptr), index.data(), n,
          tilesort::greater{}, 0, true);
    };
    ASSERT_EQ(cudaSuccess, sort(nullptr));
    device_buffer<unsigned char> temp(bytes);
    temp.poison();
    ASSERT_EQ(cudaSuccess, sort(temp.data()));
    CUDA_ASSERT(cudaDeviceSynchronize());
    const std::vector<std::int64_t> positions = index.download();
    expect_stable_pairs(keys, in_place ? keys_in.download() : keys_out.download(),
                        std::vector<std::uint32_t>(positions.begin(), positions.end()), tilesort::greater{});
  }
}

// A user key under a bits_order through the buckets.
TEST(RadixHybrid, UserKeyByBits) {
  REQUIRE_GPU();
  using policy = forced_buckets<base_policy<user_key>, 2>;
  using pairs_policy = forced_buckets<base_policy<user_key, std::uint32_t>, 2>;
  const auto order = tilesort::order_by_bits(user_key_bits{});
  const std::int64_t n = small_run() ? 20011 : 1000003;
  for (const bool in_place : {false, true}) {
    const auto keys = make_keys<user_key>(n, distribution::random, fresh_seed(), user_key_less{});
    check_keys<radix_sorter_with<policy>>(keys, order, run_options{in_place, false, 0});
    check_pairs<radix_sorter_with<pairs_policy>>(keys, order, run_options{in_place, false, 0});
  }
}

}  // namespace
