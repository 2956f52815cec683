// detail/merge_path.cuh — the merge-path search (Green, McColl, Bader 2012).
//
// Merging sorted A (length a_len) and B (length b_len) writes output index
// `diagonal` from A[i] or B[diagonal - i - 1] for the split i this returns:
// the number of A elements among the first `diagonal` outputs of a stable
// merge (ties taken from A first). O(log min(a_len, b_len)) comparisons. Used
// by the block merges (shared memory, 32-bit indices) and the device merge
// passes (global memory, 64-bit indices); `Index` is chosen by the caller.
#pragma once

#include <type_traits>

#include "config.cuh"

namespace tilesort::detail {

// Passed instead of a ballot where one thread searches alone.
struct binary_search_tag {};

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

// The same split found by a group of Ways searchers at once (Ways lanes of a
// warp per search, over global memory; 2 <= Ways <= 32): each round probes
// Ways evenly spaced candidates, whose loads are independent, and keeps the gap
// where the predicate turns true, so a search over 2^k candidates waits for
// memory about k / log2(Ways) times instead of k. Wider groups wait less but
// fetch more: every probe reads a 32-byte sector of A and one of B.
// `ballot(pred)` returns the mask of group members 0..Ways-1 for which
// pred(member) holds (__ballot_sync over the group on the device; a loop on the
// host), and must be called by every member of the group with the same arguments.
// The first i in [lo, hi) for which turns(i) holds (hi if none), where turns
// is false and then true over the range. Searched by a group of Ways lanes
// with `ballot` as above, or by one thread (binary_search_tag: binary).
template <int Ways, typename Index, typename Pred, typename Ballot>
TILESORT_HD Index partition_point_kway(Index lo, Index hi, Pred turns, Ballot ballot) {
  if constexpr (std::is_same_v<Ballot, binary_search_tag>) {
    while (lo < hi) {
      const Index mid = lo + (hi - lo) / 2;
      if (turns(mid)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
  } else {
    static_assert(Ways >= 2 && Ways <= 32, "a group is 2 to 32 lanes of one warp");
    while (lo < hi) {
      // Invariant: the answer lies in [lo, hi].
      const Index step = (hi - lo + Ways - 1) / Ways;  // members 0 .. (hi - lo - 1) / step probe lo + member * step
      const unsigned taken = ballot([&](int member) {
        const Index i = lo + Index(member) * step;
        return i < hi && turns(i);
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
  }
  return lo;
}

template <int Ways, typename Index, typename KeyIterA, typename KeyIterB, typename Compare, typename Ballot>
TILESORT_HD Index merge_path_kway(KeyIterA a, Index a_len, KeyIterB b, Index b_len, Index diagonal, Compare comp,
                                  Ballot ballot) {
  const Index lo = diagonal > b_len ? diagonal - b_len : Index(0);
  const Index hi = diagonal < a_len ? diagonal : a_len;
  // The first i whose B key (the one it would be compared with) is strictly smaller than A[i].
  return partition_point_kway<Ways>(
      lo, hi, [&](Index i) { return comp(b[diagonal - 1 - i], a[i]); }, ballot);
}

}  // namespace tilesort::detail
