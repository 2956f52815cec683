// bench/cases_radix.cu — family "radix": device-resident
// tilesort::radix_sort_keys/pairs against cub::DeviceRadixSort (both out of
// place, caller-owned temp storage, all bits of the key), in the same run.
// Each row's note gives the temp storage of that call. Types: u8, u16, u32,
// i32, u64, i64, f16, bf16, f32, f64 keys; pairs32 (u32/u32), pairs32_64 (u32 keys,
// u64 values: an index payload), pairs64 (u64/u64). Distributions: random,
// sorted, reversed, few (16 values), equal, zipf, bits20 (20 random low bits),
// top1 / top2 (every key in one or two top-byte buckets), lowbit (keys that
// differ in the lowest bit only).
// Sizes 2^10..2^28 (default 2^16, 2^20, 2^22, 2^24, 2^26, 2^28). The bound
// is an LSD radix sort's traffic with every 8-bit digit: one read of the
// keys for the histogram, then a read and a write of every item per digit.
#include <cstdio>
#include <cstring>

#include <tilesort/comparators.cuh>
#include <tilesort/device/radix_sort.cuh>

#include "alternatives.cuh"
#include "bench.cuh"

namespace bench {
namespace {

template <typename K, typename V>
std::string radix_bound(const harness& h) {
  const int passes = int(sizeof(K));
  const double bytes = double(sizeof(K)) * (1 + 2 * passes) + 2.0 * passes * double(value_size<V>());
  char b[96];
  std::snprintf(b, sizeof b, "%d digits, %.0f B/key: %.3g GKeys/s", passes, bytes, h.copy_bound_gkeys(bytes));
  return b;
}

std::string temp_note(std::size_t bytes) {
  char b[48];
  std::snprintf(b, sizeof b, "temp %.2f MB", double(bytes) / 1e6);
  return b;
}

template <typename K, typename V>
void run_radix(harness& h, std::int64_t n, dist d) {
  device_data<K, V> data(h, n, d, case_seed("radix " + h.type + " " + std::to_string(n) + " " + dist_name(d)));
  h.bound = radix_bound<K, V>(h);
  const tilesort::less order;
  const auto note_temp = [](harness::timed_call& c, void*, std::size_t bytes) { c.note = temp_note(bytes); };
  const bool pairs = !std::is_void_v<V>;
  measure_two_phase(
      h, data_row(h, data, order, std::string("tilesort::radix_sort_") + (pairs ? "pairs" : "keys"), "tilesort", false),
      [&](void* temp, std::size_t& bytes, cudaStream_t s) {
        if constexpr (std::is_void_v<V>) {
          return tilesort::radix_sort_keys(temp, bytes, data.keys.get(), data.out_keys.get(), n, order, s);
        } else {
          return tilesort::radix_sort_pairs(temp, bytes, data.keys.get(), data.out_keys.get(), data.values.get(),
                                            data.out_values.get(), n, order, s);
        }
      },
      note_temp);
  measure_two_phase(h,
                    data_row(h, data, order, std::string("cub::DeviceRadixSort::Sort") + (pairs ? "Pairs" : "Keys"),
                             "alt", false),
                    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
                      return alt::cub_radix_sort<K, V>(temp, bytes, data.keys.get(), data.out_keys.get(),
                                                       data.values.get(), data.out_values.get(), n, s);
                    },
                    note_temp);
}

using radix_runner = void (*)(harness&, std::int64_t, dist);

struct radix_type {
  const char* name;
  radix_runner run;
  bool wide;  // 8-byte keys: the bits20 distribution applies
};

const radix_type kRadixTypes[] = {
    {"u8", run_radix<std::uint8_t, void>, false},
    {"u16", run_radix<std::uint16_t, void>, false},
    {"u32", run_radix<std::uint32_t, void>, false},
    {"i32", run_radix<std::int32_t, void>, false},
    {"u64", run_radix<std::uint64_t, void>, true},
    {"i64", run_radix<std::int64_t, void>, true},
    {"f16", run_radix<__half, void>, false},
    {"bf16", run_radix<__nv_bfloat16, void>, false},
    {"f32", run_radix<float, void>, false},
    {"f64", run_radix<double, void>, true},
    {"pairs32", run_radix<std::uint32_t, std::uint32_t>, false},
    {"pairs32_64", run_radix<std::uint32_t, std::uint64_t>, false},
    {"pairs64", run_radix<std::uint64_t, std::uint64_t>, true},
};

}  // namespace

void add_radix_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("radix")) return;
  auto add = [&](const radix_type& t, std::int64_t n, dist d) {
    if (!opt.wants_type(t.name) || !opt.wants_dist(dist_name(d), d == dist::random)) return;
    radix_runner run = t.run;
    cases.push_back({"radix", "radix_sort", t.name, dist_name(d), n, [run, n, d](harness& h) { run(h, n, d); }});
  };
  const auto named = [](const char* name) -> const radix_type& {
    for (const auto& t : kRadixTypes)
      if (std::strcmp(t.name, name) == 0) return t;
    return kRadixTypes[0];
  };
  if (opt.quick && opt.sizes.empty() && opt.types.empty() && opt.dists.empty()) {
    add(named("u32"), pow2(20), dist::random);
    add(named("u32"), pow2(24), dist::random);
    add(named("u64"), pow2(24), dist::random);
    add(named("u64"), pow2(24), dist::bits20);
    add(named("pairs32"), pow2(24), dist::random);
    return;
  }
  const std::vector<std::int64_t> sizes =
      opt.sizes_or({pow2(16), pow2(20), pow2(22), pow2(24), pow2(26), pow2(28)});
  for (const auto& t : kRadixTypes)
    for (std::int64_t n : sizes)
      for (dist d : {dist::random, dist::sorted, dist::reversed, dist::few, dist::equal, dist::zipf, dist::bits20,
                     dist::top1, dist::top2, dist::lowbit})
        if (d != dist::bits20 || t.wide) add(t, n, d);
}

}  // namespace bench
