// bench/cases_whole.cu — family "whole": the blog-style whole-program
// comparison. Keys are generated on the host with a fixed seed (uint8 and u32,
// n = 10^1 .. 10^8) and three tasks are timed by the wall clock
// (std::chrono around everything, cudaMalloc/cudaFree, pageable transfers and
// the final synchronisation included):
//   host->host  keys start and end in host memory
//   host->gpu   keys start on the host, the sorted keys stay on the GPU
//   gpu->gpu    keys start and end on the GPU (allocation and upload untimed)
// tilesort::merge_sort_keys (the convenience overload, which allocates its own
// temp storage) and thrust::sort(device_vector) run every task; std::sort on
// one thread and a multi-threaded host sort (sort chunks, then merge pairs of
// runs in parallel, each merge split by merge path) run host->host. The
// summary names the n from which the GPU wins. Outputs verified every time.
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <thread>

#include <tilesort/comparators.cuh>
#include <tilesort/device/merge_sort.cuh>

#include "bench.cuh"

namespace bench {
namespace {

int host_threads() { return std::max(1, int(std::thread::hardware_concurrency())); }

// f(begin, end, part) over `parts` contiguous slices of [0, n), one thread each.
template <typename F>
void parallel_for(std::int64_t n, int parts, F f) {
  if (parts <= 1 || n < 65536) {
    f(std::int64_t(0), n, 0);
    return;
  }
  std::vector<std::thread> pool;
  for (int p = 0; p < parts; ++p) pool.emplace_back(f, n * p / parts, n * (p + 1) / parts, p);
  for (auto& t : pool) t.join();
}

// Number of keys taken from `a` among the first `diagonal` outputs of
// std::merge(a, b) (which takes from `a` on ties).
template <typename T>
std::int64_t merge_split(const T* a, std::int64_t a_len, const T* b, std::int64_t b_len, std::int64_t diagonal) {
  std::int64_t lo = std::max<std::int64_t>(0, diagonal - b_len), hi = std::min(diagonal, a_len);
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (b[diagonal - 1 - mid] < a[mid])
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// The multi-threaded host sort: sort `parts` (a power of two) chunks in
// parallel, then log2(parts) rounds that merge pairs of runs, each merge split
// by merge path so that every round keeps all threads busy.
template <typename T>
void parallel_sort(T* data, std::int64_t n, int threads, std::vector<T>& scratch) {
  int parts = 1;
  while (parts * 2 <= threads) parts *= 2;
  if (parts == 1 || n < 65536) {
    std::sort(data, data + n);
    return;
  }
  scratch.resize(std::size_t(n));
  std::vector<std::int64_t> bounds(parts + 1);
  for (int p = 0; p <= parts; ++p) bounds[p] = n * p / parts;
  {
    std::vector<std::thread> pool;
    for (int p = 0; p < parts; ++p) pool.emplace_back([&, p] { std::sort(data + bounds[p], data + bounds[p + 1]); });
    for (auto& t : pool) t.join();
  }
  T* src = data;
  T* dst = scratch.data();
  for (int width = 1; width < parts; width *= 2) {
    const int pairs = parts / (2 * width);
    const int pieces = std::max(1, threads / pairs);
    std::vector<std::thread> pool;
    for (int g = 0; g < pairs; ++g) {
      const std::int64_t lo = bounds[2 * width * g], mid = bounds[2 * width * g + width],
                         hi = bounds[2 * width * (g + 1)];
      const T* a = src + lo;
      const T* b = src + mid;
      const std::int64_t a_len = mid - lo, b_len = hi - mid, total = hi - lo;
      for (int k = 0; k < pieces; ++k) {
        pool.emplace_back([=] {
          const std::int64_t d0 = total * k / pieces, d1 = total * (k + 1) / pieces;
          const std::int64_t a0 = merge_split(a, a_len, b, b_len, d0), a1 = merge_split(a, a_len, b, b_len, d1);
          std::merge(a + a0, a + a1, b + (d0 - a0), b + (d1 - a1), dst + lo + d0);
        });
      }
    }
    for (auto& t : pool) t.join();
    std::swap(src, dst);
  }
  if (src != data) {
    parallel_for(n, threads, [&](std::int64_t b, std::int64_t e, int) { std::copy(src + b, src + e, data + b); });
  }
}

template <typename T>
struct host_keys {
  std::int64_t n;
  std::vector<T> input, work, out, scratch;
  std::uint64_t fingerprint = 0;

  host_keys(std::int64_t count, std::uint64_t seed) : n(count), input(count), work(count), out(count) {
    const int parts = host_threads();
    std::vector<std::uint64_t> sums(parts, 0);
    parallel_for(n, parts, [&](std::int64_t b, std::int64_t e, int p) {
      std::uint64_t s = 0;
      for (std::int64_t i = b; i < e; ++i) {
        input[i] = make_key<T>(dist::random, i, n, seed);
        s += fingerprint_term(0, bits_of(input[i]), 0);
      }
      sums[p] = s;
    });
    for (auto s : sums) fingerprint += s;
  }

  // Sorted, and the same multiset of keys as the input.
  bool check(const T* keys, std::string& why) const {
    const int parts = host_threads();
    std::vector<std::uint64_t> sums(parts, 0), bad(parts, 0);
    parallel_for(n, parts, [&](std::int64_t b, std::int64_t e, int p) {
      std::uint64_t s = 0, v = 0;
      for (std::int64_t i = b; i < e; ++i) {
        s += fingerprint_term(0, bits_of(keys[i]), 0);
        if (i > 0 && keys[i] < keys[i - 1]) ++v;
      }
      sums[p] = s;
      bad[p] = v;
    });
    std::uint64_t s = 0, v = 0;
    for (int p = 0; p < parts; ++p) s += sums[p], v += bad[p];
    check_totals t{v, s};
    if (v != 0 || s != fingerprint) {
      why = describe_check(t, fingerprint, true);
      return false;
    }
    return true;
  }
};

enum class task { host_to_host, host_to_gpu, gpu_to_gpu };

std::string fmt_ms(double ms) {
  if (ms <= 0) return "(see its row)";
  char b[64];
  std::snprintf(b, sizeof b, "%.3g ms", ms);
  return b;
}

template <typename T>
void run_whole(harness& h, std::int64_t n, task t) {
  host_keys<T> keys(n, case_seed("whole " + h.type + " " + std::to_string(n)));
  const std::size_t bytes = std::size_t(n) * sizeof(T);
  const int reps = h.opt.reps_given ? h.opt.reps : 5;
  auto wall = [&](const std::string& impl, const std::string& role) {
    harness::wall_call c;
    c.impl = impl;
    c.role = role;
    c.reps = reps;
    c.warmups = 1;
    c.restore = [] {};
    return c;
  };
  auto check_out = [&](std::string& why) { return keys.check(keys.out.data(), why); };
  std::optional<dbuf<T>> dev;                        // tilesort's device keys (host->gpu, gpu->gpu)
  std::optional<thrust::device_vector<T>> dev_vector;  // Thrust's
  auto download = [&](const T* d) {
    BENCH_CHECK(cudaMemcpy(keys.out.data(), d, bytes, cudaMemcpyDeviceToHost));
  };

  // The transfers alone: what a GPU sort of this task cannot go below.
  if (t == task::host_to_host) {
    auto c = wall("cudaMalloc+H2D+D2H+cudaFree (no sort)", "ceiling");
    c.call = [&] {
      dbuf<T> d{std::size_t(n)};
      BENCH_CHECK(cudaMemcpy(d.get(), keys.input.data(), bytes, cudaMemcpyHostToDevice));
      download(d.get());
    };
    c.verify = [&](std::string& why) {
      if (std::equal(keys.input.begin(), keys.input.end(), keys.out.begin())) return true;
      why = "the round trip changed the keys";
      return false;
    };
    h.bound = "transfers " + fmt_ms(h.measure_wall(c).median_ms);
  } else if (t == task::host_to_gpu) {
    auto c = wall("cudaMalloc+H2D (no sort)", "ceiling");
    c.restore = [&] { dev.reset(); };
    c.call = [&] {
      dev.emplace(std::size_t(n));
      BENCH_CHECK(cudaMemcpy(dev->get(), keys.input.data(), bytes, cudaMemcpyHostToDevice));
      BENCH_CHECK(cudaDeviceSynchronize());
    };
    c.verify = [&](std::string&) {
      dev.reset();
      return true;
    };
    h.bound = "upload " + fmt_ms(h.measure_wall(c).median_ms);
  } else {
    char b[64];
    std::snprintf(b, sizeof b, "copy %.0f GKeys/s", h.copy_bound_gkeys(2.0 * sizeof(T)));
    h.bound = b;
  }

  {  // tilesort
    auto c = wall("tilesort::merge_sort_keys", "tilesort");
    c.note = "convenience overload";
    if (t == task::host_to_host) {
      c.call = [&] {
        dbuf<T> d{std::size_t(n)};
        BENCH_CHECK(cudaMemcpy(d.get(), keys.input.data(), bytes, cudaMemcpyHostToDevice));
        BENCH_CHECK(tilesort::merge_sort_keys(d.get(), d.get(), n, tilesort::less{}, cudaStream_t{}));
        download(d.get());
      };
      c.verify = check_out;
    } else {
      c.restore = [&] {
        dev.reset();
        if (t == task::gpu_to_gpu) {
          dev.emplace(std::size_t(n));
          BENCH_CHECK(cudaMemcpy(dev->get(), keys.input.data(), bytes, cudaMemcpyHostToDevice));
          BENCH_CHECK(cudaDeviceSynchronize());
        }
      };
      c.call = [&] {
        if (t == task::host_to_gpu) {
          dev.emplace(std::size_t(n));
          BENCH_CHECK(cudaMemcpy(dev->get(), keys.input.data(), bytes, cudaMemcpyHostToDevice));
        }
        BENCH_CHECK(tilesort::merge_sort_keys(dev->get(), dev->get(), n, tilesort::less{}, cudaStream_t{}));
        BENCH_CHECK(cudaDeviceSynchronize());
      };
      c.verify = [&](std::string& why) {
        download(dev->get());
        dev.reset();
        return check_out(why);
      };
    }
    h.measure_wall(c);
  }

  {  // Thrust, as the blog writes it
    auto c = wall("thrust::sort(device_vector)", "alt");
    if (t == task::host_to_host) {
      c.call = [&] {
        thrust::device_vector<T> d(keys.input.begin(), keys.input.end());
        thrust::sort(d.begin(), d.end());
        thrust::copy(d.begin(), d.end(), keys.out.begin());
      };
      c.verify = check_out;
    } else {
      c.restore = [&] {
        dev_vector.reset();
        if (t == task::gpu_to_gpu) {
          dev_vector.emplace(keys.input.begin(), keys.input.end());
          BENCH_CHECK(cudaDeviceSynchronize());
        }
      };
      c.call = [&] {
        if (t == task::host_to_gpu) dev_vector.emplace(keys.input.begin(), keys.input.end());
        thrust::sort(dev_vector->begin(), dev_vector->end());
        BENCH_CHECK(cudaDeviceSynchronize());
      };
      c.verify = [&](std::string& why) {
        thrust::copy(dev_vector->begin(), dev_vector->end(), keys.out.begin());
        dev_vector.reset();
        return check_out(why);
      };
    }
    h.measure_wall(c);
  }

  if (t == task::host_to_host) {  // the CPU
    auto restore_work = [&] { std::copy(keys.input.begin(), keys.input.end(), keys.work.begin()); };
    auto check_work = [&](std::string& why) { return keys.check(keys.work.data(), why); };
    {
      auto c = wall("std::sort (1 thread)", "alt");
      c.restore = restore_work;
      c.call = [&] { std::sort(keys.work.begin(), keys.work.end()); };
      c.verify = check_work;
      h.measure_wall(c);
    }
    {
      const int threads = host_threads();
      auto c = wall("parallel sort (" + std::to_string(threads) + " threads)", "alt");
      if (n < 65536) c.note = "one std::sort below 65536 keys";
      c.restore = restore_work;
      c.call = [&, threads] { parallel_sort(keys.work.data(), n, threads, keys.scratch); };
      c.verify = check_work;
      h.measure_wall(c);
    }
  }
}

}  // namespace

void add_whole_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("whole") || !opt.wants_dist("random", true)) return;
  std::vector<std::int64_t> defaults;
  std::vector<std::string> types = {"u8", "u32"};
  if (opt.quick) {
    defaults = {pow10(3), pow10(6), pow10(7)};
    if (opt.types.empty()) types = {"u8"};
  } else {
    for (int k = 1; k <= 8; ++k) defaults.push_back(pow10(k));
  }
  const std::vector<std::int64_t> sizes = opt.sizes_or(defaults);
  const std::pair<task, const char*> tasks[] = {
      {task::host_to_host, "host->host"}, {task::host_to_gpu, "host->gpu"}, {task::gpu_to_gpu, "gpu->gpu"}};
  for (const std::string& type : types) {
    if (!opt.wants_type(type)) continue;
    for (std::int64_t n : sizes) {
      if (n <= 0) continue;
      for (const auto& [t, name] : tasks) {
        const task which = t;
        cases.push_back({"whole", name, type, "random", n, [which, n, type](harness& h) {
                           if (type == "u8")
                             run_whole<std::uint8_t>(h, n, which);
                           else
                             run_whole<std::uint32_t>(h, n, which);
                         }});
      }
    }
  }
}

}  // namespace bench
