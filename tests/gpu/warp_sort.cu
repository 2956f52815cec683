// GPU tests for warp/warp_sort.cuh: every entry point (keys, pairs, with and
// without valid_items) over key types, shapes (logical warp widths 2..32,
// power-of-two and other item counts), comparators and distributions. Each
// launch sorts many logical warps (several blocks) and every logical warp is
// checked on its own: ordered by the comparator, equivalent rank by rank to
// std::stable_sort, and a bitwise permutation of its input (pairs: the
// (key, value) pairs). With valid_items, the first valid_items outputs are
// checked that way against the valid inputs and the rest must be exactly the
// invalid inputs.
#include <tilesort/warp/warp_sort.cuh>

#include <climits>

#include "common/test_util.cuh"

namespace {

using tilesort_test::device_buffer;
using tilesort_test::distribution;
using tilesort_test::fresh_seed;
using tilesort_test::user_key;
using tilesort_test::user_key_less;

struct user_key_greater {
  __host__ __device__ bool operator()(const user_key& a, const user_key& b) const { return b.major < a.major; }
};

// A payload whose size is not a multiple of 4: two shuffle words, the second
// one half padding.
struct six_bytes {
  std::uint16_t part[3];
};

template <typename Value>
Value value_for(std::uint32_t index) {
  if constexpr (std::is_same_v<Value, six_bytes>) {
    return six_bytes{{static_cast<std::uint16_t>(index), static_cast<std::uint16_t>(index >> 16),
                      static_cast<std::uint16_t>(~index)}};
  } else {
    return static_cast<Value>(index);
  }
}

// Integers by absolute value: -x and x are equivalent but different.
struct abs_less {
  __host__ __device__ bool operator()(std::int32_t a, std::int32_t b) const {
    const long long x = a < 0 ? -static_cast<long long>(a) : a;
    const long long y = b < 0 ? -static_cast<long long>(b) : b;
    return x < y;
  }
};

enum class api { keys, keys_valid, pairs, pairs_valid };

const char* name(api a) {
  switch (a) {
    case api::keys: return "warp_sort";
    case api::keys_valid: return "warp_sort(valid_items)";
    case api::pairs: return "warp_sort_pairs";
    case api::pairs_valid: return "warp_sort_pairs(valid_items)";
  }
  return "?";
}

constexpr bool has_values(api a) { return a == api::pairs || a == api::pairs_valid; }
constexpr bool has_valid_items(api a) { return a == api::keys_valid || a == api::pairs_valid; }

// Thread t of the grid is lane t % W of logical warp t / W and holds items
// [t * IPT, (t+1) * IPT): the blocked arrangement of each W * IPT tile.
template <int W, int IPT, api Api, typename Key, typename Value, typename Compare>
__global__ void warp_sort_kernel(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                 const int* valid_items, Compare comp) {
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const std::int64_t first = static_cast<std::int64_t>(thread) * IPT;
  Key keys[IPT];
  Value values[IPT];
  for (int i = 0; i < IPT; ++i) {
    keys[i] = keys_in[first + i];
    if constexpr (has_values(Api)) values[i] = values_in[first + i];
  }
  if constexpr (Api == api::keys) {
    tilesort::warp_sort<W>(keys, comp);
  } else if constexpr (Api == api::keys_valid) {
    tilesort::warp_sort<W>(keys, valid_items[thread / W], comp);
  } else if constexpr (Api == api::pairs) {
    tilesort::warp_sort_pairs<W>(keys, values, comp);
  } else {
    tilesort::warp_sort_pairs<W>(keys, values, valid_items[thread / W], comp);
  }
  for (int i = 0; i < IPT; ++i) {
    keys_out[first + i] = keys[i];
    if constexpr (has_values(Api)) values_out[first + i] = values[i];
  }
}

constexpr int block_threads = 64;

int blocks_per_launch() { return tilesort_test::small_run() ? 2 : 6; }

// Number of keys a launch sorts with IPT items per thread (whatever the width).
template <int IPT>
std::size_t launch_items() {
  return static_cast<std::size_t>(blocks_per_launch()) * block_threads * IPT;
}

// valid_items per logical warp: every edge case, then random counts.
std::vector<int> make_valid_items(int tiles, int tile, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int edge[] = {0, 1, tile, tile + 1, -1, tile - 1, INT_MAX, INT_MIN, 2, tile / 2};
  std::vector<int> valid(tiles);
  for (int t = 0; t < tiles; ++t) valid[t] = t < 10 ? edge[t] : static_cast<int>(rng() % (tile + 1));
  std::shuffle(valid.begin(), valid.end(), rng);
  return valid;
}

template <typename T>
std::vector<T> slice(const std::vector<T>& v, std::size_t begin, std::size_t end) {
  return std::vector<T>(v.begin() + begin, v.begin() + end);
}

// Sort keys_in (its size a multiple of the tile) tile by tile with one launch
// and check every tile.
template <int W, int IPT, api Api, typename Key, typename Value = std::uint32_t, typename Compare>
void run_case(const std::vector<Key>& keys_in, Compare comp, std::uint64_t seed) {
  constexpr int tile = W * IPT;
  SCOPED_TRACE(std::string(name(Api)) + "<" + std::to_string(W) + "> x " + std::to_string(IPT) +
               " items, seed=" + std::to_string(seed));
  const std::size_t n = keys_in.size();
  ASSERT_EQ(0u, n % (static_cast<std::size_t>(block_threads) * IPT));
  const int tiles = static_cast<int>(n / tile);
  const int blocks = static_cast<int>(n / (static_cast<std::size_t>(block_threads) * IPT));

  std::vector<Value> values_in(has_values(Api) ? n : 0);
  for (std::size_t i = 0; i < values_in.size(); ++i) values_in[i] = value_for<Value>(static_cast<std::uint32_t>(i));
  std::vector<int> valid(tiles, tile);
  if (has_valid_items(Api)) valid = make_valid_items(tiles, tile, seed ^ 0x5bd1e995u);

  device_buffer<Key> d_keys_in(keys_in);
  device_buffer<Key> d_keys_out(n);
  device_buffer<Value> d_values_in(values_in.size());  // empty (null) for keys-only calls
  device_buffer<Value> d_values_out(values_in.size());
  device_buffer<int> d_valid(valid);
  d_keys_out.poison();
  if (has_values(Api)) {
    d_values_in.upload(values_in);
    d_values_out.poison();
  }
  warp_sort_kernel<W, IPT, Api><<<blocks, block_threads>>>(d_keys_in.data(), d_keys_out.data(), d_values_in.data(),
                                                           d_values_out.data(), d_valid.data(), comp);
  CUDA_ASSERT_LAUNCH();
  const std::vector<Key> keys_out = d_keys_out.download();
  std::vector<Value> values_out;
  if (has_values(Api)) values_out = d_values_out.download();

  for (int t = 0; t < tiles; ++t) {
    SCOPED_TRACE("logical warp " + std::to_string(t) + " of " + std::to_string(tiles) +
                 ", valid_items=" + std::to_string(valid[t]));
    const std::size_t begin = static_cast<std::size_t>(t) * tile;
    const std::size_t split = begin + std::clamp(valid[t], 0, tile);
    const std::size_t end = begin + tile;
    const auto sorted_in = slice(keys_in, begin, split);
    const auto sorted_out = slice(keys_out, begin, split);
    // The CPU reference: rank by rank, the same key up to equivalence.
    std::vector<Key> reference = sorted_in;
    std::stable_sort(reference.begin(), reference.end(), comp);
    for (std::size_t i = 0; i < reference.size(); ++i) {
      if (comp(reference[i], sorted_out[i]) || comp(sorted_out[i], reference[i])) {
        ADD_FAILURE() << "rank " << i << " differs from std::stable_sort (up to equivalence)";
        break;
      }
    }
    if constexpr (has_values(Api)) {
      tilesort_test::expect_sorted_pairs(sorted_in, slice(values_in, begin, split), sorted_out,
                                         slice(values_out, begin, split), comp);
      tilesort_test::expect_same_items(slice(keys_in, split, end), slice(values_in, split, end),
                                       slice(keys_out, split, end), slice(values_out, split, end));
    } else {
      tilesort_test::expect_sorted_permutation(sorted_in, sorted_out, comp);
      tilesort_test::expect_same_items(slice(keys_in, split, end), slice(keys_out, split, end));
    }
    if (::testing::Test::HasFailure()) return;  // one failing logical warp is enough to read
  }
}

// ------------------------------------------------------------------ key types
template <typename Key>
struct orders {
  using ascending = tilesort::less;
  using descending = tilesort::greater;
};
template <>
struct orders<user_key> {
  using ascending = user_key_less;
  using descending = user_key_greater;
};

template <typename Key>
class WarpSortKeyTypes : public ::testing::Test {};

using key_types = ::testing::Types<std::int8_t, std::uint16_t, std::int32_t, std::uint32_t, std::int64_t,
                                   std::uint64_t, float, double, __half, __nv_bfloat16, user_key>;
TYPED_TEST_SUITE(WarpSortKeyTypes, key_types);

// run_case on fresh keys of every distribution (NaN and +-0 included).
template <int W, int IPT, api Api, typename Key, typename Value = std::uint32_t, typename Compare>
void every_distribution(Compare comp) {
  for (const distribution d : tilesort_test::all_distributions) {
    const auto seed = fresh_seed();
    SCOPED_TRACE(tilesort_test::name(d));
    run_case<W, IPT, Api, Key, Value>(tilesort_test::make_keys<Key>(launch_items<IPT>(), d, seed, comp), comp, seed);
  }
}

// The power-of-two path, ascending.
TYPED_TEST(WarpSortKeyTypes, KeysAscending32x4) {
  REQUIRE_GPU();
  every_distribution<32, 4, api::keys, TypeParam>(typename orders<TypeParam>::ascending{});
}

// Re-blocked path (3 items per lane), narrow logical warps, descending.
TYPED_TEST(WarpSortKeyTypes, KeysDescending8x3) {
  REQUIRE_GPU();
  every_distribution<8, 3, api::keys, TypeParam>(typename orders<TypeParam>::descending{});
}

// Pairs with a 6-byte payload and valid_items, 5 items per lane.
TYPED_TEST(WarpSortKeyTypes, PairsValidItems16x5) {
  REQUIRE_GPU();
  every_distribution<16, 5, api::pairs_valid, TypeParam, six_bytes>(typename orders<TypeParam>::ascending{});
}

// ------------------------------------------------------------------ shapes
// uint32 keys: the full sort and the pairs with valid_items for each shape.
template <int W, int IPT>
void check_shape() {
  for (const distribution d : {distribution::random, distribution::few_distinct, distribution::sorted,
                               distribution::reversed, distribution::all_equal}) {
    const auto seed = fresh_seed();
    SCOPED_TRACE(tilesort_test::name(d));
    const auto keys = tilesort_test::make_keys<std::uint32_t>(launch_items<IPT>(), d, seed);
    run_case<W, IPT, api::keys>(keys, tilesort::less{}, seed);
    run_case<W, IPT, api::pairs_valid>(keys, tilesort::less{}, seed);
  }
}

// check_shape for logical warps of W lanes and each items-per-lane count.
template <int W, int... IPT>
void check_shapes() {
  (check_shape<W, IPT>(), ...);
}

TEST(WarpSort, ShapesWidth2And4) {
  REQUIRE_GPU();
  check_shapes<2, 1, 5, 16>();
  check_shapes<4, 2, 3, 7>();
}

TEST(WarpSort, ShapesWidth8And16) {
  REQUIRE_GPU();
  check_shapes<8, 1, 5, 8>();
  check_shapes<16, 3, 4>();
}

TEST(WarpSort, ShapesWidth32) {
  REQUIRE_GPU();
  check_shapes<32, 1, 2, 3, 4, 5, 8, 12, 16>();
}

// The two overloads the shape sweep doesn't use: keys with valid_items, pairs
// without.
TEST(WarpSort, KeysValidItemsAndFullPairs) {
  REQUIRE_GPU();
  for (const distribution d : {distribution::random, distribution::few_distinct, distribution::all_equal}) {
    const auto seed = fresh_seed();
    SCOPED_TRACE(tilesort_test::name(d));
    run_case<32, 8, api::keys_valid>(tilesort_test::make_keys<std::uint32_t>(launch_items<8>(), d, seed),
                                     tilesort::less{}, seed);
    run_case<16, 1, api::keys_valid>(tilesort_test::make_keys<std::int64_t>(launch_items<1>(), d, seed),
                                     tilesort::less{}, seed);
    run_case<4, 7, api::keys_valid>(tilesort_test::make_keys<float>(launch_items<7>(), d, seed),
                                    tilesort::less{}, seed);
    run_case<32, 4, api::pairs>(tilesort_test::make_keys<std::uint32_t>(launch_items<4>(), d, seed),
                                tilesort::less{}, seed);
    run_case<8, 3, api::pairs, double, std::uint64_t>(
        tilesort_test::make_keys<double>(launch_items<3>(), d, seed), tilesort::greater{}, seed);
    run_case<2, 2, api::pairs, std::uint16_t, six_bytes>(
        tilesort_test::make_keys<std::uint16_t>(launch_items<2>(), d, seed), tilesort::less{}, seed);
  }
}

// ------------------------------------------------------------------ comparators
// Extended lambdas can't live in a TEST body (a private member function).
void check_lambda_comparator() {
  // Orders by the low byte only: many ties between different keys.
  const auto low_byte_less = [] __host__ __device__(std::uint32_t a, std::uint32_t b) {
    return (a & 0xffu) < (b & 0xffu);
  };
  for (const distribution d : tilesort_test::all_distributions) {
    const auto seed = fresh_seed();
    SCOPED_TRACE(tilesort_test::name(d));
    const auto keys = tilesort_test::make_keys<std::uint32_t>(launch_items<8>(), d, seed, low_byte_less);
    run_case<32, 8, api::keys>(keys, low_byte_less, seed);
    run_case<32, 8, api::pairs_valid>(keys, low_byte_less, seed);
    run_case<4, 5, api::keys>(slice(keys, 0, launch_items<5>()), low_byte_less, seed);
  }
}

TEST(WarpSort, UserLambdaComparator) {
  REQUIRE_GPU();
  check_lambda_comparator();
}

TEST(WarpSort, UserFunctorComparator) {
  REQUIRE_GPU();
  for (const distribution d : tilesort_test::all_distributions) {
    const auto seed = fresh_seed();
    SCOPED_TRACE(tilesort_test::name(d));
    // Fold the keys into a small range so that x and -x both occur.
    auto keys = tilesort_test::make_keys<std::int32_t>(launch_items<4>(), d, seed, abs_less{});
    for (auto& k : keys) k %= 50;
    run_case<32, 4, api::keys_valid>(keys, abs_less{}, seed);
    run_case<8, 3, api::pairs>(slice(keys, 0, launch_items<3>()), abs_less{}, seed);
  }
}

}  // namespace
