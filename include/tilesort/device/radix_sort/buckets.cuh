// device/radix_sort/buckets.cuh — the hybrid radix sort's last stage: after
// the passes over the bucket digits (detail/radix_sort_plan.cuh,
// radix_choose_buckets) the keys in the output are grouped by bucket, in
// bucket order, each bucket's keys in input order. Two steps finish them:
//   1. radix_bucket_starts_kernel: one read of the keys finds where each
//      bucket starts (each key's bucket is compared with its left
//      neighbour's, and the starts of the buckets in between are written,
//      empty ones included);
//   2. the segmented sort's general path (device/segmented_sort.cuh) sorts
//      every bucket in place by the sort's order, stably: buckets of up to
//      a block's tile are read once and written once (a warp or a block per
//      bucket), longer ones (skewed keys the histogram did not foresee) go
//      to its early-exit merge sort, with the radix sort's alternate
//      buffers as scratch.
// Where the histogram chose the LSD sort (or the front door's probe skipped
// the radix sort), step 1 returns at once and the starts stay zero: every
// bucket is empty and step 2 touches no key.
#pragma once

#include <cstdint>

#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/radix_sort_plan.cuh"
#include "../segmented_sort.cuh"

namespace tilesort::detail {

// starts[b] = the first position whose key's bucket is b or later, for b in
// [0, 256^digits], over positions [0, n] (position n's bucket is 256^digits).
// A warp takes 32 x Items consecutive positions at a time, lane-striped so
// that every load is coalesced; each key is read once and its bucket found
// once, its left neighbour's bucket comes by shuffle (the warp's first
// position reads one key more). Buckets fit 32 bits (at most 2^16 + 1).
template <int Items, typename Key, typename Image>
__global__ void radix_bucket_starts_kernel(const Key* keys, std::int64_t n, Image image, const radix_control* control,
                                           int digits, std::int64_t* starts) {
  static_assert(Items >= 1, "a warp takes 32 x Items positions at a time");
  wait_for_previous_kernel();
  allow_next_kernel();
  if (control->schedule.buckets == 0) return;
  const int buckets = 1 << (8 * digits);
  int bucket_digit[radix_bucket_digits];
  TILESORT_UNROLL
  for (int k = 0; k < radix_bucket_digits; ++k) bucket_digit[k] = control->schedule.bucket_digit[k];
  const auto bucket_of = [&](std::int64_t p) {
    return p < n ? static_cast<int>(radix_bucket_of(image(keys[p]), bucket_digit, digits)) : buckets;
  };
  constexpr int span = warp_threads * Items;
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp_threads;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / warp_threads;
  for (std::int64_t first = warp * span; first <= n; first += warps * span) {  // warp-uniform
    int bucket[Items];
    TILESORT_UNROLL
    for (int j = 0; j < Items; ++j) bucket[j] = bucket_of(first + j * warp_threads + lane);
    int before = first > 0 ? bucket_of(first - 1) : -1;  // the bucket left of the lane's position
    TILESORT_UNROLL
    for (int j = 0; j < Items; ++j) {
      const int up = __shfl_up_sync(0xffffffffu, bucket[j], 1);
      const int left = lane == 0 ? before : up;
      before = __shfl_sync(0xffffffffu, bucket[j], warp_threads - 1);
      const std::int64_t p = first + j * warp_threads + lane;
      if (p <= n)
        for (int b = left + 1; b <= bucket[j]; ++b) starts[b] = p;
    }
  }
}

}  // namespace tilesort::detail
