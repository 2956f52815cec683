// host_launch.cuh — host_sort_with<Bits>: one host_call (host_call.h) turned
// into tilesort::host_sort_pairs with the dtype's order as a
// tilesort::bits_order (its ranks, dtype_bits in launch.cuh), so that the
// host sort's in-budget batches take the front door's radix sort; the keys
// move with their bits untouched. Each generated translation unit
// (CMakeLists.txt) includes this file and instantiates one key width.
//
//   template cudaError_t tilesort_py::host_sort_with<std::uint32_t>(const tilesort_py::host_call&);
#pragma once

#include <tilesort/host/host_sort.cuh>

#include "dtype_order.cuh"
#include "host_call.h"
#include "launch.cuh"

namespace tilesort_py {

template <typename Bits>
cudaError_t host_sort_with(const host_call& c) {
  const auto order = make_dtype_order<Bits>(c.kind, static_cast<Bits>(c.inf_bits), c.descending);
  tilesort::host_sort_options options;
  options.device_memory_budget = c.budget;
  options.progress = c.progress;
  return tilesort::host_sort_pairs(static_cast<Bits*>(c.keys), c.positions, c.n,
                                   tilesort::order_by_bits(dtype_bits<Bits>{order}), options);
}

}  // namespace tilesort_py
