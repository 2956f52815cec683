// bench/cases_bitonic.cu — family "bitonic": tilesort::bitonic_sort_keys/pairs
// (u32, u64, f32 keys; u32/u32 pairs) against tilesort::merge_sort,
// cub::DeviceMergeSort, thrust::sort with the comparator and
// cub::DeviceRadixSort (reference). Sizes 2^8..2^28 plus non-powers of two
// (2^k + 1 and 3 * 2^k), where a bitonic network must pad or split. For
// n <= 2^16 the automatic timing mode adds gpu-mode (latency) rows. The bound
// column names bitonic_sort's global pass count for each n and the copy
// ceiling over that many passes.
#include <algorithm>
#include <cstdio>

#include <tilesort/comparators.cuh>
#include <tilesort/device/bitonic_sort.cuh>
#include <tilesort/device/merge_sort.cuh>

#include "alternatives.cuh"
#include "bench.cuh"

namespace bench {
namespace {

// Global passes (kernel launches over the whole array) of bitonic_sort for n
// keys on sm_90: one block or one cluster sorts up to 16 tiles of tile_4k;
// else the plan's passes.
template <typename K, typename V>
int bitonic_passes(std::int64_t n) {
  using value = std::conditional_t<std::is_void_v<V>, tilesort::detail::no_value, V>;
  using policy = typename tilesort::detail::bitonic_sort_policy_for<K, value>::type;
  if (n <= 1) return 0;
  if (n <= policy::tile::tile_items || n <= policy::cluster_blocks * std::int64_t(policy::tile_4k::tile_items)) return 1;
  return tilesort::detail::bitonic_plan::make(n, policy::tile::tile_log, policy::run_log, policy::fused_runs)
      .pass_count();
}

enum class sorter { bitonic, merge, cub_merge, cub_radix, thrust };

template <typename K, typename V>
cudaError_t call_sorter(sorter which, void* temp, std::size_t& bytes, device_data<K, V>& d, std::int64_t n,
                        cudaStream_t s) {
  const tilesort::less comp{};
  constexpr bool pairs = !std::is_void_v<V>;
  switch (which) {
    case sorter::bitonic:
      if constexpr (pairs) {
        return tilesort::bitonic_sort_pairs(temp, bytes, d.keys.get(), d.out_keys.get(), d.values.get(),
                                            d.out_values.get(), n, comp, s);
      } else {
        return tilesort::bitonic_sort_keys(temp, bytes, d.keys.get(), d.out_keys.get(), n, comp, s);
      }
    case sorter::merge:
      if constexpr (pairs) {
        return tilesort::merge_sort_pairs(temp, bytes, d.keys.get(), d.out_keys.get(), d.values.get(),
                                          d.out_values.get(), n, comp, s);
      } else {
        return tilesort::merge_sort_keys(temp, bytes, d.keys.get(), d.out_keys.get(), n, comp, s);
      }
    case sorter::cub_merge: return alt::cub_merge_sort<K, V>(temp, bytes, d.keys.get(), d.values.get(), n, comp, s);
    case sorter::cub_radix:
      return alt::cub_radix_sort<K, V>(temp, bytes, d.keys.get(), d.out_keys.get(), d.values.get(), d.out_values.get(),
                                       n, s);
    case sorter::thrust:
      if (temp == nullptr) {
        bytes = 0;  // Thrust allocates inside the call
        return cudaSuccess;
      }
      return alt::thrust_sort<K, V>(d.keys.get(), d.values.get(), n, comp, false, s);
  }
  return cudaErrorInvalidValue;
}

template <typename K, typename V>
void run_bitonic(harness& h, std::int64_t n, dist dd) {
  constexpr bool pairs = !std::is_void_v<V>;
  device_data<K, V> data(h, n, dd, case_seed("bitonic " + h.type + " " + std::to_string(n) + " " + dist_name(dd)));
  // The bound of our own global pass count, so the pass count per n is in every record.
  h.bound = pass_bound(h, bitonic_passes<K, V>(n), double(sizeof(K) + value_size<V>()));
  struct entry {
    sorter which;
    std::string impl, role, note;
    bool in_place;
  };
  const std::vector<entry> entries = {
      {sorter::bitonic, pairs ? "tilesort::bitonic_sort_pairs" : "tilesort::bitonic_sort_keys", "tilesort", "", false},
      {sorter::merge, pairs ? "tilesort::merge_sort_pairs" : "tilesort::merge_sort_keys", "alt", "", false},
      {sorter::cub_merge, pairs ? "cub::DeviceMergeSort::SortPairs" : "cub::DeviceMergeSort::SortKeys", "alt", "", true},
      {sorter::thrust, pairs ? "thrust::sort_by_key(comp)" : "thrust::sort(comp)", "alt", "", true},
      {sorter::cub_radix, pairs ? "cub::DeviceRadixSort::SortPairs" : "cub::DeviceRadixSort::SortKeys", "ref",
       "radix (reference)", false},
  };
  for (const entry& e : entries) {
    harness::timed_call c = timed_call_for(
        e.impl, e.role, data.restore(h),
        e.in_place ? verifier<K, V>(h, data.keys.get(), data.values.get(), n, 0, tilesort::less{}, data.fingerprint)
                   : verifier<K, V>(h, data.out_keys.get(), data.out_values.get(), n, 0, tilesort::less{},
                                    data.fingerprint),
        true);
    c.note = e.note;
    const sorter which = e.which;
    measure_two_phase(h, c, [&, which](void* temp, std::size_t& bytes, cudaStream_t s) {
      return call_sorter<K, V>(which, temp, bytes, data, n, s);
    });
  }
}

using bitonic_runner = void (*)(harness&, std::int64_t, dist);
struct bitonic_type {
  const char* name;
  bitonic_runner run;
};
const bitonic_type kBitonicTypes[] = {
    {"u32", run_bitonic<std::uint32_t, void>},
    {"u64", run_bitonic<std::uint64_t, void>},
    {"f32", run_bitonic<float, void>},
    {"pairs32", run_bitonic<std::uint32_t, std::uint32_t>},
};

}  // namespace

void add_bitonic_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("bitonic")) return;
  auto add = [&](const bitonic_type& t, std::int64_t n, dist d) {
    if (!opt.wants_type(t.name) || !opt.wants_dist(dist_name(d), d == dist::random)) return;
    bitonic_runner run = t.run;
    cases.push_back({"bitonic", "bitonic_sort", t.name, dist_name(d), n, [run, n, d](harness& h) { run(h, n, d); }});
  };
  if (opt.quick && opt.sizes.empty() && opt.types.empty() && opt.dists.empty()) {
    for (std::int64_t n : {pow2(10), pow2(14), pow2(16), pow2(20), pow2(24), pow2(24) + 1})
      add(kBitonicTypes[0], n, dist::random);
    return;
  }
  std::vector<std::int64_t> defaults;
  if (opt.quick) {
    defaults = {pow2(10), pow2(14), pow2(16), pow2(20), pow2(24), pow2(24) + 1};
  } else {
    for (int k = 8; k <= 28; ++k) defaults.push_back(pow2(k));
    for (int k : {10, 16, 20, 24}) {
      defaults.push_back(pow2(k) + 1);
      defaults.push_back(3 * pow2(k));
    }
    std::sort(defaults.begin(), defaults.end());
  }
  const std::vector<std::int64_t> sizes = opt.sizes_or(defaults);
  for (const auto& t : kBitonicTypes)
    for (std::int64_t n : sizes)
      for (dist d : {dist::random, dist::sorted, dist::reversed, dist::few, dist::nearly}) add(t, n, d);
}

}  // namespace bench
