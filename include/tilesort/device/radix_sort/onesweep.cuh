// device/radix_sort/onesweep.cuh — one digit pass of the radix sort: every
// key (and value) is read once and written once, to its place by that digit
// (Onesweep: the global digit starts come from the histogram; each tile's
// offsets within a digit from decoupled look-back over earlier tiles).
//
// A persistent grid takes tiles in order from a counter, each block its
// next tile's number while it works on this one. Per tile:
//   1. load threads x items keys (and values), warp-striped (lane l of warp
//      w holds keys w x 32 x items + i x 32 + l: coalesced, and a warp's
//      keys in order); with Policy::prefetch the tile is already in shared
//      memory (s.next, copied by cp.async while the previous tile was
//      written) and its items are read from there when needed;
//   2. once the look-back ring wraps, check that its slot may be reused
//      (rarely waits);
//   3. early counts: each warp counts its keys' digits (a shared atomic per
//      key);
//   4. per digit (a thread each): the tile's count, published at once for
//      the later tiles' look-back, and each warp's first place in the tile;
//   5. rank: per item, the lanes of a warp with the same digit (found by a
//      shared word per digit each lane sets its bit in) take consecutive
//      places; a tile whose keys share one digit skips this;
//   6. stage the keys (and values) in shared memory at their places;
//   7. per digit: look back for the earlier tiles' count (most of them have
//      published by now), publish the inclusive count; with prefetch, start
//      copying the next tile into s.next;
//   8. write the staged keys with consecutive threads at consecutive
//      positions (a digit's keys of the tile are one run in the output).
// Skipped passes (the digit is the same in every key) return at once; the
// last launched pass copies the keys to the output when the schedule ends
// elsewhere and no later kernel will (radix_copy_out).
#pragma once

#include <cuda/atomic>

#include <cstdint>
#include <type_traits>

#include "../../block/block_scan.cuh"
#include "../../detail/async_copy.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/radix_order.cuh"
#include "../../detail/radix_sort_plan.cuh"
#include "../../detail/values.cuh"

namespace tilesort::detail {

// The buffers of one radix sort. Values are Value while the passes move
// them and OutValue in values_out at the end (the same type, except for
// the index sorts that carry 4-byte positions and store 8-byte indices);
// values_in null: the values are the keys' input positions, made by the
// first pass. Between passes values_out holds Value entries.
template <typename Key, typename Value, typename OutValue>
struct radix_buffers {
  static constexpr bool pairs = has_values<Value>;
  const Key* keys_in;
  Key* keys_out;
  Key* keys_alternate;
  const Value* values_in;
  OutValue* values_out;
  Value* values_alternate;
  std::int64_t n;

  TILESORT_DEVICE const Key* keys_from(int buffer) const {
    return buffer == radix_input ? keys_in : buffer == radix_output ? keys_out : keys_alternate;
  }
  TILESORT_DEVICE Key* keys_to(int buffer) const { return buffer == radix_output ? keys_out : keys_alternate; }
  TILESORT_DEVICE const Value* values_from(int buffer) const {
    return buffer == radix_input    ? values_in
           : buffer == radix_output ? reinterpret_cast<const Value*>(values_out)
                                    : values_alternate;
  }
  TILESORT_DEVICE Value* values_to(int buffer) const {
    return buffer == radix_output ? reinterpret_cast<Value*>(values_out) : values_alternate;
  }
  // The value of input position i.
  TILESORT_DEVICE Value generated(std::int64_t i) const {
    if constexpr (std::is_integral_v<Value>) {
      return static_cast<Value>(i);
    } else {
      return Value{};
    }
  }
};

// Copies the sorted keys from `source` to the output (and the values, or
// makes them: positions), grid-stride over the calling grid; what is already
// in place is left alone.
template <typename Key, typename Value, typename OutValue>
TILESORT_DEVICE void radix_copy_out(const radix_buffers<Key, Value, OutValue>& b, int source) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const Key* keys = b.keys_from(source);
  if (keys != b.keys_out)
    for (std::int64_t i = first; i < b.n; i += stride) b.keys_out[i] = keys[i];
  if constexpr (radix_buffers<Key, Value, OutValue>::pairs) {
    const Value* values = b.values_from(source);
    if (values == nullptr) {
      for (std::int64_t i = first; i < b.n; i += stride) b.values_out[i] = static_cast<OutValue>(b.generated(i));
    } else if (static_cast<const void*>(values) != static_cast<const void*>(b.values_out)) {
      for (std::int64_t i = first; i < b.n; i += stride) b.values_out[i] = static_cast<OutValue>(values[i]);
    }
  }
}

// Shared memory of a onesweep block: the warps' digit counts (then each
// warp's next place per digit) and match words, then (reusing the bytes)
// the staged keys and values; per digit the output position of tile-local
// position 0; with Policy::prefetch, the block's next tile as loaded.
template <typename Policy, typename Key, typename Value>
struct radix_onesweep_storage {
  static constexpr int warps = Policy::threads / 32;
  static constexpr std::size_t count_bytes = sizeof(unsigned) * warps * Policy::bins * 2;  // counts, matches
  static constexpr std::size_t value_bytes = value_bytes_of<Value>;
  static constexpr std::size_t key_stage_bytes = (std::size_t(Policy::tile_items) * sizeof(Key) + 15) / 16 * 16;
  static constexpr std::size_t stage_bytes = key_stage_bytes + std::size_t(Policy::tile_items) * value_bytes;
  static constexpr std::size_t union_bytes = count_bytes > stage_bytes ? count_bytes : stage_bytes;
  static constexpr std::size_t next_bytes = Policy::prefetch ? stage_bytes : 16;

  alignas(16) unsigned char staging[union_bytes];
  alignas(16) unsigned char next[next_bytes];
  std::int64_t output_base[Policy::bins];  // output position of the digit's tile-local position 0
  std::int64_t warp_sums[warps + 1];
  unsigned tile;

  TILESORT_DEVICE unsigned* counts(int warp) { return reinterpret_cast<unsigned*>(staging) + warp * Policy::bins; }
  TILESORT_DEVICE unsigned* matches(int warp) { return counts(warps + warp); }
  TILESORT_DEVICE Key* keys() { return reinterpret_cast<Key*>(staging); }
  TILESORT_DEVICE Value* values() { return reinterpret_cast<Value*>(staging + key_stage_bytes); }
  TILESORT_DEVICE Key* next_keys() { return reinterpret_cast<Key*>(next); }
  TILESORT_DEVICE Value* next_values() { return reinterpret_cast<Value*>(next + key_stage_bytes); }
};

// Early counts: adds each of this warp's keys to its warp's count of the
// key's digit (`words[i]`: item i's digit). Items past the input (`Partial`
// tiles: i x 32 at or past `left`, the tile's keys from this lane's first
// on) are not counted.
template <int Items, bool Partial>
TILESORT_DEVICE void radix_count_warp(const int (&words)[Items], int left, unsigned* counts) {
  TILESORT_UNROLL
  for (int i = 0; i < Items; ++i)
    if (!Partial || i * 32 < left) atomicAdd(&counts[words[i]], 1u);
}

// Ranks a warp's keys in the tile: `words[i]` holds item i's digit and
// becomes place << 8 | digit. `places` holds the warp's next place per
// digit (its first, from the early counts). Per item, each lane sets its
// bit in the warp's word for its digit (`matches`, zero between items), so
// the lanes with the same digit see each other; they take consecutive
// places, lower lanes first, and the highest of them moves the warp's place
// on and clears the word. Stable: a warp's keys come in input order.
template <int Items, bool Partial>
TILESORT_DEVICE void radix_rank_warp(int (&words)[Items], int left, unsigned* places, unsigned* matches) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned lane_bit = 1u << lane;
  const unsigned up_to = lane_bit | (lane_bit - 1u);
  TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) {
    const bool live = !Partial || i * 32 < left;
    const unsigned digit = static_cast<unsigned>(words[i]);
    if (live) atomicOr(&matches[digit], lane_bit);
    __syncwarp();
    const unsigned peers = live ? matches[digit] : lane_bit;
    const int leader = 31 - __clz(peers);
    const unsigned order = __popc(peers & up_to);  // 1 for the lowest lane of the digit
    unsigned base = 0;
    if (lane == unsigned(leader) && live) base = atomicAdd(&places[digit], order);
    base = __shfl_sync(0xffffffffu, base, leader);
    if (lane == unsigned(leader) && live) matches[digit] = 0;
    __syncwarp();
    words[i] = static_cast<int>((base + order - 1u) << 8 | digit);
  }
}

// The keys with digit `digit` in tiles before `tile` (look-back): the
// earlier tiles' words, nearest first, summed until an inclusive one; a word
// not yet written is read again until it is, and `Window` tiles back only
// an inclusive word will do.
template <int Window>
TILESORT_DEVICE unsigned long long radix_look_back(unsigned long long* ring_words, const radix_ring& ring,
                                                   unsigned tile, int parity, int digit) {
  unsigned long long before = 0;
  for (unsigned w = tile; w-- > 0;) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> theirs(
        ring_words[std::size_t(ring.slot(w)) * radix_bins + digit]);
    const unsigned long long tag = radix_lookback::tag(ring.cycle(w), parity);
    const bool need_inclusive = tile - w >= unsigned(Window);
    unsigned long long word;
    do {
      word = theirs.load(cuda::memory_order_relaxed);
    } while (!radix_lookback::is_for(word, tag) || (need_inclusive && !radix_lookback::is_inclusive(word)));
    before += radix_lookback::count(word);
    if (radix_lookback::is_inclusive(word)) break;
  }
  return before;
}

// One digit pass (see the top of this file). `pass` is the digit; the
// schedule says whether it runs and where it reads and writes.
template <typename Policy, typename Key, typename Value, typename OutValue, typename Image>
__global__ void __launch_bounds__(Policy::threads, Policy::blocks_per_sm)
    radix_onesweep_kernel(radix_buffers<Key, Value, OutValue> buffers, Image image, radix_control* control,
                          unsigned long long* ring_words, unsigned* done, int pass, radix_ring ring, unsigned tiles,
                          bool last_launch) {
  constexpr int threads = Policy::threads, items = Policy::items, bins = Policy::bins;
  constexpr int tile_items = Policy::tile_items, window = Policy::window;
  constexpr bool pairs = radix_buffers<Key, Value, OutValue>::pairs;
  using storage_type = radix_onesweep_storage<Policy, Key, Value>;
  extern __shared__ unsigned char radix_smem[];
  auto& s = *reinterpret_cast<storage_type*>(radix_smem);
  wait_for_previous_kernel();
  allow_next_kernel();
  const radix_pass plan = control->schedule.pass[pass];
  if (!plan.executed) {
    const int copy_source = control->schedule.copy_source;
    if (last_launch && copy_source != radix_none && !control->schedule.copy_after_last)
      radix_copy_out(buffers, copy_source);
    return;
  }
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
  const std::int64_t n = buffers.n;
  const Key* keys_src = buffers.keys_from(plan.source);
  Key* keys_dst = buffers.keys_to(plan.destination);
  const std::int64_t* digit_start = reinterpret_cast<const std::int64_t*>(control->digit_start[pass]);

  constexpr bool prefetch = Policy::prefetch;
  const Value* values_src = nullptr;  // null: positions, made here
  if constexpr (pairs) values_src = buffers.values_from(plan.source);
  // Prefetch: the tile after this one is copied into s.next while this one
  // is written (this tile's keys and values stay in s.next until they are
  // staged, so no registers hold them while the block ranks).
  const auto tile_count = [&](unsigned tile) {
    const std::int64_t left = n - std::int64_t(tile) * tile_items;
    return static_cast<int>(left < tile_items ? left : tile_items);
  };
  const auto fetch = [&](unsigned tile) {
    if constexpr (prefetch) {
      if (tile >= tiles) return;
      const std::int64_t at = std::int64_t(tile) * tile_items;
      copy_run_to_shared_async<threads>(s.next_keys(), keys_src + at, tile_count(tile), t);
      if constexpr (pairs)
        if (values_src != nullptr) copy_run_to_shared_async<threads>(s.next_values(), values_src + at, tile_count(tile), t);
    }
  };
  // A block takes its next tile's number while it works on this one (the
  // counter's round trip hidden behind the ranking), in s.tile from the
  // look-back's barrier on.
  if (t == 0) s.tile = atomicAdd(&control->tiles_taken[pass], 1u);
  __syncthreads();
  unsigned next_tile = s.tile;
  fetch(next_tile);

  for (;;) {
    const unsigned tile = next_tile;
    __syncthreads();  // the previous tile's shared memory is free
    if (tile >= tiles) break;
    const unsigned slot = ring.slot(tile);
    const unsigned long long tag = radix_lookback::tag(ring.cycle(tile), plan.parity);

    static_assert(storage_type::count_bytes % sizeof(uint4) == 0, "counts cleared 16 bytes at a time");
    for (int i = t; i < int(storage_type::count_bytes / sizeof(uint4)); i += threads)
      reinterpret_cast<uint4*>(s.staging)[i] = uint4{0, 0, 0, 0};

    // 1. Load (a warp's keys: first + i x 32, i < items) and the values,
    // unless prefetched: then item i is s.next_keys()[first + i x 32].
    const std::int64_t tile_base = std::int64_t(tile) * tile_items;
    const int valid = tile_count(tile);
    const int first = warp * 32 * items + lane;
    Key keys[items];
    if constexpr (!prefetch) {
      TILESORT_UNROLL
      for (int i = 0; i < items; ++i)
        if (first + i * 32 < valid) keys[i] = keys_src[tile_base + first + i * 32];
    }

    Value values[pairs && !prefetch ? items : 1];
    if constexpr (pairs && !prefetch) {
      TILESORT_UNROLL
      for (int i = 0; i < items; ++i) {
        const std::int64_t at = tile_base + first + i * 32;
        if (first + i * 32 < valid) values[i] = values_src != nullptr ? values_src[at] : buffers.generated(at);
      }
    }
    unsigned taken = 0;
    if (t == 0) taken = atomicAdd(&control->tiles_taken[pass], 1u);

    // 2. Once the ring wraps: the slot's earlier user and the tiles that may
    // still read its words are done (checked while the keys arrive; each
    // word read with acquire, which, unlike a fence, does not wait for this
    // thread's earlier stores; the barrier then orders the reads before this
    // tile's writes to the slot).
    if constexpr (prefetch) wait_for_shared_copies();  // the tile is in s.next after the barrier below
    if (ring.wraps) {
      const std::int64_t wait_last = radix_ring_wait_last(tile, ring.slots, window);
      bool ready;
      do {
        ready = true;
        for (std::int64_t w = radix_ring_wait_first(tile, ring.slots) + t; w <= wait_last; w += threads) {
          if (w < 0) continue;
          cuda::atomic_ref<unsigned, cuda::thread_scope_device> word(done[ring.slot(unsigned(w))]);
          ready = ready && word.load(cuda::memory_order_acquire) == radix_lookback::done(ring.cycle(unsigned(w)), plan.parity);
        }
      } while (!__syncthreads_and(ready));  // also: counts zeroed
    } else {
      __syncthreads();  // counts zeroed
    }

    // 3. Early counts: each warp counts its keys' digits. Per item, a word:
    // its digit, then its place << 8 | digit.
    static_assert(Policy::radix_bits == 8 && tile_items < (1 << 23), "a word holds a place and a digit");
    const int left = valid - first;  // this lane's keys: i x 32 < left
    // This lane's key i and value i: from the prefetch buffer (values
    // there, or made: positions), or loaded above.
    const auto key_of = [&](int i) -> Key {
      if constexpr (prefetch) {
        return s.next_keys()[first + i * 32];
      } else {
        return keys[i];
      }
    };
    const auto value_of = [&](int i) -> Value {
      if constexpr (prefetch) {
        const int from = first + i * 32;
        return values_src != nullptr ? s.next_values()[from] : buffers.generated(tile_base + from);
      } else {
        return values[i];
      }
    };
    int item[items];
    TILESORT_UNROLL
    for (int i = 0; i < items; ++i)
      item[i] = i * 32 < left ? static_cast<int>(radix_digit<Policy::radix_bits>(image(key_of(i)), pass)) : 0;
    if (valid == tile_items) {
      radix_count_warp<items, false>(item, left, s.counts(warp));
    } else {
      radix_count_warp<items, true>(item, left, s.counts(warp));
    }
    __syncthreads();

    // 4. Per digit (a thread each): the warps' exclusive sums and the tile's
    // count, published at once (the later tiles' look-back may use it);
    // the tile-local digit starts; each warp's first place per digit.
    std::int64_t count = 0;
    if (t < bins) {
      unsigned running = 0;
      for (int w = 0; w < storage_type::warps; ++w) {
        const unsigned c = s.counts(w)[t];
        s.counts(w)[t] = running;
        running += c;
      }
      count = running;
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> mine(ring_words[std::size_t(slot) * bins + t]);
      mine.store(radix_lookback::word(tag, tile == 0 ? radix_lookback::flag_inclusive : radix_lookback::flag_aggregate,
                                      static_cast<unsigned long long>(count)),
                 cuda::memory_order_relaxed);
    }
    std::int64_t tile_total = 0;
    const std::int64_t start = block_exclusive_sum<threads>(count, s.warp_sums, tile_total);
    if (t < bins)
      for (int w = 0; w < storage_type::warps; ++w) s.counts(w)[t] += static_cast<unsigned>(start);
    // A tile whose keys all have one digit keeps its order: no ranking.
    const bool one_digit = __syncthreads_or(t < bins && count == valid);

    // 5. Places in the tile.
    if (one_digit) {
      TILESORT_UNROLL
      for (int i = 0; i < items; ++i) item[i] |= (first + i * 32) << 8;
    } else if (valid == tile_items) {
      radix_rank_warp<items, false>(item, left, s.counts(warp), s.matches(warp));
    } else {
      radix_rank_warp<items, true>(item, left, s.counts(warp), s.matches(warp));
    }
    __syncthreads();  // the places are taken: their bytes take the staged items

    // 6. Keys (and values) staged at their places.
    TILESORT_UNROLL
    for (int i = 0; i < items; ++i) {
      if (i * 32 < left) {
        s.keys()[item[i] >> 8] = key_of(i);
        if constexpr (pairs) s.values()[item[i] >> 8] = value_of(i);
      }
    }

    // 7. Per digit: look back for the earlier tiles' count (while the
    // tile's own keys were ranked, its predecessors published), publish
    // the inclusive count, the output position of the digit's first place.
    if (t < bins) {
      const unsigned long long before = radix_look_back<window>(ring_words, ring, tile, plan.parity, t);
      if (tile != 0) {
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> mine(ring_words[std::size_t(slot) * bins + t]);
        mine.store(
            radix_lookback::word(tag, radix_lookback::flag_inclusive, before + static_cast<unsigned long long>(count)),
            cuda::memory_order_relaxed);
      }
      s.output_base[t] = digit_start[t] + static_cast<std::int64_t>(before) - start;
    }
    if (t == 0) s.tile = taken;
    __syncthreads();  // staged, every digit looked back, the next tile taken
    next_tile = s.tile;
    fetch(next_tile);  // into s.next: every thread has staged this tile
    if (t == 0 && ring.wraps) {  // only a wrapping ring reads them
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> mine(done[slot]);
      mine.store(radix_lookback::done(ring.cycle(tile), plan.parity), cuda::memory_order_release);
    }

    // 8. Written with consecutive threads at consecutive places (full tiles
    // without a guard per item, so the loads of all items overlap).
    Value* values_dst = nullptr;
    if constexpr (pairs) values_dst = buffers.values_to(plan.destination);
    const bool final_values = plan.last && plan.destination == radix_output;
    auto write = [&](auto partial) {
      TILESORT_UNROLL
      for (int j = 0; j < items; ++j) {
        const int k = j * threads + t;
        if (!decltype(partial)::value || k < valid) {
          const Key key = s.keys()[k];
          const std::int64_t to = s.output_base[radix_digit<Policy::radix_bits>(image(key), pass)] + k;
          keys_dst[to] = key;
          if constexpr (pairs) {
            if (final_values) {
              buffers.values_out[to] = static_cast<OutValue>(s.values()[k]);
            } else {
              values_dst[to] = s.values()[k];
            }
          }
        }
      }
    };
    if (valid == tile_items) {
      write(std::false_type{});
    } else {
      write(std::true_type{});
    }
  }
}

// In-place sorts whose passes end in the alternate buffer after the last
// launched pass ran: the copy to the output.
template <typename Key, typename Value, typename OutValue>
__global__ void radix_finish_kernel(radix_buffers<Key, Value, OutValue> buffers, const radix_control* control) {
  wait_for_previous_kernel();
  if (control->schedule.copy_after_last) radix_copy_out(buffers, control->schedule.copy_source);
}

}  // namespace tilesort::detail
