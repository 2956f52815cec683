// device/early_exit_merge.cuh — the merge sort with early exit that locality
// sort runs on the whole array and segmented sort runs on its long segments
// (each sorted on its own, tiles aligned to its first key). The decisions are
// detail/merge_jobs.cuh (host-tested); this file holds the kernels and their
// launch sequence.
//
// Launches (P = merge passes, bounded on the host by the longest possible
// segment; passes a segment does not need cost it nothing):
//   1. blocksort     one block per blocksort tile of T keys: load, skip the
//                    sort when the tile is already in order, else block_sort;
//                    write to keys_out or the temp buffer (blocksort_to_temp)
//                    and record each merge tile's buffer.
//   2. passes        one cooperative launch of resident blocks, its phases
//                    separated by grid barriers:
//      boundaries    one thread per blocksort tile plans the boundary at its
//                    start (boundary_group): in order, a window merge, or out
//                    of order (counted); then every window merges at once,
//                    in place. Nearly sorted input is sorted here, and the
//                    passes below do not run.
//      per pass: jobs   a group of lanes per merge-tile boundary (a block's
//                       G groups decide G - 1 tiles): the group's plan (in
//                       order / window / tiles), the tile's partitions
//                       (a multi-lane merge-path search), merge or stay;
//                       merge and window jobs go to one queue (warp-
//                       aggregated atomics), resolved (slices, buffers,
//                       destination: merge_job); the buffer of every tile
//                       for the next pass.
//                merge  the blocks take the queue's jobs in a fixed order.
//      final copy    tiles left in the temp buffer move to keys_out.
//   3. dense passes  locality sort only: when no blocksort tile looked local
//                    (random keys), the passes kernel returns at once and
//                    this cooperative launch runs merge_sort's passes
//                    instead (every tile merged, every pass): its k-way
//                    passes for items of 4 bytes and more, its pairwise
//                    ones for smaller keys; otherwise it returns at once.
//                    Below dense_kernel_min_keys the passes kernel runs
//                    merge_sort's pairwise passes itself, and this launch
//                    is not made; from dense_kway_min_keys on (items of 4
//                    bytes and more) merge_sort's own k-way kernels run
//                    them instead, two launches per k-way pass, each
//                    returning at once unless the keys are random.
// 2 launches (3 in a locality sort of dense_kernel_min_keys keys or more, 2 +
// 2 per k-way pass from dense_kway_min_keys on); no
// host synchronisation, graph-capturable. Bytes moved:
// each key is read and written once by the blocksort (read only, for an
// in-order tile sorted in place), then only by the merges that need it.
//
// Shared memory: blocksort as merge_sort's (block_sort's temp_storage or the
// warp transposes) plus one key per warp; merge: M keys (+ M values), padded.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../block/block_sort.cuh"
#include "../comparators.cuh"
#include "../detail/config.cuh"
#include "../detail/dependent_launch.cuh"
#include "../detail/error.cuh"
#include "../detail/merge_jobs.cuh"
#include "../detail/merge_path.cuh"
#include "../detail/segment_ranges.cuh"
#include "../thread/thread_sort.cuh"
#include "../warp/warp_shuffle.cuh"
#include "../detail/merge_sort_plan.cuh"
#include "merge_sort.cuh"  // merge_sort_policy: the same tiles as the merge sort
#include "sort_stats.cuh"

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

// The window half widths in keys, ascending (plan_group's argument).
struct window_widths {
  int half[4];
};
template <typename Policy>
TILESORT_HD constexpr window_widths early_exit_window_widths() {
  constexpr int m = Policy::merge_tile_items;
  return {{m / Policy::window_divisors[0], m / Policy::window_divisors[1], m / Policy::window_divisors[2],
           m / Policy::window_divisors[3]}};
}

// keys_out / values_out (location in_output) and the temp buffers (in_temp).
template <typename Key, typename Value>
struct merge_buffers {
  Key* keys_out;
  Key* keys_temp;
  Value* values_out;
  Value* values_temp;
  TILESORT_HD Key* keys(std::uint8_t location) const { return location == in_temp ? keys_temp : keys_out; }
  TILESORT_HD Value* values(std::uint8_t location) const { return location == in_temp ? values_temp : values_out; }
};

// The segments being sorted, as the kernels see them: a device list (filled
// by segmented sort's classify kernel) or one segment [0, n).
struct merge_segment_list {
  const merge_segment* segments;   // nullptr: the single segment [0, n)
  const int* block_segment;        // blocksort entry -> index into segments
  const unsigned* block_count;     // number of blocksort entries (device)
  const unsigned* abandoned;       // non-zero (device): the list is unusable, sort nothing
  std::int64_t n;
  std::int64_t single_blocks;      // blocksort entries of the single segment
  TILESORT_DEVICE std::int64_t blocks() const {
    if (segments == nullptr) return single_blocks;
    return *abandoned ? 0 : static_cast<std::int64_t>(*block_count);
  }
  TILESORT_DEVICE merge_segment segment_of_block(std::int64_t block) const {
    return segments ? segments[block_segment[block]] : merge_segment{0, n, 0};
  }
};

// The key at an absolute position of segment `segment`, from whichever buffer
// holds its merge tile.
template <typename Key, typename Tiling>
struct located_keys {
  const Key* keys_out;
  const Key* keys_temp;
  const std::uint8_t* locations;
  merge_segment segment;
  TILESORT_HD Key operator()(std::int64_t position) const {
    return (locations[Tiling::entry_of(segment, position)] == in_temp ? keys_temp : keys_out)[position];
  }
};

// The keys of a pass whose tiles all lie in one buffer (see
// merge_pass_control::location_mix): one load per key instead of two
// dependent ones.
template <typename Key>
struct buffer_keys {
  const Key* keys;
  TILESORT_HD Key operator()(std::int64_t position) const { return keys[position]; }
};

// One queued job, resolved by the phase that queues it, so that the merge
// phase reads one record and nothing else before its keys: merge A
// (a_count keys from a_begin) and B (count - a_count keys from b_begin) into
// [out_begin, out_begin + count) of buffer `destination`. A merge tile's
// slices lie in at most two merge tiles each, whose buffers may differ: A's
// first a_split keys are in buffer a_before, the others in a_after (B
// likewise). A window merge runs in place: out_begin = a_begin, one buffer.
struct merge_job {
  std::int64_t a_begin;
  std::int64_t b_begin;
  std::int64_t out_begin;
  std::uint16_t count, a_count, a_split, b_split;
  std::uint8_t a_before, a_after, b_before, b_after, destination;
};

// Where the keys of one input slice [begin, end) live: merge tiles are
// M-aligned in their segment, so a slice of at most M keys lies in at most
// two, split at `boundary`.
struct slice_location {
  std::int64_t begin;
  std::int64_t boundary;
  std::uint8_t before;  // buffer of positions < boundary
  std::uint8_t after;   // and of the others
};

template <typename Tiling>
TILESORT_DEVICE slice_location locate_slice(const merge_segment& segment, std::int64_t begin, std::int64_t end,
                                            const std::uint8_t* locations, int uniform) {
  if (begin >= end) return {begin, begin, in_output, in_output};
  if (uniform >= 0) return {begin, begin, static_cast<std::uint8_t>(uniform), static_cast<std::uint8_t>(uniform)};
  const std::int64_t tile = Tiling::entry_of(segment, begin);
  const std::int64_t boundary = Tiling::tile_begin(segment, tile + 1);
  const std::uint8_t before = locations[tile];
  return {begin, boundary, before, end > boundary ? locations[tile + 1] : before};
}

// The job of a merge tile whose outputs src.out_begin .. src.out_end come
// from slices `a` and `b` (locate_slice), written to buffer `destination`.
TILESORT_DEVICE merge_job tile_job(const tile_sources& src, const slice_location& a, const slice_location& b,
                                   std::uint8_t destination) {
  const std::int64_t count = src.out_end - src.out_begin;
  const std::int64_t a_count = src.a_end - src.a_begin, b_count = src.b_end - src.b_begin;
  // Partitions that do not describe a merge can only follow an earlier wrong
  // merge: such a job merges nothing (count 0) rather than indexing shared
  // memory out of bounds, so the wrong keys show in the caller's checks and
  // the CUDA context survives.
  if (a_count < 0 || b_count < 0 || count > 0xffff) return {src.a_begin, src.b_begin, src.out_begin};
  const std::int64_t a_split = a.boundary - a.begin < a_count ? a.boundary - a.begin : a_count;
  const std::int64_t b_split = b.boundary - b.begin < b_count ? b.boundary - b.begin : b_count;
  return {src.a_begin,
          src.b_begin,
          src.out_begin,
          static_cast<std::uint16_t>(count),
          static_cast<std::uint16_t>(a_count),
          static_cast<std::uint16_t>(a_split),
          static_cast<std::uint16_t>(b_split),
          a.before,
          a.after,
          b.before,
          b.after,
          destination};
}

// The job of an in-place window merge of [begin, end) around `interface`,
// in buffer `location`.
TILESORT_DEVICE merge_job window_job(std::int64_t begin, std::int64_t interface, std::int64_t end,
                                     std::uint8_t location) {
  const auto a_count = static_cast<std::uint16_t>(interface - begin);
  return {begin,    interface, begin,    static_cast<std::uint16_t>(end - begin), a_count, a_count, 0, location,
          location, location,  location, location};
}

struct merge_pass_control {
  unsigned long long merge_tiles;
  unsigned long long window_merges;
  unsigned long long merged_keys;
  unsigned job_count;  // jobs queued by the job (or boundary) phase
  // Bit l set: some tile of this pass's input lies in buffer l (written by
  // the blocksort for pass 0, by the job phase of the pass before for the
  // others). One bit alone: every key is in that buffer (uniform_location).
  unsigned location_mix;
};

// Counters of one sort; zeroed (cudaMemsetAsync) before the first kernel.
struct merge_control {
  merge_pass_control boundary;  // the window merges at blocksort-tile boundaries, before pass 0
  merge_pass_control pass[sort_stats::max_passes];
  // Blocksort-tile boundaries inside a segment whose keys are out of order
  // after the blocksort and that no boundary window fixes (the boundary
  // phase counts them). None: every segment is sorted after the boundary
  // windows, and no pass runs.
  unsigned out_of_order_boundaries;
  // The most merge passes any segment needs (the blocksort records it):
  // later passes do not run.
  unsigned needed_passes;
  // Blocksort tiles that looked local. None (random keys) in a locality
  // sort: the dense passes (early_exit_dense_passes) sort them.
  unsigned local_tiles;
  // The tiles each k-way dense pass has handed out (launch_early_exit_dense_kway).
  unsigned kway_tiles_taken[sort_stats::max_passes];
  // Blocksort tiles that are not final after the blocksort: out of order in
  // the input, written to the temp buffer, or out of order with the tile
  // before them in their segment. None (sorted input): the passes kernel
  // returns at once.
  unsigned unfinished_tiles;
  unsigned long long blocksort_tiles;
  unsigned long long presorted_tiles;
  unsigned long long blocksort_keys;
  unsigned long long final_copy_tiles;
  unsigned long long final_copy_keys;
  unsigned barrier_arrivals;  // the passes kernel's grid_barrier
};

// Sum of `value` over the warp, added to *total by lane 0 (all lanes call it).
TILESORT_DEVICE void warp_add(unsigned long long* total, unsigned long long value) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) value += __shfl_xor_sync(0xffffffffu, value, mask);
  if (lane_id() == 0 && value != 0) atomicAdd(total, value);
}

// Reserve one slot per lane with `wants` in the queue behind *count (one
// atomic per warp); returns this lane's slot (meaningless where !wants).
// All lanes of the warp call it.
TILESORT_DEVICE unsigned warp_reserve(unsigned* count, bool wants) {
  const unsigned ballot = __ballot_sync(0xffffffffu, wants);
  if (ballot == 0) return 0;
  const int lane = lane_id();
  unsigned base = 0;
  if (lane == 0) base = atomicAdd(count, static_cast<unsigned>(__popc(ballot)));
  base = __shfl_sync(0xffffffffu, base, 0);
  return base + static_cast<unsigned>(__popc(ballot & ((1u << lane) - 1u)));
}

// ------------------------------------------------------------------ blocksort
// merge_sort's blocksort pieces (block_sort, the warp transposes between
// striped global memory and blocked registers, their shared storage), plus
// one key per warp for the in-order check.
template <typename Policy, typename Key, typename Value>
struct early_exit_blocksort_shared {
  using parts = merge_sort_blocksort_parts<Key, Value, Policy::block_threads, Policy::block_items>;
  using storage = typename parts::storage;
  using transpose = typename parts::transpose;
  static constexpr bool pairs = parts::pairs;
  static constexpr int warps = parts::warps;
  static constexpr int warp_items = parts::warp_items;
  static constexpr std::size_t last_keys_offset = (sizeof(storage) + alignof(Key) - 1) / alignof(Key) * alignof(Key);
  static constexpr std::size_t bytes = last_keys_offset + warps * sizeof(Key);
  static_assert(alignof(storage) <= 16 && alignof(Key) <= 16, "dynamic shared memory is 16-byte aligned");
};

// What a blocksort tile needs after its sort, kept in shared memory across
// the sort (block-uniform values; keeping them in registers made the sort
// spill).
struct early_exit_tile_state {
  std::int64_t begin;
  int valid;
  int passes;               // flips of the passes random keys run (blocksort_to_temp)
  std::uint8_t* locations;  // the tile's merge tiles' entries
  std::uint8_t location;    // where the tile goes
  bool ordered;             // it was in order already
  bool follows_tile;        // a tile of its segment comes before it
};

template <bool Full, typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void early_exit_blocksort_tile(early_exit_tile_state& state, const Key* keys_in,
                                               const Value* values_in, const merge_buffers<Key, Value>& buffers,
                                               merge_control* control, Compare comp) {
  using shared = early_exit_blocksort_shared<Policy, Key, Value>;
  using transpose = typename shared::transpose;
  constexpr int items = Policy::block_items;
  constexpr bool pairs = shared::pairs;
  auto& storage = *reinterpret_cast<typename shared::storage*>(early_exit_smem);
  Key* warp_last = reinterpret_cast<Key*>(early_exit_smem + shared::last_keys_offset);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp_offset = warp * shared::warp_items;
  const int first = static_cast<int>(threadIdx.x) * items;  // this thread's first tile position

  Key keys[items];
  Value values[items];
  int valid = state.valid;
  {
    const std::int64_t begin = state.begin;
    const int warp_valid = valid - warp_offset;
    Key* key_region = storage.transpose.keys[warp];
    Value* value_region = storage.transpose.values[warp];
    transpose::template load_striped<Full>(keys_in + begin + warp_offset, warp_valid, key_region, lane);
    if constexpr (pairs)
      transpose::template load_striped<Full>(values_in + begin + warp_offset, warp_valid, value_region, lane);
    __syncwarp();
    transpose::template read_blocked<Full>(key_region, warp_valid, lane, keys, keys_in + begin);
    if constexpr (pairs) transpose::template read_blocked<Full>(value_region, warp_valid, lane, values, values_in + begin);
  }

  // Already in order? Each thread checks its own keys and its predecessor's last.
  bool ordered = true;
#pragma unroll
  for (int i = 0; i + 1 < items; ++i)
    if ((Full || first + i + 1 < valid) && comp(keys[i + 1], keys[i])) ordered = false;
  const Key previous = shuffle_from(keys[items - 1], lane - 1);
  if (lane == 31) warp_last[warp] = keys[items - 1];
  // A full tile sorted out of place: a warp whose keys are in order (each
  // lane's and lane to lane; the boundary with the warp before is checked
  // below) stores them to keys_out now, from its transpose region, which
  // still holds them as loaded. An in-order tile is local, so keys_out is
  // where it goes, and it is not written again below; any other tile's
  // sorted keys, or the passes, overwrite what was stored early. H100 bench,
  // lat, 2026-11-25, three alternating runs without -> with, locality sorted
  // out of place, GKeys/s: u32 2^22 / 2^24 / 2^26 136-147 / 169-171 / 233-236
  // -> 146-162 / 181-187 / 259-265, u32 pairs 91-94 / 125-126 / 159-163 ->
  // 98-102 / 130-133 / 167-168; nearly sorted, random and in place within
  // 2%; long segments of the segmented sort within the run-to-run spread.
  const bool early_keys = Full && buffers.keys(in_output) != keys_in;
  const bool early_values = Full && pairs && buffers.values(in_output) != values_in;
  if (early_keys || early_values) {
    const bool thread_in_order = ordered && (lane == 0 || !comp(keys[0], previous));
    if (__all_sync(0xffffffffu, thread_in_order)) {
      const std::int64_t at = state.begin + warp_offset;
      if (early_keys)
        transpose::template store_striped<true>(storage.transpose.keys[warp], 0, buffers.keys(in_output) + at, lane);
      if constexpr (pairs)
        if (early_values)
          transpose::template store_striped<true>(storage.transpose.values[warp], 0, buffers.values(in_output) + at,
                                                  lane);
    }
  }
  // Locality sample: this key against the one 16 threads later, in input order.
  const Key later = shuffle_from(keys[0], lane + 16);
  const bool sampled = lane < 16 && (Full || first + 16 * items < valid);
  const bool sample_in_order = sampled && !comp(later, keys[0]);
  __syncthreads();  // warp_last written; every warp is done with its transpose region
  if (first > 0 && first < valid && comp(keys[0], lane > 0 ? previous : warp_last[warp - 1])) ordered = false;
  const bool tile_ordered = __syncthreads_and(ordered) != 0;
  const int in_order_samples = __syncthreads_count(sample_in_order);
  const int samples = __syncthreads_count(sampled);
  const bool local =
      looks_local(in_order_samples, samples, Policy::local_num, Policy::local_den, Policy::local_min_samples);
  if (threadIdx.x == 0) {
    state.location = blocksort_to_temp(local, state.passes) ? in_temp : in_output;
    state.ordered = tile_ordered;
    if (local) atomicAdd(&control->local_tiles, 1u);
  }

  // A local tile tries block_sort's boundary windows before its block rounds.
  if (!tile_ordered)
    merge_sort_sort_registers<Full, typename shared::parts>(storage, keys, values, valid, comp, local);
  __syncthreads();  // the transposes below reuse the sort's shared memory; `state` is complete

  valid = state.valid;
  const std::int64_t begin = state.begin;
  const std::uint8_t location = state.location;
  const bool in_order = state.ordered;
  const int warp_valid = valid - warp_offset;
  Key* keys_dst = buffers.keys(location) + begin;
  Value* values_dst = nullptr;
  if constexpr (pairs) values_dst = buffers.values(location) + begin;
  // An in-order tile sorted in place is already where it belongs; out of
  // place, its warps stored it early.
  const bool store_keys = !(in_order && (keys_dst == keys_in + begin || early_keys));
  bool store_values = false;
  if constexpr (pairs) store_values = !(in_order && (values_dst == values_in + begin || early_values));
  Key* key_region = storage.transpose.keys[warp];
  Value* value_region = storage.transpose.values[warp];
  if (store_keys) transpose::write_blocked(key_region, lane, keys);
  if constexpr (pairs)
    if (store_values) transpose::write_blocked(value_region, lane, values);
  __syncwarp();
  if (store_keys) transpose::template store_striped<Full>(key_region, warp_valid, keys_dst + warp_offset, lane);
  if constexpr (pairs)
    if (store_values) transpose::template store_striped<Full>(value_region, warp_valid, values_dst + warp_offset, lane);
  if (threadIdx.x < early_exit_tiling<Policy>::merge_tiles_per_block) state.locations[threadIdx.x] = location;
  if (threadIdx.x == 0) {
    // Final: in order, in keys_out, and after the previous tile's last key.
    // That key is read from the input, where it is still the tile's own when
    // that tile was in order (sorted in place, an in-order tile is not
    // written); a tile that was not in order counts itself, and what is read
    // of it then does not matter.
    const bool final_tile =
        in_order && location == in_output && (!state.follows_tile || !comp(keys[0], keys_in[begin - 1]));
    if (!final_tile) atomicAdd(&control->unfinished_tiles, 1u);
    atomicOr(&control->pass[0].location_mix, 1u << location);
    atomicAdd(&control->blocksort_tiles, 1ull);
    if (in_order) atomicAdd(&control->presorted_tiles, 1ull);
    atomicAdd(&control->blocksort_keys, static_cast<unsigned long long>(valid));
  }
}

// The passes of a list of one segment (a locality sort), worked out on the
// host: the blocksort's blocks would each repeat their 64-bit divisions
// before loading their tile (thread 0, the rest of the block waiting), the
// k-way plan's from 2^24 keys on. H100 bench, lat, 2026-11-25, three
// alternating runs, GKeys/s, locality u32 keys sorted 2^24 / 2^26 / 2^28:
// 187-190 / 258-262 / 293-298 -> 192-194 / 276-280 / 317-319 (in place 204-
// 207 / 301-322 / 385-388 -> 215-219 / 355-361 / 428-435), nearly sorted
// 77-79 / 97 / 103 -> 80 / 100-101 / 107, u32 pairs sorted in place 2^28
// 303-313 -> 350-355; random and below 2^24 within the run-to-run spread.
struct early_exit_list_passes {
  int needed = 0;  // pairwise passes of the whole list (merge_passes_for)
  int random = 0;  // flips of the passes random keys run: merge_sort's k-way ones or those
};

// One block per blocksort entry (the grid is the host's bound on them).
// keys_in may be keys_out: a block reads its whole tile before the barrier
// that precedes its first write, and no other block touches the tile.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::block_threads, Policy::block_min_blocks)
    early_exit_blocksort_kernel(const Key* keys_in, const Value* values_in, merge_buffers<Key, Value> buffers,
                                merge_segment_list list, early_exit_list_passes list_passes, std::uint8_t* locations,
                                merge_control* control, Compare comp) {
  allow_next_kernel();  // the passes kernel waits for this grid to finish
  using tiling = early_exit_tiling<Policy>;
  __shared__ early_exit_tile_state state;
  const std::int64_t block = blockIdx.x;
  if (block >= list.blocks()) return;
  if (threadIdx.x == 0) {
    const merge_segment segment = list.segment_of_block(block);
    state.begin = tiling::block_begin(segment, block);
    const std::int64_t left = segment.end - state.begin;
    state.valid = static_cast<int>(left < Policy::tile_items ? left : Policy::tile_items);
    const bool one_segment = list.segments == nullptr;
    const int passes =
        one_segment ? list_passes.needed : merge_passes_for(segment.end - segment.begin, Policy::tile_items);
    // A tile that does not look local goes where the passes that random keys
    // run leave it in keys_out (segmented sort: its segment's passes).
    state.passes = one_segment ? list_passes.random : passes;
    state.locations = locations + block * tiling::merge_tiles_per_block;
    state.follows_tile = state.begin > segment.begin;
    if (block == segment.first_block) atomicMax(&control->needed_passes, static_cast<unsigned>(passes));
  }
  __syncthreads();
  if (state.valid == Policy::tile_items) {
    early_exit_blocksort_tile<true, Policy>(state, keys_in, values_in, buffers, control, comp);
  } else {
    early_exit_blocksort_tile<false, Policy>(state, keys_in, values_in, buffers, control, comp);
  }
}

// ------------------------------------------------------------------ boundaries
// One thread per blocksort entry (entries first .. first + threads - 1 for a
// block's call; `first` is block-uniform) plans the boundary at the start of its tile
// (none at a segment's first tile) as detail/merge_jobs.cuh's boundary_group:
// in order, a window merge (queued), or `tiles`, which it counts in
// out_of_order_boundaries. It also copies its tile's locations to the next
// pass's array (the windows merge in place), so that both arrays are right
// when the passes find nothing to do. (Spreading the plans over more blocks,
// 32 per block instead of 256, left the phase as long: H100, 2^22 u32
// nearly sorted, 6.3 against 6.6 us from the kernel's start to the last
// block's last plan; it waits on each plan's chain of dependent loads.)
template <typename Policy, typename Key, typename Compare>
__device__ __noinline__ void early_exit_plan_boundaries(std::int64_t first, const Key* keys_out, const Key* keys_temp,
                                                const merge_segment_list& list, const std::uint8_t* locations,
                                                std::uint8_t* next_locations, merge_job* jobs,
                                                merge_control* control, Compare comp) {
  using tiling = early_exit_tiling<Policy>;
  constexpr auto widths = early_exit_window_widths<Policy>();
  constexpr int k = tiling::merge_tiles_per_block;
  const std::int64_t block = first + threadIdx.x;
  bool window = false, unfixable = false;
  merge_job job{};
  if (block < list.blocks()) {
#pragma unroll
    for (int i = 0; i < k; ++i) next_locations[block * k + i] = locations[block * k + i];
    const merge_segment segment = list.segment_of_block(block);
    const std::int64_t boundary = tiling::block_begin(segment, block);
    if (boundary > segment.begin) {
      const located_keys<Key, tiling> key_at{keys_out, keys_temp, locations, segment};
      const std::int64_t entry = tiling::entry_of(segment, boundary);
      const group_decision decision = plan_group(boundary_group(segment, boundary, Policy::tile_items), key_at,
                                                 widths.half, locations[entry - 1] == locations[entry], comp);
      window = decision.plan == group_plan::window;
      unfixable = decision.plan == group_plan::tiles;
      job = window_job(decision.window_begin, boundary, decision.window_end, locations[entry]);
    }
  }
  merge_pass_control& counters = control->boundary;
  const unsigned slot = warp_reserve(&counters.job_count, window);
  if (window) jobs[slot] = job;
  warp_add(&counters.window_merges, window ? 1u : 0u);
  warp_add(&counters.merged_keys, static_cast<unsigned long long>(window ? job.count : 0));
  const unsigned unfixed = __ballot_sync(0xffffffffu, unfixable);
  if (unfixed != 0 && lane_id() == 0) atomicAdd(&control->out_of_order_boundaries, __popc(unfixed));
}

// ------------------------------------------------------------------ jobs
// A group of Ways lanes per merge-tile boundary: the lanes of a block's call
// for job block b (block-uniform) handle the boundaries at the start of
// merge-tile entries b·(G - 1) + g, g < G = merge_threads / Ways; groups 0 .. G - 2 decide their tile (the last group's
// partition is its left neighbour's end). Every lane of a group computes the
// same decision (their loads coincide); they differ only in the probes of the
// merge-path search, and member 0 writes.
template <typename Policy, typename Key, typename Compare>
__device__ __noinline__ void early_exit_plan_jobs(std::int64_t job_block, std::int64_t tiles, int pass, const Key* keys_out,
                                          const Key* keys_temp, const merge_segment_list& list,
                                          const std::uint8_t* locations, std::uint8_t* next_locations,
                                          merge_job* jobs, merge_control* control, Compare comp) {
  using tiling = early_exit_tiling<Policy>;
  constexpr int ways = Policy::job_ways;
  constexpr int groups = Policy::job_groups;
  constexpr auto widths = early_exit_window_widths<Policy>();
  __shared__ std::int64_t partitions[groups];
  const std::int64_t first_entry = job_block * (groups - 1);
  const int group_index = static_cast<int>(threadIdx.x) / ways;
  const search_lanes<ways> lanes;
  const int member = lanes.member;
  const std::int64_t entry = first_entry + group_index;
  const std::int64_t run = std::int64_t(Policy::tile_items) << pass;

  // Every tile in one buffer (random keys): its keys are read directly.
  const int uniform = uniform_location(control->pass[pass].location_mix);
  std::int64_t out_begin = 0, out_end = 0, p_begin = 0;
  merge_segment segment{};
  run_group group{0, 0, 0};
  group_decision decision{group_plan::in_order, 0, 0};
  std::uint8_t location = in_output;
  bool holds_keys = false;  // an entry past its segment's end holds none
  if (entry < tiles) {
    segment = list.segment_of_block(entry / tiling::merge_tiles_per_block);
    out_begin = tiling::tile_begin(segment, entry);
    out_end = tiling::tile_end(segment, entry);
    holds_keys = out_begin < segment.end;
    location = uniform >= 0 ? static_cast<std::uint8_t>(uniform) : locations[entry];
    if (holds_keys && run < segment.end - segment.begin) {
      group = run_group_of(segment, out_begin, run);
      if (group.a_end < group.end) {
        const auto decide = [&](const auto& key_at, bool one_buffer) {
          decision = plan_group(group, key_at, widths.half, one_buffer, comp);
          if (decision.plan == group_plan::tiles)
            p_begin = merge_partition<ways>(group, out_begin, key_at, comp, lanes);
        };
        if (uniform >= 0) {
          decide(buffer_keys<Key>{uniform == in_temp ? keys_temp : keys_out}, true);
        } else {
          decide(located_keys<Key, tiling>{keys_out, keys_temp, locations, segment},
                 locations[tiling::entry_of(segment, group.a_end - 1)] ==
                     locations[tiling::entry_of(segment, group.a_end)]);
        }
      }
    }
  }
  if (member == 0) partitions[group_index] = p_begin;
  __syncthreads();

  bool merge = false;
  bool window = false;
  merge_job job{};
  if (member == 0 && group_index < groups - 1 && entry < tiles) {
    if (decision.plan == group_plan::tiles) {
      // A tile that ends its group takes the rest of A; otherwise its right
      // neighbour (same group) starts where it ends.
      const std::int64_t p_end = out_end == group.end ? group.a_end : partitions[group_index + 1];
      const tile_sources src = tile_sources_of(group, out_begin, out_end, p_begin, p_end);
      merge = !src.stays();
      if (merge)
        job = tile_job(src, locate_slice<tiling>(segment, src.a_begin, src.a_end, locations, uniform),
                       locate_slice<tiling>(segment, src.b_begin, src.b_end, locations, uniform),
                       static_cast<std::uint8_t>(location ^ 1u));
    } else if (decision.plan == group_plan::window && out_begin == group.a_end) {
      window = true;
      job = window_job(decision.window_begin, out_begin, decision.window_end, location);
    }
    next_locations[entry] = merge ? static_cast<std::uint8_t>(location ^ 1u) : location;
  }
  // The block's decisions go to its first warp (lane g: group g), which
  // queues the jobs and adds the counters with one atomic each per block:
  // per-warp atomics on these few addresses serialised in L2 and took a
  // large part of the job kernel this phase was.
  __shared__ merge_job decided_jobs[groups];
  __shared__ std::int64_t decided_keys[groups];  // keys the job writes
  __shared__ unsigned decided_kind[groups];  // bit 0 merge, bit 1 window, bits 2-3: 1 << next location
  if (member == 0) {
    const bool keeps = group_index < groups - 1 && holds_keys;
    decided_jobs[group_index] = job;
    decided_keys[group_index] = merge || window ? job.count : 0;
    decided_kind[group_index] = (merge ? 1u : 0u) | (window ? 2u : 0u) |
                                (keeps ? (1u << (merge ? location ^ 1u : location)) << 2 : 0u);
  }
  __syncthreads();
  if (threadIdx.x >= 32) return;
  static_assert(groups <= 32, "one warp gathers the block's decisions");
  const unsigned kind = threadIdx.x < groups ? decided_kind[threadIdx.x] : 0u;
  const bool queue_merge = (kind & 1u) != 0, queue_window = (kind & 2u) != 0;
  const merge_job mine = threadIdx.x < groups ? decided_jobs[threadIdx.x] : merge_job{};
  const unsigned next_mix = __reduce_or_sync(0xffffffffu, kind >> 2);
  if (threadIdx.x == 0 && next_mix != 0 && pass + 1 < sort_stats::max_passes)
    atomicOr(&control->pass[pass + 1].location_mix, next_mix);
  merge_pass_control& counters = control->pass[pass];
  const unsigned slot = warp_reserve(&counters.job_count, queue_merge || queue_window);
  if (queue_merge || queue_window) jobs[slot] = mine;
  warp_add(&counters.merge_tiles, queue_merge ? 1u : 0u);
  warp_add(&counters.window_merges, queue_window ? 1u : 0u);
  warp_add(&counters.merged_keys,
           static_cast<unsigned long long>(threadIdx.x < groups ? decided_keys[threadIdx.x] : 0));
}

// ------------------------------------------------------------------ merge
// A merge tile's shared memory and its steps after the load are
// merge_sort's (device/merge_sort.cuh): keys and each output's source index
// through padded slots, values gathered by source in the striped store.
template <typename Key, typename Value, int TileItems>
using early_exit_merge_storage = merge_sort_merge_storage<Key, Value, TileItems>;

// The merges here copy a T with cp.async where one copy moves it (4, 8 or
// 16 bytes, as aligned), as measured (see early_exit_passes_kernel).
template <typename T>
inline constexpr bool early_exit_copies_async = copies_to_shared_async<T> && async_copy_chunk<T> == sizeof(T);

// Merge job `job`'s A and B into its outputs. Every global read happens
// before the barrier that precedes the first global write, so the output may
// overlap the inputs (window merges run in place). Async: A ++ B goes
// straight to shared memory (cp.async, for keys and values of 4, 8 or 16
// bytes), no key staged in registers.
template <bool Async, bool Full, typename Policy, typename Key, typename Value, typename Storage, typename Compare>
TILESORT_DEVICE void early_exit_merge_slices(Storage& storage, const merge_buffers<Key, Value>& buffers,
                                             const merge_job& job, Compare comp) {
  constexpr int threads = Policy::merge_threads;
  constexpr int items = Policy::merge_items;
  constexpr bool pairs = early_exit_has_values<Value>;
  Key* keys_dst = buffers.keys(job.destination);
  Value* values_dst = buffers.values(job.destination);
  const int count = job.count;
  const int a_count = job.a_count;
  // 1. A ++ B into shared memory, striped (coalesced reads): item j < a_count
  //    is A's key a_begin + j, the others B's b_begin + j - a_count, each from
  //    the buffer its side of the slice's split names. Four predicated
  //    sweeps (A before, A after, B before, B after the split) address
  //    every load as one base plus a constant and issue all of them before
  //    the first shared-memory store (see merge_sort_merge_steps::load).
  const int thread = static_cast<int>(threadIdx.x);
  const int a_split = job.a_split;
  const int b_split = a_count + job.b_split;
  const auto gather = [&](auto* dst, auto buffer_of) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(buffer_of(job.a_before))>>;
    const struct {
      const T* base;
      int lo, hi;
    } sweeps[4] = {{buffer_of(job.a_before) + job.a_begin + thread, 0, a_split},
                   {buffer_of(job.a_after) + job.a_begin + thread, a_split, a_count},
                   {buffer_of(job.b_before) + (job.b_begin - a_count) + thread, a_count, b_split},
                   {buffer_of(job.b_after) + (job.b_begin - a_count) + thread, b_split, count}};
    if constexpr (Async && early_exit_copies_async<T>) {
#pragma unroll
      for (int w = 0; w < 4; ++w) {
#pragma unroll
        for (int k = 0; k < items; ++k) {
          const int j = thread + k * threads;
          if (j >= sweeps[w].lo && j < sweeps[w].hi) copy_to_shared_async(dst + j, sweeps[w].base + k * threads);
        }
      }
      wait_for_shared_copies();  // slots past count stay unwritten: nothing reads them
    } else {
      T loaded[items];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
#pragma unroll
        for (int k = 0; k < items; ++k) {
          const int j = thread + k * threads;
          if (j >= sweeps[w].lo && j < sweeps[w].hi) loaded[k] = sweeps[w].base[k * threads];
        }
      }
      // Unconditional stores: slots past count get junk that nothing reads.
#pragma unroll
      for (int k = 0; k < items; ++k) dst[thread + k * threads] = loaded[k];
    }
  };
  gather(storage.keys, [&](std::uint8_t location) { return buffers.keys(location); });
  if constexpr (pairs) gather(storage.values, [&](std::uint8_t location) { return buffers.values(location); });
  __syncthreads();

  // 2.-4. merge_sort's steps: merge, blocked -> padded slots, striped stores.
  using steps = merge_sort_merge_steps<threads, items>;
  const merge_tile_slices slices{job.a_begin,   job.a_begin + a_count, job.b_begin, job.b_begin + (count - a_count),
                                 job.out_begin, job.out_begin + count};
  Key out[items];
  int source[items];
  steps::merge(storage.keys, slices, thread, out, source, comp);
  __syncthreads();  // every thread is done reading A ++ B
  steps::template write_blocked<pairs>(storage.keys, storage.sources, thread, out, source);
  __syncthreads();
  steps::template store<Full, pairs>(storage.keys, storage.sources, storage.values, slices, thread, keys_dst,
                                     values_dst);
}

// The grid's blocks take the `queued` jobs in a fixed order (block b: jobs b,
// b + grid, ...): no atomics, and no barrier to share a job (every thread
// reads it). A job is resolved (merge_job): a block reads it and then its
// keys, nothing else. A merge tile reads its
// slices from the buffers that hold them and writes the other buffer at its
// own positions (nothing else reads there in this pass); a window merge
// rewrites its window in place. Async: see early_exit_merge_slices.
// Tried: the boundary windows of at most 32 x merge_items keys merged by one
// warp each (a block's 8 warps take 8 windows at once) before the blocks
// take the others. H100, locality probe, u32 nearly sorted: 2^24 197-200 ->
// 185-187 us, but 2^20 and 2^22 no faster (GPU time at 2^20 25.7 -> 27.0
// us), and segmented sort read past the keys under memcheck with it (cause
// not found before it was dropped).
template <bool Async, typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void early_exit_merge_jobs(const merge_buffers<Key, Value>& buffers, const merge_job* jobs,
                                           unsigned queued, Compare comp) {
  static_assert(Policy::merge_tile_items <= 0xffff, "merge_job counts are 16-bit");
  using storage_type = early_exit_merge_storage<Key, Value, Policy::merge_tile_items>;
  auto& storage = *reinterpret_cast<storage_type*>(early_exit_smem);
  for (unsigned next = blockIdx.x; next < queued; next += gridDim.x) {
    const merge_job job = jobs[next];
    __syncthreads();  // the previous job's last shared-memory reads are done
    // Bounds-checked path only (see merge_sort_merge_kernel); one merge
    // for tiles and windows alike.
    if (job.a_count <= job.count && job.count <= Policy::merge_tile_items)
      early_exit_merge_slices<Async, false, Policy>(storage, buffers, job, comp);
  }
}

// ------------------------------------------------------------------ final copy
// A tile that some pass left alone (in order, or a run without a partner in
// its group) may end in the temp buffer (the locations the last pass wrote
// say so); those move to keys_out (values likewise). The blocks take the
// merge tiles in turn (block b: entries b, b + grid, ...), and a block
// copies a tile whole: all its loads, then all its stores. (One block per
// 256 entries, each thread a tile, copied at one key per thread and step:
// 1 ms of a 2^24-key segmented sort on an H100.)
template <typename Policy, typename Key, typename Value>
__device__ __noinline__ void early_exit_final_copy(const merge_buffers<Key, Value>& buffers, const merge_segment_list& list,
                                           std::int64_t tiles, const std::uint8_t* locations,
                                           merge_control* control) {
  using tiling = early_exit_tiling<Policy>;
  constexpr int threads = Policy::merge_threads;
  constexpr int items = (Policy::merge_tile_items + threads - 1) / threads;
  unsigned long long copied_tiles = 0, copied_keys = 0;
  for (std::int64_t entry = blockIdx.x; entry < tiles; entry += gridDim.x) {
    if (locations[entry] != in_temp) continue;  // the same for the whole block
    const merge_segment segment = list.segment_of_block(entry / tiling::merge_tiles_per_block);
    const std::int64_t begin = tiling::tile_begin(segment, entry);
    if (begin >= segment.end) continue;
    const int count = static_cast<int>(tiling::tile_end(segment, entry) - begin);
    const auto copy = [&](const auto* src, auto* dst) {
      std::remove_const_t<std::remove_pointer_t<decltype(src)>> staged[items];
#pragma unroll
      for (int k = 0; k < items; ++k) {
        const int j = static_cast<int>(threadIdx.x) + k * threads;
        if (j < count) staged[k] = src[begin + j];
      }
#pragma unroll
      for (int k = 0; k < items; ++k) {
        const int j = static_cast<int>(threadIdx.x) + k * threads;
        if (j < count) dst[begin + j] = staged[k];
      }
    };
    copy(buffers.keys_temp, buffers.keys_out);
    if constexpr (early_exit_has_values<Value>) copy(buffers.values_temp, buffers.values_out);
    ++copied_tiles;
    copied_keys += static_cast<unsigned long long>(count);
  }
  if (threadIdx.x == 0 && copied_tiles > 0) {
    atomicAdd(&control->final_copy_tiles, copied_tiles);
    atomicAdd(&control->final_copy_keys, copied_keys);
  }
}

// ------------------------------------------------------------------ dense passes
// Random keys in a locality sort (one segment, no blocksort tile looked
// local): every tile lies where merge_sort's ping-pong puts it
// (blocksort_to_temp), nothing is in order or fixable by a window, and
// every pass merges every tile. So these are merge_sort's passes, in one
// cooperative launch at an occupancy the passes kernel (80 registers, 3
// blocks per SM) does not reach: its job and merge phases took about 26 us
// more per pass than merge_sort's two kernels (2^24 u32 keys, H100).
// Block b merges the same contiguous run of merge tiles in every pass (the
// tiles split evenly, the first ones one more) and finds their partitions
// itself, up to job_groups - 1 tiles at a time (a group of job_ways lanes
// per partition, as merge_sort_partition_kernel): one grid barrier per pass,
// no partition array. Run by a kernel of its own, launched after the passes
// kernel (from dense_kernel_min_keys keys on), or by the passes kernel itself.
template <typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void early_exit_dense_passes(const merge_buffers<Key, Value>& buffers, std::int64_t n, int passes,
                                             merge_control* control, Compare comp) {
  constexpr int threads = Policy::merge_threads;
  constexpr int ways = Policy::job_ways;
  constexpr int groups = Policy::job_groups;
  constexpr int m = Policy::merge_tile_items;
  using storage_type = early_exit_merge_storage<Key, Value, m>;
  auto& storage = *reinterpret_cast<storage_type*>(early_exit_smem);
  __shared__ std::int64_t partitions[groups];
  const int group = static_cast<int>(threadIdx.x) / ways;
  const search_lanes<ways> lanes;
  const std::int64_t merge_tiles = ceil_div(n, std::int64_t(m));
  const std::int64_t share = merge_tiles / gridDim.x, extra = merge_tiles % gridDim.x;
  const std::int64_t first = blockIdx.x * share + (blockIdx.x < extra ? blockIdx.x : extra);
  const std::int64_t end = first + share + (blockIdx.x < extra ? 1 : 0);
  grid_barrier barrier{&control->barrier_arrivals};
  std::uint8_t source = blocksort_to_temp(false, passes) ? in_temp : in_output;
  for (int pass = 0; pass < passes; ++pass, source ^= 1u) {
    const std::int64_t run = std::int64_t(Policy::tile_items) << pass;
    for (std::int64_t chunk = first; chunk < end; chunk += groups - 1) {
      const int tiles = static_cast<int>(end - chunk < groups - 1 ? end - chunk : groups - 1);
      if (group <= tiles) {
        const std::int64_t partition =
            merge_sort_partition<ways>(buffers.keys(source), n, run, m, chunk + group, comp, lanes);
        if (lanes.member == 0) partitions[group] = partition;
      }
      __syncthreads();
      for (int t = 0; t < tiles; ++t) {
        const merge_tile_slices slices = merge_tile_range(chunk + t, m, run, n, partitions[t], partitions[t + 1]);
        merge_sort_merge_tile<false, threads, Policy::merge_items>(storage, slices, buffers.keys(source),
                                                                   buffers.keys(source ^ 1u), buffers.values(source),
                                                                   buffers.values(source ^ 1u), comp);
        __syncthreads();  // the tile's shared-memory reads come before the next one's writes
      }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      control->pass[pass].merge_tiles = static_cast<unsigned long long>(merge_tiles);
      control->pass[pass].merged_keys = static_cast<unsigned long long>(n);
    }
    barrier.sync();  // the pass's keys are written
  }
}

// The passes kernel's call (below dense_kernel_min_keys keys): a function of
// its own, so that no merge is inlined twice in one kernel (see
// merge_sort_merge_kernel).
template <typename Policy, typename Key, typename Value, typename Compare>
__device__ __noinline__ void early_exit_dense_passes_call(const merge_buffers<Key, Value>& buffers, std::int64_t n,
                                                          int passes, merge_control* control, Compare comp) {
  early_exit_dense_passes<Policy>(buffers, n, passes, control, comp);
}

// The dense passes' own kernel: returns at once unless the keys are random.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::dense_min_blocks)
    early_exit_dense_passes_kernel(merge_buffers<Key, Value> buffers, std::int64_t n, int passes,
                                   merge_control* control, Compare comp) {
  wait_for_previous_kernel();  // the passes kernel, and through it the blocksort
  if (control->local_tiles != 0) return;
  early_exit_dense_passes<Policy>(buffers, n, passes, control, comp);
}

// The phases of early_exit_dense_kway_kernel, functions of their own so that
// the pass loop's registers do not add to theirs.
template <int Ways, typename Key, typename Compare>
__device__ __noinline__ void early_exit_dense_cuts(const Key* keys, const kway_pass_shape& pass, std::int64_t* cuts,
                                                   Compare comp) {
  merge_sort_cut_lanes<Ways>(keys, pass, cuts, comp);
}
template <typename Policy, typename Key, typename Value, typename Compare>
__device__ __noinline__ void early_exit_dense_merges(const Key* keys_src, Key* keys_dst, const Value* values_src,
                                                     Value* values_dst, const std::int64_t* cuts,
                                                     const kway_pass_shape& pass, unsigned* tiles_taken,
                                                     Compare comp) {
  using storage_type = merge_sort_kway_storage<Key, Value, Policy::merge_tile_items>;
  auto& storage = *reinterpret_cast<storage_type*>(early_exit_smem);
  merge_sort_kway_tiles<Policy>(storage, keys_src, keys_dst, values_src, values_dst, cuts, pass, tiles_taken, comp);
}

// The shapes of the k-way dense passes, a kernel parameter (read from the
// constant bank like merge_sort's per-pass shapes, not held in registers).
struct early_exit_kway_shapes {
  int passes = 0;
  kway_pass_shape pass[sort_stats::max_passes];
};

// merge_sort's k-way passes in one cooperative launch of resident blocks
// (below dense_kway_min_keys): returns at once unless the keys are random;
// per pass, the cut lanes strided over the grid, a grid barrier, the tiles
// taken in turn (merge_sort_kway_tiles), a grid barrier.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::base::merge_threads, Policy::dense_kway_min_blocks)
    early_exit_dense_kway_kernel(merge_buffers<Key, Value> buffers, const __grid_constant__ early_exit_kway_shapes shapes,
                                 std::int64_t* cuts, merge_control* control, Compare comp) {
  using base = typename Policy::base;
  wait_for_previous_kernel();  // the passes kernel, and through it the blocksort
  if (control->local_tiles != 0) return;
  grid_barrier barrier{&control->barrier_arrivals};  // the passes kernel returned before its barriers
  std::uint8_t source = blocksort_to_temp(false, shapes.passes) ? in_temp : in_output;
  for (int pass = 0; pass < shapes.passes; ++pass, source ^= 1u) {
    const kway_pass_shape& shape = shapes.pass[pass];
    early_exit_dense_cuts<base::merge_ways>(buffers.keys(source), shape, cuts, comp);
    barrier.sync();
    early_exit_dense_merges<base>(buffers.keys(source), buffers.keys(source ^ 1u), buffers.values(source),
                                  buffers.values(source ^ 1u), cuts, shape, &control->kway_tiles_taken[pass], comp);
    barrier.sync();
  }
}

// ------------------------------------------------------------------ passes
// Everything after the blocksort, in one cooperative launch (all blocks
// resident, merge_min_blocks per SM at most) whose phases are separated by
// grid barriers: the boundary plans, their window merges, then per pass the
// jobs and their merges, then the final copy. A pass that nothing needs
// (every boundary in order after the windows, or past the passes any
// segment needs) ends the loop in every block at once: the counters it
// reads are final at the barrier before. One launch instead of 2P + 2: the
// launches of passes with little or nothing to merge were most of the time
// of sorted, nearly sorted and small inputs. The boundary, job and copy
// phases are functions of their own (noinline), so that their registers do
// not add to the merge loop's (-Xptxas -v, nvcc 13.0, u32 keys at 64
// registers: 360 bytes of spill inlined, 196 as calls; at 80 registers the
// merge loop keeps everything in registers; the spill left is the saves
// around the calls).
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::merge_min_blocks)
    early_exit_passes_kernel(merge_buffers<Key, Value> buffers, merge_segment_list list, std::uint8_t* location_arrays,
                             std::int64_t array_stride, merge_job* jobs, int passes, dense_passes dense,
                             merge_control* control, Compare comp) {
  allow_next_kernel();         // the dense passes kernel, when it follows, waits for this grid to finish
  wait_for_previous_kernel();  // the blocksort's keys, locations and counters
  if (dense != dense_passes::none && control->local_tiles == 0) {  // random keys in a locality sort
    if (dense == dense_passes::in_passes_kernel)
      early_exit_dense_passes_call<Policy>(buffers, list.n, passes, control, comp);
    return;
  }
  if (control->unfinished_tiles == 0) return;  // sorted input: every tile is final in keys_out
  using tiling = early_exit_tiling<Policy>;
  constexpr int threads = Policy::merge_threads;
  const auto locations_of = [&](int pass) { return location_arrays + (pass & 1) * array_stride; };
  // Merge-tile entries (a segment list's count is on the device).
  const auto tiles = [&] { return list.blocks() * tiling::merge_tiles_per_block; };
  grid_barrier barrier{&control->barrier_arrivals};
  const std::int64_t stride = gridDim.x;

  for (std::int64_t first = blockIdx.x * std::int64_t(threads); first < list.blocks(); first += stride * threads)
    early_exit_plan_boundaries<Policy>(first, buffers.keys_out, buffers.keys_temp, list, locations_of(0),
                                       locations_of(1), jobs, control, comp);
  barrier.sync();
  early_exit_merge_jobs<false, Policy>(buffers, jobs, control->boundary.job_count, comp);
  barrier.sync();

  // Passes run while some boundary is out of order after the windows (none:
  // the boundary plans left both location arrays alike) and some segment
  // needs them. Their merges gather with cp.async, the windows' with
  // registers. H100, 2^24, locality probe against the register gather in
  // both: this form, u32 keys random 1143 -> 1137-1139 us, u32 pairs random
  // 2113 -> 2040, nearly sorted unchanged; cp.async in both (one run):
  // random 1103-1110 us, pairs 2029, but nearly sorted (all windows)
  // 192-194 -> 194-197 us, pairs 338 -> 354. (Written with one
  // merge call site for the windows and the passes, this kernel sorted
  // wrongly in most locality tests on the H100 while this form passes them;
  // the cause was not found. merge_sort_merge_kernel notes a like case.)
  int pass = 0;
  for (;; ++pass) {
    const unsigned needed = control->out_of_order_boundaries == 0 ? 0u : control->needed_passes;
    if (pass >= passes || static_cast<unsigned>(pass) >= needed) break;
    const std::int64_t job_blocks = ceil_div(tiles(), std::int64_t(Policy::job_groups - 1));
    for (std::int64_t job_block = blockIdx.x; job_block < job_blocks; job_block += stride)
      early_exit_plan_jobs<Policy>(job_block, tiles(), pass, buffers.keys_out, buffers.keys_temp, list,
                                   locations_of(pass), locations_of(pass + 1), jobs, control, comp);
    barrier.sync();
    early_exit_merge_jobs<true, Policy>(buffers, jobs, control->pass[pass].job_count, comp);
    barrier.sync();
  }
  early_exit_final_copy<Policy>(buffers, list, tiles(), locations_of(pass), control);
}

// ------------------------------------------------------------------ statistics
// Writes *stats from the counters (one thread). Segmented sort adds the
// counts of its direct sorts (device counters, or known on the host).
// `dense`: the k-way dense passes of a locality sort (merge_passes 0: none),
// which count when no blocksort tile looked local.
template <int Unused = 0>
__global__ void early_exit_stats_kernel(sort_stats* stats, const merge_control* control, std::int64_t n,
                                        int tile_items, int blocksort_items, int passes,
                                        const unsigned long long* direct_segments,
                                        const unsigned long long* direct_keys, std::int64_t host_direct_segments,
                                        std::int64_t host_direct_keys, kway_merge_sort_plan dense) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  sort_stats s{};
  s.n = n;
  s.tile_items = tile_items;
  s.blocksort_items = blocksort_items;
  s.full_pass_tiles = n > 0 ? (n - 1) / tile_items + 1 : 0;
  s.direct_segments = direct_segments ? static_cast<std::int64_t>(*direct_segments) : host_direct_segments;
  s.direct_keys = direct_keys ? static_cast<std::int64_t>(*direct_keys) : host_direct_keys;
  s.merge_passes = passes < sort_stats::max_passes ? passes : sort_stats::max_passes;
  if (control) {
    s.blocksort_tiles = static_cast<std::int64_t>(control->blocksort_tiles);
    s.presorted_tiles = static_cast<std::int64_t>(control->presorted_tiles);
    s.blocksort_keys = static_cast<std::int64_t>(control->blocksort_keys);
    s.boundary.merge_tiles = 0;
    s.boundary.window_merges = static_cast<std::int64_t>(control->boundary.window_merges);
    s.boundary.merged_keys = static_cast<std::int64_t>(control->boundary.merged_keys);
    for (int p = 0; p < s.merge_passes; ++p) {
      s.pass[p].merge_tiles = static_cast<std::int64_t>(control->pass[p].merge_tiles);
      s.pass[p].window_merges = static_cast<std::int64_t>(control->pass[p].window_merges);
      s.pass[p].merged_keys = static_cast<std::int64_t>(control->pass[p].merged_keys);
    }
    s.final_copy_tiles = static_cast<std::int64_t>(control->final_copy_tiles);
    s.final_copy_keys = static_cast<std::int64_t>(control->final_copy_keys);
    if (dense.merge_passes > 0 && control->local_tiles == 0) {  // merge_sort's k-way passes ran
      s.merge_passes = dense.merge_passes < sort_stats::max_passes ? dense.merge_passes : sort_stats::max_passes;
      for (int p = 0; p < s.merge_passes; ++p) {
        const kway_pass_shape shape = dense.pass_shape(p);
        s.pass[p].merge_tiles = (shape.groups - 1) * shape.cuts_per_group + shape.last_group_cuts;
        s.pass[p].window_merges = 0;
        s.pass[p].merged_keys = n;
      }
    }
  } else {
    s.merge_passes = 0;
  }
  *stats = s;
}

// Enqueue the statistics kernel when the caller asked for statistics.
inline cudaError_t write_sort_stats(sort_stats* stats, const merge_control* control, std::int64_t n, int tile_items,
                                    int blocksort_items, int passes, const unsigned long long* direct_segments,
                                    const unsigned long long* direct_keys, std::int64_t host_direct_segments,
                                    std::int64_t host_direct_keys, cudaStream_t stream,
                                    const kway_merge_sort_plan& dense = {}) {
  if (stats == nullptr) return cudaSuccess;
  early_exit_stats_kernel<><<<1, 32, 0, stream>>>(stats, control, n, tile_items, blocksort_items, passes,
                                                   direct_segments, direct_keys, host_direct_segments,
                                                   host_direct_keys, dense);
  return cudaGetLastError();
}

// ------------------------------------------------------------------ host side
// Temp storage of the passes for `blocks` blocksort entries at most.
struct early_exit_layout {
  std::int64_t blocks = 0;        // bound on blocksort entries
  std::int64_t tiles = 0;         // merge-tile entries: k x blocks
  std::size_t keys_offset = 0;    // n keys (the temp buffer)
  std::size_t values_offset = 0;  // n values (pairs)
  std::size_t locations_offset = 0;  // 2 x tiles bytes (this pass's, the next's)
  std::size_t jobs_offset = 0;    // tiles jobs, or the k-way dense passes' cuts where those take more
};

// Carves the buffers one after another from `offset`, 256-byte aligned;
// returns the offset past them.
// `cut_bytes`: the k-way dense passes' cuts, kept where the jobs would be.
template <typename Policy>
std::size_t plan_early_exit_layout(early_exit_layout& layout, std::size_t offset, std::int64_t n,
                                   std::int64_t blocks, std::size_t key_bytes, std::size_t value_bytes,
                                   std::size_t cut_bytes = 0) {
  layout.blocks = blocks;
  layout.tiles = blocks * early_exit_tiling<Policy>::merge_tiles_per_block;
  auto take = [&](std::size_t bytes) {
    const std::size_t at = offset;
    offset = align_temp(offset + bytes);
    return at;
  };
  layout.keys_offset = take(static_cast<std::size_t>(n) * key_bytes);
  layout.values_offset = take(static_cast<std::size_t>(n) * value_bytes);
  layout.locations_offset = take(2 * static_cast<std::size_t>(layout.tiles));
  const std::size_t job_bytes = static_cast<std::size_t>(layout.tiles) * sizeof(merge_job);
  layout.jobs_offset = take(job_bytes > cut_bytes ? job_bytes : cut_bytes);
  return offset;
}

inline cudaError_t device_sm_count(int& sms) {
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
}

// Blocks of `kernel` (threads, shared bytes) one SM can hold, at most `cap`
// (the occupancy query is legal while the caller captures a graph).
template <typename Kernel>
cudaError_t resident_blocks_per_sm(Kernel* kernel, int threads, std::size_t shared, int cap, int& blocks) {
  const cudaError_t error = in_relaxed_capture_mode(
      [&] { return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared); });
  if (blocks > cap) blocks = cap;
  return error;
}

// The grid of a cooperative launch of `kernel` (threads, shared bytes), or
// of a persistent one: every block it can keep resident, at most `cap` per
// SM and `limit` in all. Allows the kernel its shared memory first.
template <typename Kernel>
cudaError_t cooperative_grid(Kernel* kernel, int threads, std::size_t shared, int cap, std::int64_t limit,
                             unsigned& grid) {
  TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(kernel, shared));
  int sms = 0, per_sm = 0;
  TILESORT_RETURN_IF_ERROR(device_sm_count(sms));
  TILESORT_RETURN_IF_ERROR(resident_blocks_per_sm(kernel, threads, shared, cap, per_sm));
  if (per_sm < 1) return cudaErrorInvalidConfiguration;
  grid = static_cast<unsigned>(std::min<std::int64_t>(std::int64_t(sms) * per_sm, limit));
  return cudaSuccess;
}

// Random keys in a locality sort of dense_kway_min_keys keys or more:
// merge_sort's k-way passes, launched after the passes kernel, each kernel
// returning at once unless no blocksort tile looked local; the merge kernels
// are persistent (about the resident blocks, tiles taken from a counter per
// pass) and the cut kernels' grids a wave, so that a skipped pass costs two
// waves. Their cuts lie where the jobs would (no job is queued when they
// run).
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t launch_early_exit_dense_kway(const merge_buffers<Key, Value>& buffers, const kway_merge_sort_plan& plan,
                                         merge_job* jobs, merge_control* control, bool dependent, Compare comp,
                                         cudaStream_t stream) {
  using base = typename Policy::base;
  using storage = merge_sort_kway_storage<Key, Value, base::merge_tile_items>;
  static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
  unsigned cut_blocks = 0, merge_blocks = 0;  // the resident blocks (cooperative_grid also allows the shared memory)
  TILESORT_RETURN_IF_ERROR(cooperative_grid(merge_sort_cut_kernel<base::merge_ways, Key, Compare>,
                                            merge_sort_partition_threads, 0, INT_MAX, INT_MAX, cut_blocks));
  TILESORT_RETURN_IF_ERROR(cooperative_grid(merge_sort_kway_kernel<base, true, Key, Value, Compare>,
                                            base::merge_threads, sizeof(storage), INT_MAX, INT_MAX, merge_blocks));
  const kway_pass_grids grids{cut_blocks, merge_blocks};
  std::uint8_t source = blocksort_to_temp(false, plan.merge_passes) ? in_temp : in_output;
  for (int pass = 0; pass < plan.merge_passes; ++pass, source ^= 1u)
    TILESORT_RETURN_IF_ERROR((launch_kway_pass<base, true>(
        plan.pass_shape(pass), buffers.keys(source), buffers.keys(source ^ 1u), buffers.values(source),
        buffers.values(source ^ 1u), reinterpret_cast<std::int64_t*>(jobs), &control->local_tiles, dependent, comp,
        stream, &control->kway_tiles_taken[pass], grids)));
  return cudaSuccess;
}

// The same passes in one cooperative launch (early_exit_dense_kway_kernel),
// below dense_kway_min_keys.
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t launch_early_exit_dense_kway_kernel(const merge_buffers<Key, Value>& buffers,
                                                const kway_merge_sort_plan& plan, merge_job* jobs,
                                                merge_control* control, bool dependent, Compare comp,
                                                cudaStream_t stream) {
  using base = typename Policy::base;
  using storage = merge_sort_kway_storage<Key, Value, base::merge_tile_items>;
  static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
  early_exit_kway_shapes shapes;
  shapes.passes = plan.merge_passes;
  for (int p = 0; p < plan.merge_passes; ++p) shapes.pass[p] = plan.pass_shape(p);
  auto* kernel = early_exit_dense_kway_kernel<Policy, Key, Value, Compare>;
  if constexpr (Policy::merge_prefers_shared)  // as the passes kernel before it
    TILESORT_RETURN_IF_ERROR(
        set_kernel_attribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  unsigned grid = 0;
  TILESORT_RETURN_IF_ERROR(
      cooperative_grid(kernel, base::merge_threads, sizeof(storage), Policy::dense_kway_min_blocks, INT_MAX, grid));
  return launch_cooperative_kernel(kernel, grid, base::merge_threads, sizeof(storage), stream, dependent, buffers,
                                   shapes, reinterpret_cast<std::int64_t*>(jobs), control, comp);
}

// Blocksort, then the passes kernel: boundary windows, up to `passes` merge
// passes and the final copy of the segments in `list` (at most layout.blocks
// blocksort entries). `control` is zeroed.
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t launch_early_exit_merge(const Key* keys_in, const Value* values_in, const merge_buffers<Key, Value>& buffers,
                                    const merge_segment_list& list, const early_exit_layout& layout, void* temp,
                                    int passes, merge_control* control, Compare comp, cudaStream_t stream) {
  if (layout.blocks <= 0) return cudaSuccess;
  if (passes > sort_stats::max_passes || layout.blocks > INT_MAX) return cudaErrorInvalidValue;
  char* base = static_cast<char*>(temp);
  std::uint8_t* locations = reinterpret_cast<std::uint8_t*>(base + layout.locations_offset);
  merge_job* jobs = reinterpret_cast<merge_job*>(base + layout.jobs_offset);
  // One segment (locality sort): the dense passes, for random keys.
  static_assert(Policy::dense_kernel_min_keys <= Policy::dense_kway_min_keys, "the k-way passes follow the own kernel");
  const dense_passes dense = early_exit_dense_choice<Policy>(list.segments == nullptr, list.n);

  // The k-way dense passes' plan (merge_passes 0: not these), worked out once.
  const kway_merge_sort_plan kway =
      takes_kway_passes(dense) ? early_exit_dense_plan<Policy>(list.n) : kway_merge_sort_plan{};
  if (kway.merge_passes > sort_stats::max_passes) return cudaErrorInvalidValue;
  // A locality sort's passes (`passes` is merge_passes_for(n) there).
  const early_exit_list_passes list_passes{passes, takes_kway_passes(dense) ? kway.merge_passes : passes};

  const auto blocksort = [&](auto shape) {
    using blocksort_policy = decltype(shape);
    using shared = early_exit_blocksort_shared<blocksort_policy, Key, Value>;
    auto* kernel = early_exit_blocksort_kernel<blocksort_policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(kernel, shared::bytes));
    kernel<<<static_cast<unsigned>(layout.blocks), blocksort_policy::block_threads, shared::bytes, stream>>>(
        keys_in, values_in, buffers, list, list_passes, locations, control, comp);
    return cudaGetLastError();
  };
  if constexpr (Policy::wide_blocksort) {  // not where merge_sort's k-way passes may follow
    TILESORT_RETURN_IF_ERROR(dense == dense_passes::kway_kernels ? blocksort(Policy{})
                                                                 : blocksort(early_exit_wide_blocksort<Policy>{}));
  } else {
    TILESORT_RETURN_IF_ERROR(blocksort(Policy{}));
  }
  if (passes == 0) return cudaSuccess;  // every tile was written to keys_out

  using storage_type = early_exit_merge_storage<Key, Value, Policy::merge_tile_items>;
  static_assert(alignof(storage_type) <= 16, "dynamic shared memory is 16-byte aligned");
  auto* kernel = early_exit_passes_kernel<Policy, Key, Value, Compare>;
  if constexpr (Policy::merge_prefers_shared)
    TILESORT_RETURN_IF_ERROR(
        set_kernel_attribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  unsigned grid = 0;
  TILESORT_RETURN_IF_ERROR(cooperative_grid(kernel, Policy::merge_threads, sizeof(storage_type),
                                            Policy::merge_min_blocks, layout.tiles, grid));
  // A dependent of the blocksort (detail/dependent_launch.cuh): its blocks
  // become resident while the blocksort's last wave runs.
  bool dependent = false;
  TILESORT_RETURN_IF_ERROR(dependent_launch_supported(dependent));
  TILESORT_RETURN_IF_ERROR(launch_cooperative_kernel(kernel, grid, Policy::merge_threads, sizeof(storage_type),
                                                     stream, dependent, buffers, list, locations, layout.tiles,
                                                     jobs, passes, dense, control, comp));
  if constexpr (Policy::base::merge_ways > 2) {
    if (dense == dense_passes::kway_kernels)
      return launch_early_exit_dense_kway<Policy>(buffers, kway, jobs, control, dependent, comp, stream);
    if (dense == dense_passes::kway_kernel)
      return launch_early_exit_dense_kway_kernel<Policy>(buffers, kway, jobs, control, dependent, comp, stream);
  }
  if constexpr (Policy::base::merge_ways == 2) {  // the only items that take the own kernel
    if (dense != dense_passes::own_kernel) return cudaSuccess;
    auto* dense_kernel = early_exit_dense_passes_kernel<Policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(cooperative_grid(dense_kernel, Policy::merge_threads, sizeof(storage_type),
                                              Policy::dense_min_blocks,
                                              ceil_div(list.n, std::int64_t(Policy::merge_tile_items)), grid));
    return launch_cooperative_kernel(dense_kernel, grid, Policy::merge_threads, sizeof(storage_type), stream,
                                     dependent, buffers, list.n, passes, control, comp);
  }
  return cudaSuccess;
}

}  // namespace detail
}  // namespace tilesort
