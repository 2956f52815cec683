// detail/temp_storage.cuh — the convenience overloads' stream-ordered temp
// allocation, written once for every device algorithm.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "error.cuh"

namespace tilesort::detail {

// Size the temp storage of a two-phase call, allocate it on `stream`
// (cudaMallocAsync), run the call and free it (cudaFreeAsync). `sort` is
// callable as cudaError_t(void* d_temp, std::size_t& temp_bytes). A failed
// allocation returns cudaErrorMemoryAllocation before anything is launched;
// nothing waits on the host, so the whole call can be captured in a graph.
template <typename TwoPhaseSort>
cudaError_t with_stream_temp(cudaStream_t stream, TwoPhaseSort&& sort) {
  std::size_t temp_bytes = 0;
  TILESORT_RETURN_IF_ERROR(sort(nullptr, temp_bytes));
  void* d_temp = nullptr;
  if (cudaMallocAsync(&d_temp, temp_bytes, stream) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error state of the failed allocation
    return cudaErrorMemoryAllocation;
  }
  const cudaError_t sorted = sort(d_temp, temp_bytes);
  const cudaError_t freed = cudaFreeAsync(d_temp, stream);
  return sorted != cudaSuccess ? sorted : freed;
}

// The stream-ordered convenience overloads of every device sort: the
// arguments checked first (bad ones return cudaErrorInvalidValue with
// nothing allocated or launched), then with_stream_temp. `sort` is the
// two-phase call, as for with_stream_temp.
template <typename Key, typename TwoPhaseSort>
cudaError_t sort_with_stream_temp(const Key* keys_in, Key* keys_out, std::int64_t n, cudaStream_t stream,
                                  TwoPhaseSort&& sort) {
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, nullptr, nullptr, false, n));
  return with_stream_temp(stream, sort);
}
template <typename Key, typename Value, typename TwoPhaseSort>
cudaError_t sort_with_stream_temp(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                  std::int64_t n, cudaStream_t stream, TwoPhaseSort&& sort) {
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, true, n));
  return with_stream_temp(stream, sort);
}

// Algorithms that need no scratch still report one byte, so that the query
// (d_temp == nullptr) and the run remain two distinguishable calls.
inline constexpr std::size_t min_temp_bytes = 1;

}  // namespace tilesort::detail
