// device/radix_sort/histogram.cuh — the radix sort's first kernel: one read
// of every key counts all of its digits at once (one bin array per digit
// pass), then the last block to finish turns the counts into each digit's
// starting positions and makes the schedule (detail/radix_sort_plan.cuh:
// which passes run, where each reads and writes).
//
// Blocks take histogram_threads x histogram_items keys per step (consecutive
// threads read consecutive keys) over a grid of about histogram_blocks_per_sm
// blocks per SM; counts go to shared memory (a shared atomic per digit, to
// counters of the lane's own: radix_histogram_storage), then once per block
// to the control block's 64-bit counters. The last block also chooses
// between the LSD and the hybrid sort (radix_choose_buckets) from each
// digit's largest bin.
#pragma once

#include <cuda/atomic>

#include <cstdint>

#include "../../block/block_scan.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/radix_order.cuh"
#include "../../detail/radix_sort_plan.cuh"

namespace tilesort::detail {

// Shared memory of a histogram block: per digit pass and bin, `copies`
// counters, one per lane (lane mod copies): lane l's counters sit in bank
// l (32 copies) or in one of two banks (16), so a warp's atomics do not
// wait on each other, whatever its keys. That takes 128 KB; GPUs that
// allow a block less (sm_75, sm_86, sm_89) get radix_histogram_narrow
// copies instead.
inline constexpr int radix_histogram_narrow = 4;
template <typename Policy, int Passes, int Copies = (Passes <= 4 ? 32 : 16)>
struct radix_histogram_storage {
  static constexpr int copies = Copies;
  static constexpr std::size_t bytes = sizeof(unsigned) * Passes * Policy::bins * copies;
  TILESORT_DEVICE static unsigned* counter(unsigned* counts, int pass, unsigned bin, int lane) {
    return counts + (pass * Policy::bins + int(bin)) * copies + lane % copies;
  }
};

// Counts every digit of keys[0, n) into control->digit_start, then (last
// block) the exclusive starts and the schedule. It returns at once when
// the front door's probe chose another sort (`skip_unless_zero`): the
// zeroed schedule then runs nothing.
template <typename Policy, int Passes, int Copies, typename Key, typename Image>
__global__ void __launch_bounds__(Policy::histogram_threads)
    radix_histogram_kernel(const Key* keys, std::int64_t n, Image image, radix_control* control, bool in_place,
                           radix_hybrid_limits hybrid, const unsigned* skip_unless_zero) {
  constexpr int threads = Policy::histogram_threads, items = Policy::histogram_items, bins = Policy::bins;
  using storage = radix_histogram_storage<Policy, Passes, Copies>;
  static_assert(threads >= bins, "the last block scans a digit's bins with a thread each");
  extern __shared__ unsigned radix_histogram_counts[];
  __shared__ std::int64_t warp_sums[threads / 32 + 1];
  __shared__ bool varies[radix_max_passes];
  __shared__ unsigned long long largest[radix_max_passes];
  __shared__ bool last_block;
  allow_next_kernel();
  if (skip_requested(skip_unless_zero)) return;
  unsigned* counts = radix_histogram_counts;
  const int t = static_cast<int>(threadIdx.x), lane = t % 32;
  for (int i = t; i < int(storage::bytes / sizeof(unsigned)); i += threads) counts[i] = 0;
  __syncthreads();

  constexpr std::int64_t step = std::int64_t(threads) * items;
  for (std::int64_t base = std::int64_t(blockIdx.x) * step; base < n; base += std::int64_t(gridDim.x) * step) {
    Key block_keys[items];
    TILESORT_UNROLL
    for (int i = 0; i < items; ++i) {
      const std::int64_t at = base + i * threads + t;
      if (at < n) block_keys[i] = keys[at];
    }
    TILESORT_UNROLL
    for (int i = 0; i < items; ++i) {
      if (base + i * threads + t < n) {
        const auto bits = image(block_keys[i]);
        TILESORT_UNROLL
        for (int p = 0; p < Passes; ++p)
          atomicAdd(storage::counter(counts, p, radix_digit<Policy::radix_bits>(bits, p), lane), 1u);
      }
    }
  }
  __syncthreads();
  for (int i = t; i < Passes * bins; i += threads) {
    unsigned c = 0;
    for (int k = 0; k < storage::copies; ++k) c += counts[i * storage::copies + (k + i) % storage::copies];
    if (c != 0) atomicAdd(&control->digit_start[i / bins][i % bins], static_cast<unsigned long long>(c));
  }

  // The last block: exclusive starts per digit, and the schedule.
  __threadfence();
  __syncthreads();
  if (t == 0) last_block = atomicAdd(&control->histogram_blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  if (t < Passes) largest[t] = 0;
  __syncthreads();
  for (int p = 0; p < Passes; ++p) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> bin(control->digit_start[p][t % bins]);
    const std::int64_t count = t < bins ? static_cast<std::int64_t>(bin.load(cuda::memory_order_relaxed)) : 0;
    if (count > 0) atomicMax(&largest[p], static_cast<unsigned long long>(count));
    const bool constant = __syncthreads_or(count == n) != 0;
    std::int64_t total = 0;
    const std::int64_t start = block_exclusive_sum<threads>(count, warp_sums, total);
    if (t < bins) bin.store(static_cast<unsigned long long>(start), cuda::memory_order_relaxed);
    if (t == 0) varies[p] = !constant;
  }
  __syncthreads();
  if (t == 0) {
    std::int64_t largest_bin[Passes];
    bool run[Passes];
    for (int p = 0; p < Passes; ++p) largest_bin[p] = static_cast<std::int64_t>(largest[p]);
    int bucket_digit[radix_bucket_digits] = {};
    const bool buckets = radix_choose_buckets(varies, largest_bin, Passes, n, hybrid, run, bucket_digit);
    radix_schedule_passes(run, Passes, in_place, control->schedule);
    control->schedule.buckets = buckets ? 1 : 0;
    for (int k = 0; k < radix_bucket_digits; ++k) control->schedule.bucket_digit[k] = bucket_digit[k];
  }
}

}  // namespace tilesort::detail
