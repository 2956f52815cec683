// dtype_order.cuh — the one comparator per key width that the Python
// extension instantiates the sorts with.
//
// Keys reach the sorts as the unsigned integer of their width (4 or 8 bytes)
// holding the original bits or their rank, so every algorithm is compiled
// twice instead of once per dtype. The order is chosen at run time by two
// members: rank(x) maps the bits to an unsigned integer whose natural order
// is the dtype's order, and the comparator compares ranks. Keys of 1 or 2
// bytes and (by default) floating keys reach the sorts already ranked, as
// ranks of 4 or 8 bytes (run_job in dispatch.cu: one pass before the sort,
// then an unsigned ascending order, cheaper per comparison than ranking
// inside it); integers of 4 and 8 bytes sort as their bits, by this order.
//   * integers: rank = bits ^ flip (flip = the sign bit for signed dtypes);
//   * floating (inf_bits != 0, the bits of +inf of that format): NaN (any
//     payload, any sign) ranks above every number, -0.0 ranks as +0.0,
//     negative numbers rank by their complemented bits, others with the sign
//     bit set: the usual order-preserving float-to-unsigned map;
//   * descending: every rank is complemented (flip of integers, the rank of
//     floats), which reverses the order exactly: NaN comes first, as in
//     torch.sort(descending=True).
// Equal ranks are equivalent keys, so a stable sort keeps their input order:
// the result equals torch.sort(stable=True) for every dtype. The rank is a
// bijection except on the two ranks that shared() names (zero and NaN), so
// sorted ranks turn back into the original keys by unrank(), and only keys
// of a shared rank need their bits from the input (by the index payload).
//
//   tilesort_py::dtype_order<std::uint16_t> half_order{0, 0x7C00};  // float16 ascending
//   tilesort::merge_sort_keys(d_temp, bytes, bits_in, bits_out, n, half_order, stream);
#pragma once

#include <cstdint>
#include <type_traits>

namespace tilesort_py {

template <typename Bits>
struct dtype_order {
  static_assert(std::is_unsigned_v<Bits>, "keys travel as unsigned bits of their width");
  static constexpr Bits top = Bits(Bits(1) << (8 * sizeof(Bits) - 1));
  static constexpr Bits ones = Bits(~Bits(0));

  Bits flip;      // XORed into the rank: sign bit (signed integers), ones (descending), both, or 0
  Bits inf_bits;  // floating dtypes: the bits of +inf; 0 for integers

  __host__ __device__ Bits rank(Bits x) const {
    if (inf_bits == 0) return Bits(x ^ flip);
    const Bits magnitude = Bits(x & Bits(~top));
    Bits r;
    if (magnitude > inf_bits) {
      r = ones;  // NaN
    } else if (magnitude == 0) {
      r = top;  // -0.0 and +0.0
    } else {
      r = (x & top) ? Bits(~x) : Bits(x | top);
    }
    return Bits(r ^ flip);
  }
  __host__ __device__ bool operator()(Bits a, Bits b) const { return rank(a) < rank(b); }

  // Whether several bit patterns share rank r: floating zero (-0.0, +0.0)
  // and NaN (every payload and sign). Every other rank has one key.
  __host__ __device__ bool shared(Bits r) const {
    if (inf_bits == 0) return false;
    const Bits unflipped = Bits(r ^ flip);
    return unflipped == top || unflipped == ones;
  }
  // The key whose rank is r, for ranks that are not shared (rank's inverse:
  // integers un-flip; floats undo the sign-bit set or the complement).
  __host__ __device__ Bits unrank(Bits r) const {
    const Bits unflipped = Bits(r ^ flip);
    if (inf_bits == 0) return unflipped;
    return (unflipped & top) ? Bits(unflipped & Bits(~top)) : Bits(~unflipped);
  }
};

// The members for one dtype: kind 'u' unsigned (and bool), 'i' signed,
// 'f' IEEE floating point or bfloat16 (inf_bits given).
template <typename Bits>
dtype_order<Bits> make_dtype_order(char kind, Bits inf_bits, bool descending) {
  const Bits desc = descending ? dtype_order<Bits>::ones : Bits(0);
  if (kind == 'f') return {desc, inf_bits};
  const Bits sign = kind == 'i' ? dtype_order<Bits>::top : Bits(0);
  return {Bits(sign ^ desc), Bits(0)};
}

}  // namespace tilesort_py
