// detail/config.cuh — the function-space and unrolling macros used across
// tilesort, and the small helpers every level needs (power-of-two arithmetic at
// compile time).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#define TILESORT_HD __host__ __device__ __forceinline__
#define TILESORT_DEVICE __device__ __forceinline__

// Loop unrolling, for the device pass only: a plain `#pragma unroll` in a
// __host__ __device__ function also reaches the host compiler, which warns
// about it under -Wall (-Wunknown-pragmas).
#define TILESORT_PRAGMA(text) _Pragma(#text)
#ifdef __CUDA_ARCH__
#define TILESORT_UNROLL TILESORT_PRAGMA(unroll)
#define TILESORT_UNROLL_COUNT(count) TILESORT_PRAGMA(unroll(count))
#else
#define TILESORT_UNROLL
#define TILESORT_UNROLL_COUNT(count)
#endif

namespace tilesort::detail {

TILESORT_HD constexpr bool is_pow2(long long x) { return x > 0 && (x & (x - 1)) == 0; }

// Smallest power of two >= x (x >= 1).
TILESORT_HD constexpr long long next_pow2(long long x) {
  long long p = 1;
  while (p < x) p <<= 1;
  return p;
}

// floor(log2(x)) for x >= 1.
TILESORT_HD constexpr int log2_floor(long long x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}

TILESORT_HD constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Index of the lowest set bit of a non-zero mask.
TILESORT_HD int lowest_set_bit(unsigned mask) {
#ifdef __CUDA_ARCH__
  return __ffs(mask) - 1;
#else
  return __builtin_ctz(mask);
#endif
}

}  // namespace tilesort::detail
