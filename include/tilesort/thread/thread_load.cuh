// thread/thread_load.cuh — a thread loads or stores N consecutive items
// (the blocked arrangement: thread t owns items [t*N, (t+1)*N) of its tile).
//
// When all N items are in range and the address is 16-byte aligned, the
// transfer is done with 16-byte vector accesses (N * sizeof(T) must be a
// multiple of 16); a warp then reads 512 contiguous bytes per instruction for
// N = 4 u32 keys. Otherwise each item is moved on its own, guarded by `valid`.
#pragma once

#include <cstdint>

#include "../detail/config.cuh"

namespace tilesort {

/// Whether N items at `ptr` with `valid` of them in range can move as 16-byte
/// vectors: all N valid, N * sizeof(T) a multiple of 16, `ptr` 16-byte aligned.
template <int N, typename T>
TILESORT_DEVICE bool can_vectorize(const T* ptr, int valid) {
  return (N * sizeof(T)) % 16 == 0 && valid >= N && (reinterpret_cast<std::uintptr_t>(ptr) % 16) == 0;
}

/// Loads items[i] = src[i] for i < valid (items past `valid` are left as they
/// are); one 16-byte access per vector where can_vectorize() allows.
/// @code
/// std::uint32_t keys[4];
/// tilesort::load_consecutive(in + tile_base + threadIdx.x * 4, valid - threadIdx.x * 4, keys);
/// @endcode
template <int N, typename T>
TILESORT_DEVICE void load_consecutive(const T* src, int valid, T (&items)[N]) {
  if constexpr ((N * sizeof(T)) % 16 == 0) {
    if (can_vectorize<N>(src, valid)) {
      constexpr int vectors = N * sizeof(T) / 16;
      uint4 raw[vectors];
      TILESORT_UNROLL
      for (int v = 0; v < vectors; ++v) raw[v] = reinterpret_cast<const uint4*>(src)[v];
      // memcpy rather than a pointer cast keeps the types' aliasing legal;
      // the compiler turns it into register moves.
      memcpy(&items[0], &raw[0], sizeof(raw));
      return;
    }
  }
  TILESORT_UNROLL
  for (int i = 0; i < N; ++i)
    if (i < valid) items[i] = src[i];
}

/// Stores dst[i] = items[i] for i < valid; one 16-byte access per vector
/// where can_vectorize() allows.
/// @code
/// tilesort::store_consecutive(out + tile_base + threadIdx.x * 4, valid - threadIdx.x * 4, keys);
/// @endcode
template <int N, typename T>
TILESORT_DEVICE void store_consecutive(T* dst, int valid, const T (&items)[N]) {
  if constexpr ((N * sizeof(T)) % 16 == 0) {
    if (can_vectorize<N>(dst, valid)) {
      constexpr int vectors = N * sizeof(T) / 16;
      uint4 raw[vectors];
      memcpy(&raw[0], &items[0], sizeof(raw));
      TILESORT_UNROLL
      for (int v = 0; v < vectors; ++v) reinterpret_cast<uint4*>(dst)[v] = raw[v];
      return;
    }
  }
  TILESORT_UNROLL
  for (int i = 0; i < N; ++i)
    if (i < valid) dst[i] = items[i];
}

}  // namespace tilesort
