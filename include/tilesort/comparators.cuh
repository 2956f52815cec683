// comparators.cuh — tilesort::less and tilesort::greater.
//
// Both are transparent functors usable on host and device. For floating-point
// keys (float, double, __half, __nv_bfloat16) they define a strict weak order
// over every value, NaN included: NaN sorts after every number (as numpy
// does), all NaNs are equivalent, and -0.0 is equivalent to +0.0. For every
// other type they use the type's operator<.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/limits>
#include <type_traits>

#include "detail/config.cuh"

namespace tilesort {
namespace detail {

template <typename T>
struct is_floating_key
    : std::bool_constant<std::is_floating_point_v<T> || std::is_same_v<T, __half> ||
                         std::is_same_v<T, __nv_bfloat16>> {};

// Widen a floating key to a type with ordinary comparisons.
template <typename T>
TILESORT_HD auto widen(const T& x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else {
    return x;
  }
}

// a < b in the total order "numbers ascending, then NaN".
template <typename T>
TILESORT_HD bool nan_last_less(const T& a, const T& b) {
  const auto x = widen(a);
  const auto y = widen(b);
  // x != x is true exactly for NaN; written this way it needs no libm call.
  const bool x_nan = x != x;
  const bool y_nan = y != y;
  return x_nan ? false : (y_nan || x < y);
}

}  // namespace detail

/// Ascending order; for floating keys NaN last (all NaNs equivalent) and
/// -0.0 equivalent to +0.0. The default comparator of every tilesort sort.
/// @code
/// tilesort::merge_sort_keys(d_in, d_out, n, tilesort::less{});   // ascending
/// @endcode
struct less {
  using is_transparent = void;  ///< heterogeneous comparisons allowed
  /// True when a orders before b.
  template <typename T, typename U>
  TILESORT_HD bool operator()(const T& a, const U& b) const {
    if constexpr (std::is_same_v<T, U> && detail::is_floating_key<T>::value) {
      return detail::nan_last_less(a, b);
    } else {
      return a < b;
    }
  }
};

/// Descending order; for floating keys NaN still last (all NaNs equivalent)
/// and -0.0 equivalent to +0.0.
/// @code
/// int keys[4] = {...};
/// tilesort::warp_sort(keys, tilesort::greater{});   // descending
/// @endcode
struct greater {
  using is_transparent = void;  ///< heterogeneous comparisons allowed
  /// True when a orders after b among numbers (a NaN orders before nothing).
  template <typename T, typename U>
  TILESORT_HD bool operator()(const T& a, const U& b) const {
    if constexpr (std::is_same_v<T, U> && detail::is_floating_key<T>::value) {
      // b < a among numbers, but a NaN still goes last (it is "less" than nothing).
      const auto x = detail::widen(a);
      const auto y = detail::widen(b);
      const bool x_nan = x != x;
      const bool y_nan = y != y;
      return x_nan ? false : (y_nan || y < x);
    } else {
      return b < a;
    }
  }
};

/// An order given by a key's bits: a orders before b when bits(a) < bits(b),
/// where `bits` maps a key to an unsigned integer (8 to 64 bits) whose
/// ascending order is the key order (CUB calls such a functor a
/// decomposer). It is a comparator like any other, so every tilesort sort
/// takes it, and it lets radix_sort_keys / radix_sort_pairs (and the front
/// door, sort_keys / sort_pairs) sort a user key type by radix. Make one
/// with tilesort::order_by_bits.
/// @code
/// struct point { std::uint16_t x, y; };
/// struct point_bits {   // by x, then y
///   __host__ __device__ std::uint32_t operator()(const point& p) const { return std::uint32_t(p.x) << 16 | p.y; }
/// };
/// tilesort::radix_sort_keys(d_in, d_out, n, tilesort::order_by_bits(point_bits{}));
/// @endcode
template <typename Bits>
struct bits_order {
  Bits bits;  ///< key -> unsigned integer image of the key order
  /// True when a orders before b.
  template <typename T>
  TILESORT_HD bool operator()(const T& a, const T& b) const {
    return bits(a) < bits(b);
  }
};

/// The tilesort::bits_order of a functor that maps a key to unsigned bits.
/// @code
/// auto order = tilesort::order_by_bits(point_bits{});
/// @endcode
template <typename Bits>
TILESORT_HD constexpr bits_order<Bits> order_by_bits(Bits bits) {
  return bits_order<Bits>{bits};
}

namespace detail {

// True when two keys the comparator calls equivalent are always bitwise equal,
// so a stable sort of keys alone may use an unstable network. Holds for
// integers under tilesort::less/greater; not for floats (-0.0 vs +0.0, NaN
// payloads) or user comparators.
template <typename Key, typename Compare>
inline constexpr bool equivalence_is_identity =
    std::is_integral_v<Key> && (std::is_same_v<Compare, tilesort::less> || std::is_same_v<Compare, tilesort::greater>);

// Where equivalence_is_identity holds: the key no other key orders after.
template <typename Key, typename Compare>
TILESORT_HD constexpr Key last_key() {
  return std::is_same_v<Compare, tilesort::greater> ? cuda::std::numeric_limits<Key>::lowest()
                                                    : cuda::std::numeric_limits<Key>::max();
}

}  // namespace detail
}  // namespace tilesort
