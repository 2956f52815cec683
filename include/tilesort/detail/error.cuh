// detail/error.cuh — error plumbing and argument checks shared by the device
// algorithms. Every entry point returns cudaError_t; nothing prints or throws.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// Evaluate a CUDA call (or anything returning cudaError_t); return its error
// from the enclosing function if it failed.
#define TILESORT_RETURN_IF_ERROR(expr)               \
  do {                                               \
    const cudaError_t tilesort_error_ = (expr);      \
    if (tilesort_error_ != cudaSuccess) return tilesort_error_; \
  } while (0)

namespace tilesort::detail {

// Checks every device entry point makes before it touches memory (the API
// contract on bad input, docs/design.md "Conventions"): n >= 0, no null data
// pointer when there is data, and enough temp storage. `needs_values` is
// false for keys-only calls.
__host__ __device__ inline cudaError_t check_sort_args(const void* keys_in, const void* keys_out,
                                                       const void* values_in, const void* values_out,
                                                       bool needs_values, std::int64_t n) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (keys_in == nullptr || keys_out == nullptr) return cudaErrorInvalidValue;
  if (needs_values && (values_in == nullptr || values_out == nullptr)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

__host__ __device__ inline cudaError_t check_temp(const void* d_temp, std::size_t temp_bytes,
                                                  std::size_t required_bytes) {
  if (required_bytes == 0) return cudaSuccess;
  if (d_temp == nullptr || temp_bytes < required_bytes) return cudaErrorInvalidValue;
  return cudaSuccess;
}

// Round a byte count up so that the next buffer carved from temp storage is
// aligned for any key or value type (256 bytes, as cudaMalloc guarantees).
__host__ __device__ constexpr std::size_t align_temp(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

}  // namespace tilesort::detail
