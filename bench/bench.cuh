// bench/bench.cuh — the harness shared by every case family of tilesort-bench.
//
// What a family file gets from here:
//   - `options` (the command line) and `bench_case` (one registered case: a name
//     plus a function that runs it);
//   - `harness`: the timing loop. A case hands it one library call at a time
//     (`timed_call`: restore the input, the call, verify the output) and the
//     harness times it the way ../shared/BASELINES.md did: 2 warm-ups, then the
//     median of N repetitions, a cudaEvent pair around the one call, "lat" mode
//     from an idle GPU, "gpu" mode with the stream held by a spin kernel, the
//     input restored outside the timed region and every repetition verified;
//   - device buffers, on-device key generation (`fill_keys`), and on-device
//     verification (`check_on_device`: sorted within each uniform segment plus an
//     order-independent 64-bit fingerprint of (segment, key, value)).
// Records go to a line sink: in the normal run a pipe to the parent process,
// which prints the table and writes JSON/CSV (main.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace bench {

// ------------------------------------------------------------------ errors

// A CUDA call failed. `code` keeps the error so the harness can tell a
// recoverable one (out of memory, invalid value) from a sticky one.
struct cuda_failure : std::runtime_error {
  cudaError_t code;
  cuda_failure(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

// The CUDA context is unusable (a sticky error such as an illegal address):
// the worker reports the case and exits so the parent restarts it.
struct context_lost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The lines a worker sends its parent (one per line, fields separated by 0x1f):
//   H device-info | S case | B case call role impl what | M record | E case call
//   | D case | R case next-call (restart me inside this case) | Q

[[noreturn]] void throw_cuda(cudaError_t code, const char* expr, const char* file, int line);

#define BENCH_CHECK(expr)                                                     \
  do {                                                                        \
    const cudaError_t bench_error_ = (expr);                                  \
    if (bench_error_ != cudaSuccess) ::bench::throw_cuda(bench_error_, #expr, __FILE__, __LINE__); \
  } while (0)

// ------------------------------------------------------------------ options

enum class timing_mode { automatic, lat, gpu, both };

struct options {
  bool quick = false;
  std::vector<std::string> families;  // empty: all
  std::vector<std::int64_t> sizes;    // empty: each family's defaults
  std::vector<std::string> types;     // empty: each family's defaults
  std::vector<std::string> dists;     // empty: each family's defaults
  std::vector<int> case_numbers;      // empty: every case the filters above select; else those (1-based, as --list)
  int reps = 9;
  bool reps_given = false;
  std::size_t host_budget = std::size_t(4) << 30;  // family host: the device memory budget
  int warmups = 2;
  timing_mode mode = timing_mode::automatic;
  std::string json_path, csv_path;
  double timeout_s = 0;  // no progress for this long kills the worker; 0: 20 s with --quick, else 120 s
  std::vector<std::string> skip_impls;  // implementations that timed out earlier in this run
  bool inline_run = false;
  bool list_only = false;
  // worker process (set by the parent, not documented for users)
  bool worker = false;
  int first_case = 0, last_case = 0;
  double copy_gbps = 0;
  int result_fd = -1;
  int resume_skip = 0;  // calls of the first case already recorded by an earlier worker

  bool wants_family(const std::string& f) const;
  // A family asks with its default list; the user's list (if any) filters it.
  bool wants_type(const std::string& t) const;
  bool wants_dist(const std::string& d, bool default_on) const;
  std::vector<std::int64_t> sizes_or(const std::vector<std::int64_t>& defaults) const {
    return sizes.empty() ? defaults : sizes;
  }
};

std::int64_t pow2(int k);
std::int64_t pow10(int k);
// "2^20", "3*2^20", "2^24+1", "10^7", "1e6", "4096" -> value (-1 if malformed).
std::int64_t parse_size(const std::string& text);
// 1048576 -> "2^20", 16777217 -> "2^24+1", 3145728 -> "3*2^20", 10000000 -> "10^7".
std::string size_name(std::int64_t n);

// ------------------------------------------------------------------ records

// One measurement: one implementation of one case in one timing mode.
struct record {
  int case_index = -1;
  std::string family, case_name, type, dist;
  std::int64_t n = 0;
  std::string impl;  // e.g. "tilesort::merge_sort_keys", "cub::DeviceMergeSort::SortKeys"
  std::string role;  // tilesort | alt | ref | ceiling
  std::string mode;  // lat | gpu | wall
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  std::string status;  // ok | FAIL | ERROR | SKIP | CRASH | TIMEOUT
  std::string note, bound;

  double gkeys() const { return median_ms > 0 ? double(n) / (median_ms * 1e6) : 0.0; }
  std::string serialize() const;
  static bool parse(const std::string& line, record& out);
};

// Everything the header line shows; measured once by the first worker.
struct device_info {
  std::string gpu, driver, cuda_runtime, cccl, date, host_build;
  int sm_count = 0, cc_major = 0, cc_minor = 0, host_threads = 0;
  double mem_gib = 0, l2_mib = 0, copy_gbps = 0;
  std::string serialize() const;
  static bool parse(const std::string& line, device_info& out);
};

// ------------------------------------------------------------------ keys

// few: 16 distinct values; equal: one; zipf: ranks r >= 1 with P(rank <= r)
// about log(r) / log(2^20) (a heavy head), hashed to keys; bits20: 20 random
// low bits, the rest zero. For the radix sort's buckets, random keys whose
// bits' top byte is 0x80 (top1: one top bucket) or 0x40 or 0x80 (top2), and
// lowbit: one bit pattern but its lowest bit random.
enum class dist { random, sorted, reversed, few, nearly, equal, zipf, bits20, top1, top2, lowbit };
bool parse_dist(const std::string& s, dist& out);
const char* dist_name(dist d);

// The user struct key of the merge family: ordered by `a` only.
struct pair_key {
  std::uint32_t a, b;
};
struct by_a {
  __host__ __device__ bool operator()(const pair_key& x, const pair_key& y) const { return x.a < y.a; }
};

__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Per-element term of the fingerprint. Nested (not xor-ed) so that moving a
// value to another key, or a key to another segment, changes the sum.
__host__ __device__ inline std::uint64_t fingerprint_term(std::uint64_t segment, std::uint64_t key_bits,
                                                          std::uint64_t value_bits) {
  return mix64(mix64(mix64(segment) ^ key_bits) + value_bits);
}

template <typename T>
__host__ __device__ inline std::uint64_t bits_of(const T& x) {
  static_assert(sizeof(T) <= 8, "fingerprint keys and values up to 8 bytes");
  std::uint64_t b = 0;
  memcpy(&b, &x, sizeof(T));
  return b;
}

// How a key type is made from random bits (dist random) or from an ordinal
// (sorted, reversed, few distinct, nearly sorted).
template <typename K>
struct key_maker;
template <>
struct key_maker<std::uint8_t> {
  __host__ __device__ static std::uint8_t random(std::uint64_t h) { return std::uint8_t(h >> 56); }
  __host__ __device__ static std::uint8_t ordinal(std::uint64_t o, std::uint64_t) { return std::uint8_t(o); }
};
template <>
struct key_maker<std::uint16_t> {
  __host__ __device__ static std::uint16_t random(std::uint64_t h) { return std::uint16_t(h >> 48); }
  __host__ __device__ static std::uint16_t ordinal(std::uint64_t o, std::uint64_t) { return std::uint16_t(o); }
};
template <>
struct key_maker<std::uint32_t> {
  __host__ __device__ static std::uint32_t random(std::uint64_t h) { return std::uint32_t(h >> 32); }
  __host__ __device__ static std::uint32_t ordinal(std::uint64_t o, std::uint64_t) { return std::uint32_t(o); }
};
template <>
struct key_maker<std::int32_t> {
  __host__ __device__ static std::int32_t random(std::uint64_t h) { return std::int32_t(h >> 32); }
  __host__ __device__ static std::int32_t ordinal(std::uint64_t o, std::uint64_t) { return std::int32_t(o); }
};
template <>
struct key_maker<std::int64_t> {
  __host__ __device__ static std::int64_t random(std::uint64_t h) { return std::int64_t(h); }
  __host__ __device__ static std::int64_t ordinal(std::uint64_t o, std::uint64_t) { return std::int64_t(o); }
};
template <>
struct key_maker<std::uint64_t> {
  __host__ __device__ static std::uint64_t random(std::uint64_t h) { return h; }
  __host__ __device__ static std::uint64_t ordinal(std::uint64_t o, std::uint64_t) { return o; }
};
template <>
struct key_maker<float> {
  // Integers up to 2^31 in magnitude, both signs: no NaN, few duplicates.
  __host__ __device__ static float random(std::uint64_t h) { return float(std::int32_t(h >> 32)); }
  __host__ __device__ static float ordinal(std::uint64_t o, std::uint64_t) { return float(o); }
};
template <>
struct key_maker<double> {
  __host__ __device__ static double random(std::uint64_t h) { return double(std::int64_t(h)) * 0x1p-20; }
  __host__ __device__ static double ordinal(std::uint64_t o, std::uint64_t) { return double(o); }
};
// Half-precision keys: values in +-2^15 (random) or the ordinal's float,
// rounded (sorted stays sorted: rounding is monotone).
template <>
struct key_maker<__half> {
  __host__ __device__ static __half random(std::uint64_t h) { return __float2half(float(std::int32_t(h >> 32)) * 0x1p-16f); }
  __host__ __device__ static __half ordinal(std::uint64_t o, std::uint64_t) { return __float2half(float(o)); }
};
template <>
struct key_maker<__nv_bfloat16> {
  __host__ __device__ static __nv_bfloat16 random(std::uint64_t h) {
    return __float2bfloat16(float(std::int32_t(h >> 32)) * 0x1p-16f);
  }
  __host__ __device__ static __nv_bfloat16 ordinal(std::uint64_t o, std::uint64_t) { return __float2bfloat16(float(o)); }
};
template <>
struct key_maker<pair_key> {
  __host__ __device__ static pair_key random(std::uint64_t h) { return {std::uint32_t(h), std::uint32_t(h >> 32)}; }
  __host__ __device__ static pair_key ordinal(std::uint64_t o, std::uint64_t h) {
    return {std::uint32_t(o), std::uint32_t(h >> 32)};
  }
};

template <typename K>
__host__ __device__ inline K make_key(dist d, std::int64_t i, std::int64_t n, std::uint64_t seed) {
  const std::uint64_t h = mix64(seed ^ mix64(std::uint64_t(i)));
  switch (d) {
    case dist::sorted: return key_maker<K>::ordinal(std::uint64_t(i), h);
    case dist::reversed: return key_maker<K>::ordinal(std::uint64_t(n - 1 - i), h);
    case dist::few: return key_maker<K>::ordinal(h % 16, h);
    case dist::nearly: return key_maker<K>::ordinal(std::uint64_t(i) + h % 64, h);
    case dist::equal: return key_maker<K>::ordinal(12345, h);
    case dist::zipf: {
      // log-uniform ranks in [1, 2^20): rank 1 about 5% of the keys, hashed
      const double u = double(h >> 11) * 0x1p-53;
      const std::uint64_t rank = std::uint64_t(exp2(20.0 * u));
      return key_maker<K>::random(mix64(rank));
    }
    case dist::bits20: return key_maker<K>::ordinal(h & 0xfffff, h);
    case dist::top1:
    case dist::top2:
    case dist::lowbit: {
      K key = key_maker<K>::random(h);
      std::uint64_t bits = 0;
      memcpy(&bits, &key, sizeof(K));
      const int top = 8 * int(sizeof(K)) - 8;
      if (d == dist::lowbit) {
        bits = (0x5a5a5a5a5a5a5a5aull & ~std::uint64_t(1)) | (h >> 63);
      } else {
        const std::uint64_t byte = d == dist::top1 || (h & 1) ? 0x80 : 0x40;
        bits = (bits & ~(std::uint64_t(0xff) << top)) | byte << top;
      }
      memcpy(&key, &bits, sizeof(K));
      return key;
    }
    case dist::random:
    default: return key_maker<K>::random(h);
  }
}

// A fixed seed per case, from its description (FNV-1a).
std::uint64_t case_seed(const std::string& text);

// ------------------------------------------------------------------ device buffers

// Owns count elements of T in device memory; value_t<void> is an empty buffer,
// so one template serves keys-only and key-value sorts.
template <typename T>
class dbuf {
 public:
  dbuf() = default;
  explicit dbuf(std::size_t count) : count_(count) {
    if (count > 0) BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  ~dbuf() {
    if (ptr_) cudaFree(ptr_);
  }
  dbuf(const dbuf&) = delete;
  dbuf& operator=(const dbuf&) = delete;
  dbuf(dbuf&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  dbuf& operator=(dbuf&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

struct no_value {};
template <typename V>
using value_t = std::conditional_t<std::is_void_v<V>, no_value, V>;

template <typename V>
constexpr std::size_t value_size() {
  if constexpr (std::is_void_v<V>) {
    return 0;
  } else {
    return sizeof(V);
  }
}

// ------------------------------------------------------------------ the harness

using line_sink = std::function<void(const std::string&)>;

struct check_totals {
  unsigned long long violations;
  unsigned long long fingerprint;
};

class harness {
 public:
  harness(const options& opt, line_sink sink);
  ~harness();
  harness(const harness&) = delete;
  harness& operator=(const harness&) = delete;

  const options& opt;
  cudaStream_t stream = nullptr;
  device_info info;

  // The case being run (set by the driver); copied into every record.
  int case_index = -1;
  std::string family, case_name, type, dist_label;
  std::int64_t n = 0;
  std::string bound;  // the case's limit, e.g. "copy 364 GKeys/s"
  // Calls (measure, measure_wall, report) made so far in this case, and how
  // many to skip: a worker restarted inside a case (after a crash, a timeout or
  // a lost CUDA context) skips the ones already recorded.
  int call_index = 0;
  int skip_calls = 0;

  // One library call, timed in each mode the options and the case ask for.
  struct timed_call {
    std::string impl;
    std::string role = "alt";
    std::string note;
    std::function<void()> restore;                    // enqueue input restore on `stream`
    std::function<cudaError_t(cudaStream_t)> call;    // the one timed call
    std::function<bool(std::string&)> verify;         // true when correct; else sets a reason
    bool latency_rows = false;  // small n: add gpu-mode rows in automatic mode
  };
  // Returns the last mode's record (e.g. to use a measured ceiling as a bound).
  record measure(const timed_call& c);

  // A whole-program task timed by the wall clock (std::chrono) in "wall" mode.
  struct wall_call {
    std::string impl;
    std::string role = "alt";
    std::string note;
    std::function<void()> restore;
    std::function<void()> call;
    std::function<bool(std::string&)> verify;
    int reps = 5, warmups = 1;
    double long_run_s = 2.0;  // a warm-up longer than this cuts reps to 3
  };
  record measure_wall(const wall_call& c);

  // A record for a measurement that could not run (setup failed, skipped).
  void report(const std::string& impl, const std::string& role, const std::string& status,
              const std::string& note);
  void emit(const record& r);
  // "B case call role impl what": call `call_index - 1` is running. Sent at
  // its start (force) and then at most every 0.5 s, so the parent's watchdog
  // sees progress without waking on every short repetition.
  void heartbeat(const std::string& role, const std::string& impl, const std::string& what, bool force = false);
  void send_line(const std::string& line) { sink_(line); }

  // Copy ceiling in GKeys/s for a sort moving `bytes_per_key` (read + write) once.
  double copy_bound_gkeys(double bytes_per_key) const {
    return bytes_per_key > 0 ? info.copy_gbps / bytes_per_key : 0;
  }
  int grid_for(std::int64_t items, int threads) const;

  check_totals* d_totals = nullptr;  // scratch for check_on_device
  check_totals* h_totals = nullptr;  // pinned

  // Measure the device-to-device copy ceiling (1 GiB, read+write GB/s).
  double measure_copy_gbps();
  void fill_device_info();
  // After an error: true when the context is unusable and the worker must restart.
  bool context_broken();
  // Testing hook for the recovery paths (TILESORT_BENCH_FAULT, see main.cu):
  // "abort" kills the worker, "trap" breaks the CUDA context, "hang" never ends.
  void inject_fault(const std::string& kind);
  std::string fault_kind;  // injected at the start of call `fault_call` of this case
  int fault_call = -1;

 private:
  record base_record() const;
  // Emits a SKIP record when `impl` hung earlier in this run (options::skip_impls).
  bool skipped_after_timeout(const std::string& impl, const std::string& role, const std::string& mode);
  line_sink sink_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  double last_heartbeat_s_ = -1e9;
};

// The bound of a sort that makes `passes` global passes over items of
// `item_bytes` (key + value), each reading and writing every item once:
// "5 passes x 8 B/key: 74.9 GKeys/s"; "copy ... GKeys/s" for 0 passes.
std::string pass_bound(const harness& h, int passes, double item_bytes);

// A case the program can run; families register these.
struct bench_case {
  std::string family, case_name, type, dist;
  std::int64_t n = 0;
  std::function<void(harness&)> run;
};

// The registry, one function per family file.
void add_tile_cases(const options&, std::vector<bench_case>&);       // warp + block
void add_segmented_cases(const options&, std::vector<bench_case>&);  // segmented
void add_merge_cases(const options&, std::vector<bench_case>&);      // merge
void add_sample_cases(const options&, std::vector<bench_case>&);     // sample (cases_sample.cu)
void add_bitonic_cases(const options&, std::vector<bench_case>&);    // bitonic
void add_whole_cases(const options&, std::vector<bench_case>&);      // whole
void add_locality_cases(const options&, std::vector<bench_case>&);   // locality (cases_locality.cu)
void add_segments_general_cases(const options&, std::vector<bench_case>&);  // segments (cases_segments_general.cu)
void add_radix_cases(const options&, std::vector<bench_case>&);             // radix (cases_radix.cu)
void add_host_cases(const options&, std::vector<bench_case>&);              // host (cases_host.cu)

// ------------------------------------------------------------------ device kernels

__global__ void spin_kernel(unsigned long long ns);

template <typename K, typename V>
__global__ void fill_kernel(K* keys, value_t<V>* values, std::int64_t n, dist d, std::uint64_t seed) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    keys[i] = make_key<K>(d, i, n, seed);
    if constexpr (!std::is_void_v<V>) values[i] = V(i);
  }
}

// Fill keys (and values = index) on the device.
template <typename K, typename V>
void fill_keys(harness& h, K* keys, value_t<V>* values, std::int64_t n, dist d, std::uint64_t seed) {
  if (n <= 0) return;
  fill_kernel<K, V><<<h.grid_for(n, 256), 256, 0, h.stream>>>(keys, values, n, d, seed);
  BENCH_CHECK(cudaGetLastError());
}

// A check kernel's per-thread sums, reduced per warp and added to `totals`
// (every thread of the block calls it).
__device__ inline void add_to_totals(unsigned long long fingerprint, unsigned long long violations,
                                     check_totals* totals) {
  for (int offset = 16; offset > 0; offset /= 2) {
    fingerprint += __shfl_down_sync(0xffffffffu, fingerprint, offset);
    violations += __shfl_down_sync(0xffffffffu, violations, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&totals->fingerprint, fingerprint);
    if (violations) atomicAdd(&totals->violations, violations);
  }
}

// Runs one check: clears the totals, `launch(grid)` enqueues the check kernel
// on h.stream (only when n > 0), and returns the totals. Synchronises the stream.
template <typename Launch>
check_totals run_check(harness& h, std::int64_t n, Launch launch) {
  BENCH_CHECK(cudaMemsetAsync(h.d_totals, 0, sizeof(check_totals), h.stream));
  if (n > 0) {
    launch(h.grid_for(n, 256));
    BENCH_CHECK(cudaGetLastError());
  }
  BENCH_CHECK(cudaMemcpyAsync(h.h_totals, h.d_totals, sizeof(check_totals), cudaMemcpyDeviceToHost, h.stream));
  BENCH_CHECK(cudaStreamSynchronize(h.stream));
  return *h.h_totals;
}

template <typename K, typename V, typename Compare, bool CheckOrder>
__global__ void check_kernel(const K* keys, const value_t<V>* values, std::int64_t n, std::int64_t segment_length,
                             Compare comp, check_totals* totals) {
  unsigned long long fingerprint = 0, violations = 0;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::int64_t segment = i / segment_length;
    std::uint64_t value_bits = 0;
    if constexpr (!std::is_void_v<V>) value_bits = bits_of(values[i]);
    const K key = keys[i];
    fingerprint += fingerprint_term(std::uint64_t(segment), bits_of(key), value_bits);
    if constexpr (CheckOrder) {
      if (i != segment * segment_length && comp(key, keys[i - 1])) ++violations;
    }
  }
  add_to_totals(fingerprint, violations, totals);
}

// Order violations within segments of `segment_length` and the fingerprint of
// (segment, key, value). Synchronises the harness stream.
template <typename K, typename V, typename Compare>
check_totals check_on_device(harness& h, const K* keys, const value_t<V>* values, std::int64_t n,
                             std::int64_t segment_length, Compare comp, bool check_order) {
  if (segment_length <= 0) segment_length = n;
  return run_check(h, n, [&](int grid) {
    if (check_order) {
      check_kernel<K, V, Compare, true><<<grid, 256, 0, h.stream>>>(keys, values, n, segment_length, comp, h.d_totals);
    } else {
      check_kernel<K, V, Compare, false><<<grid, 256, 0, h.stream>>>(keys, values, n, segment_length, comp, h.d_totals);
    }
  });
}

template <typename K, typename V, typename Compare>
std::uint64_t input_fingerprint(harness& h, const K* keys, const value_t<V>* values, std::int64_t n,
                                std::int64_t segment_length, Compare comp) {
  return check_on_device<K, V>(h, keys, values, n, segment_length, comp, false).fingerprint;
}

std::string describe_check(const check_totals& t, std::uint64_t expected, bool check_order);

// A verify function from a check: `check()` returns the output's totals; the
// output passes with no order violations (when checked) and the input's
// fingerprint `expected`.
template <typename Check>
std::function<bool(std::string&)> totals_verifier(std::uint64_t expected, bool check_order, Check check) {
  return [expected, check_order, check](std::string& why) {
    const check_totals t = check();
    if ((check_order && t.violations != 0) || t.fingerprint != expected) {
      why = describe_check(t, expected, check_order);
      return false;
    }
    return true;
  };
}

// The verify function of a timed_call: output sorted within each segment and a
// permutation (with values kept with their keys) of the input.
template <typename K, typename V, typename Compare>
std::function<bool(std::string&)> verifier(harness& h, const K* keys, const value_t<V>* values, std::int64_t n,
                                           std::int64_t segment_length, Compare comp, std::uint64_t expected,
                                           bool check_order = true) {
  return totals_verifier(expected, check_order, [&h, keys, values, n, segment_length, comp, check_order] {
    return check_on_device<K, V>(h, keys, values, n, segment_length, comp, check_order);
  });
}

// The restore function of a timed_call: device-to-device copies on the stream.
template <typename K, typename V>
std::function<void()> restorer(harness& h, K* keys_dst, const K* keys_src, value_t<V>* values_dst,
                               const value_t<V>* values_src, std::int64_t n) {
  return [&h, keys_dst, keys_src, values_dst, values_src, n] {
    if (n <= 0) return;
    BENCH_CHECK(cudaMemcpyAsync(keys_dst, keys_src, std::size_t(n) * sizeof(K), cudaMemcpyDeviceToDevice, h.stream));
    if constexpr (!std::is_void_v<V>) {
      BENCH_CHECK(cudaMemcpyAsync(values_dst, values_src, std::size_t(n) * sizeof(V), cudaMemcpyDeviceToDevice,
                                  h.stream));
    }
  };
}

// Input, working copy and output of one device-resident case.
template <typename K, typename V>
struct device_data {
  std::int64_t n;
  dbuf<K> src_keys, keys, out_keys;
  dbuf<value_t<V>> src_values, values, out_values;
  std::uint64_t fingerprint = 0;  // of the input, per segment of `segment_length`

  device_data(harness& h, std::int64_t count, dist d, std::uint64_t seed, std::int64_t segment_length = 0)
      : n(count),
        src_keys(std::size_t(count)),
        keys(std::size_t(count)),
        out_keys(std::size_t(count)),
        src_values(std::is_void_v<V> ? 0 : std::size_t(count)),
        values(std::is_void_v<V> ? 0 : std::size_t(count)),
        out_values(std::is_void_v<V> ? 0 : std::size_t(count)) {
    fill_keys<K, V>(h, src_keys.get(), src_values.get(), n, d, seed);
    fingerprint = check_on_device<K, V>(h, src_keys.get(), src_values.get(), n, segment_length, by_bits{}, false)
                      .fingerprint;
  }
  // Never called: the order check is off for the input fingerprint.
  struct by_bits {
    template <typename T>
    __host__ __device__ bool operator()(const T&, const T&) const {
      return false;
    }
  };
  // Before every repetition: the working copy gets the input again and the
  // output is overwritten with 0xff bytes, so a call that writes nothing
  // cannot pass on an earlier repetition's result.
  std::function<void()> restore(harness& h) {
    return [this, &h] {
      if (n <= 0) return;
      restorer<K, V>(h, keys.get(), src_keys.get(), values.get(), src_values.get(), n)();
      BENCH_CHECK(cudaMemsetAsync(out_keys.get(), 0xff, out_keys.bytes(), h.stream));
      if (out_values.bytes()) BENCH_CHECK(cudaMemsetAsync(out_values.get(), 0xff, out_values.bytes(), h.stream));
    };
  }
};

// ------------------------------------------------------------------ two-phase calls

// A timed_call for `impl` in `role` that restores the input before and checks
// the output after every repetition; its call is set by the caller (or by
// measure_two_phase).
inline harness::timed_call timed_call_for(const std::string& impl, const std::string& role,
                                          std::function<void()> restore, std::function<bool(std::string&)> verify,
                                          bool latency_rows = false) {
  harness::timed_call c;
  c.impl = impl;
  c.role = role;
  c.latency_rows = latency_rows;
  c.restore = std::move(restore);
  c.verify = std::move(verify);
  return c;
}

// Temp storage of `bytes` (at least 1, so the pointer is never null).
inline dbuf<unsigned char> temp_storage(std::size_t bytes) { return dbuf<unsigned char>(bytes > 0 ? bytes : 1); }

// A call with CUB-style two-phase temp storage: with temp == nullptr it sets
// `bytes` and does nothing else.
using two_phase_call = std::function<cudaError_t(void* temp, std::size_t& bytes, cudaStream_t)>;

// Measures `sort` the usual way: the temp-size query (an ERROR record when it
// fails), the temp storage, then `c` (impl, role, note, restore, verify set by
// the caller) timed with `sort` as its call. `setup`, if given, runs once
// with the temp storage before the timed calls (e.g. an untimed call that
// collects statistics into c.note).
inline void measure_two_phase(harness& h, harness::timed_call c, const two_phase_call& sort,
                              const std::function<void(harness::timed_call&, void*, std::size_t)>& setup = {}) {
  std::size_t bytes = 0;
  const cudaError_t e = sort(nullptr, bytes, h.stream);
  if (e != cudaSuccess) {
    h.report(c.impl, c.role, "ERROR", std::string("temp-size query returned ") + cudaGetErrorName(e));
    return;
  }
  auto temp = temp_storage(bytes);
  if (setup) setup(c, temp.get(), bytes);
  c.call = [&](cudaStream_t s) { return sort(temp.get(), bytes, s); };
  h.measure(c);
}

}  // namespace bench
