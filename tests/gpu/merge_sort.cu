// GPU tests for device/merge_sort.cuh: merge_sort_keys / merge_sort_pairs
// against std::stable_sort, bit for bit (stability included), over key types,
// payloads, comparators, sizes around the tile and merge-tile edges, every
// distribution, in place and copy, both overloads, two streams, graph
// capture, every error path (input and output untouched, the allocating
// overloads' temp storage given back), and a size past 2^31 checked on the device.
//
// Every run poisons the output and a guard zone on both sides of each buffer,
// checks that the guards survive (no write outside [0, n)), and in copy mode
// that keys_in (and values_in) were not written.
#include <tilesort/device/merge_sort.cuh>

#include <initializer_list>

#include "common/test_util.cuh"

namespace {

using namespace tilesort_test;

// ------------------------------------------------------------------ helpers
template <typename Key, typename Value = void>
using policy_for = tilesort::detail::merge_sort_policy_for<
    Key, std::conditional_t<std::is_void_v<Value>, tilesort::detail::no_value, Value>>;

struct run_options {
  bool in_place = false;
  bool convenience = false;  // the overload that allocates its own temp storage
  cudaStream_t stream = 0;
};

inline std::string describe(std::int64_t n, const run_options& o) {
  return "n=" + std::to_string(n) + (o.in_place ? " in place" : " copy") + (o.convenience ? " convenience" : "");
}

// Sort on the device; returns keys (and values) as the caller sees them afterwards.
template <typename Key, typename Compare>
std::vector<Key> device_sort_keys(const std::vector<Key>& in, Compare comp, const run_options& o) {
  const auto n = static_cast<std::int64_t>(in.size());
  const std::vector<std::uint32_t> no_values;
  sort_buffers<Key, std::uint32_t> b(in, no_values);
  Key* dst = b.keys_out(o.in_place);
  run_device_sort(
      o.convenience, o.stream, [&] { return tilesort::merge_sort_keys(b.keys_in(), dst, n, comp, o.stream); },
      [&](void* temp, std::size_t& bytes) {
        return tilesort::merge_sort_keys(temp, bytes, b.keys_in(), dst, n, comp, o.stream);
      });
  return b.result(o.in_place).first;
}

template <typename Key, typename Value, typename Compare>
std::pair<std::vector<Key>, std::vector<Value>> device_sort_pairs(const std::vector<Key>& keys_in,
                                                                  const std::vector<Value>& values_in, Compare comp,
                                                                  const run_options& o) {
  const auto n = static_cast<std::int64_t>(keys_in.size());
  sort_buffers<Key, Value> b(keys_in, values_in);
  Key* kdst = b.keys_out(o.in_place);
  Value* vdst = b.values_out(o.in_place);
  run_device_sort(
      o.convenience, o.stream,
      [&] { return tilesort::merge_sort_pairs(b.keys_in(), kdst, b.values_in(), vdst, n, comp, o.stream); },
      [&](void* temp, std::size_t& bytes) {
        return tilesort::merge_sort_pairs(temp, bytes, b.keys_in(), kdst, b.values_in(), vdst, n, comp, o.stream);
      });
  return b.result(o.in_place);
}

template <typename Key, typename Compare>
void check_keys(const std::vector<Key>& in, Compare comp, const run_options& o) {
  SCOPED_TRACE(describe(static_cast<std::int64_t>(in.size()), o));
  expect_stable_sorted(in, device_sort_keys(in, comp, o), comp);
}

// Values are the original indices: the output must equal std::stable_sort's permutation.
template <typename Key, typename Compare>
void check_pairs(const std::vector<Key>& in, Compare comp, const run_options& o) {
  SCOPED_TRACE(describe(static_cast<std::int64_t>(in.size()), o) + " pairs");
  const auto [keys, index] = device_sort_pairs(in, iota_indices(in.size()), comp, o);
  expect_stable_pairs(in, keys, index, comp);
}

// Sizes around every edge of the algorithm for a policy: tiny, the small
// blocksort shape's tile, the merge tile, the blocksort tile, 2/3/4/5 tiles
// (odd run counts leave a group with an empty B), 8 tiles and one key either
// side (three merge passes, then four), 17 tiles + 1 (five, the last with a
// short B), primes and powers of two +-1.
template <typename Policy>
std::vector<std::int64_t> edge_sizes(bool with_large) {
  const std::int64_t t = Policy::tile_items, m = Policy::merge_tile_items;
  const std::int64_t small = tilesort::detail::merge_sort_small_policy<Policy>::tile_items;
  std::vector<std::int64_t> sizes = {0,
                                     1,
                                     2,
                                     3,
                                     31,
                                     32,
                                     33,
                                     100,
                                     small - 1,
                                     small,
                                     small + 1,
                                     m - 1,
                                     m,
                                     m + 1,
                                     t - 1,
                                     t,
                                     t + 1,
                                     2 * t - 1,
                                     2 * t,
                                     2 * t + 1,
                                     3 * t + 7,
                                     4 * t + m / 2 + 1,
                                     8 * t - 1,
                                     8 * t,
                                     8 * t + 1,
                                     17 * t + 1};
  if (small_run()) return sizes;
  for (std::int64_t s : {24 * t - 7, 32 * t}) sizes.push_back(s);
  for (std::int64_t s : {std::int64_t(7919), std::int64_t(65521), std::int64_t(65537), std::int64_t(131071), 5 * t + 3,
                         9 * t - 1, std::int64_t(1000003)})
    sizes.push_back(s);
  if (with_large) {
    for (int k : {18, 20, 22})
      for (std::int64_t d : {-1, 1}) sizes.push_back((std::int64_t(1) << k) + d);
    sizes.push_back(4194301);  // prime
  }
  return sizes;
}

template <typename Key>
constexpr bool is_large_case =
    std::is_same_v<Key, std::uint32_t> || std::is_same_v<Key, std::uint64_t> || std::is_same_v<Key, float>;

// ------------------------------------------------------------------ typed suite
// Keys alone or pairs (values = original index) of one key type in its natural order.
template <typename Key, bool Pairs>
void check_sorted(const std::vector<Key>& in, const run_options& o) {
  const typename comparator_for<Key>::type comp{};
  if constexpr (Pairs) {
    check_pairs(in, comp, o);
  } else {
    check_keys(in, comp, o);
  }
}

// Random keys at every edge size, alternating copy and in place (starting
// with in place when `in_place_first`).
template <typename Key, bool Pairs>
void check_all_sizes(bool in_place_first) {
  using Value = std::conditional_t<Pairs, std::uint32_t, void>;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  int i = 0;
  for (const std::int64_t n : edge_sizes<policy_for<Key, Value>>(is_large_case<Key>)) {
    run_options o;
    o.in_place = ((i++ % 2) == 0) == in_place_first;
    check_sorted<Key, Pairs>(make_keys<Key>(n, distribution::random, seed + n, typename comparator_for<Key>::type{}),
                             o);
  }
}

// Every distribution at the given sizes, copy and in place.
template <typename Key, bool Pairs>
void check_all_distributions(std::initializer_list<std::int64_t> sizes) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  for (const distribution d : all_distributions) {
    SCOPED_TRACE(name(d));
    for (const std::int64_t n : sizes) {
      const auto keys = make_keys<Key>(n, d, seed + n, typename comparator_for<Key>::type{});
      check_sorted<Key, Pairs>(keys, run_options{false, false, 0});
      check_sorted<Key, Pairs>(keys, run_options{true, false, 0});
    }
  }
}

template <typename Key>
class MergeSortTyped : public ::testing::Test {};
using key_types = ::testing::Types<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t,
                                   std::int64_t, std::uint64_t, float, double, __half, __nv_bfloat16, user_key>;
TYPED_TEST_SUITE(MergeSortTyped, key_types);

TYPED_TEST(MergeSortTyped, KeysAllSizes) {
  REQUIRE_GPU();
  check_all_sizes<TypeParam, false>(false);
}

TYPED_TEST(MergeSortTyped, KeysAllDistributions) {
  REQUIRE_GPU();
  const std::int64_t t = policy_for<TypeParam>::tile_items;
  check_all_distributions<TypeParam, false>({t + 1, small_run() ? 2 * t + 1 : 5 * t + 3});
}

TYPED_TEST(MergeSortTyped, PairsAllSizes) {
  REQUIRE_GPU();
  check_all_sizes<TypeParam, true>(true);
}

TYPED_TEST(MergeSortTyped, PairsAllDistributions) {
  REQUIRE_GPU();
  const std::int64_t t = policy_for<TypeParam, std::uint32_t>::tile_items;
  check_all_distributions<TypeParam, true>({t - 1, small_run() ? 2 * t + 1 : 7 * t + 5});
}

// ------------------------------------------------------------------ comparators and payloads
// Orders by the low byte only: many distinct keys compare equal, so a keys-only
// sort shows its stability bit for bit.
struct low_byte_less {
  __host__ __device__ bool operator()(std::uint32_t a, std::uint32_t b) const { return (a & 0xFF) < (b & 0xFF); }
};

TEST(MergeSort, GreaterAndUserComparators) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const std::int64_t t = policy_for<std::uint32_t>::tile_items;
  const std::int64_t sizes[] = {1, 33, t, t + 1, 3 * t + 7, small_run() ? 2 * t : 300007};
  for (const std::int64_t n : sizes) {
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, false, 0};
      check_keys(make_keys<std::uint32_t>(n, distribution::random, seed + n), tilesort::greater{}, o);
      check_pairs(make_keys<std::uint32_t>(n, distribution::few_distinct, seed + n), tilesort::greater{}, o);
      check_keys(make_keys<float>(n, distribution::nan_and_zero, seed + n), tilesort::greater{}, o);
      check_pairs(make_keys<double>(n, distribution::nan_and_zero, seed + n), tilesort::greater{}, o);
      check_keys(make_keys<__half>(n, distribution::nan_and_zero, seed + n), tilesort::greater{}, o);
      check_keys(make_keys<std::uint32_t>(n, distribution::random, seed + n), low_byte_less{}, o);
      check_pairs(make_keys<std::uint32_t>(n, distribution::random, seed + n), low_byte_less{}, o);
    }
  }
}

// A 16-byte payload (block_sort carries it by index) and an 8-byte one.
struct wide_payload {
  std::uint64_t index;
  std::uint64_t check;
};

TEST(MergeSort, WidePayloads) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  using wide_policy = policy_for<std::uint32_t, wide_payload>;
  const std::int64_t t = wide_policy::tile_items, m = wide_policy::merge_tile_items;
  const std::int64_t sizes[] = {2, m + 1, t, t + 1, 5 * t + 3, small_run() ? 3 * t : 200003};
  for (const std::int64_t n : sizes) {
    const auto keys = make_keys<std::uint32_t>(n, distribution::few_distinct, seed + n);
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, false, 0};
      SCOPED_TRACE(describe(n, o));
      std::vector<wide_payload> wide(n);
      std::vector<std::uint64_t> narrow(n);
      for (std::int64_t i = 0; i < n; ++i) {
        wide[i] = {std::uint64_t(i), ~std::uint64_t(i) * 0x9E3779B97F4A7C15ull};
        narrow[i] = std::uint64_t(i) << 32 | 0xC0FFEEu;
      }
      const auto [wide_keys, wide_values] = device_sort_pairs(keys, wide, tilesort::less{}, o);
      std::vector<std::uint32_t> index(n);
      for (std::int64_t i = 0; i < n; ++i) {
        index[i] = static_cast<std::uint32_t>(wide_values[i].index);
        ASSERT_EQ(~wide_values[i].index * 0x9E3779B97F4A7C15ull, wide_values[i].check) << "payload torn at " << i;
      }
      expect_stable_pairs(keys, wide_keys, index, tilesort::less{});
      const auto [narrow_keys, narrow_values] = device_sort_pairs(keys, narrow, tilesort::less{}, o);
      for (std::int64_t i = 0; i < n; ++i) {
        index[i] = static_cast<std::uint32_t>(narrow_values[i] >> 32);
        ASSERT_EQ(0xC0FFEEu, narrow_values[i] & 0xFFFFFFFFu) << "payload torn at " << i;
      }
      expect_stable_pairs(keys, narrow_keys, index, tilesort::less{});
    }
  }
}

// ------------------------------------------------------------------ overloads, streams, graphs
TEST(MergeSort, ConvenienceOverload) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t t = policy_for<std::uint32_t>::tile_items;
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(5), t, t + 1, 6 * t - 5,
                               small_run() ? 2 * t : std::int64_t(1) << 20}) {
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, true, stream};
      check_keys(make_keys<std::uint32_t>(n, distribution::random, seed + n), tilesort::less{}, o);
      check_pairs(make_keys<std::uint64_t>(n, distribution::few_distinct, seed + n), tilesort::less{}, o);
      check_keys(make_keys<user_key>(n, distribution::random, seed + n, user_key_less{}), user_key_less{}, o);
    }
  }
  CUDA_ASSERT(cudaStreamDestroy(stream));
}

TEST(MergeSort, NZeroAndOneNeedNoPointers) {
  REQUIRE_GPU();
  std::size_t bytes = 0;
  std::uint32_t* none = nullptr;
  EXPECT_EQ(cudaSuccess, tilesort::merge_sort_keys(nullptr, bytes, none, none, 0));
  EXPECT_GE(bytes, 1u) << "temp_bytes must never be 0";
  device_buffer<unsigned char> temp(bytes);
  EXPECT_EQ(cudaSuccess, tilesort::merge_sort_keys(temp.data(), bytes, none, none, 0));
  EXPECT_EQ(cudaSuccess, tilesort::merge_sort_pairs(temp.data(), bytes, none, none, none, none, 0));
  EXPECT_EQ(cudaSuccess, tilesort::merge_sort_keys(none, none, 0));
  EXPECT_EQ(cudaSuccess, tilesort::merge_sort_pairs(none, none, none, none, 0));
  CUDA_EXPECT(cudaDeviceSynchronize());
  // n == 1: a copy, or nothing in place (checked by the helpers' guards and poison).
  for (const bool in_place : {false, true}) {
    check_keys(std::vector<std::uint32_t>{42u}, tilesort::less{}, run_options{in_place, false, 0});
    check_pairs(std::vector<double>{-1.5}, tilesort::less{}, run_options{in_place, true, 0});
  }
}

TEST(MergeSort, TwoStreamsAtOnce) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const std::int64_t n1 = small_run() ? 20000 : 3000017, n2 = small_run() ? 30000 : 2000003;
  const auto keys1 = make_keys<std::uint32_t>(n1, distribution::random, seed);
  const auto keys2 = make_keys<std::uint64_t>(n2, distribution::few_distinct, seed + 1);
  cudaStream_t s1, s2;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  device_buffer<std::uint32_t> d1(keys1);
  device_buffer<std::uint64_t> d2(keys2);
  device_buffer<std::uint32_t> v2(iota_indices(n2));
  std::size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_pairs(nullptr, bytes, d2.data(), d2.data(), v2.data(), v2.data(), n2));
  device_buffer<unsigned char> temp2(bytes);
  CUDA_ASSERT(cudaDeviceSynchronize());
  // Both sorts in flight together: one allocating its temp storage, one with caller temp.
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_keys(d1.data(), d1.data(), n1, tilesort::less{}, s1));
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_pairs(temp2.data(), bytes, d2.data(), d2.data(), v2.data(), v2.data(), n2,
                                                    tilesort::less{}, s2));
  CUDA_ASSERT(cudaStreamSynchronize(s1));
  CUDA_ASSERT(cudaStreamSynchronize(s2));
  expect_stable_sorted(keys1, d1.download(), tilesort::less{});
  expect_stable_pairs(keys2, d2.download(), v2.download(), tilesort::less{});
  CUDA_ASSERT(cudaStreamDestroy(s1));
  CUDA_ASSERT(cudaStreamDestroy(s2));
}

TEST(MergeSort, CapturedInAGraph) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const std::int64_t n = small_run() ? 3 * policy_for<std::uint32_t, std::uint32_t>::tile_items + 1 : 1000003;
  const auto keys = make_keys<std::uint32_t>(n, distribution::random, seed);
  device_buffer<std::uint32_t> keys_in(keys), keys_out(n), values_in(iota_indices(n)), values_out(n);
  device_buffer<std::uint32_t> keys_out2(n);
  std::size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_pairs(nullptr, bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                                    values_out.data(), n));
  device_buffer<unsigned char> temp(bytes);
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  // Two-phase pairs (shared memory past 48 KB: sets the kernel attribute) and
  // the allocating keys overload (memory nodes) in one graph.
  const cudaError_t pairs_error =
      tilesort::merge_sort_pairs(temp.data(), bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                 values_out.data(), n, tilesort::less{}, stream);
  const cudaError_t keys_error =
      tilesort::merge_sort_keys(keys_in.data(), keys_out2.data(), n, tilesort::less{}, stream);
  const cudaError_t capture_error = cudaStreamEndCapture(stream, &graph);
  ASSERT_EQ(cudaSuccess, pairs_error);
  ASSERT_EQ(cudaSuccess, keys_error);
  ASSERT_EQ(cudaSuccess, capture_error);
  cudaGraphExec_t exec;
  CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < 2; ++launch) {
    keys_out.poison();
    keys_out2.poison();
    CUDA_ASSERT(cudaGraphLaunch(exec, stream));
    CUDA_ASSERT(cudaStreamSynchronize(stream));
    expect_stable_pairs(keys, keys_out.download(), values_out.download(), tilesort::less{});
    expect_stable_sorted(keys, keys_out2.download(), tilesort::less{});
  }
  CUDA_ASSERT(cudaGraphExecDestroy(exec));
  CUDA_ASSERT(cudaGraphDestroy(graph));
  CUDA_ASSERT(cudaStreamDestroy(stream));
}

// ------------------------------------------------------------------ errors
TEST(MergeSort, ErrorsLeaveEverythingUntouched) {
  REQUIRE_GPU();
  const std::int64_t n = 3 * policy_for<std::uint32_t, std::uint32_t>::tile_items + 5;  // needs temp storage
  const auto keys = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
  const auto values = iota_indices(n);
  guarded_buffer<std::uint32_t> keys_in(n), keys_out(n), values_in(n), values_out(n);
  keys_in.upload(keys);
  values_in.upload(values);
  std::size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_pairs(nullptr, bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                                    values_out.data(), n));
  std::size_t key_bytes = 0;
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_keys(nullptr, key_bytes, keys_in.data(), keys_out.data(), n));
  ASSERT_GT(bytes, key_bytes) << "pairs need room for values";
  guarded_buffer<unsigned char> temp(bytes);
  std::uint32_t* null = nullptr;
  const auto I = cudaErrorInvalidValue;
  std::size_t small = bytes - 1, zero = 0, enough = bytes;

  // Size queries with a bad n.
  std::size_t query = 12345;
  EXPECT_EQ(I, tilesort::merge_sort_keys(nullptr, query, keys_in.data(), keys_out.data(), -1));
  EXPECT_EQ(I, tilesort::merge_sort_pairs(nullptr, query, keys_in.data(), keys_out.data(), values_in.data(),
                                          values_out.data(), -7));
  // Two-phase.
  EXPECT_EQ(I, tilesort::merge_sort_keys(temp.data(), enough, keys_in.data(), keys_out.data(), -1));
  EXPECT_EQ(I, tilesort::merge_sort_keys(temp.data(), enough, null, keys_out.data(), n));
  EXPECT_EQ(I, tilesort::merge_sort_keys(temp.data(), enough, keys_in.data(), null, n));
  EXPECT_EQ(I, tilesort::merge_sort_keys(temp.data(), zero, keys_in.data(), keys_out.data(), n));
  EXPECT_EQ(I, tilesort::merge_sort_pairs(temp.data(), small, keys_in.data(), keys_out.data(), values_in.data(),
                                          values_out.data(), n));
  EXPECT_EQ(
      I, tilesort::merge_sort_pairs(temp.data(), enough, keys_in.data(), keys_out.data(), null, values_out.data(), n));
  EXPECT_EQ(
      I, tilesort::merge_sort_pairs(temp.data(), enough, keys_in.data(), keys_out.data(), values_in.data(), null, n));
  EXPECT_EQ(I, tilesort::merge_sort_pairs(temp.data(), enough, null, keys_out.data(), values_in.data(),
                                          values_out.data(), n));
  EXPECT_EQ(I, tilesort::merge_sort_pairs(temp.data(), enough, keys_in.data(), keys_out.data(), values_in.data(),
                                          values_out.data(), std::int64_t(-1) << 40));
  // Convenience overloads.
  EXPECT_EQ(I, tilesort::merge_sort_keys(keys_in.data(), keys_out.data(), -3));
  EXPECT_EQ(I, tilesort::merge_sort_keys(null, keys_out.data(), n));
  EXPECT_EQ(I, tilesort::merge_sort_keys(keys_in.data(), null, n));
  EXPECT_EQ(I, tilesort::merge_sort_pairs(keys_in.data(), keys_out.data(), null, values_out.data(), n));
  EXPECT_EQ(I, tilesort::merge_sort_pairs(keys_in.data(), keys_out.data(), values_in.data(), null, n));
  EXPECT_EQ(I, tilesort::merge_sort_pairs(keys_in.data(), keys_out.data(), values_in.data(), values_out.data(), -2));
  // One tile needs no temp bytes, but the reported minimum still applies.
  std::size_t one_tile_bytes = 0;
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_keys(nullptr, one_tile_bytes, keys_in.data(), keys_out.data(), 100));
  EXPECT_GE(one_tile_bytes, 1u);
  EXPECT_EQ(I, tilesort::merge_sort_keys(temp.data(), zero, keys_in.data(), keys_out.data(), 100));

  CUDA_EXPECT(cudaDeviceSynchronize());
  CUDA_EXPECT(cudaGetLastError());
  EXPECT_EQ(std::size_t(12345), query) << "a failed query must not set temp_bytes";
  EXPECT_TRUE(bitwise_equal(keys, keys_in.download())) << "keys_in changed";
  EXPECT_TRUE(bitwise_equal(values, values_in.download())) << "values_in changed";
  EXPECT_TRUE(keys_out.untouched() && values_out.untouched()) << "an output was written";
  EXPECT_TRUE(temp.untouched()) << "temp storage was written";
  EXPECT_TRUE(keys_in.guards_intact() && keys_out.guards_intact() && values_in.guards_intact() &&
              values_out.guards_intact() && temp.guards_intact());

  // Still fully usable afterwards.
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_pairs(temp.data(), enough, keys_in.data(), keys_out.data(),
                                                    values_in.data(), values_out.data(), n));
  CUDA_ASSERT(cudaDeviceSynchronize());
  expect_stable_pairs(keys, keys_out.download(), values_out.download(), tilesort::less{});
}

TEST(MergeSort, FailedAllocationLeavesEverythingUntouched) {
  REQUIRE_GPU();
  // The allocating overloads with n = 2^40 need terabytes of temp storage:
  // cudaMallocAsync fails before anything is launched, so the small real
  // buffers are never read past their end.
  const std::int64_t n = 4096;
  const std::int64_t huge = std::int64_t(1) << 40;
  const auto keys = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
  guarded_buffer<std::uint32_t> keys_in(n), keys_out(n), values_in(n), values_out(n);
  keys_in.upload(keys);
  values_in.upload(iota_indices(n));
  EXPECT_EQ(cudaErrorMemoryAllocation, tilesort::merge_sort_keys(keys_in.data(), keys_out.data(), huge));
  EXPECT_EQ(cudaErrorMemoryAllocation,
            tilesort::merge_sort_pairs(keys_in.data(), keys_out.data(), values_in.data(), values_out.data(), huge));
  EXPECT_EQ(cudaSuccess, cudaGetLastError()) << "the failed allocation must not linger as the last error";
  CUDA_EXPECT(cudaDeviceSynchronize());
  EXPECT_TRUE(bitwise_equal(keys, keys_in.download()));
  EXPECT_TRUE(bitwise_equal(iota_indices(n), values_in.download()));
  EXPECT_TRUE(keys_out.untouched() && values_out.untouched());
  // And the next sort works.
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_keys(keys_in.data(), keys_out.data(), n));
  CUDA_ASSERT(cudaDeviceSynchronize());
  expect_stable_sorted(keys, keys_out.download(), tilesort::less{});
}

// The allocating overloads take their temp storage from the device's current
// memory pool (cudaMallocAsync) and give all of it back: after a successful
// sort, a rejected call and a failed allocation, the pool holds exactly what
// it held before.
TEST(MergeSort, ConvenienceOverloadsLeakNothing) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  int device = 0;
  CUDA_ASSERT(cudaGetDevice(&device));
  cudaMemPool_t pool;
  CUDA_ASSERT(cudaDeviceGetMemPool(&pool, device));
  auto pool_used = [&] {
    std::uint64_t bytes = 0;
    EXPECT_EQ(cudaSuccess, cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &bytes));
    return bytes;
  };
  const std::int64_t t = policy_for<std::uint32_t, std::uint32_t>::tile_items;
  const std::int64_t n = small_run() ? 3 * t + 5 : 1000003;  // needs temp storage
  const auto keys = make_keys<std::uint32_t>(n, distribution::random, seed);
  device_buffer<std::uint32_t> keys_in(keys), keys_out(n), pair_keys(keys), values(iota_indices(n));
  std::uint32_t* null = nullptr;
  CUDA_ASSERT(cudaDeviceSynchronize());
  const std::uint64_t before = pool_used();
  EXPECT_EQ(cudaSuccess, tilesort::merge_sort_keys(keys_in.data(), keys_out.data(), n));
  EXPECT_EQ(cudaSuccess, tilesort::merge_sort_pairs(pair_keys.data(), pair_keys.data(), values.data(), values.data(), n));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::merge_sort_keys(null, keys_out.data(), n));
  EXPECT_EQ(cudaErrorMemoryAllocation,
            tilesort::merge_sort_keys(keys_in.data(), keys_out.data(), std::int64_t(1) << 40));
  EXPECT_EQ(cudaSuccess, cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_EQ(before, pool_used()) << "temp storage of the allocating overloads was not given back";
  expect_stable_sorted(keys, keys_out.download(), tilesort::less{});
  expect_stable_pairs(keys, pair_keys.download(), values.download(), tilesort::less{});
}

// ------------------------------------------------------------------ persistent k-way passes
// The k-way passes as the locality sort launches them for random keys: a
// skip counter, cut kernels on a capped grid (2 blocks here, each thread
// taking many lanes) and persistent merge kernels (3 blocks, each taking
// many tiles from a counter). Runs of tile_items keys sorted on the host are
// merged while the skip counter is 0, values the original indices
// (stability checked exactly); a nonzero skip counter leaves both buffers as
// they were.
template <typename Key, bool Pairs>
void check_persistent_kway_passes(std::int64_t runs_and_part) {
  using Value = std::conditional_t<Pairs, std::uint32_t, tilesort::detail::no_value>;
  using policy = tilesort::detail::merge_sort_policy_for<Key, Value>;
  const std::int64_t n = runs_and_part * policy::tile_items + 321;
  SCOPED_TRACE("n=" + std::to_string(n) + (Pairs ? " pairs" : " keys"));
  const std::vector<Key> keys = make_keys<Key>(static_cast<std::size_t>(n), distribution::random, fresh_seed());
  std::vector<std::uint32_t> index = iota_indices(keys.size());
  for (std::int64_t begin = 0; begin < n; begin += policy::tile_items) {
    const auto first = index.begin() + begin, last = index.begin() + std::min(n, begin + policy::tile_items);
    std::stable_sort(first, last, [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  }
  std::vector<Key> runs(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) runs[i] = keys[index[i]];
  const auto plan = tilesort::detail::make_kway_merge_sort_plan(n, policy::tile_items, policy::merge_ways,
                                                               policy::cut_stride, policy::cut_samples);
  ASSERT_GE(plan.merge_passes, 2);
  ASSERT_GT(plan.pass_shape(0).tiles(), 3 * 4);  // every block takes several tiles
  device_buffer<Key> k0(runs), k1(keys.size());
  device_buffer<std::uint32_t> v0(index), v1(keys.size());
  device_buffer<std::int64_t> cuts(static_cast<std::size_t>(plan.partition_count()));
  device_buffer<unsigned> skip(std::vector<unsigned>{7u});
  device_buffer<unsigned> taken(static_cast<std::size_t>(plan.merge_passes));
  Key* k[2] = {k0.data(), k1.data()};
  Value* v[2] = {reinterpret_cast<Value*>(Pairs ? v0.data() : nullptr),
                 reinterpret_cast<Value*>(Pairs ? v1.data() : nullptr)};
  CUDA_ASSERT((tilesort::detail::merge_sort_allow_kway_smem<policy, true, Key, Value, tilesort::less>()));
  const auto run_passes = [&] {
    taken.upload(std::vector<unsigned>(static_cast<std::size_t>(plan.merge_passes), 0u));
    for (int pass = 0; pass < plan.merge_passes; ++pass)
      CUDA_ASSERT((tilesort::detail::launch_kway_pass<policy, true>(
          plan.pass_shape(pass), k[pass & 1], k[(pass + 1) & 1], v[pass & 1], v[(pass + 1) & 1], cuts.data(),
          skip.data(), true, tilesort::less{}, 0, taken.data() + pass, {2, 3})));
    CUDA_ASSERT(cudaDeviceSynchronize());
  };
  k1.poison();
  run_passes();
  Key poison;
  std::memset(&poison, 0xA5, sizeof poison);
  for (const Key& key : k1.download()) ASSERT_TRUE(bytes_equal(poison, key)) << "a skipped pass wrote its destination";
  EXPECT_EQ(runs, k0.download()) << "a skipped pass wrote its source";
  skip.upload(std::vector<unsigned>{0u});
  run_passes();
  const int last = plan.merge_passes & 1;
  const std::vector<Key> out = last ? k1.download() : k0.download();
  if constexpr (Pairs) {
    expect_stable_pairs(keys, out, last ? v1.download() : v0.download(), tilesort::less{});
  } else {
    expect_stable_sorted(keys, out, tilesort::less{});
  }
}

TEST(MergeSortKway, PersistentPassesSkipOrMerge) {
  REQUIRE_GPU();
  check_persistent_kway_passes<std::uint32_t, false>(9);   // 4-way passes, 8192-key runs
  check_persistent_kway_passes<std::uint32_t, true>(17);   // 4-way, 4096
  check_persistent_kway_passes<std::uint64_t, false>(11);  // 8-way, 4096
}

// ------------------------------------------------------------------ past 2^31
__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

__global__ void fill_bytes(std::uint8_t* keys, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    keys[i] = static_cast<std::uint8_t>(mix(std::uint64_t(i) ^ seed) >> 56);
}

__global__ void fill_indices(std::uint32_t* values, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    values[i] = static_cast<std::uint32_t>(i);
}

__global__ void histogram_bytes(const std::uint8_t* keys, std::int64_t n, unsigned long long* bins) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    atomicAdd(&local[keys[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], static_cast<unsigned long long>(local[b]));
}

// Counts i with keys[i - 1] > keys[i]; with values (original indices) also
// checks that each output's value points at an input key equal to it and that
// equal keys keep increasing indices. Together with n outputs this proves an
// exact stable sort: indices are distinct, hence a permutation.
__global__ void count_violations(const std::uint8_t* keys, const std::uint32_t* values, const std::uint8_t* keys_in,
                                 std::int64_t n, unsigned long long* violations) {
  unsigned long long bad = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    if (i > 0 && keys[i - 1] > keys[i]) ++bad;
    if (values != nullptr) {
      const std::uint32_t v = values[i];
      if (v >= n || keys_in[v] != keys[i]) ++bad;
      if (i > 0 && keys[i - 1] == keys[i] && values[i - 1] >= v) ++bad;
    }
  }
  if (bad) atomicAdd(violations, bad);
}

bool enough_memory(std::size_t need, std::string& why) {
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return false;
  if (free_bytes < need + (std::size_t(1) << 30)) {
    why = "needs " + std::to_string(need >> 20) + " MiB of device memory, " + std::to_string(free_bytes >> 20) +
          " MiB free";
    return false;
  }
  return true;
}

constexpr std::int64_t past_2_31 = (std::int64_t(1) << 31) + 1000;

TEST(MergeSortHuge, KeysPast2To31) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "skipped in the small (sanitizer) run";
  const std::int64_t n = past_2_31;
  std::size_t temp_bytes = 0;
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_keys<std::uint8_t>(nullptr, temp_bytes, nullptr, nullptr, n));
  std::string why;
  if (!enough_memory(2 * std::size_t(n) + temp_bytes, why)) GTEST_SKIP() << why;
  std::uint8_t *in = nullptr, *out = nullptr;
  void* temp = nullptr;
  unsigned long long* counters = nullptr;  // 256 bins in, 256 bins out, violations
  CUDA_ASSERT(cudaMalloc(&in, n));
  CUDA_ASSERT(cudaMalloc(&out, n));
  CUDA_ASSERT(cudaMalloc(&temp, temp_bytes));
  CUDA_ASSERT(cudaMalloc(&counters, 513 * sizeof(unsigned long long)));
  CUDA_ASSERT(cudaMemset(counters, 0, 513 * sizeof(unsigned long long)));
  fill_bytes<<<1024, 256>>>(in, n, fresh_seed());
  histogram_bytes<<<1024, 256>>>(in, n, counters);
  CUDA_ASSERT_LAUNCH();
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_keys(temp, temp_bytes, in, out, n));
  CUDA_ASSERT_LAUNCH();
  histogram_bytes<<<1024, 256>>>(out, n, counters + 256);
  count_violations<<<1024, 256>>>(out, nullptr, nullptr, n, counters + 512);
  CUDA_ASSERT_LAUNCH();
  std::vector<unsigned long long> host(513);
  CUDA_ASSERT(cudaMemcpy(host.data(), counters, host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost));
  unsigned long long total = 0;
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(host[b], host[256 + b]) << "key " << b << ": count changed";
    total += host[256 + b];
  }
  EXPECT_EQ(static_cast<unsigned long long>(n), total);
  EXPECT_EQ(0u, host[512]) << "output not sorted";
  // The last keys are the largest (the tail tile of the last merge pass).
  std::uint8_t last = 0;
  CUDA_ASSERT(cudaMemcpy(&last, out + n - 1, 1, cudaMemcpyDeviceToHost));
  int largest = 255;
  while (largest > 0 && host[largest] == 0) --largest;
  EXPECT_EQ(largest, last);
  CUDA_EXPECT(cudaFree(in));
  CUDA_EXPECT(cudaFree(out));
  CUDA_EXPECT(cudaFree(temp));
  CUDA_EXPECT(cudaFree(counters));
}

TEST(MergeSortHuge, PairsPast2To31InPlace) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "skipped in the small (sanitizer) run";
  const std::int64_t n = past_2_31;
  std::size_t temp_bytes = 0;
  ASSERT_EQ(cudaSuccess, (tilesort::merge_sort_pairs<std::uint8_t, std::uint32_t>(nullptr, temp_bytes, nullptr, nullptr,
                                                                                  nullptr, nullptr, n)));
  std::string why;
  if (!enough_memory(2 * std::size_t(n) + 4 * std::size_t(n) + temp_bytes, why)) GTEST_SKIP() << why;
  std::uint8_t *keys = nullptr, *original = nullptr;
  std::uint32_t* values = nullptr;
  void* temp = nullptr;
  unsigned long long* violations = nullptr;
  CUDA_ASSERT(cudaMalloc(&keys, n));
  CUDA_ASSERT(cudaMalloc(&original, n));
  CUDA_ASSERT(cudaMalloc(&values, n * sizeof(std::uint32_t)));
  CUDA_ASSERT(cudaMalloc(&temp, temp_bytes));
  CUDA_ASSERT(cudaMalloc(&violations, sizeof(unsigned long long)));
  CUDA_ASSERT(cudaMemset(violations, 0, sizeof(unsigned long long)));
  fill_bytes<<<1024, 256>>>(keys, n, fresh_seed());
  fill_indices<<<1024, 256>>>(values, n);
  CUDA_ASSERT_LAUNCH();
  CUDA_ASSERT(cudaMemcpy(original, keys, n, cudaMemcpyDeviceToDevice));
  ASSERT_EQ(cudaSuccess, tilesort::merge_sort_pairs(temp, temp_bytes, keys, keys, values, values, n));
  CUDA_ASSERT_LAUNCH();
  count_violations<<<1024, 256>>>(keys, values, original, n, violations);
  CUDA_ASSERT_LAUNCH();
  unsigned long long bad = 1;
  CUDA_ASSERT(cudaMemcpy(&bad, violations, sizeof(bad), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0u, bad) << "not an exact stable sort (unsorted, lost or unstable pairs)";
  // The very last pair: index n - 1 holds the largest key, the latest of its equals.
  std::uint32_t last_value = 0;
  CUDA_ASSERT(cudaMemcpy(&last_value, values + n - 1, sizeof(last_value), cudaMemcpyDeviceToHost));
  EXPECT_LT(static_cast<std::int64_t>(last_value), n);
  CUDA_EXPECT(cudaFree(keys));
  CUDA_EXPECT(cudaFree(original));
  CUDA_EXPECT(cudaFree(values));
  CUDA_EXPECT(cudaFree(temp));
  CUDA_EXPECT(cudaFree(violations));
}

}  // namespace
