// device/early_exit_policy.cuh — POLICYHEADER
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../detail/config.cuh"
#include "../detail/merge_jobs.cuh"
#include "../detail/merge_sort_plan.cuh"
#include "../thread/thread_sort.cuh"
#include "merge_sort_policy.cuh"  // merge_sort_policy: the same tiles as the merge sort

namespace tilesort {

// Tuning of the early-exit merge sort. Merge tiles, threads and items per
// thread are merge_sort's; the blocksort is 512 x merge_sort's items per
// thread, which is merge_sort's shape except for items of exactly 8 bytes
// (merge_sort's 256 x 16 was measured for its 4-way passes; the windows and
// the pairwise passes here were measured with T = 8192). What is added: the
// job phase's search groups, the window half widths (ascending, the last
// at most M / 2 so that a window fits one merge tile) and the share of
// sampled in-order pairs above which a blocksort tile counts as local. The
// window widths and the local share were chosen by reasoning for sm_90; the
// merge shape was measured on an H100 when jobs and merges were separate
// kernels per pass (2026-11-24, 2^24 u32 keys, random / nearly sorted,
// median of 9): 4 blocks per SM 1052-1062 / 205-210
// us; 6 blocks (84 bytes of spill) 1199 / 218; 5 blocks 1101 / 216; 16-lane
// job searches 1073 / 210; twice the resident grid 1036 / 215; one block per
// merge tile 1054 / 255. Resolved jobs (the merge kernel reads one record,
// no segment, location or run arithmetic): 1027-1040 / 203-208 us, 5 blocks
// then 1087-1095 / 211. Prefetching into L1 every key the job kernel's plan
// and first search round read: no change (job kernel 14.0 -> 14.4 us under
// ncu), not kept.
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct early_exit_merge_policy {
  using base = merge_sort_policy<KeyBytes, ValueBytes>;
  static constexpr int block_threads = 512;
  static constexpr int block_items = base::block_items;
  // One blocksort block per SM (up to 128 registers). Tried 2 (64 registers;
  // H100 bench, lat, 2026-11-24, two alternating runs each, locality u32
  // keys, GKeys/s, 1 -> 2): sorted 2^22 / 2^24 135-136 / 173 -> 111-112 /
  // 157, nearly sorted 54.3-56.0 / 77.5-77.8 -> 53.7-53.9 / 80.7-81.1,
  // random 2^24 19.9 -> 20.4-20.5; u32 pairs nearly sorted 2^24 46.4-46.6
  // -> 54.7, random 12.4-12.8 -> 13.5-13.6, sorted 128-130 -> 113-114. Not
  // kept: sorted input, the case this sort is for, got slower.
  static constexpr int block_min_blocks = 1;
  static constexpr int tile_items = block_threads * block_items;  // T
  // The same tile as 1024 x half the items (early_exit_wide_blocksort, 63 /
  // 64 registers for u32 keys / pairs against 115 / 128, no spill), for
  // 4-byte keys with at most 4-byte values, except where merge_sort's k-way
  // passes may follow (a locality sort from dense_kway_min_keys on). H100
  // bench, lat, 2026-11-25, two alternating runs, locality with 512 x 16 ->
  // 1024 x 8 at every size, GKeys/s: u32 nearly sorted 2^21 / 2^22 / 2^23 /
  // 2^24 / 2^26 42-43 / 56-57 / 71-73 / 77-78 / 97 -> 44-49 / 62-64 / 78 /
  // 83 / 100-101 (2^22: 2.62-2.72x CUB -> 3.03-3.09x), u32 pairs 2^22 32 ->
  // 34-36; sorted within 2% either way; random 2^21 / 2^22 0.98 / 0.95x our
  // merge sort -> 1.04 / 0.96x, but 2^24 / 2^26 0.91 / 0.94x -> 0.90 /
  // 0.92x (the blocksort of random tiles before the k-way passes), so from
  // 2^24 on the locality sort keeps 512 x 16. Long segments of the
  // segmented sort (Pareto, one segment, mean 10000): within 1%.
  static constexpr bool wide_blocksort = KeyBytes == 4 && ValueBytes <= 4;
  static constexpr int merge_threads = base::merge_threads;
  static constexpr int merge_items = base::merge_items;
  static constexpr int merge_tile_items = base::merge_tile_items;  // M
  // Lanes per merge-path search in the job phase (merge_path_kway): a pass's
  // searches wait for DRAM about log2(run) / log2(ways) times instead of
  // log2(run), each wait being two dependent loads (the tile's buffer, then
  // its key). merge_sort's partition kernel measured 8 best. A block's
  // threads form job_groups groups, which decide job_groups - 1 tiles.
  static constexpr int job_ways = base::partition_ways;
  static constexpr int job_groups = merge_threads / job_ways;
  // Blocks per SM the register budget of the passes kernel must allow, which
  // is also its grid per SM (a cooperative launch: all resident): 3, 80
  // registers at 256 threads. H100, locality_sort_keys of 2^24 u32 keys,
  // random, median of 9 (2026-11-24): 1139-1145 us at 3, 1188-1193 at 4
  // (64 registers, spilling around the merge loop). When jobs and merges
  // were separate kernels per pass, u32 keys ran best at 4 (1027-1032 us;
  // 2679-2749 against 2853-2866 for u32 pairs at 3 and 4), but sorted input
  // paid 2 launches per pass (103-126 us against 63-67 now; 2^20 nearly
  // sorted 82 us against 28-31).
  static constexpr int merge_min_blocks = 3;
  // Blocks per SM of the dense passes kernel (random input: merge_sort's
  // passes in one cooperative launch). H100, locality 2^24 random, in place,
  // median of 9: u32 keys 924-927 us at 4, 932-940 at 5 (12 bytes of
  // spill), 1000 at 6 (72 bytes, in the merge loop); merge_sort 864. u32
  // pairs 1672 us at 3, 1820 at 4 (40 bytes of spill); merge_sort 1731-1743.
  // Tried (H100, 2026-11-24, locality against merge_sort out of place,
  // random keys, gpu timing, median of 9, 2^24): these passes as
  // merge_sort's 4-way passes in this one launch (cut lanes spread over the
  // grid, a barrier, the k-way tiles taken in turn, a barrier): u32 keys
  // 0.82x (these pairwise passes 0.94x in the same run), u64 keys 0.69x
  // (0.78x), u32 pairs 0.61x (0.73x); at 2 blocks per SM (no spill) 0.63x,
  // 0.79x and 0.75x. Not kept. The k-way shape held in registers across the
  // merge made u64 keys spill (184 bytes at 80 registers, 16 for
  // merge_sort_kway_kernel at 64). From 2^24 keys on these passes are not
  // used: see dense_kway_min_keys.
  static constexpr int dense_min_blocks = ValueBytes > 0 ? 3 : 4;
  // Below this many keys the passes kernel runs the dense passes itself (at
  // its 3 blocks per SM), saving the dense kernel's launch, which every
  // locality sort pays otherwise (quick bench, 2^20 u32 nearly sorted: 27.6
  // us before the dense kernel, 32.7 with it). H100, in-place probe, median
  // of 9, two runs, own kernel against passes kernel, u32 random / nearly
  // sorted, us: 2^20 79-81 / 32-33 against 77-78 / 30-32; 2^21 132-133 /
  // 46 against 145-147 / 42-43; 2^22 223 / 72 against 230-237 / 67-71;
  // 2^23 466 / 115 against 530-532 / 114-115. Raised to 2^23 (H100 bench,
  // lat, 2026-11-24, two alternating runs against 2^21, u32 keys, GKeys/s):
  // 2^22 sorted 149-153 against 134-135, nearly sorted 58.2-60.3 against
  // 56.4-57.3, but random 0.90x our merge sort against 0.95x, and 2^21
  // random 0.86-0.88x against 0.97x (u32 pairs 0.81x against 0.86-0.87x).
  // Kept at 2^21 then. (The same runs show random keys at 2^23, below
  // dense_kway_min_keys, at 0.82-0.83x our merge sort: its pairwise passes
  // take 10 passes where merge_sort's 4-way ones take 5.) With the 1024 x 8
  // blocksort (wide_blocksort) random keys had room: 2^23 for keys alone
  // (H100 bench, lat, 2026-11-25, three alternating runs, 2^21 -> 2^23,
  // GKeys/s): u32 nearly sorted 2^21 / 2^22 2.74-2.85 / 2.96-3.01x CUB ->
  // 2.98-3.06 / 3.04-3.17x, sorted 78-91 / 130-138 -> 101-119 / 134-151,
  // random 1.04 / 0.96-0.97x our merge sort -> 0.93-0.94 / 0.91-0.92x; u32
  // pairs random 0.90-0.91 / 0.79 -> 0.83-0.84 / 0.70-0.71x (nearly sorted
  // 2.59-2.61 / 3.65-3.72x -> 2.71-2.76 / 3.75-3.81x), so pairs keep 2^21.
  static constexpr std::int64_t dense_kernel_min_keys = std::int64_t(1) << (ValueBytes > 0 ? 21 : 23);
  // From this many keys on, random keys in a locality sort run merge_sort's
  // own k-way kernels (items of 4 bytes and more), launched after the passes
  // kernel and returning at once unless no blocksort tile looked local: 2
  // launches per k-way pass that sorted and nearly sorted input pay too, on
  // grids of about a wave (persistent merge kernels, cut kernels striding
  // over their lanes). H100 bench, lat, 2026-11-24, u32 keys 2^24 / 2^26 /
  // 2^28, GKeys/s, with the pairwise dense passes -> these: random 18.2 /
  // 17.2 / 15.5 -> 19.9 / 19.7 / 18.3 (our merge sort 21.9 / 21.0 / 19.2,
  // 0.83 -> 0.91-0.95x), u32 pairs 0.69 / 0.67 / 0.67 -> 0.88 / 0.92 /
  // 0.93x; sorted 218 / 256 / 283 -> 176 / 239 / 261, nearly sorted 86.7 /
  // 102 / 106 -> 79.1 / 97.6 / 103. A first version with a block per tile
  // and per 256 cut lanes ran random keys at 0.96-0.97x, but sorted keys
  // fell to 120 / 129 / 126 (nearly sorted 65.3 / 72.9 / 71.5): a skipped
  // kernel still launched its thousands of blocks, each waiting for the
  // kernel before it. With the merge kernels persistent but the cut kernels
  // still a block per 256 lanes, sorted reached 175 / 214 / 225 (16384
  // skipped cut blocks a pass at 2^28). Reading the skip counter before the
  // wait, so that all blocks but one return at once, did not help: the cost
  // is launching the blocks (6 skipped passes at 2^24 took 70 us either way).
  // Also tried (H100 bench, lat, 2026-11-25, two runs against these
  // kernels): all the k-way passes in one cooperative launch of resident
  // blocks (per pass the cut lanes, a grid barrier, the tiles from a
  // counter, a grid barrier; the pass shapes a __grid_constant__ parameter;
  // one block per SM fewer than merge_sort's, which left no spill), so that
  // sorted input skips one launch instead of two a pass: u32 keys sorted
  // 2^24 / 2^26 193 / 279 -> 231-236 / 302-305, nearly sorted 80 / 100 ->
  // 87 / 102-104, u32 pairs sorted 129-133 / 169 -> 146-152 / 173-178, but
  // random keys 20.0 / 19.9 -> 19.1 / 19.0 (0.87x our merge sort at 2^24:
  // the 2 grid barriers a pass cost what the launches did not) and pairs
  // 13.0 / 12.9 -> 12.3 / 12.2. With merge_sort's blocks per SM it spilled
  // (random 2^24 18.5). From dense_kernel_min_keys on instead of 2^24: u32
  // pairs random 2^22 / 2^23 10.4 / 9.85 -> 11.5 / 12.5 (0.88 / 0.91x our
  // merge sort), u32 keys 2^23 18.1 -> 18.9, but nearly sorted pairs 2^21-
  // 2^23 7-14% slower and u32 keys 2^23 8% (the 512 x 16 blocksort). So
  // from 2^24 on these kernels stay (random keys would miss their target),
  // and from dense_kernel_min_keys up to 2^24, where the pairwise dense
  // kernel's launch was paid anyway, the one launch replaces it with the
  // 1024 x 8 blocksort kept (dense_passes::kway_kernel). H100 bench, lat,
  // 2026-11-25, three alternating runs against the pairwise dense kernel,
  // GKeys/s: u32 pairs random 2^21 / 2^22 / 2^23 10.3-10.4 / 10.3-10.4 /
  // 9.9 -> 11.3-11.4 / 11.6 / 12.2-12.3 (0.99 / 0.89 / 0.89x our merge sort;
  // 0.91x in the run before), u32 keys random 2^23 18.0-18.1 -> 18.8; nearly
  // sorted within 1%, sorted pairs 2-3% slower (with the passes kernel's
  // carveout; 4-7% without it).
  static constexpr std::int64_t dense_kway_min_keys = std::int64_t(1) << 24;
  // Blocks per SM of the one-launch k-way dense passes (dense_kernel_min_keys
  // up to dense_kway_min_keys, items of 4 bytes and more): one fewer than
  // merge_sort's k-way kernels, which leaves the pass loop no spill.
  static constexpr int dense_kway_min_blocks = base::merge_min_blocks - 1;
  // The passes kernel asks for the largest shared-memory carveout (less L1):
  // for pairs of 8 bytes only. H100, locality 2^24 random: u32 pairs 2487-
  // 2490 us against 2668-2671 without; u32 keys 1173-1178 against 1034-1039
  // (worse), so keys leave the choice to the driver.
  static constexpr bool merge_prefers_shared = ValueBytes > 0 && KeyBytes + ValueBytes <= 8;
  // Window half widths as fractions of M: 64, 256, 1024, 2048 keys for M = 4096.
  static constexpr int window_divisors[4] = {64, 16, 4, 2};
  // A blocksort tile is local when >= 15/16 of its sampled pairs (keys 16
  // threads apart, i.e. 16 x block_items positions) are in order: nearly
  // sorted input (displacement below that distance) gives 100%, random 50%.
  static constexpr int local_num = 15;
  static constexpr int local_den = 16;
  // ... out of 16 samples at least (a full tile has 256): a shorter tile never counts as local.
  static constexpr int local_min_samples = 16;
  static_assert(merge_tile_items / window_divisors[3] * 2 <= merge_tile_items, "a window must fit one merge tile");
  static_assert(merge_threads % 32 == 0 && 32 % job_ways == 0, "search groups tile whole warps");
};

namespace detail {

// The early-exit blocksort's wide shape (early_exit_merge_policy::wide_blocksort).
template <typename Policy>
struct early_exit_wide_blocksort : Policy {
  static constexpr int block_threads = 2 * Policy::block_threads;
  static constexpr int block_items = Policy::block_items / 2;
  static_assert(block_threads * block_items == Policy::tile_items, "the same tile");
};

extern __shared__ __align__(16) unsigned char early_exit_smem[];

template <typename Value>
inline constexpr bool early_exit_has_values = !std::is_same_v<Value, no_value>;

template <typename Key, typename Value>
using early_exit_policy_for = early_exit_merge_policy<sizeof(Key), early_exit_has_values<Value> ? sizeof(Value) : 0>;

template <typename Policy>
using early_exit_tiling = merge_tiling<Policy::tile_items, Policy::merge_tile_items>;

// Where the dense passes (random keys in a locality sort) run: nowhere
// (segmented sort), in the passes kernel, in a pairwise kernel of their own
// after it, as merge_sort's k-way passes in one cooperative kernel, or as
// merge_sort's k-way kernels.
enum class dense_passes : int { none, in_passes_kernel, own_kernel, kway_kernel, kway_kernels };

template <typename Policy>
TILESORT_HD constexpr dense_passes early_exit_dense_choice(bool one_segment, std::int64_t n) {
  if (!one_segment) return dense_passes::none;
  if (n < Policy::dense_kernel_min_keys) return dense_passes::in_passes_kernel;
  if (Policy::base::merge_ways == 2) return dense_passes::own_kernel;
  return n < Policy::dense_kway_min_keys ? dense_passes::kway_kernel : dense_passes::kway_kernels;
}

// Whether the dense passes are merge_sort's k-way passes (either form).
TILESORT_HD constexpr bool takes_kway_passes(dense_passes dense) {
  return dense == dense_passes::kway_kernel || dense == dense_passes::kway_kernels;
}

// Whether random keys in a locality sort of n keys take merge_sort's k-way
// passes, and their passes from this policy's tiles.
template <typename Policy>
TILESORT_HD constexpr bool early_exit_dense_kway(std::int64_t n) {
  return takes_kway_passes(early_exit_dense_choice<Policy>(true, n));
}
template <typename Policy>
TILESORT_HD constexpr kway_merge_sort_plan early_exit_dense_plan(std::int64_t n) {
  using base = typename Policy::base;
  return make_kway_merge_sort_plan(n, Policy::tile_items, base::merge_ways, base::cut_stride, base::cut_samples);
}

}  // namespace detail
}  // namespace tilesort
