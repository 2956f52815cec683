// tests/common/test_util.cuh — what every tilesort test needs: CUDA checks, a
// GPU-presence guard, device buffers, input generators for every key type and
// distribution, and CPU reference checks (sorted, permutation, stable).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tilesort/comparators.cuh>

#define CUDA_ASSERT(expr) ASSERT_EQ(cudaSuccess, (expr)) << #expr << ": " << cudaGetErrorString(expr)
#define CUDA_EXPECT(expr) EXPECT_EQ(cudaSuccess, (expr)) << #expr

// Launch check: the launch itself and the kernel's completion.
#define CUDA_ASSERT_LAUNCH()                     \
  do {                                           \
    CUDA_ASSERT(cudaGetLastError());             \
    CUDA_ASSERT(cudaDeviceSynchronize());        \
  } while (0)

namespace tilesort_test {

inline bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// Whether the environment variable `name` is set to 1.
inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] == '1';
}

// TILESORT_TEST_SMALL=1 marks the compute-sanitizer run: tests keep their
// sizes small (at most a few tiles) and skip the huge cases.
inline bool small_run() { return env_flag("TILESORT_TEST_SMALL"); }

// TILESORT_TEST_RACECHECK=1 marks the racecheck run (with TILESORT_TEST_SMALL):
// racecheck costs tens of seconds per sort of a few tiles, so the tests that
// repeat the same kernels on many inputs keep one size and one run of each.
inline bool racecheck_run() { return env_flag("TILESORT_TEST_RACECHECK"); }

// __ballot_sync over a group of Ways lanes, on the host: every member's
// predicate, one after the other (for the multi-lane merge-path searches).
template <int Ways>
struct host_ballot {
  template <typename Pred>
  __host__ __device__ unsigned operator()(const Pred& pred) const {
    unsigned mask = 0;
    for (int member = 0; member < Ways; ++member)
      if (pred(member)) mask |= 1u << member;
    return mask;
  }
};

}  // namespace tilesort_test

// First line of every GPU test: skip with a clear message where there is no device.
#define REQUIRE_GPU()                                                                          \
  do {                                                                                         \
    if (!tilesort_test::have_gpu())                                                            \
      GTEST_SKIP() << "no CUDA device: GPU test skipped (run scripts/gpu-check.sh on a GPU machine)"; \
  } while (0)

namespace tilesort_test {

// ---------------------------------------------------------------- buffers
template <typename T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t n) : n_(n) {
    if (n > 0 && cudaMalloc(&ptr_, n * sizeof(T)) != cudaSuccess) {
      ptr_ = nullptr;
      ADD_FAILURE() << "cudaMalloc of " << n * sizeof(T) << " bytes failed";
    }
  }
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) { upload(host); }
  ~device_buffer() {
    if (ptr_) cudaFree(ptr_);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  T* data() const { return ptr_; }
  std::size_t size() const { return n_; }
  // upload and poison finish on the device before they return: the sorts
  // under test may run on a non-blocking stream, which does not wait for the
  // legacy stream that cudaMemcpy/cudaMemset use (a pageable upload may
  // return before its last DMA lands; a memset returns at once). Without the
  // wait a sort could read half-uploaded keys, or a poison land on its output.
  void upload(const std::vector<T>& host) {
    EXPECT_EQ(cudaSuccess, cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    EXPECT_EQ(cudaSuccess, cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  // Fill with a byte pattern so that unwritten outputs are visible.
  void poison() {
    EXPECT_EQ(cudaSuccess, cudaMemset(ptr_, 0xA5, n_ * sizeof(T)));
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

// A device allocation with `guard` poisoned elements before and after [0, n):
// a kernel that writes out of bounds, or writes where it must not, shows.
template <typename T>
class guarded_buffer {
 public:
  static constexpr std::size_t guard = 64;
  explicit guarded_buffer(std::size_t n) : n_(n), storage_(n + 2 * guard) { storage_.poison(); }
  T* data() const { return storage_.data() + guard; }
  void upload(const std::vector<T>& host) {  // finished on the device on return, as device_buffer::upload
    if (!host.empty()) CUDA_EXPECT(cudaMemcpy(data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_EXPECT(cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_ > 0) CUDA_EXPECT(cudaMemcpy(host.data(), data(), n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  bool guards_intact() const {
    std::vector<unsigned char> head(guard * sizeof(T)), tail(guard * sizeof(T));
    CUDA_EXPECT(cudaMemcpy(head.data(), storage_.data(), head.size(), cudaMemcpyDeviceToHost));
    CUDA_EXPECT(cudaMemcpy(tail.data(), data() + n_, tail.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < head.size(); ++i)
      if (head[i] != 0xA5 || tail[i] != 0xA5) return false;
    return true;
  }
  // Still the poison pattern everywhere in [0, n): nothing was written.
  bool untouched() const {
    std::vector<unsigned char> bytes(n_ * sizeof(T));
    if (n_ > 0) CUDA_EXPECT(cudaMemcpy(bytes.data(), data(), bytes.size(), cudaMemcpyDeviceToHost));
    for (unsigned char b : bytes)
      if (b != 0xA5) return false;
    return true;
  }

 private:
  std::size_t n_;
  device_buffer<T> storage_;
};

template <typename T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Guarded input and output buffers of one device sort of keys (and values;
// none when `values` is empty), and the checks every such run ends with. The
// host vectors must outlive this object.
template <typename Key, typename Value>
class sort_buffers {
 public:
  sort_buffers(const std::vector<Key>& keys, const std::vector<Value>& values)
      : keys_host_(keys),
        values_host_(values),
        keys_in_(keys.size()),
        keys_out_(keys.size()),
        values_in_(values.size()),
        values_out_(values.size()) {
    keys_in_.upload(keys);
    values_in_.upload(values);
  }
  Key* keys_in() const { return keys_in_.data(); }
  Value* values_in() const { return values_in_.data(); }
  Key* keys_out(bool in_place) const { return in_place ? keys_in_.data() : keys_out_.data(); }
  Value* values_out(bool in_place) const { return in_place ? values_in_.data() : values_out_.data(); }

  // After the sort, its stream synchronised: nothing was written outside
  // [0, n); in place, the separate outputs were not written; out of place,
  // the inputs are unchanged. Returns the keys and values the caller sees.
  std::pair<std::vector<Key>, std::vector<Value>> result(bool in_place) const {
    EXPECT_TRUE(keys_in_.guards_intact() && keys_out_.guards_intact() && values_in_.guards_intact() &&
                values_out_.guards_intact())
        << "a write outside [0, n)";
    if (in_place) {
      EXPECT_TRUE(keys_out_.untouched() && values_out_.untouched()) << "in place, an unused output was written";
      return {keys_in_.download(), values_in_.download()};
    }
    EXPECT_TRUE(bitwise_equal(keys_host_, keys_in_.download())) << "keys_in was modified";
    EXPECT_TRUE(bitwise_equal(values_host_, values_in_.download())) << "values_in was modified";
    return {keys_out_.download(), values_out_.download()};
  }

 private:
  const std::vector<Key>& keys_host_;
  const std::vector<Value>& values_host_;
  guarded_buffer<Key> keys_in_, keys_out_;
  guarded_buffer<Value> values_in_, values_out_;
};

// Runs one device sort the two ways a caller can: `convenience()` (the
// overload that allocates its own temp storage), or `two_phase(temp, bytes)`
// as a size query (temp == nullptr) and then the sort with poisoned temp
// storage of that size. Waits for `stream` (before the temp storage is freed)
// and checks that no error is left behind.
template <typename Convenience, typename TwoPhase>
void run_device_sort(bool convenience, cudaStream_t stream, Convenience&& convenience_call, TwoPhase&& two_phase) {
  if (convenience) {
    EXPECT_EQ(cudaSuccess, convenience_call());
  } else {
    std::size_t bytes = 0;
    EXPECT_EQ(cudaSuccess, two_phase(nullptr, bytes));
    EXPECT_GE(bytes, 1u) << "temp_bytes must never be 0";
    device_buffer<unsigned char> temp(bytes);
    temp.poison();
    EXPECT_EQ(cudaSuccess, two_phase(temp.data(), bytes));
    CUDA_EXPECT(cudaStreamSynchronize(stream));  // before temp is freed
  }
  CUDA_EXPECT(cudaStreamSynchronize(stream));
  CUDA_EXPECT(cudaGetLastError());
}

// ---------------------------------------------------------------- key types
// A user key: ordered by `major` only, so equal keys can differ in `minor`
// (that is what makes stability observable for keys alone).
struct user_key {
  std::int32_t major;
  std::uint16_t minor;
  std::uint16_t pad;
};
struct user_key_less {
  __host__ __device__ bool operator()(const user_key& a, const user_key& b) const { return a.major < b.major; }
};

// The natural order of a test key type: tilesort::less, user_key_less for user_key.
template <typename Key>
struct comparator_for {
  using type = tilesort::less;
};
template <>
struct comparator_for<user_key> {
  using type = user_key_less;
};

enum class distribution { random, sorted, reversed, all_equal, few_distinct, nearly_sorted, nan_and_zero };

inline const char* name(distribution d) {
  switch (d) {
    case distribution::random: return "random";
    case distribution::sorted: return "sorted";
    case distribution::reversed: return "reversed";
    case distribution::all_equal: return "all_equal";
    case distribution::few_distinct: return "few_distinct";
    case distribution::nearly_sorted: return "nearly_sorted";
    case distribution::nan_and_zero: return "nan_and_zero";
  }
  return "?";
}

inline const distribution all_distributions[] = {distribution::random,       distribution::sorted,
                                                 distribution::reversed,     distribution::all_equal,
                                                 distribution::few_distinct, distribution::nearly_sorted,
                                                 distribution::nan_and_zero};

// A fresh seed per call; tests print it (SCOPED_TRACE) so a failure can be replayed.
inline std::uint64_t fresh_seed() {
  static std::random_device device;
  return (std::uint64_t(device()) << 32) ^ device();
}

// `len` random ints in [0, spread), ascending: one sorted run of a merge test.
inline std::vector<int> sorted_random_ints(std::mt19937_64& rng, std::int64_t len, int spread) {
  std::vector<int> keys(static_cast<std::size_t>(len));
  for (auto& k : keys) k = static_cast<int>(rng() % spread);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// splitmix64's finaliser: hashes for keys made on the fly and order-independent sums.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// 0, 1, ..., n - 1: values that record where each key came from.
inline std::vector<std::uint32_t> iota_indices(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(i);
  return v;
}

// Map a 64-bit random draw to a key. For floats, `special` makes NaN, +-0 and
// +-inf common.
template <typename Key>
Key key_from_bits(std::uint64_t bits, bool special) {
  if constexpr (std::is_same_v<Key, user_key>) {
    return user_key{static_cast<std::int32_t>(bits % 1000) - 500, static_cast<std::uint16_t>(bits >> 20), 0};
  } else if constexpr (std::is_integral_v<Key>) {
    return static_cast<Key>(bits);
  } else {
    float x = static_cast<float>(static_cast<std::int64_t>(bits % 2000001) - 1000000) / 1000.0f;
    if (special) {
      switch (bits >> 61) {
        case 0: x = std::numeric_limits<float>::quiet_NaN(); break;
        case 1: x = 0.0f; break;
        case 2: x = -0.0f; break;
        case 3: x = (bits & 1) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity(); break;
        default: break;
      }
    }
    if constexpr (std::is_same_v<Key, __half>) {
      return __float2half(x);
    } else if constexpr (std::is_same_v<Key, __nv_bfloat16>) {
      return __float2bfloat16(x);
    } else {
      return static_cast<Key>(x);
    }
  }
}

// n keys of the given distribution, drawn from `seed`.
template <typename Key, typename Compare = tilesort::less>
std::vector<Key> make_keys(std::size_t n, distribution d, std::uint64_t seed, Compare comp = {}) {
  std::mt19937_64 rng(seed);
  std::vector<Key> keys(n);
  const std::uint64_t few = 1 + rng() % 7;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits = rng();
    if (d == distribution::all_equal) bits = seed;
    if (d == distribution::few_distinct) bits = bits % few * 0x9E3779B97F4A7C15ull;
    keys[i] = key_from_bits<Key>(bits, d == distribution::nan_and_zero);
  }
  if (d == distribution::sorted || d == distribution::reversed || d == distribution::nearly_sorted) {
    std::stable_sort(keys.begin(), keys.end(), comp);
    if (d == distribution::reversed) std::reverse(keys.begin(), keys.end());
    if (d == distribution::nearly_sorted) {
      for (std::size_t i = 0; i + 1 < n; i += 1 + rng() % 16) std::swap(keys[i], keys[std::min(n - 1, i + rng() % 8)]);
    }
  }
  return keys;
}

// ---------------------------------------------------------------- checks
template <typename T>
bool bytes_less(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) < 0;
}
template <typename T>
bool bytes_equal(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// `out` is ordered by comp over [begin, end). Returns the first bad index or -1.
template <typename Key, typename Compare>
std::int64_t first_unsorted(const std::vector<Key>& out, std::size_t begin, std::size_t end, Compare comp) {
  for (std::size_t i = begin + 1; i < end; ++i)
    if (comp(out[i], out[i - 1])) return static_cast<std::int64_t>(i);
  return -1;
}

// `out` is a permutation of `in` (bitwise multiset equality).
template <typename T>
bool is_permutation_of(std::vector<T> in, std::vector<T> out) {
  if (in.size() != out.size()) return false;
  std::sort(in.begin(), in.end(), bytes_less<T>);
  std::sort(out.begin(), out.end(), bytes_less<T>);
  for (std::size_t i = 0; i < in.size(); ++i)
    if (!bytes_equal(in[i], out[i])) return false;
  return true;
}

// A key with the value that travelled with it, for permutation checks of pairs.
template <typename Key, typename Value>
struct key_value {
  Key key;
  Value value;
};
template <typename Key, typename Value>
std::vector<key_value<Key, Value>> zip(const std::vector<Key>& k, const std::vector<Value>& v) {
  std::vector<key_value<Key, Value>> kv(k.size());
  for (std::size_t i = 0; i < k.size(); ++i) {
    std::memset(&kv[i], 0, sizeof(kv[i]));
    kv[i].key = k[i];
    kv[i].value = v[i];
  }
  return kv;
}

// Keys sorted (unstable sort allowed) and a permutation of the input.
template <typename Key, typename Compare>
void expect_sorted_permutation(const std::vector<Key>& in, const std::vector<Key>& out, Compare comp) {
  ASSERT_EQ(in.size(), out.size());
  EXPECT_EQ(-1, first_unsorted(out, 0, out.size(), comp)) << "output not sorted";
  EXPECT_TRUE(is_permutation_of(in, out)) << "output is not a permutation of the input";
}

// Keys equal bitwise to std::stable_sort of the input (stability included).
template <typename Key, typename Compare>
void expect_stable_sorted(const std::vector<Key>& in, const std::vector<Key>& out, Compare comp) {
  ASSERT_EQ(in.size(), out.size());
  std::vector<Key> ref = in;
  std::stable_sort(ref.begin(), ref.end(), comp);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!bytes_equal(ref[i], out[i])) {
      ADD_FAILURE() << "differs from std::stable_sort at index " << i << " of " << ref.size();
      return;
    }
  }
}

// Pairs: keys sorted, and (key, value) pairs a permutation of the input pairs.
template <typename Key, typename Value, typename Compare>
void expect_sorted_pairs(const std::vector<Key>& keys_in, const std::vector<Value>& values_in,
                         const std::vector<Key>& keys_out, const std::vector<Value>& values_out, Compare comp) {
  expect_sorted_permutation(keys_in, keys_out, comp);
  EXPECT_TRUE(is_permutation_of(zip(keys_in, values_in), zip(keys_out, values_out)))
      << "values did not travel with their keys";
}

// Items a sort may leave in any order (past valid_items): the same items as
// the input's, keys alone or (key, value) pairs kept together.
template <typename Key>
void expect_same_items(const std::vector<Key>& keys_in, const std::vector<Key>& keys_out) {
  EXPECT_TRUE(is_permutation_of(keys_in, keys_out)) << "the keys past valid_items are not the invalid input keys";
}
template <typename Key, typename Value>
void expect_same_items(const std::vector<Key>& keys_in, const std::vector<Value>& values_in,
                       const std::vector<Key>& keys_out, const std::vector<Value>& values_out) {
  EXPECT_TRUE(is_permutation_of(zip(keys_in, values_in), zip(keys_out, values_out)))
      << "the pairs past valid_items are not the invalid input pairs";
}

// Pairs with values = original index: exact match with std::stable_sort.
template <typename Key, typename Compare>
void expect_stable_pairs(const std::vector<Key>& keys_in, const std::vector<Key>& keys_out,
                         const std::vector<std::uint32_t>& index_out, Compare comp) {
  ASSERT_EQ(keys_in.size(), index_out.size());
  std::vector<std::uint32_t> ref(keys_in.size());
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(ref.begin(), ref.end(), [&](std::uint32_t a, std::uint32_t b) { return comp(keys_in[a], keys_in[b]); });
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i] != index_out[i] || !bytes_equal(keys_in[ref[i]], keys_out[i])) {
      ADD_FAILURE() << "pair differs from std::stable_sort at index " << i << " of " << ref.size()
                    << " (index " << index_out[i] << ", expected " << ref[i] << ")";
      return;
    }
  }
}

// Distinct 8-byte values that stand for their input positions (the position
// times an odd constant), and the positions that such values, sorted with
// their keys, came from (each must be one of `tags`: .at throws otherwise).
inline std::vector<std::uint64_t> position_tags(std::int64_t n) {
  std::vector<std::uint64_t> tags(n);
  for (std::int64_t i = 0; i < n; ++i) tags[i] = std::uint64_t(i) * 0x9E3779B97F4A7C15ull;
  return tags;
}
inline std::vector<std::uint32_t> tagged_positions(const std::vector<std::uint64_t>& tags,
                                                   const std::vector<std::uint64_t>& sorted) {
  std::unordered_map<std::uint64_t, std::uint32_t> position;
  position.reserve(tags.size());
  for (std::size_t i = 0; i < tags.size(); ++i) position[tags[i]] = static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> index(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) index[i] = position.at(sorted[i]);
  return index;
}

}  // namespace tilesort_test
