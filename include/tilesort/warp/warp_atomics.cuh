// warp/warp_atomics.cuh — warp-aggregated atomics: a warp adds to a global
// counter, or takes slots of a queue, with one atomic instead of one per
// lane. The sorts that decide on the device use them to count work (the
// locality sort's statistics) and to append to lists (merge jobs, segment
// bins), where per-lane atomics on a few addresses serialise in L2.
//
// Each is a warp reduction or scan by shuffles, one atomic by one lane, and
// a shuffle of its result. Every lane of the warp calls them (full mask).
//
//   const unsigned slot = detail::warp_reserve(&queue_count, wants_slot);
//   if (wants_slot) queue[slot] = job;
//   detail::warp_add(&merged_keys, wants_slot ? job_keys : 0);
#pragma once

#include "../detail/config.cuh"
#include "warp_shuffle.cuh"  // lane_id

namespace tilesort::detail {

// Sum of `value` over the warp, added to *total by lane 0 (all lanes call it).
TILESORT_DEVICE void warp_add(unsigned long long* total, unsigned long long value) {
  TILESORT_UNROLL
  for (int mask = 16; mask > 0; mask >>= 1) value += __shfl_xor_sync(0xffffffffu, value, mask);
  if (lane_id() == 0 && value != 0) atomicAdd(total, value);
}

// Reserve one slot per lane with `wants` in the queue behind *count (one
// atomic per warp); returns this lane's slot (meaningless where !wants).
// All lanes of the warp call it.
TILESORT_DEVICE unsigned warp_reserve(unsigned* count, bool wants) {
  const unsigned ballot = __ballot_sync(0xffffffffu, wants);
  if (ballot == 0) return 0;
  const int lane = lane_id();
  unsigned base = 0;
  if (lane == 0) base = atomicAdd(count, static_cast<unsigned>(__popc(ballot)));
  base = __shfl_sync(0xffffffffu, base, 0);
  return base + static_cast<unsigned>(__popc(ballot & ((1u << lane) - 1u)));
}

// Reserve `amount` consecutive slots per lane behind *counter with one atomic
// per warp; returns this lane's first slot. All lanes of the warp call it.
template <typename Counter>
TILESORT_DEVICE Counter warp_reserve_n(Counter* counter, Counter amount) {
  const int lane = lane_id();
  Counter inclusive = amount;
  TILESORT_UNROLL
  for (int d = 1; d < 32; d <<= 1) {
    const Counter up = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += up;
  }
  const Counter total = __shfl_sync(0xffffffffu, inclusive, 31);
  if (total == 0) return 0;
  Counter base = 0;
  if (lane == 31) base = atomicAdd(counter, total);
  base = __shfl_sync(0xffffffffu, base, 31);
  return base + inclusive - amount;
}

}  // namespace tilesort::detail
