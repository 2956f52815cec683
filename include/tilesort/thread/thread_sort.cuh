// thread/thread_sort.cuh — sorting networks over the ItemsPerThread keys one
// thread holds in registers, and the serial merge the block level builds on.
//
// * odd_even_transposition_sort: N rounds of adjacent compare-exchanges
//   (N*(N-1)/2 comparisons). Swaps only strictly out-of-order neighbours, so it
//   is stable. Used where stability is required (block_sort).
// * bitonic_network_sort: Batcher's bitonic network, O(N log^2 N) comparisons,
//   for any N: the network is laid out for the next power of two and every
//   comparison whose upper index is >= N is dropped, which is what "virtual
//   +infinity padding" would do, without any sentinel. Not stable.
// * serial_merge: one thread merges ItemsPerThread outputs from two sorted
//   runs of a shared array (stable: ties go to the first run).
//
// Every loop bound is a compile-time constant, so with full unrolling the keys
// stay in registers. All functions are __host__ __device__ and host-tested.
#pragma once

#include "../comparators.cuh"
#include "../detail/config.cuh"
#include "../detail/values.cuh"

namespace tilesort {
namespace detail {

template <typename T>
TILESORT_HD void swap_values(T& a, T& b) {
  T t = a;
  a = b;
  b = t;
}
TILESORT_HD void swap_values(no_value&, no_value&) {}

}  // namespace detail

/// Orders (a, b) so that !comp(b, a); the payloads follow their keys.
template <typename Key, typename Value, typename Compare>
TILESORT_HD void compare_exchange(Key& a, Key& b, Value& va, Value& vb, Compare comp) {
  if (comp(b, a)) {
    detail::swap_values(a, b);
    detail::swap_values(va, vb);
  }
}

/// Stable sort of a thread's N keys and their values in registers: N rounds of
/// adjacent compare-exchanges (N(N-1)/2 comparisons).
/// @code
/// int keys[8];
/// float values[8];
/// tilesort::odd_even_transposition_sort(keys, values);  // ascending, stable
/// @endcode
template <typename Key, typename Value, int N, typename Compare = less>
TILESORT_HD void odd_even_transposition_sort(Key (&keys)[N], Value (&values)[N], Compare comp = {}) {
  TILESORT_UNROLL
  for (int round = 0; round < N; ++round) {
    TILESORT_UNROLL
    for (int i = round & 1; i + 1 < N; i += 2) compare_exchange(keys[i], keys[i + 1], values[i], values[i + 1], comp);
  }
}

/// odd_even_transposition_sort() of keys alone.
template <typename Key, int N, typename Compare = less>
TILESORT_HD void odd_even_transposition_sort(Key (&keys)[N], Compare comp = {}) {
  detail::no_value values[N];
  odd_even_transposition_sort(keys, values, comp);
}

/// Sort of a thread's N keys and their values in registers with Batcher's
/// bitonic network, O(N log^2 N) comparisons, any N; not stable.
/// @code
/// std::uint32_t keys[16];
/// tilesort::bitonic_network_sort(keys, tilesort::greater{});  // descending
/// @endcode
template <typename Key, typename Value, int N, typename Compare = less>
TILESORT_HD void bitonic_network_sort(Key (&keys)[N], Value (&values)[N], Compare comp = {}) {
  constexpr int padded = static_cast<int>(detail::next_pow2(N));
  // "Flip" form of the network: the first step of each merge compares i with
  // its mirror in the block, later steps with i ^ stride, and the lower index
  // always receives the smaller key. Padding at indices >= N would be
  // +infinity and never move, so comparisons that touch it are skipped.
  TILESORT_UNROLL
  for (int block = 2; block <= padded; block <<= 1) {
    TILESORT_UNROLL
    for (int i = 0; i < padded; ++i) {
      const int partner = i ^ (block - 1);
      if (partner > i && partner < N) compare_exchange(keys[i], keys[partner], values[i], values[partner], comp);
    }
    TILESORT_UNROLL
    for (int stride = block >> 2; stride > 0; stride >>= 1) {
      TILESORT_UNROLL
      for (int i = 0; i < padded; ++i) {
        const int partner = i ^ stride;
        if (partner > i && partner < N) compare_exchange(keys[i], keys[partner], values[i], values[partner], comp);
      }
    }
  }
}

/// bitonic_network_sort() of keys alone.
template <typename Key, int N, typename Compare = less>
TILESORT_HD void bitonic_network_sort(Key (&keys)[N], Compare comp = {}) {
  detail::no_value values[N];
  bitonic_network_sort(keys, values, comp);
}

/// Merges ItemsPerThread outputs from two sorted runs of `keys`:
/// [a_begin, a_end) and [b_begin, b_end), A before B (a_end <= b_begin). Ties
/// take the A element first, so the merge is stable when A precedes B in the
/// input. `out_index` receives each output's position in `keys` (to gather
/// payloads). Outputs past the end of both runs are junk (any key of the runs,
/// any index) and must be ignored by the caller.
/// @code
/// int keys[4], from[4];   // this thread's 4 outputs of a merge-path split
/// tilesort::serial_merge(shared_keys, a_begin, a_end, b_begin, b_end, keys, from, tilesort::less{});
/// @endcode
// Branch-free: every step reads the next key of the run it took, at an index
// clamped to [0, b_end - 1], so the reads stay inside the runs (keys[0] is read
// when both runs are empty) and no comparator ever sees an uninitialised key;
// a warp never diverges here (a branchy form costs about twice the instructions).
template <typename Key, int ItemsPerThread, typename Compare>
TILESORT_HD void serial_merge(const Key* keys, int a_begin, int a_end, int b_begin, int b_end,
                              Key (&out)[ItemsPerThread], int (&out_index)[ItemsPerThread], Compare comp) {
  const int last = b_end > 0 ? b_end - 1 : 0;
  const auto read = [&](int i) { return keys[i < last ? i : last]; };
  Key a_key = read(a_begin);
  Key b_key = read(b_begin);
  TILESORT_UNROLL
  for (int i = 0; i < ItemsPerThread; ++i) {
    const bool take_b = b_begin < b_end && (a_begin >= a_end || comp(b_key, a_key));
    out[i] = take_b ? b_key : a_key;
    out_index[i] = take_b ? b_begin : a_begin;
    b_begin += take_b ? 1 : 0;
    a_begin += take_b ? 0 : 1;
    const Key next = read(take_b ? b_begin : a_begin);
    b_key = take_b ? next : b_key;
    a_key = take_b ? a_key : next;
  }
}

}  // namespace tilesort
