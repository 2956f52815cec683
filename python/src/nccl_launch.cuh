// nccl_launch.cuh — nccl_sort_with<Bits, ValueBytes>: one nccl_call turned
// into tilesort::nccl::sort_keys / sort_pairs with dtype_order<Bits> as the
// comparator. Each generated translation unit (CMakeLists.txt) includes this
// file and instantiates one combination.
//
//   template cudaError_t tilesort_py::nccl_sort_with<std::uint32_t, 8>(const tilesort_py::nccl_call&, std::size_t&);
#pragma once

#include <tilesort/distributed/nccl_sort.cuh>

#include "dtype_order.cuh"
#include "nccl_call.h"

namespace tilesort_py {

template <typename Bits, int ValueBytes>
cudaError_t nccl_sort_with(const nccl_call& c, std::size_t& temp_bytes) {
  const auto order = make_dtype_order<Bits>(c.kind, static_cast<Bits>(c.inf_bits), c.descending);
  tilesort::nccl::sort_options options;
  options.timeout_ms = c.timeout_ms;
  options.nccl_result = c.nccl_result;
  const auto* keys_in = static_cast<const Bits*>(c.keys_in);
  auto* keys_out = static_cast<Bits*>(c.keys_out);
  if constexpr (ValueBytes == 8) {
    return tilesort::nccl::sort_pairs(c.temp, temp_bytes, keys_in, keys_out, static_cast<const std::uint64_t*>(c.values_in),
                                      static_cast<std::uint64_t*>(c.values_out), c.n, c.comm, order, c.stream, options);
  } else {
    return tilesort::nccl::sort_keys(c.temp, temp_bytes, keys_in, keys_out, c.n, c.comm, order, c.stream, options);
  }
}

}  // namespace tilesort_py
