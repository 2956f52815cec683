// bench/cases_locality.cu — family "locality": tilesort::locality_sort_keys/pairs
// against tilesort::merge_sort_keys/pairs and cub::DeviceMergeSort on u32 keys
// and u32/u32 pairs, 2^20 .. 2^28, on nearly sorted keys (keys[i] = i +
// rand() % 64: bench's "nearly"), sorted keys and random keys. Out of place
// from the restored working copy (CUB sorts it in place); locality sort also
// in place, where in-order tiles are read and never written. Sorted input
// also times one device-to-device copy of the same bytes (the "ceiling" row):
// what no sort of that input can beat at that size.
//
// The tilesort row's note has the sort's statistics (sort_stats, from one
// extra call before the timed ones): merge full-pass equivalents, window
// merges and the final copy.
#include <cstdio>

#include <tilesort/comparators.cuh>
#include <tilesort/device/locality_sort.cuh>
#include <tilesort/device/merge_sort.cuh>

#include "alternatives.cuh"
#include "bench.cuh"

namespace bench {

void add_locality_cases(const options& opt, std::vector<bench_case>& cases);

namespace {

template <typename V>
cudaError_t locality(void* temp, std::size_t& bytes, const std::uint32_t* keys_in, std::uint32_t* keys_out,
                     const value_t<V>* values_in, value_t<V>* values_out, std::int64_t n, cudaStream_t s,
                     const tilesort::sort_options& options = {}) {
  if constexpr (std::is_void_v<V>) {
    return tilesort::locality_sort_keys(temp, bytes, keys_in, keys_out, n, tilesort::less{}, s, options);
  } else {
    return tilesort::locality_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, tilesort::less{},
                                         s, options);
  }
}

template <typename V>
cudaError_t merge(void* temp, std::size_t& bytes, const std::uint32_t* keys_in, std::uint32_t* keys_out,
                  const value_t<V>* values_in, value_t<V>* values_out, std::int64_t n, cudaStream_t s) {
  if constexpr (std::is_void_v<V>) {
    return tilesort::merge_sort_keys(temp, bytes, keys_in, keys_out, n, tilesort::less{}, s);
  } else {
    return tilesort::merge_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, tilesort::less{}, s);
  }
}

// "merged 0.03 full passes, 2047 boundary + 0 pass window merges, final copy 0.00, 0/2048 tiles in order"
std::string describe_stats(const tilesort::sort_stats& s) {
  std::int64_t windows = 0;
  for (int p = 0; p < s.merge_passes && p < tilesort::sort_stats::max_passes; ++p) windows += s.pass[p].window_merges;
  char b[192];
  std::snprintf(b, sizeof b,
                "merged %.2f full passes, %lld boundary + %lld pass window merges, final copy %.2f, %lld/%lld tiles "
                "in order",
                s.merge_pass_equivalents(), static_cast<long long>(s.boundary.window_merges),
                static_cast<long long>(windows), s.copy_pass_equivalents(),
                static_cast<long long>(s.presorted_tiles), static_cast<long long>(s.blocksort_tiles));
  return b;
}

template <typename V>
void run_locality(harness& h, std::int64_t n, dist d) {
  using u32 = std::uint32_t;
  constexpr bool pairs = !std::is_void_v<V>;
  device_data<u32, V> data(h, n, d, case_seed("locality " + h.type + " " + std::to_string(n) + " " + dist_name(d)));
  char bound[64];
  std::snprintf(bound, sizeof bound, "copy %.0f GKeys/s", h.copy_bound_gkeys(2.0 * (sizeof(u32) + value_size<V>())));
  h.bound = bound;
  const char* what = pairs ? "pairs" : "keys";

  auto row = [&](const std::string& impl, const char* role, const u32* keys_out, const value_t<V>* values_out) {
    return timed_call_for(impl, role, data.restore(h),
                          verifier<u32, V>(h, keys_out, values_out, n, 0, tilesort::less{}, data.fingerprint), true);
  };

  for (const bool in_place : {false, true}) {  // tilesort::locality_sort
    u32* keys_out = in_place ? data.keys.get() : data.out_keys.get();
    value_t<V>* values_out = in_place ? data.values.get() : data.out_values.get();
    auto sort = [&, keys_out, values_out](void* temp, std::size_t& bytes, cudaStream_t s) {
      return locality<V>(temp, bytes, data.keys.get(), keys_out, data.values.get(), values_out, n, s);
    };
    auto statistics = [&, keys_out, values_out](harness::timed_call& c, void* temp, std::size_t bytes) {
      if (in_place) return;  // statistics from one untimed call, out of place
      tilesort::sort_stats* stats = nullptr;
      BENCH_CHECK(cudaMallocHost(&stats, sizeof *stats));
      tilesort::sort_options options;
      options.stats = stats;
      c.restore();
      BENCH_CHECK(locality<V>(temp, bytes, data.keys.get(), keys_out, data.values.get(), values_out, n, h.stream,
                              options));
      BENCH_CHECK(cudaStreamSynchronize(h.stream));
      c.note = describe_stats(*stats);
      BENCH_CHECK(cudaFreeHost(stats));
    };
    measure_two_phase(h,
                      row(std::string("tilesort::locality_sort_") + what + (in_place ? " (in place)" : ""), "tilesort",
                          keys_out, values_out),
                      sort, statistics);
  }
  {  // tilesort::merge_sort, the same way
    harness::timed_call c =
        row(std::string("tilesort::merge_sort_") + what, "alt", data.out_keys.get(), data.out_values.get());
    c.note = "no early exit";
    measure_two_phase(h, c, [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      return merge<V>(temp, bytes, data.keys.get(), data.out_keys.get(), data.values.get(), data.out_values.get(), n,
                      s);
    });
  }
  if (d == dist::sorted) {  // the floor for sorted input at this size: one copy, host launch cost included
    harness::timed_call c = row(pairs ? "cudaMemcpyAsync keys + values (ceiling)" : "cudaMemcpyAsync keys (ceiling)",
                                "ceiling", data.out_keys.get(), data.out_values.get());
    c.call = [&](cudaStream_t s) {
      cudaError_t e = cudaMemcpyAsync(data.out_keys.get(), data.keys.get(), n * sizeof(u32), cudaMemcpyDeviceToDevice, s);
      if constexpr (pairs) {
        if (e == cudaSuccess)
          e = cudaMemcpyAsync(data.out_values.get(), data.values.get(), n * sizeof(value_t<V>), cudaMemcpyDeviceToDevice,
                              s);
      }
      return e;
    };
    h.measure(c);
  }
  // cub::DeviceMergeSort, in place
  measure_two_phase(h,
                    row(std::string("cub::DeviceMergeSort::Sort") + (pairs ? "Pairs" : "Keys"), "alt", data.keys.get(),
                        data.values.get()),
                    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
                      return alt::cub_merge_sort<u32, V>(temp, bytes, data.keys.get(), data.values.get(), n,
                                                         tilesort::less{}, s);
                    });
}

}  // namespace

void add_locality_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("locality")) return;
  std::vector<std::int64_t> defaults;
  if (opt.quick) {
    defaults = {pow2(20), pow2(24)};
  } else {
    for (int k = 20; k <= 28; k += 2) defaults.push_back(pow2(k));
  }
  for (const char* type : {"u32", "pairs32"}) {
    if (!opt.wants_type(type)) continue;
    const bool pairs = std::string(type) == "pairs32";
    for (std::int64_t n : opt.sizes_or(defaults)) {
      if (n <= 0) continue;
      for (dist d : {dist::nearly, dist::sorted, dist::random}) {
        if (!opt.wants_dist(dist_name(d), true)) continue;
        cases.push_back({"locality", pairs ? "locality_sort_pairs" : "locality_sort_keys", type, dist_name(d), n,
                         [n, d, pairs](harness& h) {
                           if (pairs) {
                             run_locality<std::uint32_t>(h, n, d);
                           } else {
                             run_locality<void>(h, n, d);
                           }
                         }});
      }
    }
  }
}

}  // namespace bench
