// detail/async_copy.cuh — copies from global to shared memory that do not
// hold the thread (cp.async, sm_80 and later): one item, or a block's run of
// items, then a wait for this thread's copies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.cuh"

namespace tilesort::detail {

// cp.async from global to shared memory of one T whose size and alignment
// are multiples of 4 bytes, in chunks of 16, 8 or 4 bytes (the largest both
// allow); wait_for_shared_copies waits for all of this thread's.
template <typename T>
inline constexpr int async_copy_chunk = sizeof(T) % 16 == 0 && alignof(T) % 16 == 0 ? 16
                                        : sizeof(T) % 8 == 0 && alignof(T) % 8 == 0 ? 8
                                        : sizeof(T) % 4 == 0 && alignof(T) % 4 == 0 ? 4
                                                                                     : 0;
template <typename T>
inline constexpr bool copies_to_shared_async = async_copy_chunk<T> != 0;
template <typename T>
TILESORT_DEVICE void copy_to_shared_async(T* dst, const T* src) {
  static_assert(copies_to_shared_async<T>, "size and alignment multiples of 4 bytes");
  constexpr int chunk = async_copy_chunk<T>;
  const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const auto* bytes = reinterpret_cast<const unsigned char*>(src);
TILESORT_UNROLL
  for (int c = 0; c < static_cast<int>(sizeof(T)); c += chunk)
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared + c), "l"(bytes + c), "n"(chunk) : "memory");
}
TILESORT_DEVICE void wait_for_shared_copies() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// The block copies src[0, count) to dst[0, count) (shared memory), thread
// `thread` of `Threads` taking every Threads-th piece: 16-byte pieces where
// both ends are 16-byte aligned and the run is whole 16-byte pieces (a full
// tile), else one cp.async per item, else (items of 1 or 2 bytes) plain
// copies, which hold the thread until their loads arrive. Visible to the
// block after wait_for_shared_copies and a barrier.
template <int Threads, typename T>
TILESORT_DEVICE void copy_run_to_shared_async(T* dst, const T* src, int count, int thread) {
  const std::size_t bytes = std::size_t(count) * sizeof(T);
  if (bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0 &&
      reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) {
    const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    for (int piece = thread; piece < int(bytes / 16); piece += Threads)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared + 16 * piece), "l"(from + 16 * piece)
                   : "memory");
  } else if constexpr (copies_to_shared_async<T>) {
    for (int i = thread; i < count; i += Threads) copy_to_shared_async(dst + i, src + i);
  } else {
    for (int i = thread; i < count; i += Threads) dst[i] = src[i];
  }
}

}  // namespace tilesort::detail
