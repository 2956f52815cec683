// detail/radix_order.cuh — the unsigned images the radix sort orders keys
// by. A key's image is an unsigned integer of the key's width whose
// ascending order is the key order: radix-sorting the images, stably, gives
// exactly what a stable comparison sort gives under tilesort::less or
// tilesort::greater. The keys themselves move with every bit kept; the image
// is computed again wherever a digit is needed (a few ALU operations), so
// no pass has to transform and untransform the data.
//
//   integers, ascending:   the bits, with the sign bit flipped if signed
//   floats, ascending:     NaN (any sign, any payload) -> all ones, so every
//                          NaN is last and all NaNs are equal; -0.0 -> the
//                          image of +0.0; else negative -> all bits flipped,
//                          positive -> sign bit set (IEEE order)
//   descending:            the ascending image complemented, except NaN,
//                          which stays all ones: last in both orders
//   a user key:            bits_order's functor (comparators.cuh)
// bool, 8/16/32/64-bit integers, float, double, __half and __nv_bfloat16
// have native images; everything here is __host__ __device__ and tested on
// the host over every 16-bit pattern.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../comparators.cuh"
#include "config.cuh"

namespace tilesort::detail {

// The unsigned integer of Bytes bytes (1, 2, 4 or 8).
template <std::size_t Bytes>
struct unsigned_bits {
  static_assert(Bytes == 1 || Bytes == 2 || Bytes == 4 || Bytes == 8, "keys of 1, 2, 4 or 8 bytes");
  using type = std::conditional_t<
      Bytes == 1, std::uint8_t,
      std::conditional_t<Bytes == 2, std::uint16_t, std::conditional_t<Bytes == 4, std::uint32_t, std::uint64_t>>>;
};

// Keys with a native image.
template <typename Key>
inline constexpr bool radix_native_float = std::is_same_v<Key, float> || std::is_same_v<Key, double> ||
                                           std::is_same_v<Key, __half> || std::is_same_v<Key, __nv_bfloat16>;
template <typename Key>
inline constexpr bool radix_native_key =
    (std::is_integral_v<Key> && (sizeof(Key) == 1 || sizeof(Key) == 2 || sizeof(Key) == 4 || sizeof(Key) == 8)) ||
    radix_native_float<Key>;

// The exponent-and-mantissa bits a NaN exceeds (all exponent bits set).
template <typename Key>
TILESORT_HD constexpr typename unsigned_bits<sizeof(Key)>::type float_infinity_bits() {
  if constexpr (std::is_same_v<Key, __half>) {
    return 0x7c00u;
  } else if constexpr (std::is_same_v<Key, __nv_bfloat16>) {
    return 0x7f80u;
  } else if constexpr (std::is_same_v<Key, float>) {
    return 0x7f800000u;
  } else {
    return 0x7ff0000000000000ull;
  }
}

// The image of a key with a native one, ascending or descending.
template <typename Key, bool Descending>
struct radix_native_image {
  using bits_type = typename unsigned_bits<sizeof(Key)>::type;
  static constexpr bits_type sign = bits_type(bits_type(1) << (8 * sizeof(Key) - 1));

  TILESORT_HD bits_type operator()(const Key& key) const {
    bits_type b;
    std::memcpy(&b, &key, sizeof b);
    if constexpr (radix_native_float<Key>) {
      // Selects, no branch: a branch here keeps the callers' loops over
      // items from overlapping their loads (measured: f32 onesweep passes
      // 1.5x slower than u32 with the branch).
      const bits_type magnitude = bits_type(b & bits_type(~sign));
      const bits_type canonical = magnitude == 0 ? bits_type(0) : b;  // -0.0 as +0.0
      const bits_type flip = (canonical & sign) != 0 ? bits_type(~bits_type(0)) : sign;
      const bits_type up = bits_type(canonical ^ flip);
      const bits_type ordered = Descending ? bits_type(~up) : up;
      return magnitude > float_infinity_bits<Key>() ? bits_type(~bits_type(0)) : ordered;  // NaN: last
    } else {
      const bits_type up = std::is_signed_v<Key> ? bits_type(b ^ sign) : b;
      return Descending ? bits_type(~up) : up;
    }
  }
};

// The image of a user key: its bits_order functor.
template <typename Key, typename Bits>
struct radix_user_image {
  using bits_type = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<const Bits&>()(std::declval<const Key&>()))>>;
  static_assert(std::is_unsigned_v<bits_type> && !std::is_same_v<bits_type, bool> && sizeof(bits_type) <= 8,
                "a bits_order functor returns an unsigned integer of 8 to 64 bits");
  Bits bits;
  TILESORT_HD bits_type operator()(const Key& key) const { return bits(key); }
};

// Digit `pass` (RadixBits wide, least significant first) of an image.
template <int RadixBits, typename Bits>
TILESORT_HD unsigned radix_digit(Bits image, int pass) {
  return static_cast<unsigned>((image >> (pass * RadixBits)) & ((1u << RadixBits) - 1u));
}

// The image a radix sort of Key under Order sorts by: the native images
// under tilesort::less and tilesort::greater, a bits_order's functor.
template <typename Key, typename Order>
struct radix_image_of {
  static constexpr bool sortable = false;
};
template <typename Key>
struct radix_image_of<Key, less> {
  static constexpr bool sortable = radix_native_key<Key>;
  using type = radix_native_image<Key, false>;
  static type make(const less&) { return {}; }
};
template <typename Key>
struct radix_image_of<Key, greater> {
  static constexpr bool sortable = radix_native_key<Key>;
  using type = radix_native_image<Key, true>;
  static type make(const greater&) { return {}; }
};
template <typename Key, typename Bits>
struct radix_image_of<Key, bits_order<Bits>> {
  static constexpr bool sortable = true;
  using type = radix_user_image<Key, Bits>;
  static type make(const bits_order<Bits>& order) { return {order.bits}; }
};

// Whether radix_sort_* (and the front door's radix path) sort Key under Order.
template <typename Key, typename Order>
inline constexpr bool radix_sortable = radix_image_of<Key, Order>::sortable;

}  // namespace tilesort::detail
