// device/merge_sort.cuh — stable device-wide merge sort of keys or key-value
// pairs, any trivially copyable key, any strict weak order, 64-bit sizes.
//
// Algorithm (ModernGPU/CUB shape, flat):
//   1. blocksort: each block loads a tile of T = block_threads x block_items
//      keys (coalesced, transposed to the blocked arrangement in shared
//      memory), sorts it with block_sort (stable) and stores it back: runs
//      of T.
//   2. Merge passes, 8-way (8-byte keys), 4-way (other items of 4 bytes
//      and more) or pairwise (smaller items): merge_ways in the policy.
//      Pairwise: ceil(log2(ceil(n / T))) passes; pass p merges sorted runs
//      of T << p keys in pairs. Each pass is two launches:
//        partition: one 64-bit merge-path search in global memory per merge-tile
//                   boundary (ceil(n / M) + 1 searches, M = merge tile), 8
//                   lanes per search;
//        merge:     each block loads its A and B slices (coalesced) into
//                   shared memory, every thread runs a merge-path search there
//                   and serially merges merge_items outputs, and the block
//                   stores its M outputs coalesced through padded shared memory.
//      K-way: ceil(log_K(ceil(n / T))) passes; pass p merges groups of K
//      runs of T·K^p keys. Each pass is two launches:
//        cut:       every 2^s-th key of every run is a sample; the samples of
//                   a group are ranked in the merged order (searches among
//                   the other runs' samples), and every cut_samples-th one
//                   cuts the group: its split in each run (a search between
//                   two samples) bounds a tile of at most (cut_samples + K)
//                   x 2^s keys (detail/merge_sort_plan.cuh, kway_pass_shape);
//        merge:     each block copies its tile's K slices into shared memory
//                   (cp.async, or through registers for items whose size
//                   or alignment is not a multiple of 4 bytes),
//                   merges them pairwise in log2(K) rounds (each thread
//                   merging merge_items outputs per round; a later round
//                   with nothing to merge, as in a last pass of fewer than
//                   K runs, is skipped) and stores the tile coalesced.
//      (The locality sort runs the k-way passes for random keys on grids of
//      about a wave, so that other input skips them cheaply: persistent
//      merge blocks taking tiles from a counter, cut lanes striding.)
//      Pairs merge keys only, carrying each output's source index; the
//      values are loaded into shared memory with the keys (so a tile waits
//      for DRAM once) and stored by that index.
//   Buffers ping-pong between keys_out and the temp buffer; the blocksort
//   picks its destination by the parity of the pass count, so the last pass
//   writes keys_out and no copy is ever needed (detail/merge_sort_plan.cuh).
//   Every launch after the blocksort is a dependent launch on sm_90
//   (detail/dependent_launch.cuh): no launch gap between the passes.
//
// Cost: 1 + merge_passes reads and writes of every key (and value), 1 + 2 x
// merge_passes launches; n <= T: one launch, keys_in -> keys_out directly
// (n <= 1024 keys of up to 8 bytes: one block of 128 threads);
// n == 1: a copy (when out != in); n == 0: nothing. With the sm_90 policy
// below (T = 8192 for u32 keys, 4096 for 8-byte items), passes over DRAM
// (blocksort + merges) at 2^20 / 2^24 / 2^28 keys are 5 / 7 / 9 for u32
// keys and u32 pairs (4-way; pairwise passes from T = 8192 would take 8 /
// 12 / 16) and 4 / 5 / 7 for u64 keys (8-way); CUB's 4352-key
// tiles (u32 keys, pairs) take 9 / 13 / 17 and its 2048-key tiles (u64
// keys) 10 / 14 / 18. merge_sort_passes(n) says it for any n.
// Shared memory: blocksort max(block_sort's temp_storage, the transposes)
// (u32 keys 33 KB, u64 keys and u32 pairs 34 KB; 68 KB for the early-exit
// sorts' 8192-key tiles of 8-byte items, opted in above 48 KB);
// merge M keys (+ M ints and M values for pairs), keys and ints padded by
// one word per 128 bytes (u32 keys 16.5 KB, u64 keys 33 KB, u32 pairs 49 KB).
// Temp storage: n keys (+ n values) + 8 bytes per merge-tile boundary
// (pairwise) or K x 8 bytes per tile (k-way, the largest pass) when a merge
// pass is needed (256-byte aligned buffers); 1 byte otherwise.
//
// In place (keys_out == keys_in, values likewise) works: the blocksort reads
// each tile into registers before any block writes that tile, and every
// merge pass reads one buffer and writes the other.
//
//   std::size_t temp_bytes = 0;
//   tilesort::merge_sort_keys(nullptr, temp_bytes, d_in, d_out, n);          // size query
//   cudaMallocAsync(&d_temp, temp_bytes, stream);
//   tilesort::merge_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::less{}, stream);
//   // or, allocating stream-ordered temp storage itself:
//   tilesort::merge_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::greater{}, stream);
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../block/block_sort.cuh"
#include "../comparators.cuh"
#include "../detail/capture_mode.cuh"
#include "../detail/config.cuh"
#include "../detail/dependent_launch.cuh"
#include "../detail/error.cuh"
#include "../detail/merge_path.cuh"
#include "../detail/merge_sort_plan.cuh"
#include "../thread/thread_sort.cuh"

namespace tilesort {

// ------------------------------------------------------------------ tuning
// One policy per (key size, value size); ValueBytes = 0 for keys only.
// Measured on an H100 80GB HBM3 (2026-11-23, u32 keys at 2^24 unless said;
// times per kernel from events between launches, CUB's whole sort 869 us):
// * blocksort tile T = 512 x 16 = 8192 items of up to 8 bytes (key + value):
//   1.9x CUB's 4352 for u32 keys and u32 pairs, 4x its 2048 for u64 keys,
//   i.e. one (u32, pairs) or two (u64) fewer global merge passes at every
//   size. The tile lives in registers (16 items per thread) and block_sort's
//   shared memory (33 KB for u32 keys, 68 KB for 8-byte items). It takes
//   217-232 us (CUB's 4352-key blocksort: 158 us): 117 registers hold it to
//   one block of 512 per SM. Tried: 256 x 16 with 2 blocks per SM (184 us,
//   but one more pass: 25 us slower in all), 256 x 32 (255 us), 1024 x 8
//   (64 registers, 32 warps per SM: 250 us).
// * Items of exactly 8 bytes (u64 keys, u32 pairs) take T = 256 x 16 = 4096,
//   2 blocks per SM (the same 128 registers a thread): with 4-way passes
//   the pass count stays (2^24 keys: 2^12 runs take 6 full passes where
//   2^11 took 5 and a half), and the blocksort is cheaper (ncu, 2^24 with T
//   = 8192: u64 keys 386 us of 1322, u32 pairs 331 of 1190). H100 probe,
//   2026-11-24, gpu timing, median of 9, against CUB in the same run, 2^20 /
//   2^22 / 2^24 / 2^26, 512 x 16 -> 256 x 16: u64 keys 1.13 / 1.32 / 1.39 /
//   1.42x -> 1.13 / 1.38 / 1.47 / 1.49x, u32 pairs 1.06 / 1.37 / 1.36 /
//   1.35x -> 1.09 / 1.42 / 1.39 / 1.38x. Not for u32 keys (1.02 / 0.98 /
//   1.02 / 0.97x -> 0.93 / 1.02 / 1.06 / 0.99x: 2^20, a single wave either
//   way, got one full pass more), nor 16-byte items (T = 512 x 8 already;
//   256 x 8 was 3-5% slower, one pass more). 512 x 8 at 2 blocks per SM
//   measured between the two (u64 keys 1.29 / 1.44 / 1.47 / 1.47x); 128 x 16
//   slower everywhere.
// * block_min_blocks = 1 (the blocksort's __launch_bounds__ minimum) lets a
//   thread use up to 128 registers, which keeps ptxas from spilling: a cap of
//   64 registers (2 blocks per SM) spilled u32 keys (~104 bytes) with the
//   register-shuffle warp rounds of block_sort.
// * merge tile M = 256 x 16 = 4096 outputs: power of two (M must divide 2T),
//   16 outputs per thread amortise the per-thread merge-path search. A pass
//   takes 52-56 us (DRAM at 66% of its peak; the copy bound is 47.5 us).
//   merge_min_blocks = 6 for 4-byte items (40 registers, 48 warps per SM:
//   575 us of merging against 607 us with 4; whole sort with dependent
//   launches 864 us against 903 us). At 2^20 it measured the other way with
//   dependent launches (103-107 us against 94 us with 4; without them both
//   took 95 us), not yet understood. 8-byte items spill at 6 and take 4 (64
//   registers; u64 keys 1.09 ms with 4 against 2.04 ms with 6).
//   Tried: 128 x 16 (2x the partitions: slower in all), 512 x 16 (slower
//   merges), 256 x 8 (slower merges).
// * partition_ways = 8 lanes per merge-path search: 150 us of partition
//   kernels over the 11 passes, against 193 us with 32 lanes and 164 us with 16.
// * Bigger items halve items per thread to keep registers in check.
// * n <= 128 x block_items / 2 (1024 keys of up to 8 bytes) is one block of
//   128 threads: the 8192-key shape took 18.4 us (lat) for 1024 u32 keys,
//   against CUB's 17.1.
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct merge_sort_policy {
  static constexpr std::size_t item_bytes = KeyBytes + ValueBytes;
  static constexpr int block_threads = item_bytes == 8 ? 256 : 512;
  static constexpr int block_items = item_bytes <= 8 ? 16 : item_bytes <= 16 ? 8 : 4;
  static constexpr int block_min_blocks = item_bytes == 8 ? 2 : 1;
  static constexpr int merge_threads = 256;
  static constexpr int merge_min_blocks = item_bytes <= 4 ? 6 : 4;
  static constexpr int merge_items = item_bytes <= 8 ? 16 : item_bytes <= 16 ? 8 : 4;
  static constexpr int partition_ways = 8;  // lanes per merge-path search (see merge_sort_partition_kernel)
  // * merge_ways = 4 (k-way passes, detail/merge_sort_plan.cuh) for items of
  //   4 bytes and more (8 for 8-byte keys, below), 2 (pairwise passes) below.
  //   A 4-way pass moves the bytes of a pairwise one but merges twice in
  //   shared memory, which
  //   pays where the bytes dominate. H100, 2026-11-24, gpu timing, median of
  //   9, against CUB in the same run (2^22 / 2^24 / 2^26 keys):
  //     u64 keys   K=2 1.14 / 1.14 / 1.15x, K=4 1.30 / 1.40 / 1.42x, K=8 1.58 / 1.49 / 1.37x
  //     u32 pairs  K=2 1.07 / 0.94 / 0.95x, K=4 1.36 / 1.34 / 1.34x, K=8 1.53 / 1.33 / 1.22x
  //     u64 pairs  K=2 1.11 / 1.05 / 1.06x, K=4 1.69 / 1.65 / 1.66x, K=8 1.58 / 1.68 / 1.58x
  //     u32 keys   K=2 1.08 / 1.01 / 0.96x, K=4 0.96 / 1.02 / 0.97x, K=8 1.01 / 0.97 / 0.82x
  //     u32 keys, 16 distinct: K=2 0.81 / 0.87 / 0.84x, K=4 0.98 / 1.08 / 1.04x
  //   (random keys unless said; 2^20: u32 keys K=2 0.94x, K=4 1.00x).
  //   (K=2 here is the pairwise passes.) The k-way merge kernel is bound by
  //   instruction issue and shared memory: before its padded slots were
  //   addressed as one base plus constants (that took u32 keys at 2^24 from
  //   957 to 846-861 us and u32 pairs from 1265-1272 to 1206), ncu measured
  //   116 us per 4-way pass of 2^24 u32 keys, 72 us for a 2-way version of
  //   it, against 52-56 for the pairwise merge kernel; one 4-way pass
  //   executed 87M warp instructions, about 2000 per thread and tile, and
  //   half its shared-memory wavefronts were bank conflicts, mostly the
  //   serial merge's reads.
  // * merge_min_blocks with the 4-way kernel (H100 probe, 2026-11-24, gpu
  //   timing, median of 9, 2^22 / 2^24 / 2^26 random): u32 keys 4: 239 / 933
  //   / 3933 us, 6: 233 / 854 / 3521, 8 (32 registers, 40 bytes of spill):
  //   234 / 837 / 3445, kept at 6 (within 2%, and it also sets the pairwise
  //   kernel of 1- and 2-byte keys); u64 keys 3: 406 / 1463 / 6125, 4: 375 /
  //   1323 / 5430, 5: 414 / 1443 / 5978; u32 pairs and u64 pairs best at 4
  //   too (3 within 1%, 5 slower by 1-5%).
// * Also tried for the 4-way passes (H100 probes, 2026-11-24, gpu timing,
//   median of 9): fuller tiles, a sample every 128 keys and a cut every 28
//   (3584 keys on average), within 2% of these either way; every 64 keys and
//   every 60 samples, 2-13% slower (the cut kernel's searches double or
//   quadruple). The load's slice offsets in 32 bits (from the group's
//   first key): u32 pairs 1%, u64 pairs 2% faster, but u32 keys 12-14% and
//   u64 keys 5-7% slower; not kept. Merge tiles of 512 x 8 (2 or 3 blocks
//   per SM) against these 256 x 16, 2^22 / 2^24 / 2^26: u32 pairs 1.30-1.40
//   / 1.22-1.32 / 1.18-1.29x against 1.41 / 1.39 / 1.38x, u64 keys 1.28-1.33
//   / 1.33-1.39 / 1.23-1.30x against 1.48 / 1.58 / 1.49x, u32 keys slower by
//   8-30%; one more block per SM than merge_min_blocks: u32 pairs and u64
//   keys 1-4% slower, u32 keys within 2%. The cut kernel reading its
//   samples from a compact array of every 256th key (which the pass before
//   would write): 100.6 against 102.4 us over the 6 passes of 2^24 u32 keys
//   (standalone probe, same cuts), so not built.
  // * Tiles are cut every cut_samples samples, one sample per cut_stride keys:
  //   at most (cut_samples + merge_ways) x cut_stride = M keys, 3/4 of that on
  //   average. The cut searches run one lane per run and sample: groups of
  //   lanes searching together (as partition_ways) fetched more and took
  //   longer (4-way cut kernel at 2^24 u32: 12.6 us with 1 lane, 42 with 2,
  //   46 with 8). Also slower: a warp's 32 / K consecutive samples of one run
  //   searching whole runs only at its first and last sample, the samples
  //   between searching between those two counts (a fraction of the loads,
  //   but two searches one after the other). H100 bench, lat, 2026-11-25,
  //   three alternating runs, against CUB: u32 keys 2^20 / 2^22 1.10 / 1.05x
  //   -> 0.99-1.00 / 1.01x, u64 keys 2^20 1.22 -> 1.13x, u32 pairs 2^20 1.09
  //   -> 1.02-1.04x; 2^24 and 2^26 within 1%. Under ncu (2026-11-25) the
  //   cut kernel of 2^24 u32 keys takes 12.8-17.9 us a pass (91 of 775 us
  //   over the sort; blocksort 195, 4-way merges 86 a pass, 59 for the last,
  //   2-way one): its searches wait on memory latency.
  // * merge_ways = 8 for 8-byte keys without values, with T = 4096 (H100
  //   probe, 2026-11-24, gpu timing, median of 9, against CUB in the same
  //   run, 2^20 .. 2^26 one power of two apart): u64 keys K=4 1.28 / 1.21 /
  //   1.38 / 1.38 / 1.47 / 1.41 / 1.49x, K=8 1.22 / 1.32 / 1.49 / 1.57 /
  //   1.58 / 1.44 / 1.49x (2^24: 4 passes instead of 6); u32 pairs K=8 1.01 /
  //   1.24 / 1.41 / 1.38 / 1.39 / 1.26 / 1.31x against K=4 0.99 / 1.13 / 1.41
  //   / 1.34 / 1.39 / 1.32 / 1.38x, and u32 keys K=8 0.99 / 1.01 / 0.98 /
  //   0.85x at 2^20 / 2^22 / 2^24 / 2^26 against 1.03 / 0.98 / 1.03 / 0.97x:
  //   those keep K=4.
  static constexpr int merge_ways = item_bytes < 4 ? 2 : KeyBytes == 8 && ValueBytes == 0 ? 8 : 4;
  static constexpr int cut_stride = merge_items * merge_threads / (4 * merge_ways);
  static constexpr int cut_samples = 3 * merge_ways;
  // n <= small_threads x small_items: one block of this smaller shape (fewer merge levels, latency).
  static constexpr int small_threads = 128;
  static constexpr int small_items = block_items / 2;
  static constexpr int tile_items = block_threads * block_items;
  static constexpr int merge_tile_items = merge_threads * merge_items;
  static_assert(block_threads % 32 == 0 && merge_threads % 32 == 0, "whole warps");
  static_assert(32 % partition_ways == 0, "search groups tile a warp");
  static_assert((2 * tile_items) % merge_tile_items == 0, "a merge tile must never straddle two merge groups");
  static_assert((cut_samples + merge_ways) * cut_stride <= merge_tile_items, "a k-way tile fits the merge tile");
  static_assert(tile_items % cut_stride == 0, "samples fall at the same places in every run");
  static_assert(detail::is_pow2(cut_stride) && detail::is_pow2(tile_items / cut_stride),
                "the k-way passes index samples by shifts");
  static_assert(merge_ways >= 2 && detail::is_pow2(merge_ways) && 32 % merge_ways == 0, "ways: 2, 4, 8, ...");
};

namespace detail {

template <typename Value>
inline constexpr bool merge_sort_has_values = !std::is_same_v<Value, no_value>;

// The blocksort shape of small sorts (n <= Policy::small_threads x small_items).
template <typename Policy>
struct merge_sort_small_policy {
  static constexpr int block_threads = Policy::small_threads;
  static constexpr int block_items = Policy::small_items;
  static constexpr int block_min_blocks = 1;
  static constexpr int tile_items = block_threads * block_items;
};

template <typename Key, typename Value>
using merge_sort_policy_for = merge_sort_policy<sizeof(Key), merge_sort_has_values<Value> ? sizeof(Value) : 0>;

// Both kernels take their shared memory dynamically (the blocksort's can pass
// 48 KB); one declaration so that every instantiation agrees on it.
extern __shared__ __align__(16) unsigned char merge_sort_smem[];

// The kernels' data movement is written as steps that take the thread (or
// lane) as an argument and contain no barrier: the kernels run each step with
// threadIdx and put the barriers between steps; the host test runs the same
// steps thread by thread (tests/host/merge_sort_plan.cu).

// ------------------------------------------------------------------ warp transposes
// A warp moves 32 x Items consecutive items between global memory (striped:
// lane l touches l + 32k, so each access is one contiguous 32-item row) and
// registers (blocked: lane l holds l·Items + i), through its own padded
// region of shared memory; a __syncwarp separates the two steps of each
// direction. `valid` counts the warp's in-range items (any int; <= 0: none).
// Full = every item valid (no bounds checks).
template <int Items>
struct merge_sort_warp_transpose {
  // Load, step 1: global (striped) -> region.
  template <bool Full, typename T>
  TILESORT_HD static void load_striped(const T* src, int valid, T* region, int lane) {
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = lane + 32 * k;
      if (Full || j < valid) region[transpose_slot<T>(j)] = src[j];
    }
  }
  // Load, step 2: region -> registers (blocked). Out-of-range slots get a
  // real item (`fill`: the tile's first), so no comparator ever sees garbage.
  template <bool Full, typename T>
  TILESORT_HD static void read_blocked(const T* region, int valid, int lane, T (&items)[Items], const T* fill) {
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int j = lane * Items + i;
      if (Full || j < valid) {
        items[i] = region[transpose_slot<T>(j)];
      } else {
        items[i] = *fill;
      }
    }
  }
  // Store, step 1: registers (blocked) -> region.
  template <typename T>
  TILESORT_HD static void write_blocked(T* region, int lane, const T (&items)[Items]) {
#pragma unroll
    for (int i = 0; i < Items; ++i) region[transpose_slot<T>(lane * Items + i)] = items[i];
  }
  // Store, step 2: region -> global (striped), in-range items only.
  template <bool Full, typename T>
  TILESORT_HD static void store_striped(const T* region, int valid, T* dst, int lane) {
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = lane + 32 * k;
      if (Full || j < valid) dst[j] = region[transpose_slot<T>(j)];
    }
  }
};

// ------------------------------------------------------------------ blocksort
template <typename Key, typename Value, int Threads, int Items>
struct merge_sort_blocksort_parts {
  static constexpr bool pairs = merge_sort_has_values<Value>;
  static constexpr int warps = Threads / 32;
  static constexpr int warp_items = 32 * Items;
  using sort_type = block_sort<Key, Threads, Items, std::conditional_t<pairs, Value, void>>;
  using transpose = merge_sort_warp_transpose<Items>;
  struct transpose_storage {
    Key keys[warps][transpose_slots<Key>(warp_items)];
    Value values[warps][pairs ? transpose_slots<Value>(warp_items) : 1];
  };
  // The transposes and the sort never overlap in time (barriers between them).
  union storage {
    typename sort_type::temp_storage sort;
    transpose_storage transpose;
  };
  // The calling thread's warp: its lane, its items [offset, offset + 32·Items)
  // of the tile (`valid` of them in range) and its transpose regions.
  struct warp_view {
    int lane, offset, valid;
    Key* keys;
    Value* values;
    TILESORT_DEVICE warp_view(storage& s, int tile_valid)
        : lane(static_cast<int>(threadIdx.x) % 32),
          offset(static_cast<int>(threadIdx.x) / 32 * warp_items),
          valid(tile_valid - offset),
          keys(s.transpose.keys[threadIdx.x / 32]),
          values(s.transpose.values[threadIdx.x / 32]) {}
  };
};

// block_sort on a tile in registers (blocked; `valid` in range unless Full).
// `nearly`: sort_nearly's boundary windows first (full tiles).
template <bool Full, typename Parts, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_sort_registers(typename Parts::storage& storage, Key (&keys)[Items],
                                               Value (&values)[Items], int valid, Compare comp, bool nearly = false) {
  typename Parts::sort_type sorter(storage.sort);
  if constexpr (Parts::pairs) {
    if constexpr (Full) {
      sorter.sort_pairs_nearly(keys, values, comp, nearly);
    } else {
      sorter.sort_pairs(keys, values, valid, comp);
    }
  } else {
    if constexpr (Full) {
      sorter.sort_nearly(keys, comp, nearly);
    } else {
      sorter.sort(keys, valid, comp);
    }
  }
}

// Load a tile (warp transposes to the blocked arrangement) and sort it:
// thread t ends with ranks t·Items .. t·Items + Items - 1 in keys/values.
template <bool Full, typename Parts, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_blocksort_load_sort(typename Parts::storage& storage, const Key* keys_in,
                                                    const Value* values_in, int valid, Compare comp, Key (&keys)[Items],
                                                    Value (&values)[Items]) {
  using transpose = typename Parts::transpose;
  const typename Parts::warp_view w(storage, valid);
  transpose::template load_striped<Full>(keys_in + w.offset, w.valid, w.keys, w.lane);
  if constexpr (Parts::pairs) transpose::template load_striped<Full>(values_in + w.offset, w.valid, w.values, w.lane);
  __syncwarp();
  transpose::template read_blocked<Full>(w.keys, w.valid, w.lane, keys, keys_in);
  if constexpr (Parts::pairs) transpose::template read_blocked<Full>(w.values, w.valid, w.lane, values, values_in);
  __syncthreads();  // the sort reuses the transpose bytes

  merge_sort_sort_registers<Full, Parts>(storage, keys, values, valid, comp);
  __syncthreads();  // every thread is done with the sort's storage
}

template <bool Full, typename Parts, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_blocksort_tile(typename Parts::storage& storage, const Key* keys_in, Key* keys_out,
                                               const Value* values_in, Value* values_out, int valid, Compare comp) {
  using transpose = typename Parts::transpose;
  Key keys[Items];
  Value values[Items];
  merge_sort_blocksort_load_sort<Full, Parts>(storage, keys_in, values_in, valid, comp, keys, values);

  const typename Parts::warp_view w(storage, valid);
  transpose::write_blocked(w.keys, w.lane, keys);
  if constexpr (Parts::pairs) transpose::write_blocked(w.values, w.lane, values);
  __syncwarp();
  transpose::template store_striped<Full>(w.keys, w.valid, keys_out + w.offset, w.lane);
  if constexpr (Parts::pairs) transpose::template store_striped<Full>(w.values, w.valid, values_out + w.offset, w.lane);
}

// One block per tile of T keys: keys_in -> sorted runs of T in keys_out.
// keys_out may equal keys_in: every read of the tile precedes the first
// barrier, every write follows it, and no other block touches the tile.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::block_threads, Policy::block_min_blocks)
    merge_sort_blocksort_kernel(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                std::int64_t n, Compare comp) {
  using parts = merge_sort_blocksort_parts<Key, Value, Policy::block_threads, Policy::block_items>;
  allow_next_kernel();  // the first partition kernel waits for this grid to finish
  auto& storage = *reinterpret_cast<typename parts::storage*>(merge_sort_smem);
  const std::int64_t tile_begin = std::int64_t(blockIdx.x) * Policy::tile_items;
  const int valid = static_cast<int>(merge_sort_min(n - tile_begin, Policy::tile_items));
  keys_in += tile_begin;
  keys_out += tile_begin;
  if constexpr (parts::pairs) {
    values_in += tile_begin;
    values_out += tile_begin;
  }
  if (valid == Policy::tile_items) {
    merge_sort_blocksort_tile<true, parts, Policy::block_items>(storage, keys_in, keys_out, values_in, values_out,
                                                                valid, comp);
  } else {
    merge_sort_blocksort_tile<false, parts, Policy::block_items>(storage, keys_in, keys_out, values_in, values_out,
                                                                 valid, comp);
  }
}

// ------------------------------------------------------------------ merge pass
// The lanes of a warp in groups of Ways, one multi-lane search per group:
// this lane's index in its group, and (called with a predicate of a member
// index) the ballot over the group alone, bit j from member j.
template <int Ways>
struct search_lanes {
  static_assert(32 % Ways == 0, "groups tile whole warps");
  int member;
  int first_lane;
  TILESORT_DEVICE search_lanes()
      : member(static_cast<int>(threadIdx.x % 32) % Ways), first_lane(static_cast<int>(threadIdx.x % 32) - member) {}
  template <typename Pred>
  TILESORT_DEVICE unsigned operator()(Pred pred) const {
    constexpr unsigned members = Ways == 32 ? 0xffffffffu : (1u << Ways) - 1u;
    return (__ballot_sync(members << first_lane, pred(member)) >> first_lane) & members;
  }
};

// partitions[i] = absolute index into A of the first A key that merge tile i
// takes, for i = 0 .. merge_tiles, a group of Ways lanes each (merge_path_kway).
// This kernel is all waiting for DRAM, on latency and on bytes: with Ways = 8
// a search over 2^23 candidates takes 8 rounds of 16 sector reads, where a
// warp (Ways = 32) takes 5 rounds of 64 (2.5x the bytes: on an H100 at 2^24
// keys that made the kernel DRAM-bound, 11-23 us a pass) and one thread's
// binary search takes 23 rounds of 2.
template <int Ways, typename Key, typename Compare>
__global__ void merge_sort_partition_kernel(const Key* keys, std::int64_t n, std::int64_t run, int merge_tile_items,
                                            std::int64_t partition_count, std::int64_t* partitions, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // keys_src is the previous kernel's output
  const std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / Ways;
  if (i >= partition_count) return;  // whole groups
  const search_lanes<Ways> lanes;
  const std::int64_t partition = merge_sort_partition<Ways>(keys, n, run, merge_tile_items, i, comp, lanes);
  if (lanes.member == 0) partitions[i] = partition;
}

// Shared memory of one merge tile. For pairs the values of A ++ B are loaded
// with the keys (one DRAM latency per tile instead of two).
template <typename Key, typename Value, int TileItems>
struct merge_sort_merge_storage {
  static constexpr bool pairs = merge_sort_has_values<Value>;
  // Unpadded A ++ B while merging (serial_merge reads a plain array), then the
  // padded blocked -> striped transpose of the outputs.
  Key keys[transpose_slots<Key>(TileItems)];
  int sources[pairs ? transpose_slots<int>(TileItems) : 1];
  Value values[pairs ? TileItems : 1];  // A ++ B, unpadded
};

// One merge tile: `slices` says which A and B keys make outputs
// [out_begin, out_end); count <= Threads x Items. Steps, barrier after each:
template <int Threads, int Items>
struct merge_sort_merge_steps {
  // 1. A ++ B into keys[0, count), striped: each warp reads one contiguous row
  //    (two where it crosses from A to B). The values load the same way.
  template <bool Full, typename T>
  TILESORT_HD static void load(T* dst, const merge_tile_slices& slices, const T* src, int thread) {
    const int a_count = slices.a_count();
    const int count = slices.count();
    // Item j of A ++ B is a_src[j] (j < a_count) or b_src[j]. Two predicated
    // sweeps, A's then B's, address every load as one base register plus a
    // constant (a select per item would need Items live 64-bit addresses);
    // all loads are issued before the first shared-memory store, which the
    // compiler could not move above a later global load (dst is a generic
    // pointer), so a tile waits for DRAM once.
    const T* a_src = src + slices.a_begin + thread;
    const T* b_src = src + (slices.b_begin - a_count) + thread;
    T items[Items] = {};  // defined junk for the slots past count (host emulation reads no indeterminate value)
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      if (thread + k * Threads < a_count) items[k] = a_src[k * Threads];
    }
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (j >= a_count && (Full || j < count)) items[k] = b_src[k * Threads];
    }
    // Unconditional stores (slots past count get junk that nothing reads):
    // predicated ones made nvcc recompute the shared window's base per store.
    T* dst_thread = dst + thread;
#pragma unroll
    for (int k = 0; k < Items; ++k) dst_thread[k * Threads] = items[k];
  }

  // 2. The thread's outputs [diagonal, diagonal + Items) of the tile, and
  //    where each came from in keys[] (outputs past count are junk).
  template <typename Key, typename Compare>
  TILESORT_HD static void merge(const Key* keys, const merge_tile_slices& slices, int thread, Key (&out)[Items],
                                int (&source)[Items], Compare comp) {
    const int a_count = slices.a_count();
    const int count = slices.count();
    const int diagonal = thread * Items < count ? thread * Items : count;
    const int split = merge_path<int>(keys, a_count, keys + a_count, count - a_count, diagonal, comp);
    serial_merge(keys, split, a_count, a_count + diagonal - split, count, out, source, comp);
  }

  // 3. Blocked -> padded slots (keys, and the sources when values follow),
  //    every slot: those past count get junk that step 4 never reads, and
  //    unpredicated stores address as one base plus constants.
  template <bool Pairs, typename Key>
  TILESORT_HD static void write_blocked(Key* keys, int* sources, int thread, const Key (&out)[Items],
                                        const int (&source)[Items]) {
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int j = thread * Items + i;
      keys[transpose_slot<Key>(j)] = out[i];
      if constexpr (Pairs) sources[transpose_slot<int>(j)] = source[i];
    }
  }

  // 4. Striped, coalesced stores; each value looked up in the loaded values
  //    of A ++ B by its source index.
  template <bool Full, bool Pairs, typename Key, typename Value>
  TILESORT_HD static void store(const Key* keys, const int* sources, const Value* values,
                                const merge_tile_slices& slices, int thread, Key* keys_dst, Value* values_dst) {
    const int count = slices.count();
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (Full || j < count) {
        keys_dst[slices.out_begin + j] = keys[transpose_slot<Key>(j)];
        if constexpr (Pairs) values_dst[slices.out_begin + j] = values[sources[transpose_slot<int>(j)]];
      }
    }
  }
};

template <bool Full, int Threads, int Items, int TileItems, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_merge_tile(merge_sort_merge_storage<Key, Value, TileItems>& storage,
                                           const merge_tile_slices& slices, const Key* keys_src, Key* keys_dst,
                                           const Value* values_src, Value* values_dst, Compare comp) {
  constexpr bool pairs = merge_sort_has_values<Value>;
  using steps = merge_sort_merge_steps<Threads, Items>;
  const int thread = static_cast<int>(threadIdx.x);
  steps::template load<Full>(storage.keys, slices, keys_src, thread);
  if constexpr (pairs) steps::template load<Full>(storage.values, slices, values_src, thread);
  __syncthreads();
  Key out[Items];
  int source[Items];
  steps::merge(storage.keys, slices, thread, out, source, comp);
  __syncthreads();  // everyone is done reading A ++ B
  steps::template write_blocked<pairs>(storage.keys, storage.sources, thread, out, source);
  __syncthreads();
  steps::template store<Full, pairs>(storage.keys, storage.sources, storage.values, slices, thread, keys_dst,
                                     values_dst);
}

// One block per merge tile of M outputs: runs of `run` in keys_src -> runs of 2·run in keys_dst.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::merge_min_blocks)
    merge_sort_merge_kernel(const Key* keys_src, Key* keys_dst, const Value* values_src, Value* values_dst,
                            const std::int64_t* partitions, std::int64_t n, std::int64_t run, Compare comp) {
  using storage_type = merge_sort_merge_storage<Key, Value, Policy::merge_tile_items>;
  allow_next_kernel();
  wait_for_previous_kernel();  // partitions and keys_src are earlier kernels' output
  auto& storage = *reinterpret_cast<storage_type*>(merge_sort_smem);
  const std::int64_t tile = blockIdx.x;
  const merge_tile_slices slices =
      merge_tile_range(tile, Policy::merge_tile_items, run, n, partitions[tile], partitions[tile + 1]);
  // One code path for full and partial tiles: with a second, unchecked
  // instantiation inlined beside this one, nvcc 13.0 produced wrong merges
  // for full tiles on sm_90 (keys alone; found on the H100, not reproduced on
  // the host, where the same steps are correct).
  merge_sort_merge_tile<false, Policy::merge_threads, Policy::merge_items>(storage, slices, keys_src, keys_dst,
                                                                           values_src, values_dst, comp);
}

// ------------------------------------------------------------------ k-way merge pass
// Cuts of a k-way pass (kway_pass_shape): Ways lanes per sample slot, lane
// m answering for run m. Each lane counts the samples of its run that come
// before the sample (a binary search); when the sum (the sample's rank among
// its group's samples) is a multiple of cut_samples, each lane finds its
// run's split by a search between two samples and writes it.
// One lane (`lane` / Ways is its sample slot, below sample_slots()).
template <int Ways, typename Key, typename Compare>
TILESORT_DEVICE void merge_sort_cut_lane(const Key* keys, const kway_pass_shape& pass, std::int64_t* cuts,
                                         std::int64_t lane, Compare comp) {
  const std::int64_t slot = lane / Ways;
  constexpr unsigned members = Ways == 32 ? 0xffffffffu : (1u << Ways) - 1u;
  const unsigned mask = members << (threadIdx.x % 32 / Ways * Ways);
  const int m = static_cast<int>(threadIdx.x % Ways);
  const std::int64_t group = slot >> (pass.run_samples_shift + log2_floor(Ways));
  const int j = static_cast<int>(slot >> pass.run_samples_shift) % Ways;
  const std::int64_t s = slot & (pass.run_samples() - 1);
  const std::int64_t position = s << pass.stride_shift;
  if (position >= pass.run_length(group, j)) return;  // past n: whole groups of lanes
  const Key x = keys[pass.run_begin(group, j) + position];
  const Key* run = keys + pass.run_begin(group, m);
  const std::int64_t length = pass.run_length(group, m);
  const std::int64_t before = m == j ? s : kway_samples_before(run, length, m, x, j, pass.stride_shift, comp);
  std::int64_t rank = before;
#pragma unroll
  for (int offset = 1; offset < Ways; offset *= 2) rank += __shfl_xor_sync(mask, rank, offset, Ways);
  // rank / cut_samples, in 32 bits where it fits (a 64-bit division costs dozens of instructions)
  const std::int64_t cut = rank < (std::int64_t(1) << 32)
                               ? std::int64_t(static_cast<unsigned>(rank) / static_cast<unsigned>(pass.cut_samples))
                               : rank / pass.cut_samples;
  if (cut * pass.cut_samples != rank) return;  // whole groups of lanes
  const std::int64_t split = m == j ? position : kway_split(run, length, m, x, j, before, pass.stride_shift, comp);
  cuts[(group * pass.cuts_per_group + cut) * Ways + m] = split;
}

// The lanes stride over the grid (a multiple of Ways threads per block), so
// whole groups of lanes run each step: one lane per thread in merge_sort, a
// wave of blocks where the pass may be skipped. `skip_unless_zero`: null, or
// a device counter that must be 0 for the kernel to run (the locality sort's
// count of blocksort tiles that looked local).
template <int Ways, typename Key, typename Compare>
TILESORT_DEVICE void merge_sort_cut_lanes(const Key* keys, const kway_pass_shape& pass, std::int64_t* cuts,
                                          Compare comp) {
  const std::int64_t lanes = pass.sample_slots() * Ways;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t lane = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; lane < lanes; lane += stride)
    merge_sort_cut_lane<Ways>(keys, pass, cuts, lane, comp);
}

template <int Ways, typename Key, typename Compare>
__global__ void merge_sort_cut_kernel(const Key* keys, kway_pass_shape pass, std::int64_t* cuts,
                                      const unsigned* skip_unless_zero, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // keys are the previous kernel's output
  if (skip_unless_zero != nullptr && *skip_unless_zero != 0) return;
  merge_sort_cut_lanes<Ways>(keys, pass, cuts, comp);
}

// A sorted list in the padded shared-memory tile, seen from index `base`.
template <typename Key>
struct padded_list {
  const Key* keys;
  int base;
  TILESORT_HD const Key& operator[](int i) const { return keys[transpose_slot<Key>(base + i)]; }
};

template <typename Key, typename Value, int TileItems>
struct merge_sort_kway_storage {
  static constexpr bool pairs = merge_sort_has_values<Value>;
  Key keys[transpose_slots<Key>(TileItems)];                    // the tile, padded
  int sources[pairs ? transpose_slots<int>(TileItems) : 1];     // where each key was loaded
  Value values[pairs ? TileItems : 1];                          // as loaded
};

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
#pragma unroll
  for (int c = 0; c < static_cast<int>(sizeof(T)); c += chunk)
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared + c), "l"(bytes + c), "n"(chunk) : "memory");
}
TILESORT_DEVICE void wait_for_shared_copies() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// bounds[index] for an index known only at run time (no local-memory array).
template <int Count>
TILESORT_DEVICE int kway_bound(const int (&bounds)[Count], int index) {
  int value = bounds[0];
#pragma unroll
  for (int q = 1; q < Count; ++q)
    if (index == q) value = bounds[q];
  return value;
}

// One tile of a k-way pass (a block's): the K slices between two cuts are
// loaded into shared memory (slice m at [bounds[m], bounds[m + 1])), merged
// pairwise in log2(K) rounds (each thread merging Items outputs of a round
// into registers, then writing them back), and stored coalesced.
template <typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_kway_tile(merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>& storage,
                                          const Key* keys_src, Key* keys_dst, const Value* values_src,
                                          Value* values_dst, const std::int64_t* cuts, const kway_pass_shape& pass,
                                          unsigned tile, Compare comp) {
  constexpr int K = Policy::merge_ways;
  constexpr int Threads = Policy::merge_threads;
  constexpr int Items = Policy::merge_items;
  constexpr bool pairs = merge_sort_has_values<Value>;
  // Padded slots without per-item arithmetic: a thread's blocked run of Items
  // never crosses a pad, and striped items lie a fixed number of slots apart.
  static_assert(transpose_pad_period<Key> % Items == 0 && transpose_pad_period<int> % Items == 0 &&
                    Threads % transpose_pad_period<Key> == 0 && Threads % transpose_pad_period<int> == 0,
                "constant padded offsets");
  constexpr int striped_step = transpose_slot<Key>(Threads);
  constexpr int sources_step = transpose_slot<int>(Threads);
  const auto per_group = static_cast<unsigned>(pass.cuts_per_group);  // a 32-bit division: tiles fit 32 bits
  const std::int64_t group = tile / per_group;
  const std::int64_t cut = tile - group * per_group;
  const std::int64_t last_cut = pass.group_cuts(group) - 1;
  if (cut > last_cut) return;
  const std::int64_t* here = cuts + (group * per_group + cut) * K;
  int bounds[K + 1];
  bounds[0] = 0;
  std::int64_t out_begin = pass.run_begin(group, 0);
  std::int64_t src_offset[K];  // slice m's key j (tile index) is keys_src[src_offset[m] + j]
#pragma unroll
  for (int m = 0; m < K; ++m) {
    const std::int64_t begin = here[m];
    const std::int64_t end = cut < last_cut ? here[K + m] : pass.run_length(group, m);
    src_offset[m] = pass.run_begin(group, m) + begin - bounds[m];
    bounds[m + 1] = bounds[m] + static_cast<int>(end - begin);
    out_begin += begin;
  }
  const int count = bounds[K];
  const int thread = static_cast<int>(threadIdx.x);

  if constexpr (copies_to_shared_async<Key> && (!pairs || copies_to_shared_async<Value>)) {
    // Load slice by slice, straight to shared memory (cp.async): this
    // thread's items k of slice m form one range of k, each copied from one
    // base plus k x Threads. Against the register load below (H100 probe,
    // 2026-11-24, gpu timing, median of 9, two runs, against CUB, 2^20 /
    // 2^22 / 2^24 / 2^26): u32 keys 1.02 / 0.98 / 1.02 / 0.97x -> 1.10 /
    // 1.06 / 1.15 / 1.08x, u64 keys 1.24 / 1.48 / 1.58 / 1.49x -> 1.35-1.39 /
    // 1.53 / 1.62 / 1.55x, u32 pairs 1.02 / 1.41 / 1.39 / 1.38x -> 1.06 / 1.44
    // / 1.42 / 1.41x, u64 pairs even; no staging registers (u32 keys 40 -> 36
    // registers, the spill gone).
    constexpr int thread_shift = log2_floor(Threads);
    const auto first_item_at = [&](int bound) {  // the first k with thread + k x Threads >= bound
      return bound > thread ? (bound - thread + Threads - 1) >> thread_shift : 0;
    };
    Key* keys_striped = storage.keys + transpose_slot<Key>(thread);  // item k at keys_striped[k * striped_step]
    int k = 0;
#pragma unroll
    for (int m = 0; m < K; ++m) {
      const int k_end = first_item_at(bounds[m + 1]);
      const Key* src = keys_src + src_offset[m] + thread;
      const Value* values = pairs ? values_src + src_offset[m] + thread : values_src;
      for (; k < k_end; ++k) {
        copy_to_shared_async(keys_striped + k * striped_step, src + k * Threads);
        if constexpr (pairs) copy_to_shared_async(storage.values + thread + k * Threads, values + k * Threads);
      }
    }
    wait_for_shared_copies();  // the barrier before the first round makes every thread's copies visible
  } else {  // load, striped, through registers (a key or value of a size or alignment not a multiple of 4 bytes)
    Key items[Items];
    Value vitems[pairs ? Items : 1];
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      std::int64_t offset = src_offset[0];
#pragma unroll
      for (int q = 1; q < K; ++q)
        if (j >= bounds[q]) offset = src_offset[q];
      if (j < count) {
        items[k] = keys_src[offset + j];
        if constexpr (pairs) vitems[k] = values_src[offset + j];
      }
    }
    // Item k's slot as one base plus constants, except for keys of 8 bytes
    // or more, where the base took registers the loads needed (u64 keys at
    // 2^24: 40 bytes of spill, 1396-1404 us against 1324-1330).
    Key* keys_striped = storage.keys + transpose_slot<Key>(thread);  // item k at keys_striped[k * striped_step]
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (j < count) {
        if constexpr (sizeof(Key) < 8) {
          keys_striped[k * striped_step] = items[k];
        } else {
          storage.keys[transpose_slot<Key>(j)] = items[k];
        }
        if constexpr (pairs) storage.values[j] = vitems[k];
      }
    }
  }

  const int first = thread * Items;
#pragma unroll
  for (int width = 1; width < K; width *= 2) {
    __syncthreads();  // the tile (or the previous round) is in shared memory
    // A later round in which no pair has two non-empty lists leaves the tile
    // as it is: the last pass when a group has fewer than K runs (K = 4 with
    // an odd log2 of the run count: every power-of-two n with T = 8192).
    // The first round always runs: it writes the sources that pairs store by.
    if (width > 1) {
      bool idle = true;
#pragma unroll
      for (int q = 0; q < K / (2 * width); ++q) {
        const int mid = bounds[2 * width * q + width];
        if (bounds[2 * width * q] < mid && mid < bounds[2 * width * q + 2 * width]) idle = false;
      }
      if (idle) continue;  // block-uniform: the bounds are the tile's
    }
    Key out[Items];
    int source[Items];
    if (first < count) {
      // The pair of lists that holds output `first`: lists [bounds[2wi], bounds[2wi + w]) and
      // [bounds[2wi + w], bounds[2wi + 2w]).
      int pair = 0;
#pragma unroll
      for (int q = 1; q < K / (2 * width); ++q)
        if (first >= bounds[2 * width * q]) pair = q;
      int a = kway_bound(bounds, 2 * width * pair);
      int a_end = kway_bound(bounds, 2 * width * pair + width);
      int b_end = kway_bound(bounds, 2 * width * pair + 2 * width);
      const int diagonal = first - a;
      const int split = merge_path<int>(padded_list<Key>{storage.keys, a}, a_end - a,
                                        padded_list<Key>{storage.keys, a_end}, b_end - a_end, diagonal, comp);
      int b = a_end + diagonal - split;
      a += split;
      // As serial_merge (thread/thread_sort.cuh): branch-free, one read per
      // output at an index clamped into the tile; a thread whose outputs
      // cross into the next pair of lists moves on to it.
      const int last = count - 1;
      const auto read = [&](int i) { return storage.keys[transpose_slot<Key>(i < last ? i : last)]; };
      Key a_key = read(a);
      Key b_key = read(b);
#pragma unroll
      for (int k = 0; k < Items; ++k) {
        while (a >= a_end && b >= b_end && pair + 1 < K / (2 * width)) {  // this pair is done
          ++pair;
          a = b_end;
          a_end = kway_bound(bounds, 2 * width * pair + width);
          b = a_end;
          b_end = kway_bound(bounds, 2 * width * pair + 2 * width);
          a_key = read(a);
          b_key = read(b);
        }
        const bool take_b = b < b_end && (a >= a_end || comp(b_key, a_key));
        out[k] = take_b ? b_key : a_key;
        if constexpr (pairs) {
          const int from = take_b ? b : a;
          source[k] = width == 1 ? from : storage.sources[transpose_slot<int>(from < last ? from : last)];
        }
        b += take_b ? 1 : 0;
        a += take_b ? 0 : 1;
        const Key next = read(take_b ? b : a);
        b_key = take_b ? next : b_key;
        a_key = take_b ? a_key : next;
      }
    }
    __syncthreads();  // every thread has read this round's lists
    Key* keys_blocked = storage.keys + transpose_slot<Key>(first);  // output first + k at keys_blocked[k]
    int* sources_blocked = storage.sources + (pairs ? transpose_slot<int>(first) : 0);
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      if (first + k < count) {
        keys_blocked[k] = out[k];
        if constexpr (pairs) sources_blocked[k] = source[k];
      }
    }
  }
  __syncthreads();
  const Key* keys_striped = storage.keys + transpose_slot<Key>(thread);
  const int* sources_striped = storage.sources + (pairs ? transpose_slot<int>(thread) : 0);
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int j = thread + k * Threads;
    if (j < count) {
      keys_dst[out_begin + j] = keys_striped[k * striped_step];
      if constexpr (pairs) values_dst[out_begin + j] = storage.values[sources_striped[k * sources_step]];
    }
  }
}

// The tiles of a k-way pass taken in turn by a grid of resident blocks: tile
// blockIdx.x first, then the grid's next from *tiles_taken (zeroed), fetched
// while the block merges.
template <typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_kway_tiles(merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>& storage,
                                           const Key* keys_src, Key* keys_dst, const Value* values_src,
                                           Value* values_dst, const std::int64_t* cuts, const kway_pass_shape& pass,
                                           unsigned* tiles_taken, Compare comp) {
  __shared__ unsigned next_tile;
  const auto tiles = static_cast<unsigned>(pass.tiles());
  unsigned tile = blockIdx.x;
  while (tile < tiles) {
    unsigned following = 0;
    if (threadIdx.x == 0) following = atomicAdd(tiles_taken, 1u) + gridDim.x;  // in flight during the merge
    merge_sort_kway_tile<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, tile, comp);
    __syncthreads();  // every thread is done with shared memory and with next_tile
    if (threadIdx.x == 0) next_tile = following;
    __syncthreads();
    tile = next_tile;
  }
}

// A k-way pass's merge kernel: one block per tile, or (`Persistent`, for a
// pass that may be skipped: `skip_unless_zero` as merge_sort_cut_kernel's)
// about the resident blocks, each taking tile after tile from a counter
// (`tiles_taken`, zeroed; the first tile of a block is its own index), the
// next one fetched while the current one merges. A skipped pass then costs
// a launch of a wave instead of a block per tile: H100 probe, 6 skipped
// 4-way passes over 2^24 keys took 44-50 us on resident grids against 68
// with a block per tile (7 passes over 2^26: 54 against 264). Merging, the
// persistent kernel is slower than one block per tile (2^24 u32 keys 597 us
// against 569, u32 pairs 908-912 against 841-843; 2^26 keys 2533 against
// 2485), so merge_sort keeps the latter. Tried on resident grids: each block
// taking every grid-th tile, 662-670 us (uneven tiles); taking from the
// counter without fetching ahead, 611-624 us.
template <typename Policy, bool Persistent, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::merge_min_blocks)
    merge_sort_kway_kernel(const Key* keys_src, Key* keys_dst, const Value* values_src, Value* values_dst,
                           const std::int64_t* cuts, kway_pass_shape pass, const unsigned* skip_unless_zero,
                           unsigned* tiles_taken, Compare comp) {
  using storage_type = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  allow_next_kernel();
  wait_for_previous_kernel();  // cuts and keys_src are earlier kernels' output
  if (skip_unless_zero != nullptr && *skip_unless_zero != 0) return;
  auto& storage = *reinterpret_cast<storage_type*>(merge_sort_smem);
  if constexpr (Persistent) {
    merge_sort_kway_tiles<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, tiles_taken, comp);
  } else {
    merge_sort_kway_tile<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, blockIdx.x, comp);
  }
}

// ------------------------------------------------------------------ host side
inline constexpr int merge_sort_partition_threads = 256;

// cudaFuncSetAttribute, legal while the caller captures a graph.
template <typename Kernel>
cudaError_t set_kernel_attribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  return in_relaxed_capture_mode([&] { return cudaFuncSetAttribute(kernel, attribute, value); });
}

// Kernels with more than 48 KB of dynamic shared memory must say so first.
// (The early-exit merge sort and the segmented row sorters use it too.)
template <typename Kernel>
cudaError_t merge_sort_allow_smem(Kernel* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return set_kernel_attribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

// The k-way merge kernel's shared memory, allowed once before its launches.
template <typename Policy, bool Persistent, typename Key, typename Value, typename Compare>
cudaError_t merge_sort_allow_kway_smem() {
  using storage = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
  return merge_sort_allow_smem(merge_sort_kway_kernel<Policy, Persistent, Key, Value, Compare>, sizeof(storage));
}

// The grids of a pass that may be skipped: at most these many blocks of the
// cut kernel and of the persistent merge kernel (about a wave of each).
struct kway_pass_grids {
  std::int64_t cut_blocks = 0;
  std::int64_t merge_blocks = 0;
};

// One k-way pass: its cut kernel, then its merge kernel (dependent launches
// when `dependent`), both skipped on the device unless *skip_unless_zero is 0
// (null: never skipped). `cuts` holds K entries per tile of the pass. The
// persistent merge kernel takes tiles from *tiles_taken (zeroed); its grid
// and the cut kernel's are capped by `most` (otherwise one block per tile
// and per 256 cut lanes).
template <typename Policy, bool Persistent, typename Key, typename Value, typename Compare>
cudaError_t launch_kway_pass(const kway_pass_shape& shape, const Key* keys_src, Key* keys_dst, const Value* values_src,
                             Value* values_dst, std::int64_t* cuts, const unsigned* skip_unless_zero, bool dependent,
                             Compare comp, cudaStream_t stream, unsigned* tiles_taken = nullptr,
                             const kway_pass_grids& most = {}) {
  using storage = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  static_assert(merge_sort_partition_threads % Policy::merge_ways == 0, "whole groups of cut lanes per block");
  const auto capped = [](std::int64_t blocks, std::int64_t cap) { return cap > 0 && cap < blocks ? cap : blocks; };
  const std::int64_t cut_blocks =
      capped(ceil_div(shape.sample_slots() * Policy::merge_ways, merge_sort_partition_threads), most.cut_blocks);
  TILESORT_RETURN_IF_ERROR(launch_kernel(merge_sort_cut_kernel<Policy::merge_ways, Key, Compare>,
                                         static_cast<unsigned>(cut_blocks), merge_sort_partition_threads, 0, stream,
                                         dependent, keys_src, shape, cuts, skip_unless_zero, comp));
  const std::int64_t grid = Persistent ? capped(shape.tiles(), most.merge_blocks) : shape.tiles();
  return launch_kernel(merge_sort_kway_kernel<Policy, Persistent, Key, Value, Compare>, static_cast<unsigned>(grid),
                       Policy::merge_threads, sizeof(storage), stream, dependent, keys_src, keys_dst, values_src,
                       values_dst, cuts, shape, skip_unless_zero, tiles_taken, comp);
}

template <typename Key, typename Value, typename Policy = merge_sort_policy_for<Key, Value>>
struct merge_sort_setup {
  using policy = Policy;
  static constexpr bool kway = Policy::merge_ways > 2;
  using plan_type = std::conditional_t<kway, kway_merge_sort_plan, merge_sort_plan>;
  static constexpr plan_type make_plan(std::int64_t n) {
    if constexpr (kway) {
      return make_kway_merge_sort_plan(n, policy::tile_items, policy::merge_ways, policy::cut_stride,
                                       policy::cut_samples);
    } else {
      return make_merge_sort_plan(n, policy::tile_items, policy::merge_tile_items);
    }
  }
  plan_type plan;
  merge_sort_temp_layout layout;
  explicit merge_sort_setup(std::int64_t n)
      : plan(make_plan(n)),
        layout(make_merge_sort_temp_layout(plan, sizeof(Key), merge_sort_has_values<Value> ? sizeof(Value) : 0)) {}
};

// Launch everything. Arguments are checked; `temp` holds layout.total_bytes.
template <typename Key, typename Value, typename Policy, typename Compare>
cudaError_t merge_sort_launch(const merge_sort_setup<Key, Value, Policy>& setup, void* temp, const Key* keys_in,
                              Key* keys_out, const Value* values_in, Value* values_out, Compare comp,
                              cudaStream_t stream) {
  using policy = Policy;
  constexpr bool pairs = merge_sort_has_values<Value>;
  const auto& plan = setup.plan;
  const std::int64_t n = plan.n;
  if (n == 0) return cudaSuccess;
  if (n == 1) {
    if (keys_out != keys_in)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (pairs) {
      if (values_out != values_in)
        TILESORT_RETURN_IF_ERROR(
            cudaMemcpyAsync(values_out, values_in, sizeof(Value), cudaMemcpyDeviceToDevice, stream));
    }
    return cudaSuccess;
  }
  // Grid sizes are 32-bit (n up to 2^41 keys with the policies above).
  if (plan.tiles > INT_MAX) return cudaErrorInvalidValue;
  if constexpr (merge_sort_setup<Key, Value, Policy>::kway) {
    for (int pass = 0; pass < plan.merge_passes; ++pass) {
      const kway_pass_shape shape = plan.pass_shape(pass);
      if (shape.tiles() > INT_MAX ||
          ceil_div(shape.sample_slots() * policy::merge_ways, merge_sort_partition_threads) > INT_MAX)
        return cudaErrorInvalidValue;
    }
  } else {
    if (plan.merge_tiles > INT_MAX ||
        ceil_div(plan.partition_count() * policy::partition_ways, merge_sort_partition_threads) > INT_MAX)
      return cudaErrorInvalidValue;
  }

  // No merge pass (one tile): the layout has no bytes, all buffers are null
  // (temp may be null then).
  const auto buffers = carve_merge_sort_temp<Key, Value>(temp, setup.layout);
  // Step k writes keys_out when plan.writes_output(k), else the temp buffers.
  auto keys_of = [&](int step) { return plan.writes_output(step) ? keys_out : buffers.keys; };
  auto values_of = [&](int step) { return plan.writes_output(step) ? values_out : buffers.values; };

  const auto blocksort = [&](auto shape) {
    using shape_policy = decltype(shape);
    using storage = typename merge_sort_blocksort_parts<Key, Value, shape_policy::block_threads,
                                                        shape_policy::block_items>::storage;
    static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
    auto* kernel = merge_sort_blocksort_kernel<shape_policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(kernel, sizeof(storage)));
    kernel<<<static_cast<unsigned>(ceil_div(n, shape_policy::tile_items)), shape_policy::block_threads, sizeof(storage),
             stream>>>(keys_in, keys_of(0), values_in, values_of(0), n, comp);
    return cudaGetLastError();
  };
  using small_policy = merge_sort_small_policy<policy>;
  if (n <= small_policy::tile_items) return blocksort(small_policy{});
  TILESORT_RETURN_IF_ERROR(blocksort(policy{}));

  // Every kernel after the blocksort starts as a dependent of the one before
  // (detail/dependent_launch.cuh): each pass boundary loses no launch gap.
  bool dependent = false;
  if (plan.merge_passes > 0) TILESORT_RETURN_IF_ERROR(dependent_launch_supported(dependent));
  if constexpr (merge_sort_setup<Key, Value, Policy>::kway) {
    if (plan.merge_passes > 0)
      TILESORT_RETURN_IF_ERROR((merge_sort_allow_kway_smem<policy, false, Key, Value, Compare>()));
    for (int pass = 0; pass < plan.merge_passes; ++pass)
      TILESORT_RETURN_IF_ERROR((launch_kway_pass<policy, false>(plan.pass_shape(pass), keys_of(pass),
                                                                keys_of(pass + 1), values_of(pass),
                                                                values_of(pass + 1), buffers.partitions, nullptr,
                                                                dependent, comp, stream)));
  } else {
    using storage = merge_sort_merge_storage<Key, Value, policy::merge_tile_items>;
    static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
    auto* merge_kernel = merge_sort_merge_kernel<policy, Key, Value, Compare>;
    if (plan.merge_passes > 0) TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(merge_kernel, sizeof(storage)));
    const std::int64_t partitions = plan.partition_count();
    constexpr int ways = policy::partition_ways;
    const auto partition_blocks = static_cast<unsigned>(ceil_div(partitions * ways, merge_sort_partition_threads));
    for (int pass = 0; pass < plan.merge_passes; ++pass) {
      const Key* keys_src = keys_of(pass);
      const std::int64_t run = plan.run_length(pass);
      TILESORT_RETURN_IF_ERROR(launch_kernel(merge_sort_partition_kernel<ways, Key, Compare>, partition_blocks,
                                             merge_sort_partition_threads, 0, stream, dependent, keys_src, n, run,
                                             policy::merge_tile_items, partitions, buffers.partitions, comp));
      TILESORT_RETURN_IF_ERROR(launch_kernel(merge_kernel, static_cast<unsigned>(plan.merge_tiles),
                                             policy::merge_threads, sizeof(storage), stream, dependent, keys_src,
                                             keys_of(pass + 1), values_of(pass), values_of(pass + 1),
                                             buffers.partitions, n, run, comp));
    }
  }
  return cudaSuccess;
}

// Two-phase entry: size query, argument checks, launch.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_two_phase(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                 const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                                 cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  const merge_sort_setup<Key, Value> setup(n);
  if (d_temp == nullptr) {
    temp_bytes = setup.layout.total_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, merge_sort_has_values<Value>, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, setup.layout.total_bytes));
  return merge_sort_launch(setup, d_temp, keys_in, keys_out, values_in, values_out, comp, stream);
}

// Convenience entry: stream-ordered temp storage, allocated only when a merge
// pass needs it, freed on the same stream whatever happens after the allocation.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_allocating(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                  std::int64_t n, Compare comp, cudaStream_t stream) {
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, merge_sort_has_values<Value>, n));
  const merge_sort_setup<Key, Value> setup(n);
  if (setup.plan.merge_passes == 0)
    return merge_sort_launch(setup, nullptr, keys_in, keys_out, values_in, values_out, comp, stream);
  void* temp = nullptr;
  if (cudaMallocAsync(&temp, setup.layout.total_bytes, stream) != cudaSuccess) {
    (void)cudaGetLastError();  // our failure, not a sticky error: do not leave it for the caller's next check
    return cudaErrorMemoryAllocation;
  }
  const cudaError_t sort_error = merge_sort_launch(setup, temp, keys_in, keys_out, values_in, values_out, comp, stream);
  const cudaError_t free_error = cudaFreeAsync(temp, stream);
  return sort_error != cudaSuccess ? sort_error : free_error;
}

}  // namespace detail

// ------------------------------------------------------------------ public API
// Times merge_sort_keys/pairs reads and writes every key in DRAM for n keys
// (blocksort + merge passes; 1 for n == 1, 0 for n == 0). The benchmark
// reports bytes moved per key as 2 x passes x (sizeof(Key) + sizeof(Value)).
template <typename Key, typename Value = void>
constexpr int merge_sort_passes(std::int64_t n) {
  using payload = std::conditional_t<std::is_void_v<Value>, detail::no_value, Value>;
  return detail::merge_sort_passes(detail::merge_sort_setup<Key, payload>::make_plan(n));
}

// Stable sort of n keys: keys_out[0, n) = keys_in[0, n) ordered by comp.
// Call with d_temp == nullptr to get temp_bytes (nothing else happens).
//
//   std::size_t bytes = 0;
//   tilesort::merge_sort_keys(nullptr, bytes, d_in, d_out, n);
//   void* d_temp; cudaMalloc(&d_temp, bytes);
//   tilesort::merge_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::greater{}, stream);
template <typename Key, typename Compare = less>
cudaError_t merge_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n,
                            Compare comp = {}, cudaStream_t stream = 0) {
  return detail::merge_sort_two_phase<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n,
                                                             comp, stream);
}

// Stable sort of n (key, value) pairs by key; values travel with their keys.
//
//   tilesort::merge_sort_pairs(nullptr, bytes, d_keys, d_keys, d_vals, d_vals, n);   // size query
//   tilesort::merge_sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n);    // in place
template <typename Key, typename Value, typename Compare = less>
cudaError_t merge_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                             const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                             cudaStream_t stream = 0) {
  return detail::merge_sort_two_phase(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
}

// Same, with stream-ordered temp storage (cudaMallocAsync/cudaFreeAsync on
// `stream`, only when a merge pass needs it); graph-capturable. A failed
// allocation returns cudaErrorMemoryAllocation with nothing written.
//
//   tilesort::merge_sort_keys(d_keys, d_keys, n, tilesort::less{}, stream);
template <typename Key, typename Compare = less>
cudaError_t merge_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                            cudaStream_t stream = 0) {
  return detail::merge_sort_allocating<Key, detail::no_value>(keys_in, keys_out, nullptr, nullptr, n, comp, stream);
}

template <typename Key, typename Value, typename Compare = less>
cudaError_t merge_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                             std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::merge_sort_allocating(keys_in, keys_out, values_in, values_out, n, comp, stream);
}

}  // namespace tilesort
