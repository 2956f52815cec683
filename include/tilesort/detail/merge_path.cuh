// detail/merge_path.cuh — the merge-path search (Green, McColl, Bader 2012).
//
// Merging sorted A (length a_len) and B (length b_len) writes output index
// `diagonal` from A[i] or B[diagonal - i - 1] for the split i this returns:
// the number of A elements among the first `diagonal` outputs of a stable
// merge (ties taken from A first). O(log min(a_len, b_len)) comparisons. Used
// by the block merges (shared memory, 32-bit indices) and the device merge
// passes (global memory, 64-bit indices); `Index` is chosen by the caller.
#pragma once

#include "config.cuh"

namespace tilesort::detail {

template <typename Index, typename KeyIterA, typename KeyIterB, typename Compare>
TILESORT_HD Index merge_path(KeyIterA a, Index a_len, KeyIterB b, Index b_len, Index diagonal, Compare comp) {
  Index lo = diagonal > b_len ? diagonal - b_len : Index(0);
  Index hi = diagonal < a_len ? diagonal : a_len;
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    // Take A[mid] before B[diagonal - 1 - mid] unless B's key is strictly smaller.
    if (comp(b[diagonal - 1 - mid], a[mid])) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// The same split found by 32 searchers at once (a warp per search, over
// global memory): each round probes 32 evenly spaced candidates, whose loads
// are independent, and keeps the gap where the predicate turns true, so a
// search over 2^k candidates waits for memory about k / 5 times instead of k.
// `ballot(pred)` returns the mask of lanes 0..31 for which pred(lane) holds
// (__ballot_sync on the device; a loop on the host), and must be called by
// every lane of the warp with the same arguments.
template <typename Index, typename KeyIterA, typename KeyIterB, typename Compare, typename Ballot>
TILESORT_HD Index merge_path_32way(KeyIterA a, Index a_len, KeyIterB b, Index b_len, Index diagonal, Compare comp,
                                   Ballot ballot) {
  Index lo = diagonal > b_len ? diagonal - b_len : Index(0);
  Index hi = diagonal < a_len ? diagonal : a_len;
  while (lo < hi) {
    // Invariant: the answer (first i in [lo, hi) whose B key is strictly
    // smaller than A[i], else hi) lies in [lo, hi].
    const Index step = (hi - lo + 31) / 32;  // lanes 0 .. (hi - lo - 1) / step probe lo + lane * step
    const unsigned taken = ballot([&](int lane) {
      const Index i = lo + Index(lane) * step;
      return i < hi && comp(b[diagonal - 1 - i], a[i]);
    });
    if (taken != 0) {
      const int first = lowest_set_bit(taken);
      const Index new_hi = lo + Index(first) * step;
      lo = first == 0 ? lo : lo + Index(first - 1) * step + 1;
      hi = new_hi;
    } else {
      lo = lo + (hi - lo - 1) / step * step + 1;  // past the last probe
    }
  }
  return lo;
}

}  // namespace tilesort::detail
