// bench/alternatives.cuh — the device-wide sorts tilesort is compared with,
// called the way their users call them:
//   cub::DeviceMergeSort::SortKeys/SortPairs   in place, caller-owned temp storage
//   cub::DeviceRadixSort::SortKeys/SortPairs   out of place, caller-owned temp storage
//   thrust::sort / stable_sort[_by_key]        in place, thrust::cuda::par.on(stream),
//                                              temp storage allocated inside every call
// Declared here, defined in alternatives_impl.cuh and explicitly instantiated
// for the benchmark's (key, value, comparator) combinations in
// alternatives_keys.cu and alternatives_pairs.cu, so the case files that use
// them (merge, bitonic) compile in parallel and instantiate nothing twice.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bench.cuh"

namespace bench::alt {

// Temp query when temp == nullptr (as CUB does); V = void sorts keys only.
template <typename K, typename V, typename Compare>
cudaError_t cub_merge_sort(void* temp, std::size_t& temp_bytes, K* keys, value_t<V>* values, std::int64_t n,
                           Compare comp, cudaStream_t stream);

template <typename K, typename V>
cudaError_t cub_radix_sort(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                           const value_t<V>* values_in, value_t<V>* values_out, std::int64_t n, cudaStream_t stream);

// Exceptions (thrust::system_error, std::bad_alloc) become the CUDA error they carry.
template <typename K, typename V, typename Compare>
cudaError_t thrust_sort(K* keys, value_t<V>* values, std::int64_t n, Compare comp, bool stable, cudaStream_t stream);

}  // namespace bench::alt
