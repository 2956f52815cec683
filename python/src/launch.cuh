// launch.cuh — run_sort for one key width and payload: the sort_call is
// turned into the library call it names, with dtype_order<Bits> as the
// comparator. Each generated translation unit (CMakeLists.txt) includes this
// file and instantiates sort_for<Bits, Pairs> once.
//
//   template cudaError_t tilesort_py::sort_for<std::uint32_t, true>(const sort_call&, std::size_t&);
#pragma once

#include <tilesort/device/locality_sort.cuh>
#include <tilesort/device/merge_sort.cuh>
#include <tilesort/device/segmented_sort.cuh>

#include "dtype_order.cuh"
#include "sort_call.h"

namespace tilesort_py {

template <typename Bits, bool Pairs>
cudaError_t sort_for(const sort_call& c, std::size_t& temp_bytes) {
  const auto order = make_dtype_order<Bits>(c.kind, static_cast<Bits>(c.inf_bits), c.descending);
  const auto* keys_in = static_cast<const Bits*>(c.keys_in);
  auto* keys_out = static_cast<Bits*>(c.keys_out);
  const auto* values_in = static_cast<const std::uint64_t*>(c.values_in);
  auto* values_out = static_cast<std::uint64_t*>(c.values_out);
  // The library reads a null temp pointer as a size query.
  auto sort = [&](auto segments) {
    if constexpr (Pairs)
      return tilesort::segmented_sort_pairs(c.temp, temp_bytes, keys_in, keys_out, values_in, values_out, c.n,
                                            segments, order, c.stream);
    else
      return tilesort::segmented_sort_keys(c.temp, temp_bytes, keys_in, keys_out, c.n, segments, order, c.stream);
  };
  switch (c.algo) {
    case algorithm::merge:
      if constexpr (Pairs)
        return tilesort::merge_sort_pairs(c.temp, temp_bytes, keys_in, keys_out, values_in, values_out, c.n, order,
                                          c.stream);
      else
        return tilesort::merge_sort_keys(c.temp, temp_bytes, keys_in, keys_out, c.n, order, c.stream);
    case algorithm::locality:
      if constexpr (Pairs)
        return tilesort::locality_sort_pairs(c.temp, temp_bytes, keys_in, keys_out, values_in, values_out, c.n,
                                             order, c.stream);
      else
        return tilesort::locality_sort_keys(c.temp, temp_bytes, keys_in, keys_out, c.n, order, c.stream);
    case algorithm::rows:
      return sort(tilesort::segments::uniform(c.row_length));
    case algorithm::offsets:
      return sort(tilesort::segments::offsets(c.offsets, c.offsets + 1, c.segments));
  }
  return cudaErrorInvalidValue;
}

}  // namespace tilesort_py
