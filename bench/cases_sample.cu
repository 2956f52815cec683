// bench/cases_sample.cu — family "sample": device-resident
// tilesort::sample_sort_keys/pairs (the front door's rows are in the merge
// family) against cub::DeviceMergeSort (same comparator) and
// cub::DeviceRadixSort (primitive keys only), all in the same run. Types:
// u32, u64, pairs32, pairs64, struct (the merge family's {u32 a; u32 b;}
// key ordered by a). Sizes 2^16..2^28 (default 2^20..2^28); distributions
// random, sorted, reversed, few distinct, nearly sorted. The bound is the
// sample sort's traffic: 3 reads and 2 writes of every item with one
// classification level, 5 and 3 with two.
#include <string>

#include <tilesort/comparators.cuh>
#include <tilesort/device/sample_sort.cuh>

#include "alternatives.cuh"
#include "bench.cuh"

namespace bench {
namespace {

template <typename K, typename V, typename Compare>
cudaError_t tilesort_sample(void* temp, std::size_t& bytes, const K* keys_in, K* keys_out, const value_t<V>* values_in,
                            value_t<V>* values_out, std::int64_t n, Compare comp, cudaStream_t s) {
  if constexpr (std::is_void_v<V>) {
    return tilesort::sample_sort_keys(temp, bytes, keys_in, keys_out, n, comp, s);
  } else {
    return tilesort::sample_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, comp, s);
  }
}

template <typename K, typename V>
std::string sample_bound(const harness& h, std::int64_t n) {
  const double item = double(sizeof(K) + value_size<V>());
  using value = std::conditional_t<std::is_void_v<V>, tilesort::detail::no_value, V>;
  const bool two = tilesort::detail::make_sample_sort_plan_for<K, value>(n).two_level;
  const int reads = two ? 5 : 3, writes = two ? 3 : 2;
  char b[96];
  std::snprintf(b, sizeof b, "%d reads + %d writes x %.0f B/key: %.3g GKeys/s", reads, writes, item,
                h.copy_bound_gkeys((reads + writes) * item));
  return b;
}

template <typename K, typename V, typename Compare>
void run_sample(harness& h, std::int64_t n, dist d, Compare comp, bool with_radix) {
  device_data<K, V> data(h, n, d, case_seed("sample " + h.type + " " + std::to_string(n) + " " + dist_name(d)));
  h.bound = sample_bound<K, V>(h, n);
  const char* what = std::is_void_v<V> ? "keys" : "pairs";
  measure_two_phase(h, data_row(h, data, comp, std::string("tilesort::sample_sort_") + what, "tilesort", false),
                    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
                      return tilesort_sample<K, V>(temp, bytes, data.keys.get(), data.out_keys.get(),
                                                   data.values.get(), data.out_values.get(), n, comp, s);
                    });
  measure_cub_merge(h, data, comp);
  if (with_radix) measure_cub_radix(h, data, comp);
}

using sample_runner = void (*)(harness&, std::int64_t, dist);

template <typename K, typename V, typename Compare, bool Radix>
void run_sample_typed(harness& h, std::int64_t n, dist d) {
  run_sample<K, V>(h, n, d, Compare{}, Radix);
}

struct sample_type {
  const char* name;
  sample_runner run;
};

const sample_type kSampleTypes[] = {
    {"u32", run_sample_typed<std::uint32_t, void, tilesort::less, true>},
    {"u64", run_sample_typed<std::uint64_t, void, tilesort::less, true>},
    {"pairs32", run_sample_typed<std::uint32_t, std::uint32_t, tilesort::less, true>},
    {"pairs64", run_sample_typed<std::uint64_t, std::uint64_t, tilesort::less, true>},
    {"struct", run_sample_typed<pair_key, void, by_a, false>},
};

}  // namespace

void add_sample_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("sample")) return;
  auto add = [&](const sample_type& t, std::int64_t n, dist d) {
    if (!opt.wants_type(t.name) || !opt.wants_dist(dist_name(d), true)) return;
    sample_runner run = t.run;
    cases.push_back({"sample", "sample_sort", t.name, dist_name(d), n, [run, n, d](harness& h) { run(h, n, d); }});
  };
  if (opt.quick && opt.sizes.empty() && opt.types.empty() && opt.dists.empty()) {
    add(kSampleTypes[0], pow2(22), dist::random);
    add(kSampleTypes[0], pow2(24), dist::random);
    add(kSampleTypes[0], pow2(24), dist::few);
    add(kSampleTypes[2], pow2(24), dist::random);
    return;
  }
  std::vector<std::int64_t> defaults;
  for (int k = opt.quick ? 22 : 20; k <= (opt.quick ? 26 : 28); k += opt.quick ? 2 : 1) defaults.push_back(pow2(k));
  const std::vector<std::int64_t> sizes = opt.sizes_or(defaults);
  for (const auto& t : kSampleTypes)
    for (std::int64_t n : sizes)
      for (dist d : {dist::random, dist::sorted, dist::reversed, dist::few, dist::nearly}) add(t, n, d);
}

}  // namespace bench
