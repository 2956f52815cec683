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

}  // namespace tilesort::detail
