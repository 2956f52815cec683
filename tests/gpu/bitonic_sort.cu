// GPU tests for block/block_bitonic_sort.cuh and device/bitonic_sort.cuh
// against the CPU reference: keys equivalent per rank to std::sort and a
// permutation of the input (bitonic sort is not stable); pairs sorted by key
// with every (key, value) pair of the input present once. Key types, payloads,
// comparators, sizes around every tile and pass boundary, all distributions,
// in place and out of place, the convenience overloads, graph capture and the
// error paths. Small policies reach many global passes at small n.
#include <tilesort/block/block_bitonic_sort.cuh>
#include <tilesort/device/bitonic_sort.cuh>

#include <cmath>
#include <numeric>

#include "common/test_util.cuh"

namespace {

using tilesort_test::device_buffer;
using tilesort_test::distribution;
using tilesort_test::fresh_seed;
using tilesort_test::make_keys;
using tilesort_test::small_run;
using tilesort_test::user_key;
using tilesort_test::user_key_less;

// A user comparator on u32: by the value mod 1000 (many equivalent keys).
struct mod_less {
  __host__ __device__ bool operator()(std::uint32_t a, std::uint32_t b) const { return a % 1000 < b % 1000; }
};

template <typename Key>
using default_less = typename tilesort_test::comparator_for<Key>::type;

template <typename Key, typename Value = tilesort::detail::no_value>
constexpr std::int64_t tile_of() {
  return tilesort::detail::bitonic_sort_policy_for<Key, Value>::type::tile::tile_items;
}

// Keys equivalent per rank to std::sort's output, and a permutation of `in`.
template <typename Key, typename Compare>
void expect_sorted_like_std(const std::vector<Key>& in, const std::vector<Key>& out, Compare comp) {
  ASSERT_EQ(in.size(), out.size());
  std::vector<Key> ref = in;
  std::sort(ref.begin(), ref.end(), comp);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (comp(ref[i], out[i]) || comp(out[i], ref[i])) {
      ADD_FAILURE() << "rank " << i << " of " << ref.size() << " is not equivalent to std::sort's";
      return;
    }
  }
  EXPECT_TRUE(tilesort_test::is_permutation_of(in, out)) << "output is not a permutation of the input";
}

// Values = original index for pairs; n empty values when Value is no_value (keys alone).
template <typename Value>
std::vector<Value> index_values(std::int64_t n) {
  std::vector<Value> values(n);
  if constexpr (!std::is_same_v<Value, tilesort::detail::no_value>)
    for (std::int64_t i = 0; i < n; ++i) values[i] = static_cast<Value>(i);
  return values;
}

// ---------------------------------------------------------------- block level
// Each block sorts its tile of Threads keys; threads past the tile's valid
// keys hold `marker` and must get it back.
template <typename Key, int Threads, typename Value, typename Compare>
__global__ void block_sort_kernel(const Key* in, Key* out, const Value* values_in, Value* values_out, int n,
                                  Key marker, Key* rest, bool use_valid_overload, Compare comp) {
  using sorter = tilesort::block_bitonic_sort<Key, Threads, std::conditional_t<std::is_same_v<Value, int>, void, Value>>;
  __shared__ typename sorter::temp_storage storage;
  const int base = blockIdx.x * Threads;
  const int t = threadIdx.x;
  const int valid = min(Threads, n - base);
  Key key = t < valid ? in[base + t] : marker;
  if constexpr (std::is_same_v<Value, int>) {  // keys only
    if (use_valid_overload) {
      sorter(storage).sort(key, valid, comp);
    } else {
      sorter(storage).sort(key, comp);
    }
  } else {
    Value value = t < valid ? values_in[base + t] : Value{};
    if (use_valid_overload) {
      sorter(storage).sort_pairs(key, value, valid, comp);
    } else {
      sorter(storage).sort_pairs(key, value, comp);
    }
    if (t < valid) values_out[base + t] = value;
  }
  if (t < valid) {
    out[base + t] = key;
  } else {
    rest[base + t] = key;
  }
}

// Keys only when Value is int (the kernel's marker type for "no payload").
template <typename Key, int Threads, typename Value, typename Compare>
void check_block_sort(int n, distribution d, Compare comp) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("threads=" + std::to_string(Threads) + " n=" + std::to_string(n) + " " + tilesort_test::name(d) +
               " seed=" + std::to_string(seed));
  constexpr bool pairs = !std::is_same_v<Value, int>;
  const std::vector<Key> keys = make_keys<Key>(n, d, seed, comp);
  const std::vector<Value> values = index_values<Value>(n);
  const int blocks = (n + Threads - 1) / Threads;
  const bool full = n % Threads == 0;
  device_buffer<Key> d_in(keys), d_out(n), d_rest(std::size_t(blocks) * Threads);
  device_buffer<Value> d_vin(values), d_vout(n);
  d_rest.poison();
  const Key marker = make_keys<Key>(1, distribution::random, seed + 1, comp)[0];
  block_sort_kernel<Key, Threads, Value><<<blocks, Threads>>>(d_in.data(), d_out.data(), d_vin.data(), d_vout.data(),
                                                               n, marker, d_rest.data(), !full, comp);
  CUDA_ASSERT_LAUNCH();
  const std::vector<Key> out = d_out.download();
  const std::vector<Value> values_out = d_vout.download();
  const std::vector<Key> rest = d_rest.download();
  for (int b = 0; b < blocks; ++b) {
    const int begin = b * Threads, end = std::min(n, begin + Threads);
    const std::vector<Key> in_tile(keys.begin() + begin, keys.begin() + end);
    const std::vector<Key> out_tile(out.begin() + begin, out.begin() + end);
    expect_sorted_like_std(in_tile, out_tile, comp);
    if constexpr (pairs) {
      const std::vector<Value> vin_tile(values.begin() + begin, values.begin() + end);
      const std::vector<Value> vout_tile(values_out.begin() + begin, values_out.begin() + end);
      EXPECT_TRUE(tilesort_test::is_permutation_of(tilesort_test::zip(in_tile, vin_tile),
                                                   tilesort_test::zip(out_tile, vout_tile)))
          << "block " << b << ": values did not travel with their keys";
    }
    for (int t = end - begin; t < Threads; ++t)
      ASSERT_TRUE(tilesort_test::bytes_equal(marker, rest[begin + t])) << "thread " << t << " past valid_items changed";
  }
}

TEST(BlockBitonicSort, FullAndPartialTiles) {
  REQUIRE_GPU();
  for (int n : {256, 256 * 7, 1, 2, 3, 100, 255, 257, 256 * 5 + 77}) {
    check_block_sort<std::uint32_t, 256, int>(n, distribution::random, tilesort::less{});
    check_block_sort<std::uint32_t, 256, int>(n, distribution::few_distinct, tilesort::greater{});
  }
  for (int n : {1024, 4096, 1000, 3001}) check_block_sort<std::uint32_t, 1024, int>(n, distribution::reversed, tilesort::less{});
  // Not a power of two: virtual padding to 1024 inside the block.
  for (int n : {1000, 3000, 2345}) check_block_sort<std::uint32_t, 1000, int>(n, distribution::random, tilesort::less{});
  for (int n : {32, 31, 65}) check_block_sort<std::uint32_t, 32, int>(n, distribution::random, mod_less{});
}

TEST(BlockBitonicSort, KeyTypesAndPairs) {
  REQUIRE_GPU();
  for (auto d : tilesort_test::all_distributions) {
    check_block_sort<float, 256, int>(256 * 3 + 5, d, tilesort::less{});
    check_block_sort<double, 128, int>(128 * 2 + 1, d, tilesort::greater{});
    check_block_sort<user_key, 256, int>(256 * 2 + 9, d, user_key_less{});
    check_block_sort<std::uint32_t, 256, std::uint32_t>(256 * 4, d, tilesort::less{});
    check_block_sort<std::uint32_t, 256, std::uint32_t>(256 * 3 + 100, d, tilesort::greater{});
    check_block_sort<std::uint64_t, 512, std::uint16_t>(512 + 300, d, tilesort::less{});
  }
}

// ---------------------------------------------------------------- device level

// Sort with the two-phase API, out of place (input must stay intact) and in
// place, keys or pairs (values = original index).
template <typename Key, typename Value, typename Compare>
void check_device_sort(std::int64_t n, distribution d, Compare comp, bool in_place) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("n=" + std::to_string(n) + " " + tilesort_test::name(d) + (in_place ? " in place" : " out of place") +
               " seed=" + std::to_string(seed));
  constexpr bool pairs = !std::is_same_v<Value, tilesort::detail::no_value>;
  const std::vector<Key> keys = make_keys<Key>(n, d, seed, comp);
  const std::vector<Value> values = index_values<Value>(n);
  device_buffer<Key> d_in(keys), d_out(n);
  device_buffer<Value> d_vin(pairs ? values : std::vector<Value>()), d_vout(pairs ? n : 0);
  d_out.poison();
  Key* const keys_out = in_place ? d_in.data() : d_out.data();
  Value* const values_out = in_place ? d_vin.data() : d_vout.data();
  std::size_t temp_bytes = 0;
  if constexpr (pairs) {
    CUDA_ASSERT(tilesort::bitonic_sort_pairs(nullptr, temp_bytes, d_in.data(), keys_out, d_vin.data(), values_out, n, comp));
  } else {
    CUDA_ASSERT(tilesort::bitonic_sort_keys(nullptr, temp_bytes, d_in.data(), keys_out, n, comp));
  }
  ASSERT_EQ(tilesort::detail::min_temp_bytes, temp_bytes);
  device_buffer<unsigned char> temp(temp_bytes);
  if constexpr (pairs) {
    CUDA_ASSERT(tilesort::bitonic_sort_pairs(temp.data(), temp_bytes, d_in.data(), keys_out, d_vin.data(), values_out,
                                             n, comp));
  } else {
    CUDA_ASSERT(tilesort::bitonic_sort_keys(temp.data(), temp_bytes, d_in.data(), keys_out, n, comp));
  }
  CUDA_ASSERT(cudaDeviceSynchronize());
  const std::vector<Key> out = in_place ? d_in.download() : d_out.download();
  if (!in_place) {
    const std::vector<Key> in_after = d_in.download();
    ASSERT_TRUE(std::equal(keys.begin(), keys.end(), in_after.begin(), tilesort_test::bytes_equal<Key>))
        << "out-of-place sort changed its input";
  }
  if constexpr (pairs) {
    const std::vector<Value> values_after = in_place ? d_vin.download() : d_vout.download();
    tilesort_test::expect_sorted_pairs(keys, values, out, values_after, comp);
  } else {
    expect_sorted_like_std(keys, out, comp);
  }
}

// Typed suite: every key type with its natural order, a few sizes around the tile.
template <typename Key>
class BitonicSortKeys : public ::testing::Test {};
using key_types = ::testing::Types<std::uint8_t, std::int16_t, std::uint32_t, std::int64_t, float, double, __half,
                                   __nv_bfloat16, user_key>;
TYPED_TEST_SUITE(BitonicSortKeys, key_types);

TYPED_TEST(BitonicSortKeys, SizesAndDistributions) {
  REQUIRE_GPU();
  using Key = TypeParam;
  const auto comp = default_less<Key>{};
  constexpr std::int64_t tile = tile_of<Key>();
  for (std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(2), std::int64_t(33), tile - 1, tile, tile + 1,
                         2 * tile + 3, std::int64_t(100003)})
    check_device_sort<Key, tilesort::detail::no_value>(n, distribution::random, comp, n % 2 == 0);
  for (auto d : tilesort_test::all_distributions) {
    check_device_sort<Key, tilesort::detail::no_value>(3 * tile + 17, d, comp, false);
    check_device_sort<Key, tilesort::detail::no_value>(777, d, comp, true);
  }
}

std::vector<std::int64_t> u32_sizes() {
  constexpr std::int64_t tile = tile_of<std::uint32_t>();
  // 1024, 4096, 8192 +- 1: the single-block shapes' limits.
  std::vector<std::int64_t> sizes = {0, 1, 2, 31, 32, 33, 1000, 1023, 1024, 1025, 4095, 4096, 4097, 8191, 8192, 8193,
                                     tile - 1, tile, tile + 1, 7919, 104729};
  for (int k = 15; k <= (small_run() ? 16 : 22); ++k) {
    sizes.push_back((std::int64_t(1) << k) - 1);
    sizes.push_back((std::int64_t(1) << k) + 1);
  }
  if (!small_run()) {
    sizes.push_back(1299709);                    // prime
    sizes.push_back((std::int64_t(1) << 23) + 1);  // merge 24 takes two global passes (H = 9)
  }
  return sizes;
}

TEST(BitonicSortU32, AllSizesLess) {
  REQUIRE_GPU();
  for (std::int64_t n : u32_sizes())
    check_device_sort<std::uint32_t, tilesort::detail::no_value>(n, distribution::random, tilesort::less{}, n % 3 == 0);
}

TEST(BitonicSortU32, ComparatorsAndDistributions) {
  REQUIRE_GPU();
  constexpr std::int64_t tile = tile_of<std::uint32_t>();
  for (std::int64_t n : {std::int64_t(2), std::int64_t(1000), tile, 4 * tile + 1, std::int64_t(300007)}) {
    for (auto d : tilesort_test::all_distributions) {
      check_device_sort<std::uint32_t, tilesort::detail::no_value>(n, d, tilesort::greater{}, false);
      check_device_sort<std::uint32_t, tilesort::detail::no_value>(n, d, mod_less{}, true);
    }
  }
}

TEST(BitonicSortFloat, NanLastAndSignedZeros) {
  REQUIRE_GPU();
  // NaN after every number, -0 equivalent to +0, both directions.
  for (std::int64_t n : {std::int64_t(100), tile_of<float>() + 5, std::int64_t(70001)}) {
    check_device_sort<float, tilesort::detail::no_value>(n, distribution::nan_and_zero, tilesort::less{}, false);
    check_device_sort<float, tilesort::detail::no_value>(n, distribution::nan_and_zero, tilesort::greater{}, true);
    check_device_sort<double, tilesort::detail::no_value>(n, distribution::nan_and_zero, tilesort::greater{}, false);
  }
  std::vector<float> keys = {1.0f, NAN, -0.0f, 0.0f, -1.0f, NAN, INFINITY, -INFINITY, 0.0f};
  device_buffer<float> d(keys);
  CUDA_ASSERT(tilesort::bitonic_sort_keys(d.data(), d.data(), static_cast<std::int64_t>(keys.size())));
  const std::vector<float> out = d.download();
  EXPECT_EQ(-INFINITY, out[0]);
  EXPECT_EQ(-1.0f, out[1]);
  for (int i = 2; i <= 4; ++i) EXPECT_EQ(0.0f, out[i]);  // -0 and +0 in any order
  EXPECT_EQ(1.0f, out[5]);
  EXPECT_EQ(INFINITY, out[6]);
  EXPECT_TRUE(std::isnan(out[7]) && std::isnan(out[8]));
}

TEST(BitonicSortPairs, KeyValueTypes) {
  REQUIRE_GPU();
  using tilesort::detail::no_value;
  constexpr std::int64_t tile = tile_of<std::uint32_t, std::uint32_t>();
  std::vector<std::int64_t> sizes = {0, 1, 2, 33, tile - 1, tile, tile + 1, 50021};
  if (!small_run()) sizes.push_back((std::int64_t(1) << 20) + 1);
  for (std::int64_t n : sizes) {
    check_device_sort<std::uint32_t, std::uint32_t>(n, distribution::random, tilesort::less{}, n % 2 == 0);
    check_device_sort<std::uint32_t, std::uint32_t>(n, distribution::few_distinct, tilesort::greater{}, n % 2 == 1);
  }
  for (auto d : tilesort_test::all_distributions) {
    check_device_sort<std::uint64_t, std::uint32_t>(3 * tile_of<std::uint64_t, std::uint32_t>() + 1, d, tilesort::less{}, false);
    check_device_sort<float, std::uint64_t>(20011, d, tilesort::less{}, true);
    check_device_sort<user_key, std::uint32_t>(20011, d, user_key_less{}, false);
  }
}

// One cluster launch (sm_90) for one tile_4k < n <= 16 of them (4096 < n <=
// 65536 for u32 keys; narrower tiles for wide pairs): clusters of 2 .. 16
// blocks, full and partial, blocks with no keys, pairs; and the single-block
// shapes below.
TEST(BitonicSortCluster, SizesKeyTypesAndPairs) {
  REQUIRE_GPU();
  using tilesort::detail::no_value;
  for (std::int64_t n : {1025, 2049, 3000, 4096, 4097, 5000, 8192, 9000, 12288, 16383, 16384, 16385, 20000, 40000,
                         65535, 65536}) {
    check_device_sort<std::uint32_t, no_value>(n, distribution::random, tilesort::less{}, n % 2 == 0);
    check_device_sort<std::uint32_t, std::uint32_t>(n, distribution::few_distinct, tilesort::greater{}, n % 2 == 1);
    check_device_sort<double, no_value>(n, distribution::nan_and_zero, tilesort::less{}, false);
    check_device_sort<user_key, std::uint64_t>(n, distribution::random, user_key_less{}, true);
    check_device_sort<std::uint8_t, no_value>(n, distribution::random, tilesort::greater{}, false);
  }
  for (auto d : tilesort_test::all_distributions) check_device_sort<std::uint32_t, no_value>(12345, d, mod_less{}, false);
}

// ---------------------------------------------------------------- small policies
// Tiles of 2^8 keys (H = 3: up to several global passes per merge, with and
// without a shared-memory round inside) and 2^7 keys for pairs (H = 2).
template <typename Policy, typename Compare>
void check_small_policy(std::int64_t n, distribution d, Compare comp, bool in_place) {
  using Key = typename Policy::key_type;
  using Value = typename Policy::value_type;
  constexpr bool pairs = !std::is_same_v<Value, tilesort::detail::no_value>;
  const auto seed = fresh_seed();
  SCOPED_TRACE("small policy n=" + std::to_string(n) + " " + tilesort_test::name(d) + " seed=" + std::to_string(seed));
  const std::vector<Key> keys = make_keys<Key>(n, d, seed, comp);
  const std::vector<Value> values = index_values<Value>(n);
  device_buffer<Key> d_in(keys), d_out(n);
  device_buffer<Value> d_vin(pairs ? values : std::vector<Value>()), d_vout(pairs ? n : 0);
  Key* const keys_out = in_place ? d_in.data() : d_out.data();
  Value* const values_out = in_place ? d_vin.data() : d_vout.data();
  CUDA_ASSERT((tilesort::detail::bitonic_sort_run<Policy>(d_in.data(), keys_out, d_vin.data(), values_out, n, comp, 0)));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const std::vector<Key> out = in_place ? d_in.download() : d_out.download();
  if constexpr (pairs) {
    tilesort_test::expect_sorted_pairs(keys, values, out, in_place ? d_vin.download() : d_vout.download(), comp);
  } else {
    expect_sorted_like_std(keys, out, comp);
  }
}

TEST(BitonicSortSmallPolicy, ManyPasses) {
  REQUIRE_GPU();
  using tilesort::detail::bitonic_policy;
  using keys_policy = bitonic_policy<std::uint32_t, tilesort::detail::no_value, 64, 4>;
  using pairs_policy = bitonic_policy<std::uint32_t, std::uint32_t, 32, 4>;
  std::vector<std::int64_t> sizes = {2, 255, 256, 257, 1000, 1025, 4095, 4097, 10007, 65537};
  if (!small_run()) sizes.push_back(300007);
  for (std::int64_t n : sizes) {
    check_small_policy<keys_policy>(n, distribution::random, tilesort::less{}, n % 2 == 0);
    check_small_policy<keys_policy>(n, distribution::few_distinct, tilesort::greater{}, n % 2 == 1);
    check_small_policy<pairs_policy>(n, distribution::random, tilesort::less{}, n % 2 == 1);
  }
  for (std::int64_t n = 3; n < 2000; n += 97) check_small_policy<keys_policy>(n, distribution::reversed, tilesort::less{}, false);
}

// ---------------------------------------------------------------- API behaviour
TEST(BitonicSortApi, ConvenienceOverloadsOnAStream) {
  REQUIRE_GPU();
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t n = 123457;
  const auto seed = fresh_seed();
  const std::vector<std::uint32_t> keys = make_keys<std::uint32_t>(n, distribution::random, seed);
  std::vector<std::uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  device_buffer<std::uint32_t> d_keys(keys), d_values(values), d_out(n);
  CUDA_ASSERT(tilesort::bitonic_sort_keys(d_keys.data(), d_out.data(), n, tilesort::greater{}, stream));
  CUDA_ASSERT(tilesort::bitonic_sort_pairs(d_keys.data(), d_keys.data(), d_values.data(), d_values.data(), n,
                                           tilesort::less{}, stream));
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  expect_sorted_like_std(keys, d_out.download(), tilesort::greater{});
  tilesort_test::expect_sorted_pairs(keys, values, d_keys.download(), d_values.download(), tilesort::less{});
  CUDA_ASSERT(cudaStreamDestroy(stream));
}

TEST(BitonicSortApi, GraphCapture) {
  REQUIRE_GPU();
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t n = 3 * tile_of<std::uint32_t>() + 11;
  const std::vector<std::uint32_t> keys = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
  device_buffer<std::uint32_t> d_in(keys), d_out(n), d_out2(n);
  std::size_t temp_bytes = 0;
  CUDA_ASSERT(tilesort::bitonic_sort_keys(nullptr, temp_bytes, d_in.data(), d_out.data(), n));
  device_buffer<unsigned char> temp(temp_bytes);
  cudaGraph_t graph;
  CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t two_phase = tilesort::bitonic_sort_keys(temp.data(), temp_bytes, d_in.data(), d_out.data(), n,
                                                            tilesort::less{}, stream);
  const cudaError_t convenience = tilesort::bitonic_sort_keys(d_in.data(), d_out2.data(), n, tilesort::greater{}, stream);
  CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
  CUDA_ASSERT(two_phase);
  CUDA_ASSERT(convenience);
  cudaGraphExec_t exec;
  CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_ASSERT(cudaGraphLaunch(exec, stream));
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  expect_sorted_like_std(keys, d_out.download(), tilesort::less{});
  expect_sorted_like_std(keys, d_out2.download(), tilesort::greater{});
  CUDA_ASSERT(cudaGraphExecDestroy(exec));
  CUDA_ASSERT(cudaGraphDestroy(graph));
  CUDA_ASSERT(cudaStreamDestroy(stream));
}

TEST(BitonicSortApi, BadArgumentsWriteNothing) {
  REQUIRE_GPU();
  const std::int64_t n = 5000;
  const std::vector<std::uint32_t> keys = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
  device_buffer<std::uint32_t> d_in(keys), d_out(n), d_values(n), d_values_out(n);
  d_out.poison();
  d_values_out.poison();
  const std::vector<std::uint32_t> poisoned = d_out.download();
  device_buffer<unsigned char> temp(16);
  std::size_t bytes = 16;
  std::size_t zero = 0;
  using tilesort::bitonic_sort_keys;
  using tilesort::bitonic_sort_pairs;
  const std::uint32_t* null_in = nullptr;
  std::uint32_t* null_out = nullptr;
  // n < 0: in the size query and in the run.
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_keys(nullptr, bytes, d_in.data(), d_out.data(), std::int64_t(-1)));
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_keys(temp.data(), bytes, d_in.data(), d_out.data(), std::int64_t(-5)));
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_keys(d_in.data(), d_out.data(), std::int64_t(-1)));
  // Null pointers with n > 0.
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_keys(temp.data(), bytes, null_in, d_out.data(), n));
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_keys(temp.data(), bytes, d_in.data(), null_out, n));
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_keys(null_in, d_out.data(), n));
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_pairs(temp.data(), bytes, d_in.data(), d_out.data(), null_in,
                                                      d_values_out.data(), n));
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_pairs(temp.data(), bytes, d_in.data(), d_out.data(), d_values.data(),
                                                      null_out, n));
  EXPECT_EQ(cudaErrorInvalidValue,
            bitonic_sort_pairs(d_in.data(), d_out.data(), null_in, d_values_out.data(), n, tilesort::less{}));
  // Temp storage too small.
  EXPECT_EQ(cudaErrorInvalidValue, bitonic_sort_keys(temp.data(), zero, d_in.data(), d_out.data(), n));
  EXPECT_EQ(cudaErrorInvalidValue,
            bitonic_sort_pairs(temp.data(), zero, d_in.data(), d_out.data(), d_values.data(), d_values_out.data(), n));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_EQ(poisoned, d_out.download()) << "an invalid call wrote its output";
  EXPECT_EQ(poisoned, d_values_out.download()) << "an invalid call wrote its values";
  EXPECT_EQ(keys, d_in.download()) << "an invalid call changed its input";
  // The size query sets temp_bytes and does nothing else, even for null data.
  std::size_t query = 0;
  EXPECT_EQ(cudaSuccess, bitonic_sort_keys(nullptr, query, null_in, null_out, n));
  EXPECT_EQ(tilesort::detail::min_temp_bytes, query);
  // n == 0: valid with null data; n == 1: a copy.
  EXPECT_EQ(cudaSuccess, bitonic_sort_keys(temp.data(), bytes, null_in, null_out, std::int64_t(0)));
  EXPECT_EQ(cudaSuccess, bitonic_sort_keys(null_in, null_out, std::int64_t(0)));
  EXPECT_EQ(cudaSuccess, bitonic_sort_keys(temp.data(), bytes, d_in.data(), d_out.data(), std::int64_t(1)));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_EQ(keys[0], d_out.download()[0]);
  EXPECT_EQ(poisoned[1], d_out.download()[1]);
}

// ---------------------------------------------------------------- past 2^31 keys
TEST(BitonicSortLarge, PastTwoToThe31) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "large size skipped in the small (sanitizer) run";
  const std::int64_t n = (std::int64_t(1) << 31) + 3;
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_ASSERT(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < std::size_t(n) + (std::size_t(1) << 30)) GTEST_SKIP() << "not enough device memory";
  // u8 keys: the check is a histogram and a scan, cheap on the host.
  std::vector<std::uint8_t> keys(n);
  std::mt19937_64 rng(fresh_seed());
  for (std::int64_t i = 0; i < n; i += 8) {
    const std::uint64_t bits = rng();
    std::memcpy(&keys[i], &bits, std::min<std::int64_t>(8, n - i));
  }
  std::vector<std::int64_t> histogram(256, 0);
  for (std::uint8_t k : keys) ++histogram[k];
  device_buffer<std::uint8_t> d(keys);
  CUDA_ASSERT(tilesort::bitonic_sort_keys(d.data(), d.data(), n, tilesort::greater{}));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const std::vector<std::uint8_t> out = d.download();
  std::int64_t unsorted = -1;
  for (std::int64_t i = 1; i < n && unsorted < 0; ++i)
    if (out[i - 1] < out[i]) unsorted = i;
  EXPECT_EQ(-1, unsorted) << "not sorted (descending) at this index";
  for (std::uint8_t k : out) --histogram[k];
  for (int v = 0; v < 256; ++v) ASSERT_EQ(0, histogram[v]) << "key " << v << " count changed";
}

}  // namespace
