// bench/alternatives_impl.cuh — definitions for alternatives.cuh; included only
// by the two files that instantiate them.
#pragma once

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>
#include <thrust/system/system_error.h>
#include <thrust/system_error.h>

#include <new>

#include "alternatives.cuh"

namespace bench::alt {

template <typename K, typename V, typename Compare>
cudaError_t cub_merge_sort(void* temp, std::size_t& temp_bytes, K* keys, value_t<V>* values, std::int64_t n,
                           Compare comp, cudaStream_t stream) {
  if constexpr (std::is_void_v<V>) {
    return cub::DeviceMergeSort::SortKeys(temp, temp_bytes, keys, n, comp, stream);
  } else {
    return cub::DeviceMergeSort::SortPairs(temp, temp_bytes, keys, values, n, comp, stream);
  }
}

template <typename K, typename V>
cudaError_t cub_radix_sort(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                           const value_t<V>* values_in, value_t<V>* values_out, std::int64_t n, cudaStream_t stream) {
  if constexpr (std::is_void_v<V>) {
    return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, n, 0, int(sizeof(K) * 8), stream);
  } else {
    return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, 0,
                                           int(sizeof(K) * 8), stream);
  }
}

template <typename K, typename V, typename Compare>
cudaError_t thrust_sort(K* keys, value_t<V>* values, std::int64_t n, Compare comp, bool stable, cudaStream_t stream) {
  try {
    const auto policy = thrust::cuda::par.on(stream);
    if constexpr (std::is_void_v<V>) {
      if (stable) {
        thrust::stable_sort(policy, keys, keys + n, comp);
      } else {
        thrust::sort(policy, keys, keys + n, comp);
      }
    } else {
      if (stable) {
        thrust::stable_sort_by_key(policy, keys, keys + n, values, comp);
      } else {
        thrust::sort_by_key(policy, keys, keys + n, values, comp);
      }
    }
  } catch (const thrust::system_error& e) {
    const int code = e.code().value();
    return code != 0 ? static_cast<cudaError_t>(code) : cudaErrorUnknown;
  } catch (const std::bad_alloc&) {
    return cudaErrorMemoryAllocation;
  }
  return cudaGetLastError();
}

}  // namespace bench::alt

#define BENCH_INSTANTIATE_COMPARISON_SORTS(K, V, C)                                                                   \
  template cudaError_t bench::alt::cub_merge_sort<K, V, C>(void*, std::size_t&, K*, bench::value_t<V>*, std::int64_t, \
                                                           C, cudaStream_t);                                          \
  template cudaError_t bench::alt::thrust_sort<K, V, C>(K*, bench::value_t<V>*, std::int64_t, C, bool, cudaStream_t);

#define BENCH_INSTANTIATE_RADIX_SORT(K, V)                                                                           \
  template cudaError_t bench::alt::cub_radix_sort<K, V>(void*, std::size_t&, const K*, K*, const bench::value_t<V>*, \
                                                        bench::value_t<V>*, std::int64_t, cudaStream_t);
