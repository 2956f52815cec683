// block/bitonic_tile.cuh — detail::bitonic_tile<Key, Value, Threads, Items>,
// the engine of the device bitonic sort (device/bitonic_sort.cuh).
//
// Each thread holds Items = 2^R keys in registers; a block holds a tile of
// 2^G = Threads * Items keys. R consecutive stage bits run in registers, then
// the tile goes through shared memory once (store in one register layout, load
// in the next; detail/bitonic_plan.cuh), so a merge of 2^m keys costs about
// m/R shared-memory round trips instead of m. It uses the "flip" form of the
// network (detail/bitonic_plan.cuh), so partial tiles need no sentinel from
// the caller: the slots past the valid keys get the tile's own largest key,
// which the flip form never moves (see bitonic_tile), and the network runs
// unpredicated. Exchanges between layouts that keep each warp on its own
// slots need only __syncwarp(). Shared memory is padded (one slot per 128
// bytes) so that the blocked layout and every layout with its window at bit 5
// or above are free of bank conflicts (tests/host/bitonic_plan.cu checks it);
// windows below bit 5 occur for R < 5 and cost at most 2-way conflicts in
// those rounds.
#pragma once

#include <type_traits>

#include "../comparators.cuh"
#include "../detail/bitonic_plan.cuh"
#include "../detail/config.cuh"
#include "../detail/uninitialized_array.cuh"
#include "../warp/warp_sort.cuh"

namespace tilesort {
namespace detail {

// Runs the per-thread steps of a bitonic_tile program in the calling thread,
// with __syncthreads() as the barrier. (tests/host/bitonic_plan.cu runs the
// same programs with an executor that loops over all threads between
// barriers: between two barriers threads touch disjoint shared slots.)
template <typename Registers>
struct bitonic_device_threads {
  Registers& registers;
  TILESORT_HD void barrier() const {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
  }
  // Orders shared memory among the lanes of the calling warp only.
  TILESORT_HD void warp_barrier() const {
#ifdef __CUDA_ARCH__
    __syncwarp();
#endif
  }
  template <typename Step>
  TILESORT_HD void each(const Step& step) const {
#ifdef __CUDA_ARCH__
    step(registers, static_cast<int>(threadIdx.x));
#endif
  }
};

template <int I>
using int_constant = std::integral_constant<int, I>;

// f(int_constant<I>{}) for I = First, First + Step, ... while I <= Last (Step
// > 0) or I >= Last (Step < 0). The programs below are written with it rather
// than with unrolled loops, so that every layout and register index is a
// compile-time constant whatever the unroller's size limits. Its execution
// space is its callable's: host code passes host lambdas (device/bitonic_sort.cuh),
// so the host/device call check is off (else nvcc warns #20013 on
// --extended-lambda without --expt-relaxed-constexpr).
#pragma nv_exec_check_disable
template <int First, int Last, int Step, typename F>
TILESORT_HD void static_for(const F& f) {
  if constexpr (Step > 0 ? First <= Last : First >= Last) {
    f(int_constant<First>{});
    static_for<First + Step, Last, Step>(f);
  }
}

// Hides a value from the optimiser, so that values derived from it are
// recomputed where they are needed instead of being computed once and kept:
// each register round's validity predicates, a global pass's store
// addresses. Kept, they would crowd the keys out of the 64 registers.
TILESORT_HD int opaque(int x) {
#ifdef __CUDA_ARCH__
  asm volatile("" : "+r"(x));
#endif
  return x;
}

// A block sorts or merges a tile of Threads * Items keys held in registers.
// Value is detail::no_value for keys alone. Layouts (window, reflect) are
// template parameters and every loop has constant bounds, so the keys stay in
// registers. RunLog: a global (strided) pass reads runs of 2^RunLog
// consecutive keys (detail::bitonic_plan's L).
//
// Partial tiles (keys [0, valid) exist, valid < tile): the slots past valid
// get the largest existing key M of the block (pad_with_max) and the network
// runs unchanged. Under a strict weak order no key is greater than M, and a
// pad always sits at the higher slot of its comparisons (pads are the highest
// slots, and the flip form puts the smaller key low): so comp(pad, key) is
// false, no comparison ever moves a pad or puts a pad into a real slot -
// exactly the network that skips those comparisons, with no predicate per
// comparison. Only global loads and stores check `valid`.
template <typename Key, typename Value, int Threads, int Items, int RunLog = bitonic_run_log>
struct bitonic_tile {
  static_assert(is_pow2(Threads) && is_pow2(Items) && Items >= 2, "powers of two");
  using key_type = Key;
  using value_type = Value;
  static constexpr int threads = Threads;
  static constexpr int items = Items;
  static constexpr int item_log = log2_floor(Items);             // R
  static constexpr int tile_log = log2_floor(Threads * Items);   // G
  static constexpr int tile_items = Threads * Items;
  static constexpr int run_log = RunLog;                          // L
  static constexpr int warp_log = 5;
  static_assert(tile_log - item_log >= warp_log, "needs >= 32 threads");
  static_assert(run_log >= 1 && run_log <= warp_log, "runs of 2 .. 32 keys");
  static_assert(tile_log < 31, "local indices are int");
  static constexpr bool has_values = detail::has_values<Value>;
  static constexpr int key_row_log = bitonic_bank_row_log(sizeof(Key));
  static constexpr int value_row_log = bitonic_bank_row_log(sizeof(Value));

  struct temp_storage {
    uninitialized_array<Key, bitonic_padded_size(tile_items, key_row_log)> keys;
    uninitialized_array<Value, has_values ? bitonic_padded_size(tile_items, value_row_log) : 1> values;
  };

  struct registers {
    Key keys[Items];
    Value values[Items];
  };

  // The window of the register round whose lowest stage bit is `low`.
  TILESORT_HD static constexpr int window_of(int low) { return bitonic_window(low, tile_log, item_log); }

  // ---------------------------------------------------------------- steps
  // Per-thread work between two barriers, in layout (Window, Reflect).
  template <int Window, int Reflect>
  struct layout_of {
    TILESORT_HD static constexpr bitonic_layout lay() { return {Window, Reflect}; }
    TILESORT_HD static constexpr bool mirrored(int k) { return bitonic_mirrored(lay(), k); }
    TILESORT_HD static constexpr int part(int k) { return bitonic_register_part(lay(), k); }
    // This thread's index part for register k (plain or mirrored).
    struct thread_parts {
      int plain;
      int mirrored;
      TILESORT_HD explicit thread_parts(int t)
          : plain(bitonic_thread_part(t, Window, item_log)), mirrored(bitonic_mirrored_thread_part(plain, Window)) {}
      TILESORT_HD int of(int k) const { return layout_of::mirrored(k) ? mirrored : plain; }
    };
  };

  // Stage bits Top .. Low (those >= stop) in registers. A thread whose keys
  // are all padding has nothing to do (its comparisons move nothing).
  template <int Window, int Reflect, int Top, int Low, typename Compare>
  struct run_stages {
    int stop;
    int valid;
    Compare comp;
    TILESORT_HD void operator()(registers& r, int t) const {
      using L = layout_of<Window, Reflect>;
      const typename L::thread_parts parts(t);
      if (parts.plain >= valid && (Reflect == 0 || parts.mirrored >= valid)) return;
      TILESORT_UNROLL
      for (int p = Top; p >= Low; --p) {
        if (p < stop) continue;
        const int j = p - Window;
        TILESORT_UNROLL
        for (int k = 0; k < Items; ++k) {
          if ((k >> j) & 1) continue;
          const int k2 = k | (1 << j);
          // In a mirrored half the higher register holds the lower slot; the
          // flip itself pairs a plain register (lower) with a mirrored one.
          const bool reversed = L::mirrored(k) && p != Reflect - 1;
          const int lo = reversed ? k2 : k;
          const int hi = reversed ? k : k2;
          compare_exchange(r.keys[lo], r.keys[hi], r.values[lo], r.values[hi], comp);
        }
      }
    }
  };

  // Merges 1 .. min(R, merges) in the blocked layout: every flip is a register pair.
  template <typename Compare>
  struct sort_registers {
    int merges;
    int valid;
    Compare comp;
    TILESORT_HD void operator()(registers& r, int t) const {
      if ((t << item_log) >= valid) return;  // all padding
      TILESORT_UNROLL
      for (int m = 1; m <= item_log; ++m) {
        if (m > merges) continue;
        TILESORT_UNROLL
        for (int k = 0; k < Items; ++k) {
          const int k2 = k ^ ((1 << m) - 1);
          if (k2 <= k) continue;
          compare_exchange(r.keys[k], r.keys[k2], r.values[k], r.values[k2], comp);
        }
        TILESORT_UNROLL
        for (int p = item_log - 2; p >= 0; --p) {
          if (p > m - 2) continue;
          TILESORT_UNROLL
          for (int k = 0; k < Items; ++k) {
            const int k2 = k | (1 << p);
            if (k2 == k) continue;
            compare_exchange(r.keys[k], r.keys[k2], r.values[k], r.values[k2], comp);
          }
        }
      }
    }
  };

  // pad_with_max's steps: the block's largest real key M, by a tree in shared
  // memory (slots [0, Threads)); slot Threads holds key 0 (thread 0, register
  // 0 in every layout, and it always exists) for threads with no real key.
  template <int Window, int Reflect, typename Compare>
  struct max_candidate {
    temp_storage* storage;
    int valid;
    Compare comp;
    TILESORT_HD void operator()(registers& r, int t) const {
      using L = layout_of<Window, Reflect>;
      const typename L::thread_parts parts(t);
      Key best = storage->keys[bitonic_padded(Threads, key_row_log)];
      // (opaque(): recomputed, not the loads' predicates kept alive.)
      const int room = opaque(valid - parts.plain), room_mirrored = opaque(valid - parts.mirrored);
      TILESORT_UNROLL
      for (int k = 0; k < Items; ++k)
        if (L::part(k) < (L::mirrored(k) ? room_mirrored : room) && comp(best, r.keys[k])) best = r.keys[k];
      storage->keys[bitonic_padded(t, key_row_log)] = best;
    }
  };
  template <typename Compare>
  struct max_step {
    temp_storage* storage;
    int half;
    Compare comp;
    TILESORT_HD void operator()(registers&, int t) const {
      if (t >= half) return;
      const Key a = storage->keys[bitonic_padded(t, key_row_log)];
      const Key b = storage->keys[bitonic_padded(t + half, key_row_log)];
      if (comp(a, b)) storage->keys[bitonic_padded(t, key_row_log)] = b;
    }
  };
  template <int Window, int Reflect>
  struct fill_padding {
    temp_storage* storage;
    int valid;
    TILESORT_HD void operator()(registers& r, int t) const {
      using L = layout_of<Window, Reflect>;
      const typename L::thread_parts parts(t);
      const Key max = storage->keys[bitonic_padded(0, key_row_log)];
      const int room = opaque(valid - parts.plain), room_mirrored = opaque(valid - parts.mirrored);
      TILESORT_UNROLL
      for (int k = 0; k < Items; ++k)
        if (L::part(k) >= (L::mirrored(k) ? room_mirrored : room)) r.keys[k] = max;
    }
  };

  // Shared-memory round trips move all slots, real or not: the tile's slots
  // past `valid` are the block's own scratch and nothing reads them as keys.
  template <int Window, int Reflect>
  struct store_shared {
    temp_storage* storage;
    TILESORT_HD void operator()(registers& r, int t) const {
      using L = layout_of<Window, Reflect>;
      const typename L::thread_parts parts(t);
      TILESORT_UNROLL
      for (int k = 0; k < Items; ++k) {
        const int tp = parts.of(k);
        storage->keys[bitonic_padded(tp, key_row_log) + bitonic_padded(L::part(k), key_row_log)] = r.keys[k];
        if constexpr (has_values)
          storage->values[bitonic_padded(tp, value_row_log) + bitonic_padded(L::part(k), value_row_log)] = r.values[k];
      }
    }
  };

  template <int Window, int Reflect>
  struct load_shared {
    temp_storage* storage;
    TILESORT_HD void operator()(registers& r, int t) const {
      using L = layout_of<Window, Reflect>;
      const typename L::thread_parts parts(t);
      TILESORT_UNROLL
      for (int k = 0; k < Items; ++k) {
        const int tp = parts.of(k);
        r.keys[k] = storage->keys[bitonic_padded(tp, key_row_log) + bitonic_padded(L::part(k), key_row_log)];
        if constexpr (has_values)
          r.values[k] = storage->values[bitonic_padded(tp, value_row_log) + bitonic_padded(L::part(k), value_row_log)];
      }
    }
  };

  // Global tile [0, valid) <-> shared memory, striped: lanes on consecutive keys.
  struct load_striped {
    const Key* keys;
    const Value* values;
    temp_storage* storage;
    int valid;
    TILESORT_HD void operator()(registers&, int t) const {
      // A partial tile reads its last key again for the slots past `valid`
      // (pad_with_max overwrites them): no predicates to keep alive.
      const int last = valid - 1;
      TILESORT_UNROLL
      for (int i = 0; i < Items; ++i) {
        const int e = min_int(t + i * Threads, last);
        storage->keys[bitonic_padded(t, key_row_log) + bitonic_padded(i * Threads, key_row_log)] = keys[e];
        if constexpr (has_values)
          storage->values[bitonic_padded(t, value_row_log) + bitonic_padded(i * Threads, value_row_log)] = values[e];
      }
    }
  };

  struct store_striped {
    Key* keys;
    Value* values;
    temp_storage* storage;
    int valid;
    TILESORT_HD void operator()(registers&, int t) const {
      const int room = opaque(valid - t);
      TILESORT_UNROLL
      for (int i = 0; i < Items; ++i) {
        const int e = t + i * Threads;
        if (i * Threads >= room) continue;
        keys[e] = storage->keys[bitonic_padded(t, key_row_log) + bitonic_padded(i * Threads, key_row_log)];
        if constexpr (has_values)
          values[e] = storage->values[bitonic_padded(t, value_row_log) + bitonic_padded(i * Threads, value_row_log)];
      }
    }
  };

  // Offset of local index part `e` under a block map whose runs are 2^Run
  // keys (disjoint parts add); Run == 0: tiles, the identity.
  template <int Run>
  TILESORT_HD static std::int64_t map_offset(const bitonic_block_map& map, int e) {
    if constexpr (Run == 0) {
      return e;
    } else {
      constexpr int half = tile_items / 2;
      return (e & ((1 << Run) - 1)) + (std::int64_t((e & (half - 1)) >> Run) << map.shift) +
             ((e & half) ? map.upper : 0);
    }
  }

  // Registers <-> the block's keys in global memory, straight from a layout
  // whose window is at or above the run: each warp-wide access covers whole
  // runs of 2^Run consecutive keys (Run == 0, tiles: 32 consecutive keys).
  template <int Run, bool Store, int Window, int Reflect>
  struct move_global {
    Key* keys;
    Value* values;
    bitonic_block_map map;
    // The plain registers, then the mirrored ones (Reflect: the upper half),
    // each from its own base: one 64-bit base alive at a time.
    template <bool Mirrored>
    TILESORT_HD void move(registers& r, const bitonic_block_map& m, int thread_part) const {
      using L = layout_of<Window, Reflect>;
      const std::int64_t base = m.base + map_offset<Run>(m, thread_part);
      TILESORT_UNROLL
      for (int k = 0; k < Items; ++k) {
        if (L::mirrored(k) != Mirrored) continue;
        if (thread_part + L::part(k) >= m.valid) continue;
        const std::int64_t at = base + map_offset<Run>(m, L::part(k));
        if constexpr (Store) {
          keys[at] = r.keys[k];
          if constexpr (has_values) values[at] = r.values[k];
        } else {
          r.keys[k] = keys[at];
          if constexpr (has_values) r.values[k] = values[at];
        }
      }
    }
    TILESORT_HD void operator()(registers& r, int t) const {
      using L = layout_of<Window, Reflect>;
      const typename L::thread_parts parts(t);
      // A store recomputes its addresses instead of the compiler keeping the
      // load's 2^R 64-bit addresses alive across the stages (opaque()).
      bitonic_block_map m = map;
      if (Store) m.shift = opaque(m.shift);
      move<false>(r, m, parts.plain);
      if constexpr (Reflect != 0) move<true>(r, m, opaque(parts.mirrored));
    }
  };

  // ---------------------------------------------------------------- programs
  // The programs are __host__ __device__ so that the host test can run them
  // with its own executor; nv_exec_check_disable lets each instantiation call
  // its executor's side only.

  // Registers in layout From -> shared memory -> registers in layout To.
  // Layouts with window <= 5 keep warp w on the slots whose index bits from
  // R + 5 up equal w (the lanes take the low thread bits, all below R + 5;
  // mirroring flips bits below the window's top only). Between two such
  // layouts the exchange is the warp's own business: __syncwarp() suffices,
  // and the warps need not wait for each other. (Every smem access since the
  // last block barrier was then also the warp's own: the From layout was
  // loaded in the same kind of layout, or straight from global memory.)
#pragma nv_exec_check_disable
  template <int FromWindow, int FromReflect, int ToWindow, int ToReflect, typename Exec>
  TILESORT_HD static void exchange(const Exec& ex, temp_storage& storage) {
    if constexpr (FromWindow <= warp_log && ToWindow <= warp_log) {
      ex.warp_barrier();
      ex.each(store_shared<FromWindow, FromReflect>{&storage});
      ex.warp_barrier();
      ex.each(load_shared<ToWindow, ToReflect>{&storage});
    } else {
      ex.barrier();  // every thread has finished reading the previous layout
      ex.each(store_shared<FromWindow, FromReflect>{&storage});
      ex.barrier();
      ex.each(load_shared<ToWindow, ToReflect>{&storage});
    }
  }

  // Slots [valid, tile) := the largest key of [0, valid), layout (Window, Reflect).
#pragma nv_exec_check_disable
  template <int Window, int Reflect, typename Exec, typename Compare>
  TILESORT_HD static void pad_with_max(const Exec& ex, temp_storage& storage, int valid, Compare comp) {
    max_to_slot0<Window, Reflect>(ex, storage, valid, comp);
    ex.barrier();
    ex.each(fill_padding<Window, Reflect>{&storage, valid});
    // Slot 0 must be read by all before anyone writes shared memory again
    // (the warp-local exchanges that may come next wait for their warp only).
    ex.barrier();
  }
  // The largest of the block's keys [0, valid) (valid >= 1) -> shared slot 0.
#pragma nv_exec_check_disable
  template <int Window, int Reflect, typename Exec, typename Compare>
  TILESORT_HD static void max_to_slot0(const Exec& ex, temp_storage& storage, int valid, Compare comp) {
    ex.barrier();  // nobody reads shared memory any more
    ex.each(copy_key0{&storage});
    ex.barrier();
    ex.each(max_candidate<Window, Reflect, Compare>{&storage, valid, comp});
    TILESORT_UNROLL_COUNT(1)  // rolled: unrolled, its 9 rounds cost the flip pass a register (spill)
    for (int half = Threads / 2; half > 0; half /= 2) {
      ex.barrier();
      ex.each(max_step<Compare>{&storage, half, comp});
    }
  }
  struct copy_key0 {
    temp_storage* storage;
    TILESORT_HD void operator()(registers& r, int t) const {
      if (t == 0) storage->keys[bitonic_padded(Threads, key_row_log)] = r.keys[0];
    }
  };

  // Register rounds of merge M > R in sort(): its stage bits from M-1 down to
  // R in chunks of R (the first one mirrored, for the flip), then R-1..0 in the
  // blocked layout. Chunk `Top` runs bits Top .. low(Top).
  TILESORT_HD static constexpr int sort_chunk_low(int top) { return top - item_log + 1 > item_log ? top - item_log + 1 : item_log; }
  TILESORT_HD static constexpr int sort_chunk_window(int top) { return window_of(sort_chunk_low(top)); }
  TILESORT_HD static constexpr int sort_chunk_reflect(int merge, int top) { return top == merge - 1 ? merge : 0; }

  template <int M, typename Exec, typename Compare>
  struct sort_chunk {
    const Exec& ex;
    temp_storage& storage;
    int valid;
    Compare comp;
#pragma nv_exec_check_disable
    template <int Top>
    TILESORT_HD void operator()(int_constant<Top>) const {
      // The previous round: the blocked one before the first chunk, else the chunk above.
      constexpr int from_window = Top == M - 1 ? 0 : sort_chunk_window(Top + item_log);
      constexpr int from_reflect = Top == M - 1 ? 0 : sort_chunk_reflect(M, Top + item_log);
      constexpr int window = sort_chunk_window(Top);
      constexpr int reflect = sort_chunk_reflect(M, Top);
      exchange<from_window, from_reflect, window, reflect>(ex, storage);
      ex.each(run_stages<window, reflect, Top, sort_chunk_low(Top), Compare>{0, valid, comp});
    }
  };

  template <typename Exec, typename Compare>
  struct sort_merge {
    const Exec& ex;
    temp_storage& storage;
    int valid;
    int merges;
    Compare comp;
#pragma nv_exec_check_disable
    template <int M>
    TILESORT_HD void operator()(int_constant<M>) const {
      if (M > merges) return;  // uniform: merges is the block's
      static_for<M - 1, item_log, -item_log>(sort_chunk<M, Exec, Compare>{ex, storage, valid, comp});
      constexpr int last_top = item_log + (M - 1 - item_log) % item_log;
      exchange<sort_chunk_window(last_top), sort_chunk_reflect(M, last_top), 0, 0>(ex, storage);
      ex.each(run_stages<0, 0, item_log - 1, 0, Compare>{0, valid, comp});
    }
  };

  // Merges 1..merges (merges <= G) of the tile's keys, blocked layout in and
  // out; slots >= valid hold padding (pad_with_max).
#pragma nv_exec_check_disable
  template <typename Exec, typename Compare>
  TILESORT_HD static void sort(const Exec& ex, temp_storage& storage, int valid, int merges, Compare comp) {
    ex.each(sort_registers<Compare>{merges, valid, comp});
    static_for<item_log + 1, tile_log, 1>(sort_merge<Exec, Compare>{ex, storage, valid, merges, comp});
  }

  // Merges 1 .. R+5 of each warp's 32 x Items keys (blocked layout) with the
  // warp's shuffle network (warp/warp_sort.cuh) instead of register rounds and
  // shared-memory exchanges. Device only. Unguarded on partial tiles too: the
  // slots >= valid hold the block's largest key (pad_with_max), the highest
  // slots, which that flip network never moves either (it swaps only on a
  // strict comparison, keys alone excepted, whose ties are identical).
  template <typename Compare>
  struct warp_merges {
    Compare comp;
    TILESORT_DEVICE void operator()(registers& r, int) const {
      warp_sort_impl<32, false>(r.keys, r.values, 0, comp, warp_exchange<32>{});
    }
  };

  // sort() of all G merges with the warp network for merges 1 .. R+5 (device
  // only). All G, not ceil(log2(valid)): the padding makes the extra merges
  // move nothing, and a constant count is faster (docs/tuning/bitonic_sort.md).
#pragma nv_exec_check_disable
  template <typename Exec, typename Compare>
  TILESORT_HD static void sort_warp_first(const Exec& ex, temp_storage& storage, int valid, Compare comp) {
    ex.each(warp_merges<Compare>{comp});
    static_for<item_log + warp_log + 1, tile_log, 1>(sort_merge<Exec, Compare>{ex, storage, valid, tile_log, comp});
  }

  // One sort_tiles block: keys_in[map] -> sorted -> keys_out[map]. WarpFirst:
  // the first merges by sort_warp_first (device only).
#pragma nv_exec_check_disable
  template <bool WarpFirst = false, typename Exec, typename Compare>
  TILESORT_HD static void sort_tile(const Exec& ex, temp_storage& storage, const Key* keys_in, Key* keys_out,
                                    const Value* values_in, Value* values_out, const bitonic_block_map& map,
                                    Compare comp) {
    const int valid = map.valid;
    ex.each(load_striped{keys_in + map.base, has_values ? values_in + map.base : nullptr, &storage, valid});
    ex.barrier();
    ex.each(load_shared<0, 0>{&storage});
    if (valid < tile_items) pad_with_max<0, 0>(ex, storage, valid, comp);
    if constexpr (WarpFirst) {
      sort_warp_first(ex, storage, valid, comp);
    } else {
      sort(ex, storage, valid, ceil_log2(valid), comp);
    }
    ex.barrier();
    ex.each(store_shared<0, 0>{&storage});
    ex.barrier();
    ex.each(store_striped{keys_out + map.base, has_values ? values_out + map.base : nullptr, &storage, valid});
  }

  // merge_tile's register rounds: stage bits from G-1 down to Floor (L for a
  // global pass, R for a tile pass) in chunks of R.
  template <bool Strided>
  TILESORT_HD static constexpr int merge_floor() { return Strided ? run_log : item_log; }
  template <bool Strided>
  TILESORT_HD static constexpr int merge_chunk_low(int top) {
    return top - item_log + 1 > merge_floor<Strided>() ? top - item_log + 1 : merge_floor<Strided>();
  }

  // Resident: the keys are in registers already, in the first chunk's layout
  // (the striped one; see merge_registers), not loaded from global memory.
  template <bool Flip, bool Strided, typename Exec, typename Compare, bool Resident = false>
  struct merge_chunk {
    const Exec& ex;
    temp_storage& storage;
    Key* keys;
    Value* values;
    const bitonic_block_map& map;
    int stop;
    bool& done;  // Strided: stored after the chunk that ran the last stage
    Compare comp;
#pragma nv_exec_check_disable
    template <int Top>
    TILESORT_HD void operator()(int_constant<Top>) const {
      constexpr bool first = Top == tile_log - 1;
      constexpr int low = merge_chunk_low<Strided>(Top);
      constexpr int window = window_of(low);
      constexpr int reflect = Flip && first ? tile_log : 0;
      constexpr int from_window = first ? 0 : window_of(merge_chunk_low<Strided>(Top + item_log));
      constexpr int from_reflect = Flip && Top + item_log == tile_log - 1 ? tile_log : 0;
      constexpr bool last = Top - item_log < merge_floor<Strided>();
      if (done) return;  // uniform
      if constexpr (first) {
        static_assert(!Resident || (window == striped_window && reflect == 0), "resident keys are striped");
        if constexpr (!Resident) {
          ex.each(move_global<Strided ? run_log : 0, false, window, reflect>{keys, values, map});
          if (map.valid < tile_items) pad_with_max<window, reflect>(ex, storage, map.valid, comp);
        }
      } else {
        exchange<from_window, from_reflect, window, reflect>(ex, storage);
      }
      ex.each(run_stages<window, reflect, Top, low, Compare>{stop, map.valid, comp});
      if constexpr (Strided) {
        if (last || low <= stop) {
          ex.each(move_global<Strided ? run_log : 0, true, window, reflect>{keys, values, map});
          done = true;
        }
      }
    }
  };

  // One merge_global (Strided) or merge_tiles block, in place: the local
  // stages at bits G-1 .. G-stages of one merge, starting with a local flip if
  // Flip. Strided: bits >= L only; loads and stores straight from registers.
  // Tiles: all G bits, the last R of them blocked, stored through shared memory.
#pragma nv_exec_check_disable
  template <bool Flip, bool Strided, typename Exec, typename Compare>
  TILESORT_HD static void merge_tile(const Exec& ex, temp_storage& storage, Key* keys, Value* values,
                                     const bitonic_block_map& map, int stages, Compare comp) {
    constexpr int floor_bit = merge_floor<Strided>();
    bool done = false;
    static_for<tile_log - 1, floor_bit, -item_log>(
        merge_chunk<Flip, Strided, Exec, Compare>{ex, storage, keys, values, map,
                                                  Strided ? tile_log - stages : 0, done, comp});
    if constexpr (!Strided) {
      const int valid = map.valid;
      merge_blocked_bits<Flip>(ex, storage, valid, comp);
      ex.barrier();
      ex.each(store_shared<0, 0>{&storage});
      ex.barrier();
      ex.each(store_striped{keys + map.base, has_values ? values + map.base : nullptr, &storage, valid});
    }
  }

  // A tile merge's last register round: from the last chunk's layout to the
  // blocked one, and its stage bits R-1 .. 0 there.
#pragma nv_exec_check_disable
  template <bool Flip, typename Exec, typename Compare>
  TILESORT_HD static void merge_blocked_bits(const Exec& ex, temp_storage& storage, int valid, Compare comp) {
    constexpr int last_top = item_log + (tile_log - 1 - item_log) % item_log;
    constexpr int last_window = window_of(merge_chunk_low<false>(last_top));
    constexpr int last_reflect = Flip && last_top == tile_log - 1 ? tile_log : 0;
    exchange<last_window, last_reflect, 0, 0>(ex, storage);
    ex.each(run_stages<0, 0, item_log - 1, 0, Compare>{0, valid, comp});
  }

  // ---------------------------------------------------------------- fused passes
  // A merge_fused block (detail/bitonic_plan.cuh): local bits [0, A) are a run
  // of 2^A consecutive keys, bits [A, G) a group whose top bit is the next
  // merge's flip. It runs the tail of merge m - its stage bits A-1 .. 0, a
  // tile merge's last A bits inside each run - then the head of merge m+1 -
  // its flip at local bit G-1 and bits G-2 .. A across the runs - between one
  // load and one store.
  //
  // One register round of a chain over stage bits Top0 .. Floor in chunks of
  // R: round `Top` runs bits Top .. low(Top), the first (Top0) a merge's flip
  // when Flip. The first round's keys come from global memory when Load
  // (padded with the block's largest key), else from layout (FromWindow,
  // FromReflect) through shared memory.
  template <int Top0, int Floor, bool Flip, int Run, bool Load, int FromWindow, int FromReflect, typename Exec,
            typename Compare>
  struct fused_round {
    const Exec& ex;
    temp_storage& storage;
    Key* keys;
    Value* values;
    const bitonic_block_map& map;
    Compare comp;
    TILESORT_HD static constexpr int low_of(int top) { return top - item_log + 1 > Floor ? top - item_log + 1 : Floor; }
    TILESORT_HD static constexpr int reflect_of(int top) { return Flip && top == Top0 ? Top0 + 1 : 0; }
#pragma nv_exec_check_disable
    template <int Top>
    TILESORT_HD void operator()(int_constant<Top>) const {
      constexpr int window = window_of(low_of(Top));
      constexpr int reflect = reflect_of(Top);
      if constexpr (Top != Top0) {
        exchange<window_of(low_of(Top + item_log)), reflect_of(Top + item_log), window, reflect>(ex, storage);
      } else if constexpr (Load) {
        ex.each(move_global<Run, false, window, reflect>{keys, values, map});
        if (map.valid < tile_items) pad_with_max<window, reflect>(ex, storage, map.valid, comp);
      } else {
        exchange<FromWindow, FromReflect, window, reflect>(ex, storage);
      }
      ex.each(run_stages<window, reflect, Top, low_of(Top), Compare>{0, map.valid, comp});
    }
  };

#pragma nv_exec_check_disable
  template <int A, typename Exec, typename Compare>
  TILESORT_HD static void fused_tile(const Exec& ex, temp_storage& storage, Key* keys, Value* values,
                                     const bitonic_block_map& map, Compare comp) {
    static_assert(A > item_log && A < tile_log, "a tail of at least one register round, a head of one stage");
    // Tail: bits A-1 .. R in rounds, then R-1 .. 0 in the blocked layout.
    constexpr int tail_last = item_log + (A - 1 - item_log) % item_log;
    static_for<A - 1, item_log, -item_log>(
        fused_round<A - 1, item_log, false, A, true, 0, 0, Exec, Compare>{ex, storage, keys, values, map, comp});
    exchange<window_of(item_log), 0, 0, 0>(ex, storage);
    static_assert(fused_round<A - 1, item_log, false, A, true, 0, 0, Exec, Compare>::low_of(tail_last) == item_log);
    ex.each(run_stages<0, 0, item_log - 1, 0, Compare>{0, map.valid, comp});
    // Head: the flip at G-1, then down to A, from the blocked layout; stored
    // straight from the last round's registers.
    using head = fused_round<tile_log - 1, A, true, A, false, 0, 0, Exec, Compare>;
    static_for<tile_log - 1, A, -item_log>(head{ex, storage, keys, values, map, comp});
    constexpr int head_last = A + (tile_log - 1 - A) % item_log;
    ex.each(move_global<A, true, window_of(head::low_of(head_last)), head::reflect_of(head_last)>{keys, values, map});
  }

  // ---------------------------------------------------------------- clusters
  // A cluster of 2^c blocks (sm_90) holds 2^(G+c) consecutive keys, block r
  // the tile at r * 2^G. A stage with bit p >= G pairs every key of block r
  // with one of its partner block (r ^ 2^(p-G), or for the flip of merge m,
  // r ^ (2^(m-G) - 1) at the mirrored local index): each block publishes its
  // keys in shared memory in the striped layout, reads its partner's through
  // distributed shared memory, and keeps the smaller (lower block) or larger
  // (upper block) key of each pair. After the merge's stages across blocks,
  // merge_registers runs its stage bits G-1 .. 0 inside each block.
  static constexpr int striped_window = tile_log - item_log;  // thread t, register k: key t + k * Threads

  template <typename Compare>
  struct cross_exchange {
    const temp_storage* partner;  // the partner block's published keys
    bool flip;                    // local index e pairs with tile - 1 - e (else with e)
    bool lower;                   // this block holds the lower slots of the pairs
    Compare comp;
    TILESORT_HD void operator()(registers& r, int t) const {
      TILESORT_UNROLL
      for (int k = 0; k < Items; ++k) {
        const int e = t + k * Threads;
        const int pe = flip ? tile_items - 1 - e : e;
        const Key other = partner->keys[bitonic_padded(pe, key_row_log)];
        // Equal keys stay where they are on both sides, so each pair keeps one
        // copy of each key (and its value).
        if (lower ? comp(other, r.keys[k]) : comp(r.keys[k], other)) {
          r.keys[k] = other;
          if constexpr (has_values) r.values[k] = partner->values[bitonic_padded(pe, value_row_log)];
        }
      }
    }
  };

  // The stage bits G-1 .. 0 of a merge (not its flip) on keys resident in
  // registers in the striped layout; blocked layout out. Slots >= valid must
  // hold keys no real key exceeds (the cluster sort pads with the cluster's
  // largest key).
#pragma nv_exec_check_disable
  template <typename Exec, typename Compare>
  TILESORT_HD static void merge_registers(const Exec& ex, temp_storage& storage, int valid, Compare comp) {
    const bitonic_block_map map{0, 0, tile_log - 1, tile_log - 1, tile_log, valid};
    bool done = false;
    static_for<tile_log - 1, item_log, -item_log>(
        merge_chunk<false, false, Exec, Compare, true>{ex, storage, nullptr, nullptr, map, 0, done, comp});
    merge_blocked_bits<false>(ex, storage, valid, comp);
  }
};

}  // namespace detail
}  // namespace tilesort
