// bench/cases_segmented.cu — family "segmented": many equal-length segments
// (segments::uniform(L), L in {32, 256, 1024, 4096}) of u32 keys, and of u32
// keys with u32 values, 2^24 keys in all. tilesort::segmented_sort_keys/pairs
// against cub::DeviceSegmentedSort::StableSortKeys/StableSortPairs and
// cub::DeviceSegmentedRadixSort::SortKeys/SortPairs, given the same segments as an
// offsets array (what their users pass). Out of place; each segment verified.
//
// CUB's DeviceSegmentedSort (built without RDC, as here) copies its segment
// group sizes to the host and synchronises the stream inside every call: its
// time includes that round trip, and gpu mode cannot hide it.
#include <climits>
#include <cstdio>

#include <tilesort/comparators.cuh>
#include <tilesort/device/segmented_sort.cuh>
#include <tilesort/device/segments.cuh>

#include "bench.cuh"
#include "segmented_alternatives.cuh"

namespace bench {
namespace {

using u32 = std::uint32_t;

__global__ void uniform_offsets_kernel(int* offsets, std::int64_t count, std::int64_t length, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= count; i += stride)
    offsets[i] = int(i * length < n ? i * length : n);
}

template <typename V>
void run_segmented(harness& h, std::int64_t n, std::int64_t length) {
  constexpr bool pairs = !std::is_void_v<V>;
  device_data<u32, V> data(h, n, dist::random,
                           case_seed("segmented " + std::to_string(n) + " " + std::to_string(length) + (pairs ? "p" : "")),
                           length);
  const std::int64_t segments = (n + length - 1) / length;
  char b[64];
  std::snprintf(b, sizeof b, "copy %.0f GKeys/s", h.copy_bound_gkeys(2.0 * (sizeof(u32) + value_size<V>())));
  h.bound = b;
  const auto verify = verifier<u32, V>(h, data.out_keys.get(), data.out_values.get(), n, length, tilesort::less{},
                                       data.fingerprint);
  const u32* values_in = nullptr;
  u32* values_out = nullptr;
  if constexpr (pairs) {
    values_in = data.values.get();
    values_out = data.out_values.get();
  }

  auto row = [&](const std::string& impl, const char* role) {
    return timed_call_for(impl, role, data.restore(h), verify);
  };

  // tilesort
  measure_two_phase(h, row(pairs ? "tilesort::segmented_sort_pairs" : "tilesort::segmented_sort_keys", "tilesort"),
                    [&](void* temp, std::size_t& bytes, cudaStream_t s) {
                      if constexpr (pairs) {
                        return tilesort::segmented_sort_pairs(temp, bytes, data.keys.get(), data.out_keys.get(),
                                                              values_in, values_out, n,
                                                              tilesort::segments::uniform(length), tilesort::less{}, s);
                      } else {
                        return tilesort::segmented_sort_keys(temp, bytes, data.keys.get(), data.out_keys.get(), n,
                                                             tilesort::segments::uniform(length), tilesort::less{}, s);
                      }
                    });

  if (n > INT_MAX) {
    h.report("cub::DeviceSegmented*", "alt", "SKIP", "CUB takes int offsets here: n must be < 2^31");
    return;
  }
  dbuf<int> offsets(std::size_t(segments + 1));
  uniform_offsets_kernel<<<h.grid_for(segments + 1, 256), 256, 0, h.stream>>>(offsets.get(), segments, length, n);
  BENCH_CHECK(cudaGetLastError());
  BENCH_CHECK(cudaStreamSynchronize(h.stream));
  const int* begin = offsets.get();
  const int* end = offsets.get() + 1;

  measure_cub_segmented<V>(h, row, data, n, segments, begin, end);
}

}  // namespace

void add_segmented_cases(const options& opt, std::vector<bench_case>& cases) {
  if (!opt.wants_family("segmented") || !opt.wants_dist("random", true)) return;
  const std::vector<std::int64_t> sizes = opt.sizes_or({pow2(24)});
  for (std::int64_t n : sizes) {
    for (const char* type : {"u32", "pairs32"}) {
      if (!opt.wants_type(type)) continue;
      const bool pairs = std::string(type) == "pairs32";
      for (std::int64_t length : {32, 256, 1024, 4096}) {
        if (n <= 0) continue;
        cases.push_back({"segmented", pairs ? "segmented_sort_pairs" : "segmented_sort_keys", type,
                         "L=" + std::to_string(length), n, [n, length, pairs](harness& h) {
                           if (pairs) {
                             run_segmented<u32>(h, n, length);
                           } else {
                             run_segmented<void>(h, n, length);
                           }
                         }});
      }
    }
  }
}

}  // namespace bench
