// warp/warp_sort.cuh — sort the keys (and payloads) one logical warp holds in
// registers: a bitonic network whose steps are either in-register
// compare-exchanges or lane-to-lane shuffles. No shared memory. Not stable.
//
// Arrangement (in and out): blocked. With W = LogicalWarpThreads lanes and
// IPT = ItemsPerThread keys per lane, lane i holds ranks [i*IPT, (i+1)*IPT):
//
//   lane       0               1                     W-1
//   keys   [0 .. IPT-1]  [IPT .. 2*IPT-1]  ...  [(W-1)*IPT .. W*IPT-1]
//
// The network. Let P = next_pow2(IPT) slots per lane and number the W*P
// network positions g = lane*P + slot. Bitonic sort in its "flip" form: for
// each merge size s = 2, 4, ..., W*P, first compare g with g ^ (s-1) (the
// mirror position in its block of s), then g with g ^ t for t = s/4, ..., 1.
// The lower position always receives the smaller key, so no direction bit is
// needed and keys that stand for +infinity at the top positions never move.
// A step with distance < P pairs two slots of one lane (an in-register
// compare-exchange); a step with distance >= P pairs the same-numbered slots
// of lane and lane ^ (t/P) (the flip step: slot e with slot P-1-e of lane ^
// (s/P - 1)), and each lane shuffles its P keys across, compares, and keeps
// the smaller or the larger by its position. So the merges of size <= P are
// the thread-level sort of each lane's keys, and every later merge is
// log2(s/P) shuffle steps followed by log2(P) in-register steps.
//
// Cost, with w = log2(W) and p = log2(P):
//   shuffle steps   w(w+1)/2 (15 for W = 32), each one shuffle per key word
//                   and payload word per slot: 15*P shuffles per word per lane
//   register steps  p(p+1)/2 + w*p, each P/2 compare-exchanges
// e.g. W = 32, IPT = 8: 120 shuffles and 84 compare-exchanges per lane.
//
// ItemsPerThread that is not a power of two: the keys are first moved (by
// shuffles) so that key b of the blocked order sits at network position b,
// the positions W*IPT .. W*P-1 are virtual +infinity, the network skips every
// compare-exchange that touches them (their contents never matter), and the
// result is moved back. Each move shuffles whole source lanes (2 to 3.2
// shuffles per slot and word) and shifts them into place with ceil(log2)
// steps of selects; correct for any count, slower than a power of two.
//
// valid_items: the keys at blocked index >= valid_items are +infinity by
// position (the same skipping, decided by an index comparison, no sentinel).
// They also never move: the first valid_items outputs are the sorted valid
// keys and every later slot keeps the key (and payload) it came in with.
//
// Rules for callers: all 32 lanes of the physical warp call the function
// together (converged, same template arguments); the shuffles use the full
// mask, and LogicalWarpThreads < 32 splits the warp into 32/W independent
// sorts that never exchange keys. valid_items must be the same on the lanes of
// one logical warp (it may differ between logical warps). Keys past
// valid_items may hold any bits, including uninitialised ones: the network is
// all selects, no branches, so the comparator may be evaluated on them, but
// the result is ignored (the comparator must only be safe to call on them).
#pragma once

#include <cstring>
#include <type_traits>

#include "../comparators.cuh"
#include "../detail/config.cuh"
#include "../thread/thread_sort.cuh"
#include "warp_shuffle.cuh"

namespace tilesort {
namespace detail {

// A word mask that is all ones when `flag` is set. The PTX mov hides its two
// possible values from the optimizer, so selects written with it stay
// arithmetic: with plain selects on a lane-dependent flag the compiler may
// turn a whole step into a branch per lane half, which then diverges.
TILESORT_HD unsigned opaque_mask(bool flag) {
  unsigned mask = flag ? 0xffffffffu : 0u;
#ifdef __CUDA_ARCH__
  asm("mov.b32 %0, %0;" : "+r"(mask));
#endif
  return mask;
}

// `a` where mask is all ones, `b` where it is zero; one LOP3 per 4-byte word.
template <typename T>
TILESORT_HD T select_by_mask(const T& a, const T& b, unsigned mask) {
  if constexpr (std::is_empty_v<T>) {
    return a;
  } else {
    shuffle_words<T> wa;
    shuffle_words<T> wb;
    wa.word[wa.count - 1] = 0;
    wb.word[wb.count - 1] = 0;
    std::memcpy(wa.word, &a, sizeof(T));
    std::memcpy(wb.word, &b, sizeof(T));
    TILESORT_UNROLL
    for (int i = 0; i < wa.count; ++i) wa.word[i] = wb.word[i] ^ ((wa.word[i] ^ wb.word[i]) & mask);
    T result;
    std::memcpy(&result, wa.word, sizeof(T));
    return result;
  }
}

// In-register compare-exchange of two positions of one lane: the smaller key
// to `a`. Selects (min/max for integers), never a branch: the comparison is
// evaluated even when `active` is false (on keys that may be garbage) and
// its result ignored.
template <typename Key, typename Value, typename Compare>
TILESORT_HD void order_pair(Key& a, Key& b, Value& va, Value& vb, bool active, Compare comp) {
  const bool swap = comp(b, a) & active;
  const Key lower_key = swap ? b : a;
  const Key upper_key = swap ? a : b;
  a = lower_key;
  b = upper_key;
  if constexpr (!std::is_empty_v<Value>) {
    const Value lower_value = swap ? vb : va;
    const Value upper_value = swap ? va : vb;
    va = lower_value;
    vb = upper_value;
  }
}

// Which half of a lane-to-lane compare-exchange this lane holds: `upper` when
// its positions are the higher ones (it keeps the larger keys); upper_mask is
// the same as a word mask (see opaque_mask).
struct lane_role {
  bool upper;
  unsigned upper_mask;
};

TILESORT_HD lane_role make_lane_role(bool upper) { return lane_role{upper, opaque_mask(upper)}; }

// One half of a lane-to-lane compare-exchange: this lane holds `key` at one
// position of the pair and has received the partner's `other_key`; it keeps
// the smaller key if its position is the lower one, the larger otherwise.
// Both lanes of a pair must agree on whether it swaps, or a tie between
// distinguishable elements (equal keys with different payloads, -0.0 and
// +0.0) would duplicate one and lose the other.
template <typename Key, typename Value, typename Compare>
TILESORT_HD void keep_by_position(Key& key, Value& value, const Key& other_key, const Value& other_value,
                                  lane_role role, bool active, Compare comp) {
  bool take_other;
  if constexpr (equivalence_is_identity<Key, Compare>) {
    // Integers under less/greater: comparisons are cheap, equivalent keys are
    // bitwise equal.
    const bool other_less = comp(other_key, key);
    if constexpr (std::is_empty_v<Value>) {
      // A tie may swap on one side only: the keys are identical. One ISETP
      // with a predicate XOR, one SEL.
      take_other = other_less != role.upper;
    } else {
      // lower lane: other < key; upper lane: key < other. Never on a tie.
      const bool key_less = comp(key, other_key);
      take_other = (other_less != role.upper) & (other_less | key_less);
    }
  } else {
    // One comparator call on the pair in a fixed order, the same on both lanes.
    const Key lower_key = select_by_mask(other_key, key, role.upper_mask);
    const Key upper_key = select_by_mask(key, other_key, role.upper_mask);
    take_other = comp(upper_key, lower_key);
  }
  take_other = take_other & active;
  key = take_other ? other_key : key;
  if constexpr (!std::is_empty_v<Value>) value = take_other ? other_value : value;
}

// Where the network runs: this lane's number in its logical warp, and the
// number of real positions (positions >= limit are +infinity and skipped).
struct network_place {
  int lane;
  int limit;
};

// The bitonic network over W lanes x Slots positions (both powers of two).
// With Guarded false every position is real and `limit` is ignored.
template <int LogicalWarpThreads, int Slots, bool Guarded>
struct warp_bitonic_network {
  static_assert(is_pow2(LogicalWarpThreads) && is_pow2(Slots), "the network needs powers of two");
  static constexpr int positions = LogicalWarpThreads * Slots;

  template <typename Key, typename Value, typename Compare, typename Exchange>
  static TILESORT_HD void sort(Key (&keys)[Slots], Value (&values)[Slots], network_place place, Compare comp,
                               const Exchange& exchange) {
    merge_from<2>(keys, values, place, comp, exchange);
  }

 private:
  // Merges of size Size, 2*Size, ..., positions. (Template recursion, not a
  // loop, so every slot index below is a compile-time constant.)
  template <int Size, typename Key, typename Value, typename Compare, typename Exchange>
  static TILESORT_HD void merge_from(Key (&keys)[Slots], Value (&values)[Slots], network_place place, Compare comp,
                                     const Exchange& exchange) {
    if constexpr (Size <= positions) {
      if constexpr (Size <= Slots) {
        register_step<Size - 1>(keys, values, place, comp);
      } else {
        lane_flip_step<Size / Slots - 1>(keys, values, place, comp, exchange);
      }
      half_clean<Size / 4>(keys, values, place, comp, exchange);
      merge_from<Size * 2>(keys, values, place, comp, exchange);
    }
  }

  // The steps at distance Distance, Distance/2, ..., 1 of one merge.
  template <int Distance, typename Key, typename Value, typename Compare, typename Exchange>
  static TILESORT_HD void half_clean(Key (&keys)[Slots], Value (&values)[Slots], network_place place, Compare comp,
                                     const Exchange& exchange) {
    if constexpr (Distance > 0) {
      if constexpr (Distance < Slots) {
        register_step<Distance>(keys, values, place, comp);
      } else {
        lane_stride_step<Distance / Slots>(keys, values, place, comp, exchange);
      }
      half_clean<Distance / 2>(keys, values, place, comp, exchange);
    }
  }

  // Slot i against slot i ^ SlotMask of the same lane (SlotMask = 2^k - 1 is
  // a flip step, a power of two a half-cleaner step).
  template <int SlotMask, typename Key, typename Value, typename Compare>
  static TILESORT_HD void register_step(Key (&keys)[Slots], Value (&values)[Slots], network_place place,
                                        Compare comp) {
    // Real slots of this lane: the upper slot j of a pair decides.
    const int lane_real = place.limit - place.lane * Slots;
    TILESORT_UNROLL
    for (int i = 0; i < Slots; ++i) {
      const int j = i ^ SlotMask;
      if (j > i) order_pair(keys[i], keys[j], values[i], values[j], !Guarded || j < lane_real, comp);
    }
  }

  // Flip step across lanes: slot e of this lane against slot Slots-1-e of
  // lane ^ LaneMask (LaneMask = s/Slots - 1); the lane whose bit
  // (LaneMask+1)/2 is set holds the upper positions.
  template <int LaneMask, typename Key, typename Value, typename Compare, typename Exchange>
  static TILESORT_HD void lane_flip_step(Key (&keys)[Slots], Value (&values)[Slots], network_place place,
                                         Compare comp, const Exchange& exchange) {
    const lane_role role = make_lane_role((place.lane & ((LaneMask + 1) / 2)) != 0);
    Key other_keys[Slots];
    Value other_values[Slots];
    TILESORT_UNROLL
    for (int e = 0; e < Slots; ++e) {
      other_keys[e] = exchange.exchange_xor(keys[Slots - 1 - e], LaneMask);
      if constexpr (!std::is_empty_v<Value>) other_values[e] = exchange.exchange_xor(values[Slots - 1 - e], LaneMask);
    }
    // The pair is real when its upper position is: slot e here if this lane
    // is the upper one, slot Slots-1-e (= e ^ (Slots-1)) of the partner
    // otherwise.
    const int lower_mask = static_cast<int>(~role.upper_mask);
    const int upper_lane = place.lane ^ (LaneMask & lower_mask);
    const int upper_slot_flip = (Slots - 1) & lower_mask;
    const int upper_lane_real = place.limit - upper_lane * Slots;
    TILESORT_UNROLL
    for (int e = 0; e < Slots; ++e) {
      const bool active = !Guarded || (e ^ upper_slot_flip) < upper_lane_real;
      keep_by_position(keys[e], values[e], other_keys[e], other_values[e], role, active, comp);
    }
  }

  // Half-cleaner step across lanes: slot e of this lane against slot e of
  // lane ^ LaneMask; the lane with bit LaneMask set holds the upper position.
  template <int LaneMask, typename Key, typename Value, typename Compare, typename Exchange>
  static TILESORT_HD void lane_stride_step(Key (&keys)[Slots], Value (&values)[Slots], network_place place,
                                           Compare comp, const Exchange& exchange) {
    const lane_role role = make_lane_role((place.lane & LaneMask) != 0);
    const int upper_lane_real = place.limit - (place.lane | LaneMask) * Slots;
    TILESORT_UNROLL
    for (int e = 0; e < Slots; ++e) {
      const Key other_key = exchange.exchange_xor(keys[e], LaneMask);
      Value other_value = values[e];
      if constexpr (!std::is_empty_v<Value>) other_value = exchange.exchange_xor(values[e], LaneMask);
      keep_by_position(keys[e], values[e], other_key, other_value, role, !Guarded || e < upper_lane_real, comp);
    }
  }
};

// Shift `window` left by `offset` (< 2^Bits) positions: window[k] becomes
// window[k + offset] wherever that exists. One select per position, word and
// bit: a barrel shifter, since registers can't be indexed by a run-time offset.
template <int Bit, int Bits, typename T, int Size>
TILESORT_HD void shift_window(T (&window)[Size], int offset) {
  if constexpr (Bit < Bits) {
    constexpr int distance = 1 << Bit;
    const unsigned shift = opaque_mask(((offset >> Bit) & 1) != 0);
    TILESORT_UNROLL
    for (int i = 0; i + distance < Size; ++i) window[i] = select_by_mask(window[i + distance], window[i], shift);
    shift_window<Bit + 1, Bits>(window, offset);
  }
}

// Re-block a logical warp's items: element x (in lane-major order) sits in
// slot x % SrcItems of lane x / SrcItems before and goes to slot x % DstItems
// of lane x / DstItems. Destination slots past the W*SrcItems elements get
// copies of other elements (the caller never reads them). Each lane fetches
// the whole source lanes its range starts in and touches, then shifts the
// window by its start offset.
template <int SrcItems, int DstItems, typename T, typename Exchange>
TILESORT_HD void reblock(const T (&src)[SrcItems], T (&dst)[DstItems], int lane, const Exchange& exchange) {
  if constexpr (!std::is_empty_v<T>) {
    // A range of DstItems elements starting at offset <= SrcItems-1 spans at
    // most this many source lanes.
    constexpr int source_lanes = (SrcItems - 1 + DstItems + SrcItems - 1) / SrcItems;
    constexpr int window_size = source_lanes * SrcItems;
    constexpr int offset_bits = SrcItems > 1 ? log2_floor(SrcItems - 1) + 1 : 0;
    const int first = lane * DstItems;
    const int first_lane = first / SrcItems;
    const int offset = first % SrcItems;
    T window[window_size];
    TILESORT_UNROLL
    for (int i = 0; i < window_size; ++i) {
      // Source lanes past the logical warp wrap around (their items are never used).
      window[i] = exchange.exchange_from(src[i % SrcItems], first_lane + i / SrcItems);
    }
    shift_window<0, offset_bits>(window, offset);
    TILESORT_UNROLL
    for (int k = 0; k < DstItems; ++k) dst[k] = window[k];
  }
}

// The one implementation behind the four public entry points. Keys-only sorts
// pass an array of no_value (it costs nothing); Guarded selects the
// valid_items path, so the full sort carries no index comparisons.
template <int LogicalWarpThreads, bool Guarded, typename Key, typename Value, int ItemsPerThread, typename Compare,
          typename Exchange>
TILESORT_HD void warp_sort_impl(Key (&keys)[ItemsPerThread], Value (&values)[ItemsPerThread], int valid_items,
                                Compare comp, const Exchange& exchange) {
  static_assert(ItemsPerThread >= 1, "ItemsPerThread must be at least 1");
  static_assert(std::is_trivially_copyable_v<Key> && std::is_trivially_copyable_v<Value>,
                "warp_sort moves keys and values by shuffles: they must be trivially copyable");
  constexpr int slots = static_cast<int>(next_pow2(ItemsPerThread));
  constexpr int tile = LogicalWarpThreads * ItemsPerThread;
  int limit = tile;
  if constexpr (Guarded) limit = valid_items < 0 ? 0 : (valid_items < tile ? valid_items : tile);
  const network_place place{exchange.lane(), limit};
  if constexpr (slots == ItemsPerThread) {
    warp_bitonic_network<LogicalWarpThreads, slots, Guarded>::sort(keys, values, place, comp, exchange);
  } else {
    Key network_keys[slots];
    Value network_values[slots];
    reblock(keys, network_keys, place.lane, exchange);
    reblock(values, network_values, place.lane, exchange);
    warp_bitonic_network<LogicalWarpThreads, slots, true>::sort(network_keys, network_values, place, comp, exchange);
    reblock(network_keys, keys, place.lane, exchange);
    reblock(network_values, values, place.lane, exchange);
  }
}

template <typename Compare>
inline constexpr bool is_comparator_argument = !std::is_arithmetic_v<Compare>;

}  // namespace detail

/// Sorts the LogicalWarpThreads * ItemsPerThread keys of each logical warp
/// (blocked arrangement in and out: lane i ends with ranks [i*IPT, (i+1)*IPT)).
/// Not stable. All 32 lanes of the warp must call it together.
///
/// @tparam LogicalWarpThreads lanes per independent sort (a power of two, at most 32)
/// @param keys this lane's ItemsPerThread keys
/// @param comp strict weak order
///
/// @code
/// __global__ void sort_tiles(std::uint32_t* data) {    // 32 threads per warp
///   const int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
///   std::uint32_t keys[4];
///   for (int i = 0; i < 4; ++i) keys[i] = data[base + i];
///   tilesort::warp_sort(keys);                         // 128 keys per warp
///   for (int i = 0; i < 4; ++i) data[base + i] = keys[i];
/// }
/// @endcode
///
/// `tilesort::warp_sort<8>(keys, tilesort::greater{})` sorts four independent
/// 8-lane groups of 32 keys each, descending.
template <int LogicalWarpThreads = 32, typename Key, int ItemsPerThread, typename Compare = less>
TILESORT_DEVICE void warp_sort(Key (&keys)[ItemsPerThread], Compare comp = {}) {
  static_assert(detail::is_comparator_argument<Compare>,
                "warp_sort(keys, n): pass valid_items as an int (this overload takes a comparator)");
  detail::no_value values[ItemsPerThread];
  detail::warp_sort_impl<LogicalWarpThreads, false>(keys, values, 0, comp, detail::warp_exchange<LogicalWarpThreads>{});
}

/// Sorts the first `valid_items` keys (blocked order) of each logical warp;
/// the keys at blocked index >= valid_items count as +infinity by position
/// (no sentinel needed; they may hold any bits). Afterwards the first
/// valid_items keys (blocked order) are the sorted valid keys and every later
/// slot still holds the key it came in with. valid_items may be <= 0 (nothing
/// moves) or >= the tile (a full sort); it must be equal on the lanes of one
/// logical warp and may differ between logical warps. Not stable.
///
/// @code
/// std::uint32_t keys[4];                        // lane's items of a ragged tile
/// const int valid = min(n - tile_base, 128);
/// for (int i = 0; i < 4; ++i) if (lane * 4 + i < valid) keys[i] = in[tile_base + lane * 4 + i];
/// tilesort::warp_sort(keys, valid);
/// for (int i = 0; i < 4; ++i) if (lane * 4 + i < valid) out[tile_base + lane * 4 + i] = keys[i];
/// @endcode
template <int LogicalWarpThreads = 32, typename Key, int ItemsPerThread, typename Compare = less>
TILESORT_DEVICE void warp_sort(Key (&keys)[ItemsPerThread], int valid_items, Compare comp = {}) {
  detail::no_value values[ItemsPerThread];
  detail::warp_sort_impl<LogicalWarpThreads, true>(keys, values, valid_items, comp,
                                                   detail::warp_exchange<LogicalWarpThreads>{});
}

/// Sorts keys with their values (values[i] travels with keys[i]); otherwise as
/// warp_sort. Not stable: equal keys may come out with their values in any
/// order (pass the original index as the value, or a (key, index) key, when
/// that matters).
///
/// @code
/// float keys[8];
/// std::uint32_t ids[8];
/// ...
/// tilesort::warp_sort_pairs(keys, ids);                  // 256 pairs per warp
/// tilesort::warp_sort_pairs<16>(keys, ids, tilesort::greater{});  // 2 x 128
/// @endcode
template <int LogicalWarpThreads = 32, typename Key, typename Value, int ItemsPerThread, typename Compare = less>
TILESORT_DEVICE void warp_sort_pairs(Key (&keys)[ItemsPerThread], Value (&values)[ItemsPerThread], Compare comp = {}) {
  static_assert(detail::is_comparator_argument<Compare>,
                "warp_sort_pairs(keys, values, n): pass valid_items as an int (this overload takes a comparator)");
  detail::warp_sort_impl<LogicalWarpThreads, false>(keys, values, 0, comp, detail::warp_exchange<LogicalWarpThreads>{});
}

/// Sorts the first `valid_items` pairs (blocked order) of each logical warp;
/// the pairs past it keep their slots (see the keys-only valid_items
/// overload for the rules).
///
/// @code
/// tilesort::warp_sort_pairs<8>(keys, values, segment_length);  // one segment per 8 lanes
/// @endcode
template <int LogicalWarpThreads = 32, typename Key, typename Value, int ItemsPerThread, typename Compare = less>
TILESORT_DEVICE void warp_sort_pairs(Key (&keys)[ItemsPerThread], Value (&values)[ItemsPerThread], int valid_items,
                                     Compare comp = {}) {
  detail::warp_sort_impl<LogicalWarpThreads, true>(keys, values, valid_items, comp,
                                                   detail::warp_exchange<LogicalWarpThreads>{});
}

}  // namespace tilesort
