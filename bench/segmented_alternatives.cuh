// bench/segmented_alternatives.cuh — the CUB segmented sorts that the
// "segmented" (uniform lengths) and "segments" (general layouts) families
// compare tilesort with, given the segments as an offsets array (what their
// users pass), out of place from the restored working copy:
//   cub::DeviceSegmentedSort::StableSortKeys/StableSortPairs (stable, like ours;
//     built without RDC, as here, it copies its segment group sizes to the host
//     and synchronises the stream inside every call)
//   cub::DeviceSegmentedRadixSort::SortKeys/SortPairs (one block per segment)
#pragma once

#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <string>

#include "bench.cuh"

namespace bench {

// `row(impl, role)` returns a timed_call with restore and verify set (the
// verify reads data.out_keys / data.out_values). n < 2^31 (int offsets).
template <typename V, typename Row>
void measure_cub_segmented(harness& h, Row&& row, device_data<std::uint32_t, V>& data, std::int64_t n,
                           std::int64_t count, const int* begin, const int* end) {
  constexpr bool pairs = !std::is_void_v<V>;
  const value_t<V>* values_in = data.values.get();
  value_t<V>* values_out = data.out_values.get();
  {  // cub::DeviceSegmentedSort (stable, like ours)
    harness::timed_call c =
        row(pairs ? "cub::DeviceSegmentedSort::StableSortPairs" : "cub::DeviceSegmentedSort::StableSortKeys", "alt");
    c.note = "syncs the stream inside the call";
    measure_two_phase(h, c, [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      if constexpr (pairs) {
        return cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, data.keys.get(), data.out_keys.get(), values_in,
                                                         values_out, n, count, begin, end, s);
      } else {
        return cub::DeviceSegmentedSort::StableSortKeys(temp, bytes, data.keys.get(), data.out_keys.get(), n, count,
                                                        begin, end, s);
      }
    });
  }
  // cub::DeviceSegmentedRadixSort: one block per segment
  measure_two_phase(
      h, row(pairs ? "cub::DeviceSegmentedRadixSort::SortPairs" : "cub::DeviceSegmentedRadixSort::SortKeys", "alt"),
      [&](void* temp, std::size_t& bytes, cudaStream_t s) {
        if constexpr (pairs) {
          return cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, data.keys.get(), data.out_keys.get(), values_in,
                                                          values_out, int(n), int(count), begin, end, 0, 32, s);
        } else {
          return cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, data.keys.get(), data.out_keys.get(), int(n),
                                                         int(count), begin, end, 0, 32, s);
        }
      });
}

}  // namespace bench
