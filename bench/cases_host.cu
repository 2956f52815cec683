// bench/cases_host.cu — family "host": arrays that start and end in host
// memory, sorted by tilesort::host_sort_keys / host_sort_pairs in a device
// memory budget (--host-budget, default 4 GiB), pinned (cudaHostAlloc) and
// pageable, u32 and u64 keys and u32 pairs (values: the input positions, so
// stability is checked), beside
//   - the link bound: the bytes that must cross each way (once in core,
//     twice out of core) at the pinned bandwidth with both directions busy,
//     measured in the same run;
//   - __gnu_parallel::sort on every core (where the build has OpenMP) and
//     std::sort on one thread (up to 2^27 items).
// Timed by the wall clock around the whole call; the first call is untimed,
// prints a progress line on stderr and gives the phases of host_sort_stats
// (in the tilesort row's note). The pinned scratch is allocated once per
// case (host_sort_options::host_scratch) and not timed; the output is checked
// after every repetition (sorted, the same (key, value) multiset, equal keys
// in input order for pairs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#if defined(_OPENMP)
#include <omp.h>
#include <parallel/algorithm>
#endif

#include <tilesort/comparators.cuh>
#include <tilesort/host/host_sort.cuh>

#include "bench.cuh"

namespace bench {
namespace {

// Host memory of either kind for n items of T.
template <typename T>
class host_array {
 public:
  host_array(std::int64_t n, bool pinned) : pinned_(pinned) {
    if (n == 0) return;
    if (pinned) {
      BENCH_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&data_), std::size_t(n) * sizeof(T), cudaHostAllocDefault));
    } else {
      pageable_.resize(std::size_t(n));
      data_ = pageable_.data();
    }
  }
  ~host_array() {
    if (pinned_ && data_ != nullptr) cudaFreeHost(data_);
  }
  host_array(const host_array&) = delete;
  host_array& operator=(const host_array&) = delete;
  T* data() const { return data_; }

 private:
  bool pinned_;
  std::vector<T> pageable_;
  T* data_ = nullptr;
};

// The pinned link with both directions busy (GB/s each way), measured once
// per process with 256 MiB each way, best of 3.
double duplex_gbps() {
  static double measured = 0;
  if (measured > 0) return measured;
  const std::size_t bytes = std::size_t(256) << 20;
  void *h_in = nullptr, *h_out = nullptr, *d_in = nullptr, *d_out = nullptr;
  cudaStream_t up = nullptr, down = nullptr;
  BENCH_CHECK(cudaHostAlloc(&h_in, bytes, cudaHostAllocDefault));
  BENCH_CHECK(cudaHostAlloc(&h_out, bytes, cudaHostAllocDefault));
  BENCH_CHECK(cudaMalloc(&d_in, bytes));
  BENCH_CHECK(cudaMalloc(&d_out, bytes));
  BENCH_CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
  BENCH_CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
  std::memset(h_in, 1, bytes);
  double best = 1e30;
  for (int rep = 0; rep < 4; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    BENCH_CHECK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, up));
    BENCH_CHECK(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, down));
    BENCH_CHECK(cudaStreamSynchronize(up));
    BENCH_CHECK(cudaStreamSynchronize(down));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) best = std::min(best, s);  // the first warms the path up
  }
  BENCH_CHECK(cudaStreamDestroy(up));
  BENCH_CHECK(cudaStreamDestroy(down));
  BENCH_CHECK(cudaFree(d_in));
  BENCH_CHECK(cudaFree(d_out));
  BENCH_CHECK(cudaFreeHost(h_in));
  BENCH_CHECK(cudaFreeHost(h_out));
  measured = double(bytes) / best / 1e9;
  return measured;
}

// One sort's items: the input, the array sorted in place, and its check.
template <typename K, typename V>
struct host_case {
  static constexpr bool pairs = !std::is_void_v<V>;
  using value_type = value_t<V>;
  struct item {  // what the CPU sorts sort, for pairs
    K key;
    value_type value;
  };
  std::int64_t n;
  std::vector<K> input;
  host_array<K> keys;
  host_array<value_type> values;
  std::uint64_t fingerprint = 0;

  host_case(std::int64_t count, bool pinned, dist d, std::uint64_t seed)
      : n(count), input(std::size_t(count)), keys(count, pinned), values(pairs ? count : 0, pinned) {
    std::uint64_t sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (std::int64_t i = 0; i < n; ++i) {
      input[i] = make_key<K>(d, i, n, seed);
      sum += fingerprint_term(0, bits_of(input[i]), pairs ? std::uint64_t(i) : 0);
    }
    fingerprint = sum;
  }
  void restore() {
    std::memcpy(keys.data(), input.data(), std::size_t(n) * sizeof(K));
    if constexpr (pairs) {
      value_type* v = values.data();
#pragma omp parallel for
      for (std::int64_t i = 0; i < n; ++i) v[i] = value_type(i);
    }
  }
  // Sorted, the same (key, value) multiset, and for pairs equal keys in input order.
  bool check(const K* k, const value_type* v, std::string& why) const {
    std::uint64_t sum = 0, bad = 0;
#pragma omp parallel for reduction(+ : sum, bad)
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint64_t value_bits = 0;
      if constexpr (pairs) value_bits = bits_of(v[i]);
      sum += fingerprint_term(0, bits_of(k[i]), value_bits);
      if (i > 0 && k[i] < k[i - 1]) ++bad;
      if constexpr (pairs) {
        if (i > 0 && k[i] == k[i - 1] && v[i] < v[i - 1]) ++bad;
      }
    }
    if (bad == 0 && sum == fingerprint) return true;
    why = describe_check(check_totals{bad, sum}, fingerprint, true);
    return false;
  }
};

std::string phases_of(const tilesort::host_sort_stats& s) {
  char b[320];
  if (s.in_core) {
    std::snprintf(b, sizeof b, "in core: setup %.1f ms, round trip %.1f ms, release %.1f ms", s.setup_s * 1e3,
                  s.round_trip_s * 1e3, s.release_s * 1e3);
  } else {
    std::snprintf(b, sizeof b,
                  "out of core: %lld chunks, %lld batches, %lld copied + %lld resorted buckets; setup %.1f ms, "
                  "splitters %.1f ms, pass 1 %.1f ms, pass 2 %.1f ms + host copies %.1f ms, release %.1f ms",
                  (long long)s.chunks, (long long)s.batches, (long long)s.copied_buckets,
                  (long long)s.resorted_buckets, s.setup_s * 1e3, s.splitters_s * 1e3, s.partition_s * 1e3,
                  s.batches_s * 1e3, s.host_copies_s * 1e3, s.release_s * 1e3);
  }
  return b;
}

template <typename K, typename V>
void run_host(harness& h, std::int64_t n, bool pinned, dist d) {
  using data_type = host_case<K, V>;
  using item = typename data_type::item;
  constexpr bool pairs = data_type::pairs;
  data_type data(n, pinned, d, case_seed("host " + h.type + " " + h.dist_label + " " + std::to_string(n)));
  const std::size_t budget = h.opt.host_budget;
  const int reps = h.opt.reps_given ? h.opt.reps : 3;
  const std::size_t item_bytes = sizeof(K) + value_size<V>();

  // The bound: one or two round trips at the duplex rate.
  const auto plan =
      tilesort::detail::host_sorter<K, std::conditional_t<pairs, value_t<V>, tilesort::detail::no_value>,
                                    tilesort::less>(tilesort::less{}, tilesort::host_sort_options{})
          .plan(n, budget);
  const int trips = plan.in_core ? 1 : 2;
  const double gbps = duplex_gbps();
  const double bound_ms = double(trips) * double(n) * double(item_bytes) / (gbps * 1e9) * 1e3;
  {
    char b[160];
    std::snprintf(b, sizeof b, "link: %d round trip%s at %.1f GB/s each way: %.3g ms", trips, trips > 1 ? "s" : "",
                  gbps, bound_ms);
    h.bound = b;
  }
  if (plan.status != cudaSuccess) {
    h.report("tilesort::host_sort", "tilesort", "SKIP", "the budget is too small for n");
    return;
  }

  // tilesort: the untimed first call shows progress and gives the phases.
  std::optional<host_array<unsigned char>> scratch;
  if (!plan.in_core) scratch.emplace(std::int64_t(tilesort::host_sort_scratch_bytes<K, V>(n)), true);
  tilesort::host_sort_stats stats;
  tilesort::host_sort_options options;
  options.device_memory_budget = budget;
  options.stats = &stats;
  if (scratch) {
    options.host_scratch = scratch->data();
    options.host_scratch_bytes = tilesort::host_sort_scratch_bytes<K, V>(n);
  }
  const std::string impl = pairs ? "tilesort::host_sort_pairs" : "tilesort::host_sort_keys";
  const auto sort = [&] {
    if constexpr (pairs) {
      BENCH_CHECK(tilesort::host_sort_pairs(data.keys.data(), data.values.data(), n, tilesort::less{}, options));
    } else {
      BENCH_CHECK(tilesort::host_sort_keys(data.keys.data(), n, tilesort::less{}, options));
    }
  };
  {
    double last = 0;
    const auto start = std::chrono::steady_clock::now();
    options.progress = [&](std::size_t done, std::size_t total) {
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      h.heartbeat("tilesort", impl, "first call");
      if (now - last < 0.5 && done < total) return;
      last = now;
      std::fprintf(stderr, "\r    %s: %5.1f%% of %.2f GB across the link, %.1f s", impl.c_str(),
                   total > 0 ? 100.0 * double(done) / double(total) : 100.0, double(total) * 1e-9, now);
      if (done == total) std::fprintf(stderr, "\n");
    };
    data.restore();
    sort();
    options.progress = {};
  }
  {
    harness::wall_call c;
    c.impl = impl;
    c.role = "tilesort";
    c.note = std::string(pinned ? "pinned" : "pageable") + ", scratch preallocated; " + phases_of(stats);
    c.reps = reps;
    c.warmups = 0;  // the call above
    c.restore = [&] { data.restore(); };
    c.call = sort;
    c.verify = [&](std::string& why) { return data.check(data.keys.data(), data.values.data(), why); };
    h.measure_wall(c);
  }
  {
    record r;
    r.case_index = h.case_index;
    r.family = h.family;
    r.case_name = h.case_name;
    r.type = h.type;
    r.dist = h.dist_label;
    r.n = n;
    r.impl = "link bound";
    r.role = "ceiling";
    r.mode = "wall";
    r.median_ms = r.min_ms = r.max_ms = bound_ms;
    r.reps = 1;
    r.status = "ok";
    r.bound = h.bound;
    r.note = "measured duplex pinned bandwidth";
    h.emit(r);
  }

  // The CPU: keys, or pairs zipped into one array outside the timing.
  using cpu_item = std::conditional_t<pairs, item, K>;
  std::vector<cpu_item> work(static_cast<std::size_t>(n));
  const auto restore_work = [&] {
#pragma omp parallel for
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (pairs) {
        work[i] = item{data.input[i], typename data_type::value_type(i)};
      } else {
        work[i] = data.input[i];
      }
    }
  };
  const auto key_of = [](const cpu_item& x) -> K {
    if constexpr (pairs) {
      return x.key;
    } else {
      return x;
    }
  };
  const auto by_key = [key_of](const cpu_item& a, const cpu_item& b) { return key_of(a) < key_of(b); };
  const auto check_work = [&](std::string& why) {
    if constexpr (pairs) {  // an unstable sort: the keys' order only
      std::uint64_t bad = 0;
#pragma omp parallel for reduction(+ : bad)
      for (std::int64_t i = 1; i < n; ++i) bad += work[i].key < work[i - 1].key;
      if (bad == 0) return true;
      why = std::to_string(bad) + " keys out of order";
      return false;
    } else {
      return data.check(work.data(), nullptr, why);
    }
  };
  const auto cpu = [&](const std::string& name, auto sort_call) {
    harness::wall_call c;
    c.impl = name;
    c.role = "alt";
    c.reps = reps;
    c.warmups = 1;
    c.restore = restore_work;
    c.call = sort_call;
    c.verify = check_work;
    h.measure_wall(c);
  };
#if defined(_OPENMP)
  cpu("__gnu_parallel::sort (" + std::to_string(omp_get_max_threads()) + " threads)",
      [&] { __gnu_parallel::sort(work.begin(), work.end(), by_key); });
#else
  h.report("__gnu_parallel::sort", "alt", "SKIP", "tilesort-bench was built without OpenMP");
#endif
  if (n <= (std::int64_t(1) << 27)) {
    cpu("std::sort (1 thread)", [&] { std::sort(work.begin(), work.end(), by_key); });
  } else {
    h.report("std::sort (1 thread)", "alt", "SKIP", "over 2^27 items: minutes on one thread");
  }
}

}  // namespace

void add_host_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("host") || (opt.quick && opt.families.empty())) return;
  std::vector<std::int64_t> defaults;
  if (opt.quick) {
    defaults = {pow2(22), pow2(26)};
  } else {
    for (int k : {20, 24, 26, 28, 30, 31}) defaults.push_back(pow2(k));
  }
  const std::vector<std::int64_t> sizes = opt.sizes_or(defaults);
  for (const char* type : {"u32", "u64", "pairs32"}) {
    if (!opt.wants_type(type)) continue;
    for (const char* dist_text : {"random", "sorted", "few", "equal", "zipf", "bits20", "reversed", "nearly"}) {
      dist d;
      if (!parse_dist(dist_text, d) || !opt.wants_dist(dist_text, d == dist::random)) continue;
      for (std::int64_t n : sizes) {
        if (n <= 0) continue;
        for (bool pinned : {true, false}) {
          const std::string t = type;
          cases.push_back({"host", pinned ? "pinned" : "pageable", t, dist_text, n, [t, n, pinned, d](harness& h) {
                             if (t == "u32")
                               run_host<std::uint32_t, void>(h, n, pinned, d);
                             else if (t == "u64")
                               run_host<std::uint64_t, void>(h, n, pinned, d);
                             else
                               run_host<std::uint32_t, std::uint32_t>(h, n, pinned, d);
                           }});
        }
      }
    }
  }
}

}  // namespace bench
