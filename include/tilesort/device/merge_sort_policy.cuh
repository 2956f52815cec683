// device/merge_sort_policy.cuh — POLICYHEADER
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../detail/config.cuh"
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

}  // namespace detail
}  // namespace tilesort
