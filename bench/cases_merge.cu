// bench/cases_merge.cu — family "merge": device-resident
// tilesort::merge_sort_keys/pairs, the front door tilesort::sort_keys/pairs
// (its note names the algorithm it ran), tilesort::locality_sort_keys/pairs
// and (keys with a radix image) tilesort::radix_sort_keys/pairs against
// cub::DeviceMergeSort (same comparator), thrust::sort and
// thrust::stable_sort with the comparator, and cub::DeviceRadixSort
// (primitive keys only) as the non-comparison reference.
// Types: u32, u64, f32, pairs32 (u32/u32), pairs64 (u64/u64), struct (a
// {u32 a; u32 b;} key ordered by a with a user comparator). Sizes 2^10..2^28;
// distributions random, sorted, reversed, few distinct, nearly sorted. For
// n <= 2^16 the automatic timing mode adds gpu-mode (latency) rows.
#include <cstdio>

#include <tilesort/comparators.cuh>
#include <tilesort/device/locality_sort.cuh>
#include <tilesort/device/merge_sort.cuh>
#include <tilesort/device/radix_sort.cuh>
#include <tilesort/device/sort.cuh>

#include "alternatives.cuh"
#include "bench.cuh"

namespace bench {
namespace {

// Which of our sorts a row times.
enum class entry { merge, front_door, locality, radix };

// tilesort::merge_sort_*, sort_* (the front door) or locality_sort_*,
// two-phase, keys or pairs.
template <entry E, typename K, typename V, typename Compare>
cudaError_t tilesort_sort(void* temp, std::size_t& bytes, const K* keys_in, K* keys_out, const value_t<V>* values_in,
                          value_t<V>* values_out, std::int64_t n, Compare comp, cudaStream_t s,
                          const tilesort::sort_options& options = {}) {
  if constexpr (std::is_void_v<V>) {
    if constexpr (E == entry::radix) return tilesort::radix_sort_keys(temp, bytes, keys_in, keys_out, n, comp, s);
    if constexpr (E == entry::front_door) return tilesort::sort_keys(temp, bytes, keys_in, keys_out, n, comp, s, options);
    if constexpr (E == entry::locality) return tilesort::locality_sort_keys(temp, bytes, keys_in, keys_out, n, comp, s);
    return tilesort::merge_sort_keys(temp, bytes, keys_in, keys_out, n, comp, s);
  } else {
    if constexpr (E == entry::radix)
      return tilesort::radix_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, comp, s);
    if constexpr (E == entry::front_door)
      return tilesort::sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, comp, s, options);
    if constexpr (E == entry::locality)
      return tilesort::locality_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, comp, s);
    return tilesort::merge_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, comp, s);
  }
}

template <typename K, typename V>
std::string merge_bound(const harness& h, std::int64_t n) {
  return pass_bound(h, tilesort::merge_sort_passes<K, V>(n), double(sizeof(K) + value_size<V>()));
}

template <typename K, typename V, typename Compare>
void run_merge(harness& h, std::int64_t n, dist d, Compare comp, bool with_radix) {
  device_data<K, V> data(h, n, d, case_seed("merge " + h.type + " " + std::to_string(n) + " " + dist_name(d)));
  h.bound = merge_bound<K, V>(h, n);
  const char* what = std::is_void_v<V> ? "keys" : "pairs";
  // Every row times from the restored working copy (data_row); tilesort out
  // of place, CUB merge sort and Thrust in place, CUB radix sort out of place.
  const auto sort = [&](auto e) {
    return [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      return tilesort_sort<decltype(e)::value, K, V>(temp, bytes, data.keys.get(), data.out_keys.get(),
                                                     data.values.get(), data.out_values.get(), n, comp, s);
    };
  };
  measure_two_phase(h, data_row(h, data, comp, std::string("tilesort::merge_sort_") + what, "tilesort", false),
                    sort(std::integral_constant<entry, entry::merge>{}));
  // The front door; its note names the algorithm that ran (sort_stats, from
  // one untimed call: the probe decides on the device).
  const auto which_ran = [&](harness::timed_call& c, void* temp, std::size_t bytes) {
    tilesort::sort_stats* stats = nullptr;
    BENCH_CHECK(cudaMallocHost(&stats, sizeof *stats));
    tilesort::sort_options options;
    options.stats = stats;
    c.restore();
    BENCH_CHECK((tilesort_sort<entry::front_door, K, V>(temp, bytes, data.keys.get(), data.out_keys.get(),
                                                        data.values.get(), data.out_values.get(), n, comp, h.stream,
                                                        options)));
    BENCH_CHECK(cudaStreamSynchronize(h.stream));
    c.note = std::string("front door: ") + tilesort::sort_algorithm_name(stats->algorithm);
    BENCH_CHECK(cudaFreeHost(stats));
  };
  measure_two_phase(h, data_row(h, data, comp, std::string("tilesort::sort_") + what, "alt", false),
                    sort(std::integral_constant<entry, entry::front_door>{}), which_ran);
  measure_two_phase(h, data_row(h, data, comp, std::string("tilesort::locality_sort_") + what, "alt", false),
                    sort(std::integral_constant<entry, entry::locality>{}));
  if constexpr (tilesort::detail::radix_sortable<K, Compare>)
    measure_two_phase(h, data_row(h, data, comp, std::string("tilesort::radix_sort_") + what, "alt", false),
                      sort(std::integral_constant<entry, entry::radix>{}));
  measure_cub_merge(h, data, comp);
  for (const bool stable : {false, true}) {  // Thrust, in place, temp allocated inside
    harness::timed_call c = data_row(h, data, comp,
                                     std::string("thrust::") + (stable ? "stable_sort" : "sort") +
                                         (std::is_void_v<V> ? "" : "_by_key") + "(comp)",
                                     "alt", true);
    c.call = [&, stable](cudaStream_t s) {
      return alt::thrust_sort<K, V>(data.keys.get(), data.values.get(), n, comp, stable, s);
    };
    h.measure(c);
  }
  if (with_radix) measure_cub_radix(h, data, comp);
}

using merge_runner = void (*)(harness&, std::int64_t, dist);

template <typename K, typename V, typename Compare, bool Radix>
void run_typed(harness& h, std::int64_t n, dist d) {
  run_merge<K, V>(h, n, d, Compare{}, Radix);
}

struct merge_type {
  const char* name;
  merge_runner run;
};

const merge_type kMergeTypes[] = {
    {"u32", run_typed<std::uint32_t, void, tilesort::less, true>},
    {"u64", run_typed<std::uint64_t, void, tilesort::less, true>},
    {"f32", run_typed<float, void, tilesort::less, true>},
    {"pairs32", run_typed<std::uint32_t, std::uint32_t, tilesort::less, true>},
    {"pairs32_64", run_typed<std::uint32_t, std::uint64_t, tilesort::less, true>},
    {"pairs64", run_typed<std::uint64_t, std::uint64_t, tilesort::less, true>},
    {"struct", run_typed<pair_key, void, by_a, false>},
};

merge_runner runner_for(const std::string& type) {
  for (const auto& t : kMergeTypes)
    if (type == t.name) return t.run;
  return nullptr;
}

}  // namespace

void add_merge_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("merge")) return;
  auto add = [&](const std::string& type, std::int64_t n, dist d) {
    merge_runner run = runner_for(type);
    if (!run || !opt.wants_type(type) || !opt.wants_dist(dist_name(d), true)) return;
    cases.push_back({"merge", "merge_sort", type, dist_name(d), n, [run, n, d](harness& h) { run(h, n, d); }});
  };
  if (opt.quick && opt.sizes.empty() && opt.types.empty() && opt.dists.empty()) {
    for (int k : {10, 14, 20, 24, 26}) add("u32", pow2(k), dist::random);
    add("u32", pow2(24), dist::sorted);
    add("u32", pow2(24), dist::nearly);
    add("u64", pow2(24), dist::random);
    add("pairs32", pow2(24), dist::random);
    return;
  }
  std::vector<std::int64_t> defaults;
  if (opt.quick) {
    defaults = {pow2(10), pow2(14), pow2(20), pow2(24)};
  } else {
    for (int k = 10; k <= 28; ++k) defaults.push_back(pow2(k));
  }
  const std::vector<std::int64_t> sizes = opt.sizes_or(defaults);
  for (const auto& t : kMergeTypes)
    for (std::int64_t n : sizes)
      for (dist d : {dist::random, dist::sorted, dist::reversed, dist::few, dist::nearly}) add(t.name, n, d);
}

}  // namespace bench
