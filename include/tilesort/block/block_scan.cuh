// block/block_scan.cuh — the exclusive prefix sum over a block that the
// device sorts share (the sample sort's counter scans and scatter ranks, the
// segmented sort's flags-to-heads count): one 64-bit number per thread in,
// the sum of the threads before it out, and the block's total.
//
// Algorithm: an inclusive scan inside each warp (log2(32) shuffles), the
// warps' totals written to shared memory, warp 0 scans those (one more
// warp scan), and each thread adds its warp's prefix. Two barriers inside,
// one at the end so that `warp_sums` may be reused at once. The caller owns
// the shared memory: Threads / 32 + 1 entries (the last holds the total).
//
//   __shared__ std::int64_t warp_sums[256 / 32 + 1];
//   std::int64_t total = 0;
//   const std::int64_t before = detail::block_exclusive_sum<256>(count, warp_sums, total);
#pragma once

#include <cstdint>

#include "../detail/config.cuh"

namespace tilesort::detail {

// Exclusive sum over the block of one 64-bit number per thread; `total` gets
// the block's sum. `warp_sums` holds Threads / 32 + 1 entries of shared memory;
// every thread of the block calls this (it has barriers).
template <int Threads>
TILESORT_DEVICE std::int64_t block_exclusive_sum(std::int64_t x, std::int64_t* warp_sums, std::int64_t& total) {
  static_assert(Threads % 32 == 0 && Threads <= 1024, "whole warps, at most 32");
  constexpr int warps = Threads / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  std::int64_t inclusive = x;
  TILESORT_UNROLL
  for (int offset = 1; offset < 32; offset *= 2) {
    const std::int64_t y = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += y;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const std::int64_t mine = lane < warps ? warp_sums[lane] : 0;
    std::int64_t scan = mine;
    TILESORT_UNROLL
    for (int offset = 1; offset < 32; offset *= 2) {
      const std::int64_t y = __shfl_up_sync(0xffffffffu, scan, offset);
      if (lane >= offset) scan += y;
    }
    if (lane < warps) warp_sums[lane] = scan - mine;
    if (lane == warps - 1) warp_sums[warps] = scan;
  }
  __syncthreads();
  const std::int64_t prefix = warp_sums[warp] + inclusive - x;
  total = warp_sums[warps];
  __syncthreads();  // warp_sums may be reused at once
  return prefix;
}

}  // namespace tilesort::detail
