// tests/common/device_sort_cases.cuh — the checks every stable device sort
// with the common device shape (two-phase + convenience, keys and pairs) must
// pass, written once for any such sort. A test file names the sort with a
// `Sorter`: a type with static keys(...) and pairs(...) that forward to its
// entry points (both overload sets). Used by tests/gpu/sample_sort.cu and
// tests/gpu/sort.cu.
//
// Beyond test_util.cuh's distributions: the inputs that break sample sorts
// (two distinct values, organ pipe, sawtooth, Zipf, almost every key equal
// so that all splitters are equal, one outlier among equal keys).
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "test_util.cuh"

namespace tilesort_test {

// ------------------------------------------------------------------ patterns
enum class pattern { two_distinct, organ_pipe, sawtooth, zipf, splitters_equal, single_outlier };
inline const pattern all_patterns[] = {pattern::two_distinct, pattern::organ_pipe,      pattern::sawtooth,
                                       pattern::zipf,         pattern::splitters_equal, pattern::single_outlier};
inline const char* name(pattern p) {
  switch (p) {
    case pattern::two_distinct: return "two_distinct";
    case pattern::organ_pipe: return "organ_pipe";
    case pattern::sawtooth: return "sawtooth";
    case pattern::zipf: return "zipf";
    case pattern::splitters_equal: return "splitters_equal";
    case pattern::single_outlier: return "single_outlier";
  }
  return "?";
}

// A key of rank v (order-preserving for the ranks the patterns use, below
// 2^11 for the narrow types); `noise` fills what the order ignores
// (user_key::minor), so stability stays visible.
template <typename Key>
Key key_of_rank(std::uint64_t v, std::uint64_t noise) {
  if constexpr (std::is_same_v<Key, user_key>) {
    return user_key{static_cast<std::int32_t>(v), static_cast<std::uint16_t>(noise), 0};
  } else if constexpr (std::is_same_v<Key, __half>) {
    return __float2half(static_cast<float>(v % 2048));
  } else if constexpr (std::is_same_v<Key, __nv_bfloat16>) {
    return __float2bfloat16(static_cast<float>(v % 256));
  } else {
    return static_cast<Key>(v);
  }
}

template <typename Key>
std::vector<Key> make_pattern(std::size_t n, pattern p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Key> keys(n);
  // Zipf (s = 1) over 1000 ranks by inversion of the cumulative weights.
  std::vector<double> cumulative;
  if (p == pattern::zipf) {
    double sum = 0;
    for (int r = 1; r <= 1000; ++r) cumulative.push_back(sum += 1.0 / r);
  }
  const std::size_t outlier = n > 0 ? rng() % n : 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t v = 0;
    switch (p) {
      case pattern::two_distinct: v = rng() % 2 ? 100 : 7; break;
      case pattern::organ_pipe: v = std::min(i, n - 1 - i) % 2000; break;
      case pattern::sawtooth: v = i % 1000; break;
      case pattern::zipf: {
        const double u = std::uniform_real_distribution<double>(0, cumulative.back())(rng);
        v = static_cast<std::uint64_t>(std::lower_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
        break;
      }
      case pattern::splitters_equal: v = rng() % 100 < 98 ? 500 : rng() % 1000; break;
      case pattern::single_outlier: v = i == outlier ? 1999 : 3; break;
    }
    keys[i] = key_of_rank<Key>(v, rng());
  }
  return keys;
}

// ------------------------------------------------------------------ runs
struct run_options {
  bool in_place = false;
  bool convenience = false;  // the overload that allocates its own temp storage
  cudaStream_t stream = 0;
};

inline std::string describe(std::int64_t n, const run_options& o) {
  return "n=" + std::to_string(n) + (o.in_place ? " in place" : " copy") + (o.convenience ? " convenience" : "");
}

template <typename Sorter, typename Key, typename Compare>
std::vector<Key> device_sort_keys(const std::vector<Key>& in, Compare comp, const run_options& o) {
  const auto n = static_cast<std::int64_t>(in.size());
  const std::vector<std::uint32_t> no_values;
  sort_buffers<Key, std::uint32_t> b(in, no_values);
  Key* dst = b.keys_out(o.in_place);
  const Key* src = b.keys_in();
  run_device_sort(
      o.convenience, o.stream, [&] { return Sorter::keys(src, dst, n, comp, o.stream); },
      [&](void* temp, std::size_t& bytes) { return Sorter::keys(temp, bytes, src, dst, n, comp, o.stream); });
  return b.result(o.in_place).first;
}

template <typename Sorter, typename Key, typename Value, typename Compare>
std::pair<std::vector<Key>, std::vector<Value>> device_sort_pairs(const std::vector<Key>& keys_in,
                                                                  const std::vector<Value>& values_in, Compare comp,
                                                                  const run_options& o) {
  const auto n = static_cast<std::int64_t>(keys_in.size());
  sort_buffers<Key, Value> b(keys_in, values_in);
  Key* kdst = b.keys_out(o.in_place);
  Value* vdst = b.values_out(o.in_place);
  const Key* ksrc = b.keys_in();
  const Value* vsrc = b.values_in();
  run_device_sort(
      o.convenience, o.stream, [&] { return Sorter::pairs(ksrc, kdst, vsrc, vdst, n, comp, o.stream); },
      [&](void* temp, std::size_t& bytes) {
        return Sorter::pairs(temp, bytes, ksrc, kdst, vsrc, vdst, n, comp, o.stream);
      });
  return b.result(o.in_place);
}

template <typename Sorter, typename Key, typename Compare>
void check_keys(const std::vector<Key>& in, Compare comp, const run_options& o) {
  SCOPED_TRACE(describe(static_cast<std::int64_t>(in.size()), o));
  expect_stable_sorted(in, device_sort_keys<Sorter>(in, comp, o), comp);
}

// Values are the original indices: the output must equal std::stable_sort's permutation.
template <typename Sorter, typename Key, typename Compare>
void check_pairs(const std::vector<Key>& in, Compare comp, const run_options& o) {
  SCOPED_TRACE(describe(static_cast<std::int64_t>(in.size()), o) + " pairs");
  const auto [keys, index] = device_sort_pairs<Sorter>(in, iota_indices(in.size()), comp, o);
  expect_stable_pairs(in, keys, index, comp);
}

template <typename Sorter, typename Key, bool Pairs>
void check_sorted(const std::vector<Key>& in, const run_options& o) {
  const typename comparator_for<Key>::type comp{};
  if constexpr (Pairs) {
    check_pairs<Sorter>(in, comp, o);
  } else {
    check_keys<Sorter>(in, comp, o);
  }
}

// Random keys at each size, alternating copy and in place.
template <typename Sorter, typename Key, bool Pairs>
void check_sizes(const std::vector<std::int64_t>& sizes) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  int i = 0;
  for (const std::int64_t n : sizes) {
    run_options o;
    o.in_place = (i++ % 2) == (Pairs ? 0 : 1);
    check_sorted<Sorter, Key, Pairs>(
        make_keys<Key>(n, distribution::random, seed + n, typename comparator_for<Key>::type{}), o);
  }
}

// test_util's distributions and the patterns above at each size, copy and in place.
template <typename Sorter, typename Key, bool Pairs>
void check_distributions(const std::vector<std::int64_t>& sizes) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  // Under racecheck: the largest size only, each input once (in place where
  // the input's index is odd).
  const bool racecheck = racecheck_run();
  int index = 0;
  for (const std::int64_t n : sizes) {
    if (racecheck && n != sizes.back()) continue;
    const auto check = [&](const std::vector<Key>& keys) {
      const bool in_place = (index++ % 2) == 1;
      if (!racecheck || !in_place) check_sorted<Sorter, Key, Pairs>(keys, run_options{false, false, 0});
      if (!racecheck || in_place) check_sorted<Sorter, Key, Pairs>(keys, run_options{true, false, 0});
    };
    for (const distribution d : all_distributions) {
      SCOPED_TRACE(name(d));
      check(make_keys<Key>(n, d, seed + n, typename comparator_for<Key>::type{}));
    }
    for (const pattern p : all_patterns) {
      SCOPED_TRACE(name(p));
      check(make_pattern<Key>(n, p, seed + n));
    }
  }
}

// Orders by the low byte only: many distinct keys compare equal, so a keys-only
// sort shows its stability bit for bit.
struct low_byte_order {
  __host__ __device__ bool operator()(std::uint32_t a, std::uint32_t b) const { return (a & 0xFF) < (b & 0xFF); }
};

template <typename Sorter>
void check_comparators(const std::vector<std::int64_t>& sizes) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  for (const std::int64_t n : sizes) {
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, false, 0};
      check_keys<Sorter>(make_keys<std::uint32_t>(n, distribution::random, seed + n), tilesort::greater{}, o);
      check_pairs<Sorter>(make_keys<std::uint32_t>(n, distribution::few_distinct, seed + n), tilesort::greater{}, o);
      check_keys<Sorter>(make_keys<float>(n, distribution::nan_and_zero, seed + n), tilesort::greater{}, o);
      check_pairs<Sorter>(make_keys<double>(n, distribution::nan_and_zero, seed + n), tilesort::less{}, o);
      check_keys<Sorter>(make_keys<std::uint32_t>(n, distribution::random, seed + n), low_byte_order{}, o);
      check_pairs<Sorter>(make_keys<std::uint32_t>(n, distribution::random, seed + n), low_byte_order{}, o);
    }
  }
}

// A 16-byte payload, its halves tied so that a torn copy shows.
struct wide_payload {
  std::uint64_t index;
  std::uint64_t check;
};

template <typename Sorter>
void check_wide_payloads(const std::vector<std::int64_t>& sizes) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  for (const std::int64_t n : sizes) {
    const auto keys = make_keys<std::uint32_t>(n, distribution::few_distinct, seed + n);
    for (const bool in_place : {false, true}) {
      const run_options o{in_place, false, 0};
      SCOPED_TRACE(describe(n, o));
      std::vector<wide_payload> wide(n);
      for (std::int64_t i = 0; i < n; ++i) wide[i] = {std::uint64_t(i), ~std::uint64_t(i) * 0x9E3779B97F4A7C15ull};
      const auto [sorted_keys, values] = device_sort_pairs<Sorter>(keys, wide, tilesort::less{}, o);
      std::vector<std::uint32_t> index(n);
      for (std::int64_t i = 0; i < n; ++i) {
        index[i] = static_cast<std::uint32_t>(values[i].index);
        ASSERT_EQ(~values[i].index * 0x9E3779B97F4A7C15ull, values[i].check) << "payload torn at " << i;
      }
      expect_stable_pairs(keys, sorted_keys, index, tilesort::less{});
    }
  }
}

// n == 0 takes null pointers; n == 1 copies or does nothing.
template <typename Sorter>
void check_zero_and_one() {
  std::size_t bytes = 0;
  std::uint32_t* none = nullptr;
  const std::uint32_t* none_in = nullptr;
  EXPECT_EQ(cudaSuccess, Sorter::keys(static_cast<void*>(nullptr), bytes, none_in, none, std::int64_t(0),
                                      tilesort::less{}, cudaStream_t(0)));
  EXPECT_GE(bytes, 1u) << "temp_bytes must never be 0";
  device_buffer<unsigned char> temp(bytes);
  EXPECT_EQ(cudaSuccess, Sorter::keys(static_cast<void*>(temp.data()), bytes, none_in, none, std::int64_t(0),
                                      tilesort::less{}, cudaStream_t(0)));
  EXPECT_EQ(cudaSuccess, Sorter::pairs(static_cast<void*>(temp.data()), bytes, none_in, none, none_in, none,
                                       std::int64_t(0), tilesort::less{}, cudaStream_t(0)));
  EXPECT_EQ(cudaSuccess, Sorter::keys(none_in, none, std::int64_t(0), tilesort::less{}, cudaStream_t(0)));
  EXPECT_EQ(cudaSuccess, Sorter::pairs(none_in, none, none_in, none, std::int64_t(0), tilesort::less{}, cudaStream_t(0)));
  CUDA_EXPECT(cudaDeviceSynchronize());
  for (const bool in_place : {false, true}) {
    check_keys<Sorter>(std::vector<std::uint32_t>{42u}, tilesort::less{}, run_options{in_place, false, 0});
    check_pairs<Sorter>(std::vector<double>{-1.5}, tilesort::less{}, run_options{in_place, true, 0});
  }
}

// Two-phase pairs and the allocating keys overload captured in one graph,
// replayed twice.
template <typename Sorter>
void check_graph_capture(std::int64_t n) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed) + " n=" + std::to_string(n));
  const auto keys = make_keys<std::uint32_t>(n, distribution::random, seed);
  device_buffer<std::uint32_t> keys_in(keys), keys_out(n), values_in(iota_indices(n)), values_out(n), keys_out2(n);
  const std::uint32_t* kin = keys_in.data();
  const std::uint32_t* vin = values_in.data();
  std::size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, Sorter::pairs(static_cast<void*>(nullptr), bytes, kin, keys_out.data(), vin,
                                       values_out.data(), n, tilesort::less{}, cudaStream_t(0)));
  device_buffer<unsigned char> temp(bytes);
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t pairs_error = Sorter::pairs(static_cast<void*>(temp.data()), bytes, kin, keys_out.data(), vin,
                                                values_out.data(), n, tilesort::less{}, stream);
  const cudaError_t keys_error = Sorter::keys(kin, keys_out2.data(), n, tilesort::less{}, stream);
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

// Bad arguments return cudaErrorInvalidValue and write nothing. n needs temp storage.
template <typename Sorter>
void check_errors(std::int64_t n) {
  const auto keys = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
  const auto values = iota_indices(n);
  guarded_buffer<std::uint32_t> keys_in(n), keys_out(n), values_in(n), values_out(n);
  keys_in.upload(keys);
  values_in.upload(values);
  const std::uint32_t* kin = keys_in.data();
  const std::uint32_t* vin = values_in.data();
  std::uint32_t* kout = keys_out.data();
  std::uint32_t* vout = values_out.data();
  const auto less = tilesort::less{};
  const cudaStream_t s = 0;
  void* no_temp = nullptr;
  std::size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, Sorter::pairs(no_temp, bytes, kin, kout, vin, vout, n, less, s));
  guarded_buffer<unsigned char> temp(bytes);
  void* t = temp.data();
  std::uint32_t* null = nullptr;
  const std::uint32_t* null_in = nullptr;
  const auto I = cudaErrorInvalidValue;
  std::size_t small = bytes - 1, zero = 0, enough = bytes, query = 12345;
  EXPECT_EQ(I, Sorter::keys(no_temp, query, kin, kout, std::int64_t(-1), less, s));
  EXPECT_EQ(I, Sorter::pairs(no_temp, query, kin, kout, vin, vout, std::int64_t(-7), less, s));
  EXPECT_EQ(I, Sorter::keys(t, enough, kin, kout, std::int64_t(-1), less, s));
  EXPECT_EQ(I, Sorter::keys(t, enough, null_in, kout, n, less, s));
  EXPECT_EQ(I, Sorter::keys(t, enough, kin, null, n, less, s));
  EXPECT_EQ(I, Sorter::keys(t, zero, kin, kout, n, less, s));
  EXPECT_EQ(I, Sorter::pairs(t, small, kin, kout, vin, vout, n, less, s));
  EXPECT_EQ(I, Sorter::pairs(t, enough, kin, kout, null_in, vout, n, less, s));
  EXPECT_EQ(I, Sorter::pairs(t, enough, kin, kout, vin, null, n, less, s));
  EXPECT_EQ(I, Sorter::pairs(t, enough, null_in, kout, vin, vout, n, less, s));
  EXPECT_EQ(I, Sorter::keys(kin, kout, std::int64_t(-3), less, s));
  EXPECT_EQ(I, Sorter::keys(null_in, kout, n, less, s));
  EXPECT_EQ(I, Sorter::pairs(kin, kout, null_in, vout, n, less, s));
  EXPECT_EQ(I, Sorter::pairs(kin, kout, vin, vout, std::int64_t(-2), less, s));
  EXPECT_EQ(cudaSuccess, cudaGetLastError()) << "no error may linger";
  CUDA_EXPECT(cudaDeviceSynchronize());
  EXPECT_EQ(std::size_t(12345), query) << "a failed query must not set temp_bytes";
  EXPECT_TRUE(bitwise_equal(keys, keys_in.download())) << "keys_in changed";
  EXPECT_TRUE(bitwise_equal(values, values_in.download())) << "values_in changed";
  EXPECT_TRUE(keys_out.untouched() && values_out.untouched()) << "an output was written";
  EXPECT_TRUE(temp.untouched()) << "temp storage was written";
  EXPECT_TRUE(keys_in.guards_intact() && keys_out.guards_intact() && values_in.guards_intact() &&
              values_out.guards_intact() && temp.guards_intact());
  ASSERT_EQ(cudaSuccess, Sorter::pairs(t, enough, kin, kout, vin, vout, n, less, s));  // still usable
  CUDA_ASSERT(cudaDeviceSynchronize());
  expect_stable_pairs(keys, keys_out.download(), values_out.download(), tilesort::less{});
}

// The allocating overloads with n = 2^40 fail their allocation before
// anything is launched: cudaErrorMemoryAllocation, nothing written, no error
// left behind. (Kept apart: the sanitizer runs leave it out.)
template <typename Sorter>
void check_failed_allocation() {
  const std::int64_t n = 4096;
  const auto keys = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
  guarded_buffer<std::uint32_t> keys_in(n), keys_out(n), values_in(n), values_out(n);
  keys_in.upload(keys);
  values_in.upload(iota_indices(n));
  const std::uint32_t* kin = keys_in.data();
  const std::uint32_t* vin = values_in.data();
  const std::int64_t huge = std::int64_t(1) << 40;
  EXPECT_EQ(cudaErrorMemoryAllocation, Sorter::keys(kin, keys_out.data(), huge, tilesort::less{}, cudaStream_t(0)));
  EXPECT_EQ(cudaErrorMemoryAllocation,
            Sorter::pairs(kin, keys_out.data(), vin, values_out.data(), huge, tilesort::less{}, cudaStream_t(0)));
  EXPECT_EQ(cudaSuccess, cudaGetLastError()) << "the failed allocation must not linger as the last error";
  CUDA_EXPECT(cudaDeviceSynchronize());
  EXPECT_TRUE(bitwise_equal(keys, keys_in.download()));
  EXPECT_TRUE(keys_out.untouched() && values_out.untouched());
}

// ------------------------------------------------------------------ past 2^31
// Byte keys (a Fibonacci hash of the index), checked on the device: the
// output is sorted and every key's count is unchanged.
__global__ void huge_fill(std::uint8_t* keys, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    keys[i] = static_cast<std::uint8_t>(((std::uint64_t(i) ^ seed) * 0x9E3779B97F4A7C15ull) >> 56);
}

// counts[0..255] += histogram of keys; counts[256] += out-of-order neighbours.
__global__ void huge_census(const std::uint8_t* keys, std::int64_t n, unsigned long long* counts) {
  __shared__ unsigned int local[257];
  for (int b = threadIdx.x; b < 257; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    atomicAdd(&local[keys[i]], 1u);
    if (i > 0 && keys[i - 1] > keys[i]) atomicAdd(&local[256], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 257; b += blockDim.x) atomicAdd(&counts[b], static_cast<unsigned long long>(local[b]));
}

template <typename Sorter>
void check_keys_past_2_31() {
  const std::int64_t n = (std::int64_t(1) << 31) + 1000;
  std::size_t temp_bytes = 0;
  const std::uint8_t* none = nullptr;
  ASSERT_EQ(cudaSuccess, Sorter::keys(static_cast<void*>(nullptr), temp_bytes, none, const_cast<std::uint8_t*>(none),
                                      n, tilesort::less{}, cudaStream_t(0)));
  std::size_t free_bytes = 0, total = 0;
  CUDA_ASSERT(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < 2 * std::size_t(n) + temp_bytes + (std::size_t(1) << 30)) GTEST_SKIP() << "not enough device memory";
  std::uint8_t *in = nullptr, *out = nullptr;
  void* temp = nullptr;
  unsigned long long* counts = nullptr;
  CUDA_ASSERT(cudaMalloc(&in, n));
  CUDA_ASSERT(cudaMalloc(&out, n));
  CUDA_ASSERT(cudaMalloc(&temp, temp_bytes));
  CUDA_ASSERT(cudaMalloc(&counts, 2 * 257 * sizeof(unsigned long long)));
  CUDA_ASSERT(cudaMemset(counts, 0, 2 * 257 * sizeof(unsigned long long)));
  huge_fill<<<1024, 256>>>(in, n, fresh_seed());
  huge_census<<<1024, 256>>>(in, n, counts);
  CUDA_ASSERT_LAUNCH();
  ASSERT_EQ(cudaSuccess, Sorter::keys(temp, temp_bytes, static_cast<const std::uint8_t*>(in), out, n,
                                      tilesort::less{}, cudaStream_t(0)));
  CUDA_ASSERT_LAUNCH();
  huge_census<<<1024, 256>>>(out, n, counts + 257);
  CUDA_ASSERT_LAUNCH();
  std::vector<unsigned long long> host(2 * 257);
  CUDA_ASSERT(cudaMemcpy(host.data(), counts, host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost));
  for (int b = 0; b < 256; ++b) EXPECT_EQ(host[b], host[257 + b]) << "key " << b << ": count changed";
  EXPECT_EQ(0u, host[257 + 256]) << "output not sorted";
  CUDA_EXPECT(cudaFree(in));
  CUDA_EXPECT(cudaFree(out));
  CUDA_EXPECT(cudaFree(temp));
  CUDA_EXPECT(cudaFree(counts));
}

}  // namespace tilesort_test
