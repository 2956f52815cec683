// detail/temp_storage.cuh — the convenience overloads' stream-ordered temp
// allocation, written once for every device algorithm.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

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

// Algorithms that need no scratch still report one byte, so that the query
// (d_temp == nullptr) and the run remain two distinguishable calls.
inline constexpr std::size_t min_temp_bytes = 1;

}  // namespace tilesort::detail
