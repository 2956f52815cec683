// launch.cuh — sort_with<Bits, Algo>: one sort_call turned into the library
// call it names (one algorithm, one key width, 8-byte payloads or int64
// positions), with dtype_order<Bits> as the comparator (one array: its
// ranks as a tilesort::bits_order, so that the front door may radix-sort). Each generated
// translation unit (CMakeLists.txt) includes this file and instantiates one
// combination, so the build spreads over as many cores as there are.
//
//   template cudaError_t tilesort_py::sort_with<std::uint32_t, tilesort_py::algorithm::rows>(
//       const tilesort_py::sort_call&, std::size_t&);
#pragma once

#include <tilesort/device/locality_sort.cuh>
#include <tilesort/device/segmented_sort.cuh>
#include <tilesort/device/sort.cuh>

#include "dtype_order.cuh"
#include "sort_call.h"

namespace tilesort_py {

// The dtype's order as order-preserving bits (its ranks): a
// tilesort::bits_order, so that the front door radix-sorts the keys.
template <typename Bits>
struct dtype_bits {
  dtype_order<Bits> order;
  __host__ __device__ Bits operator()(Bits x) const { return order.rank(x); }
};

template <typename Bits, algorithm Algo>
cudaError_t sort_with(const sort_call& c, std::size_t& temp_bytes) {
  const auto order = make_dtype_order<Bits>(c.kind, static_cast<Bits>(c.inf_bits), c.descending);
  const auto by_bits = tilesort::order_by_bits(dtype_bits<Bits>{order});
  const auto* keys_in = static_cast<const Bits*>(c.keys_in);
  auto* keys_out = static_cast<Bits*>(c.keys_out);
  const auto* values_in = static_cast<const std::uint64_t*>(c.values_in);
  auto* values_out = static_cast<std::uint64_t*>(c.values_out);
  // The library reads a null temp pointer (c.temp) as a size query.
  if constexpr (Algo == algorithm::front) {
    return tilesort::sort_pairs(c.temp, temp_bytes, keys_in, keys_out, values_in, values_out, c.n, by_bits, c.stream);
  } else if constexpr (Algo == algorithm::front_positions) {
    return tilesort::detail::sort_positions(c.temp, temp_bytes, keys_in, keys_out,
                                            static_cast<std::int64_t*>(c.values_out), c.n, by_bits, c.stream);
  } else if constexpr (Algo == algorithm::rows) {
    return tilesort::segmented_sort_pairs(c.temp, temp_bytes, keys_in, keys_out, values_in, values_out, c.n,
                                          tilesort::segments::uniform(c.row_length), order, c.stream);
  } else if constexpr (Algo == algorithm::row_positions) {
    // Keys of up to 4 bytes by their ranks: the library packs rank and position into one word.
    const auto row_order = [&] {
      if constexpr (sizeof(Bits) <= 4)
        return by_bits;
      else
        return order;
    }();
    return tilesort::detail::row_positions_sort(c.temp, temp_bytes, keys_in, keys_out,
                                                static_cast<std::int64_t*>(c.values_out), c.n, c.row_length,
                                                row_order, c.stream, c.row_stride > 1 ? c.row_stride : 1);
  } else if constexpr (Algo == algorithm::offsets_words) {
    static_assert(sizeof(Bits) == 8, "the words are 64-bit");
    const auto segments = tilesort::segments::offsets(c.offsets, c.offsets + 1, c.segments);
    return tilesort::segmented_sort_keys(c.temp, temp_bytes, keys_in, keys_out, c.n, segments, tilesort::less{},
                                         c.stream);
  } else if constexpr (Algo == algorithm::locality) {
    return tilesort::locality_sort_pairs(c.temp, temp_bytes, keys_in, keys_out, values_in, values_out, c.n, order,
                                         c.stream);
  } else {
    const auto segments = tilesort::segments::offsets(c.offsets, c.offsets + 1, c.segments);
    return tilesort::segmented_sort_pairs(c.temp, temp_bytes, keys_in, keys_out, values_in, values_out, c.n,
                                          segments, order, c.stream);
  }
}

}  // namespace tilesort_py
