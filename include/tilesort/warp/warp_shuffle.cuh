// warp/warp_shuffle.cuh — warp shuffles of any trivially copyable type.
//
// __shfl_*_sync moves 32-bit words. A value of any other size is copied into
// ceil(sizeof(T) / 4) words (the last one zero-padded, so 1-, 2- and 6-byte
// types work too), each word is shuffled, and the bytes are copied back. The
// memcpy calls have compile-time sizes, so they compile to register moves: a
// 4-byte key costs one SHFL, an 8-byte key two, an empty type (the keys-only
// payload detail::no_value) none.
//
// Every lane of the physical warp must execute the same shuffle (full mask);
// `width` (a power of two <= 32) splits the warp into independent logical
// warps, and source lanes are numbered within the logical warp.
#pragma once

#include <cstring>
#include <type_traits>

#include "../detail/config.cuh"

namespace tilesort::detail {

// This thread's lane in its physical warp (0..31), independent of blockDim.
TILESORT_DEVICE int lane_id() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return static_cast<int>(lane);
}

template <typename T>
struct shuffle_words {
  static constexpr int count = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned word[count];
};

// Split `value` into words, apply `shuffle_word` to each, reassemble.
template <typename T, typename ShuffleWord>
TILESORT_DEVICE T shuffle_by_words(const T& value, ShuffleWord shuffle_word) {
  static_assert(std::is_trivially_copyable_v<T>, "tilesort shuffles need a trivially copyable type");
  if constexpr (std::is_empty_v<T>) {
    return value;
  } else if constexpr (sizeof(T) == 4) {
    unsigned word;
    std::memcpy(&word, &value, 4);
    word = shuffle_word(word);
    T result;
    std::memcpy(&result, &word, 4);
    return result;
  } else {
    shuffle_words<T> words;
    words.word[words.count - 1] = 0;  // the bytes past sizeof(T), when there are any
    std::memcpy(words.word, &value, sizeof(T));
    TILESORT_UNROLL
    for (int i = 0; i < words.count; ++i) words.word[i] = shuffle_word(words.word[i]);
    T result;
    std::memcpy(&result, words.word, sizeof(T));
    return result;
  }
}

// The `value` of lane (this lane ^ lane_mask) of the same logical warp.
// lane_mask < width keeps the source inside the logical warp.
template <typename T>
TILESORT_DEVICE T shuffle_xor(const T& value, int lane_mask, int width = 32) {
  return shuffle_by_words(value, [=](unsigned w) { return __shfl_xor_sync(0xffffffffu, w, lane_mask, width); });
}

// The `value` of lane `source_lane` (modulo width) of the same logical warp.
template <typename T>
TILESORT_DEVICE T shuffle_from(const T& value, int source_lane, int width = 32) {
  return shuffle_by_words(value, [=](unsigned w) { return __shfl_sync(0xffffffffu, w, source_lane, width); });
}

// The exchange the warp sort runs on: shuffles inside one logical warp of
// LogicalWarpThreads lanes. (The host tests run the same sort on an emulated
// warp that provides the same three members.)
template <int LogicalWarpThreads>
struct warp_exchange {
  static_assert(is_pow2(LogicalWarpThreads) && LogicalWarpThreads <= 32,
                "LogicalWarpThreads must be a power of two from 1 to 32");

  // Lane within the logical warp.
  TILESORT_DEVICE int lane() const { return lane_id() & (LogicalWarpThreads - 1); }

  template <typename T>
  TILESORT_DEVICE T exchange_xor(const T& value, int lane_mask) const {
    return shuffle_xor(value, lane_mask, LogicalWarpThreads);
  }

  template <typename T>
  TILESORT_DEVICE T exchange_from(const T& value, int source_lane) const {
    return shuffle_from(value, source_lane, LogicalWarpThreads);
  }
};

}  // namespace tilesort::detail
