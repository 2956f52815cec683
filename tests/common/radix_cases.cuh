// tests/common/radix_cases.cuh — what the radix sort's GPU tests share: the
// Sorters (the public entry points, or any policy through the detail entry),
// a policy whose look-back ring wraps every few tiles, edge sizes, raw float
// bit patterns, a user key's bits, and the size loop under either order.
#pragma once

#include <tilesort/device/radix_sort.cuh>

#include "device_sort_cases.cuh"

namespace tilesort_test {

struct radix_sorter {
  template <typename... Args>
  static cudaError_t keys(Args&&... args) {
    return tilesort::radix_sort_keys(std::forward<Args>(args)...);
  }
  template <typename... Args>
  static cudaError_t pairs(Args&&... args) {
    return tilesort::radix_sort_pairs(std::forward<Args>(args)...);
  }
};

// The radix sort with another policy (both overload sets).
template <typename Policy>
struct radix_sorter_with {
  template <typename Key, typename Order>
  static cudaError_t keys(void* temp, std::size_t& bytes, const Key* in, Key* out, std::int64_t n, Order order,
                          cudaStream_t stream) {
    return tilesort::detail::radix_sort_two_phase<Policy, Key, tilesort::detail::no_value, tilesort::detail::no_value>(
        temp, bytes, in, out, nullptr, nullptr, n, order, stream);
  }
  template <typename Key, typename Order>
  static cudaError_t keys(const Key* in, Key* out, std::int64_t n, Order order, cudaStream_t stream) {
    return tilesort::detail::with_stream_temp(
        stream, [&](void* temp, std::size_t& bytes) { return keys(temp, bytes, in, out, n, order, stream); });
  }
  template <typename Key, typename Value, typename Order>
  static cudaError_t pairs(void* temp, std::size_t& bytes, const Key* in, Key* out, const Value* values_in,
                           Value* values_out, std::int64_t n, Order order, cudaStream_t stream) {
    return tilesort::detail::radix_sort_two_phase<Policy>(temp, bytes, in, out, values_in, values_out, n, order,
                                                          stream);
  }
  template <typename Key, typename Value, typename Order>
  static cudaError_t pairs(const Key* in, Key* out, const Value* values_in, Value* values_out, std::int64_t n,
                           Order order, cudaStream_t stream) {
    return tilesort::detail::with_stream_temp(stream, [&](void* temp, std::size_t& bytes) {
      return pairs(temp, bytes, in, out, values_in, values_out, n, order, stream);
    });
  }
};

// A ring of 4 tiles with a window of 2: slots are reused every 4 tiles.
template <typename Base>
struct tiny_ring_policy : Base {
  static constexpr int ring_tiles = 4;
  static constexpr int window = 2;
};

// Sizes around the tile, primes, powers of two +-1; with `large`, past 1024
// tiles too (the ring wraps in the tiny-ring tests). Under racecheck, six of
// the small ones.
inline std::vector<std::int64_t> radix_edge_sizes(std::int64_t tile, bool large) {
  if (racecheck_run()) return {0, 1, 33, tile - 1, tile + 1, 3 * tile + 7};
  std::vector<std::int64_t> sizes = {0, 1, 2, 3, 31, 32, 33, 100, tile - 1, tile, tile + 1, 2 * tile + 1, 3 * tile + 7};
  if (small_run()) return sizes;
  for (std::int64_t n : {std::int64_t(7919), std::int64_t(65521), (std::int64_t(1) << 16) - 1,
                         (std::int64_t(1) << 16) + 1, std::int64_t(1000003)})
    sizes.push_back(n);
  if (large) sizes.push_back(1025 * tile + 17);
  return sizes;
}

template <typename Key>
constexpr bool radix_is_large_case =
    std::is_same_v<Key, std::uint32_t> || std::is_same_v<Key, std::uint64_t> || std::is_same_v<Key, float>;

// Random keys at each size under `order`, alternating copy and in place.
template <typename Sorter, typename Key, bool Pairs, typename Order>
void check_radix_sizes(const std::vector<std::int64_t>& sizes, Order order) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  int i = 0;
  for (const std::int64_t n : sizes) {
    const run_options o{(i++ % 2) == (Pairs ? 0 : 1), false, 0};
    const auto keys = make_keys<Key>(n, distribution::random, seed + n, order);
    if constexpr (Pairs) {
      check_pairs<Sorter>(keys, order, o);
    } else {
      check_keys<Sorter>(keys, order, o);
    }
  }
}

// Uniformly random bit patterns, a tenth of them special: NaNs of both
// signs and any payload, +-0, +-inf, denormals.
template <typename Key>
std::vector<Key> raw_float_patterns(std::int64_t n, std::uint64_t seed) {
  using bits_type = typename tilesort::detail::unsigned_bits<sizeof(Key)>::type;
  constexpr int width = 8 * sizeof(Key);
  const bits_type sign = bits_type(bits_type(1) << (width - 1));
  const bits_type infinity = tilesort::detail::float_infinity_bits<Key>();
  std::mt19937_64 rng(seed);
  std::vector<Key> keys(n);
  for (auto& k : keys) {
    bits_type b = static_cast<bits_type>(rng());
    switch (rng() % 20) {
      case 0: b = bits_type(infinity | (b & ~infinity & ~sign) | 1); break;     // NaN, + or - payload
      case 1: b = bits_type((b & sign) | infinity | (b & ~infinity & ~sign) | 1); break;  // NaN of either sign
      case 2: b = bits_type(b & sign); break;                                   // +-0
      case 3: b = bits_type((b & sign) | infinity); break;                      // +-inf
      case 4: b = bits_type(b & (sign | (infinity >> 3 & ~infinity))); break;   // +- denormal
      default: break;
    }
    std::memcpy(&k, &b, sizeof k);
  }
  return keys;
}

// user_key (test_util.cuh) by `major` only: its bits with the sign flipped.
struct user_key_bits {
  __host__ __device__ std::uint32_t operator()(const user_key& k) const {
    return static_cast<std::uint32_t>(k.major) ^ 0x80000000u;
  }
};

}  // namespace tilesort_test
