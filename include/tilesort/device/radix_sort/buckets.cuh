// device/radix_sort/buckets.cuh — the hybrid radix sort's last stage: after
// the passes over the bucket digits (detail/radix_sort_plan.cuh,
// radix_choose_buckets) the keys in the output are grouped by bucket, in
// bucket order, each bucket's keys in input order. Two steps finish them:
//   1. radix_bucket_starts_kernel: one read of the keys finds where each
//      bucket starts (a thread per key compares its bucket with its left
//      neighbour's and writes the starts of the buckets in between, empty
//      ones included);
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
// [0, 256^digits]; a grid-stride loop over positions [0, n].
template <typename Key, typename Image>
__global__ void radix_bucket_starts_kernel(const Key* keys, std::int64_t n, Image image, const radix_control* control,
                                           int digits, std::int64_t* starts) {
  wait_for_previous_kernel();
  allow_next_kernel();
  if (control->schedule.buckets == 0) return;
  const std::int64_t buckets = std::int64_t(1) << (8 * digits);
  const int* bucket_digit = control->schedule.bucket_digit;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= n; i += stride) {
    const std::int64_t mine = i < n ? radix_bucket_of(image(keys[i]), bucket_digit, digits) : buckets;
    const std::int64_t left = i > 0 ? radix_bucket_of(image(keys[i - 1]), bucket_digit, digits) : -1;
    for (std::int64_t b = left + 1; b <= mine; ++b) starts[b] = i;
  }
}

}  // namespace tilesort::detail
