// detail/block_merge_plan.cuh — the index arithmetic of block_sort's merge
// rounds and the padded shared-memory layout they read and write. Pure integer
// functions, host-tested (tests/host/block_merge_plan.cu).
//
// A tile is BlockThreads x ItemsPerThread keys in blocked arrangement (thread t
// holds tile positions [t*IPT, (t+1)*IPT)). After each thread sorts its own
// keys, round r merges sorted runs of IPT * 2^r keys pairwise:
//
//   round 0:  |t0|t1|t2|t3|t4|t5|t6|t7|...   runs of IPT keys, pairs (t0,t1), (t2,t3), ...
//   round 1:  |t0 t1|t2 t3|t4 t5|t6 t7|...   runs of 2*IPT keys
//   round r:  a run pair spans 2^(r+1) threads; the pair's k-th thread writes
//             outputs [k*IPT, (k+1)*IPT) of the merged run.
//
// Rounds 0..4 merge run pairs of at most 32 threads: one warp reads and writes
// only its own 32*IPT positions, so a __syncwarp() orders them. Later rounds
// need the whole block (__syncthreads()).
#pragma once

#include "config.cuh"
#include "merge_jobs.cuh"  // plan_group

namespace tilesort::detail {

inline constexpr int warp_threads = 32;

// Merge rounds of a block of `threads` threads: ceil(log2(threads)).
TILESORT_HD constexpr int block_merge_rounds(int threads) { return threads <= 1 ? 0 : log2_floor(threads - 1) + 1; }

// The first rounds, whose run pairs fit inside one warp (2^(r+1) <= 32 threads).
TILESORT_HD constexpr int warp_merge_rounds(int threads) {
  return block_merge_rounds(threads) < 5 ? block_merge_rounds(threads) : 5;
}

// What one thread merges in one round: runs A = [a_begin, a_end) and
// B = [b_begin, b_end) of the tile (b_begin == a_end), and its first output,
// counted from a_begin. With a block size that is not a power of two the last
// pair can be short, and B can be empty.
struct merge_range {
  int a_begin;
  int a_end;
  int b_begin;
  int b_end;
  int diagonal;
};

TILESORT_HD constexpr merge_range block_merge_range(int thread, int round, int items_per_thread, int tile_items) {
  const int run_items = items_per_thread << round;
  const int first_thread = thread & ~((2 << round) - 1);
  const int begin = first_thread * items_per_thread;
  const int a_end = begin + run_items < tile_items ? begin + run_items : tile_items;
  const int b_end = begin + 2 * run_items < tile_items ? begin + 2 * run_items : tile_items;
  return merge_range{begin, a_end, a_end, b_end, thread * items_per_thread - begin};
}

// Boundary windows, for tiles whose keys lie near their sorted place. After
// the warp rounds every warp's run of W = 32 x IPT keys is sorted. When at
// every boundary b = w·W between two warps' runs the keys that move lie
// within H = W / 2 of b (A's key at b - H - 1 does not follow B's first key,
// and B's key at b + H does not precede A's last: boundary_window_fits), one
// merge of each window [b - H, b) ++ [b, b + H) finishes the sort. The
// windows are disjoint, and the keys between two windows stay between them
// (the argument of detail/merge_jobs.cuh's boundary windows). H is a
// multiple of IPT, so thread t's outputs [t·IPT, (t+1)·IPT) lie in one window
// or in the tile's first or last H keys, which stay.
TILESORT_HD constexpr bool boundary_window_moves(int thread, int items_per_thread, int tile_items) {
  const int run = warp_threads * items_per_thread;
  const int first = thread * items_per_thread;
  return first >= run / 2 && first < tile_items - run / 2;
}
TILESORT_HD constexpr merge_range boundary_window_range(int thread, int items_per_thread) {
  const int run = warp_threads * items_per_thread;
  const int first = thread * items_per_thread;
  const int b = (first + run / 2) / run * run;
  return merge_range{b - run / 2, b, b, b + run / 2, first - (b - run / 2)};
}
// The check at boundary b (0 < b < tile, a multiple of W): merge_jobs.cuh's
// plan_group on the two runs with the one half width H (in order or a window
// fits; `tiles` does not). key(p) reads the sorted runs' key at tile position p.
template <typename KeyAt, typename Compare>
TILESORT_HD bool boundary_window_fits(int b, int items_per_thread, const KeyAt& key, Compare comp) {
  const int run = warp_threads * items_per_thread;
  const int half_width[1] = {run / 2};
  return plan_group(run_group{b - run, b, b + run}, key, half_width, true, comp).plan != group_plan::tiles;
}

// Partial tiles: only positions < valid_items hold keys; the others act as
// +infinity ordered by position. Every round keeps the valid keys at positions
// [0, valid_items) (a run's valid keys are its prefix), so B's valid keys are
// the prefix of this length. When A has invalid keys, B has none.
TILESORT_HD constexpr int valid_b_items(const merge_range& range, int valid_items) {
  const int n = valid_items - range.b_begin;
  const int b_items = range.b_end - range.b_begin;
  return n < 0 ? 0 : (n < b_items ? n : b_items);
}

// Keys a thread's in-register sort must order in a partial tile (the rest are
// invalid and stay in place).
TILESORT_HD constexpr int valid_thread_items(int thread, int items_per_thread, int valid_items) {
  const int n = valid_items - thread * items_per_thread;
  return n < 0 ? 0 : (n < items_per_thread ? n : items_per_thread);
}

// The merge-path split (detail::merge_path's result) by binary lifting, for
// ranges known to be at most `max_range` wide (a run's length): a fixed
// count of floor(log2(max_range)) + 1 steps, each one compare and one
// conditional add, instead of a data-dependent loop that recomputes a
// midpoint. When max_range is a compile-time constant the steps unroll.
// Step s keeps lo = (number of A keys known to come first); A[lo+s-1] comes
// first too iff B's key at the same diagonal is not strictly smaller.
//
// UnguardedProbes: read both probes on every step and only then test the
// range, so the step has no branch. A probe can then fall outside the runs:
// a[i] for i < lo_max + P and b[j] for j >= diagonal - hi - P, where P is the
// largest power of two <= max_range. When A is max_range long and B follows
// it directly (a full run pair), every such read is inside [A begin, A begin +
// 2 * max_range): the caller must make that window readable.
template <bool UnguardedProbes, typename KeyIterA, typename KeyIterB, typename Compare>
TILESORT_HD int merge_path_bounded(KeyIterA a, int a_len, KeyIterB b, int b_len, int diagonal, int max_range,
                                   Compare comp) {
  int lo = diagonal > b_len ? diagonal - b_len : 0;
  const int hi = diagonal < a_len ? diagonal : a_len;
  TILESORT_UNROLL
  for (int step = static_cast<int>(next_pow2(max_range + 1) >> 1); step > 0; step >>= 1) {
    const int probe = lo + step;
    if constexpr (UnguardedProbes) {
      const bool a_first = !comp(b[diagonal - probe], a[probe - 1]);
      if (probe <= hi && a_first) lo = probe;
    } else {
      if (probe <= hi && !comp(b[diagonal - probe], a[probe - 1])) lo = probe;
    }
  }
  return lo;
}

// ---------------------------------------------------------------- layout
// Shared memory has 32 banks of 4 bytes. A warp's 4-byte accesses are served
// 32 lanes at a time; 8-byte accesses 16 lanes at a time (two wavefronts, as
// if the banks were 16 banks of 8 bytes: the 64-bit mode), 16-byte accesses 8
// at a time. Call that group size G (in items). Storing a thread's registers
// to blocked positions t*IPT + i writes, for each i, G lanes at a stride of
// IPT items: a (gcd(IPT, G))-way conflict (16-way for IPT = 16, 4-byte keys:
// CUB's BlockMergeSort pays this).
//
// Fix: insert one unused item after every `period` items,
//   index(p) = p + p / period              (period a power of two: a shift)
// * IPT odd: stride IPT is coprime to G already; period = 0 (no padding).
// * IPT = 2^k: period = max(IPT, G). If IPT >= G the stride becomes IPT + 1
//   (odd). If IPT < G, lane t = q*(G/IPT) + s lands on bank s*IPT + q + i:
//   every bank once. (For IPT = 16, 4-byte keys: index(p) = p + p/32.)
// * IPT = 2^k * m, m odd > 1: period = 2^k. Lane t lands on
//   t*m*(2^k + 1) + const (mod G), and m*(2^k + 1) is odd: every bank once.
// So blocked stores are conflict-free for any IPT and item size (host test).
// Merge reads are data dependent (about 3-way on random keys with or without
// padding); the padding takes away their systematic part in early rounds.
// The cost is one shift-and-add per address.
template <int ItemsPerThread, int ItemBytes>
struct padded_layout {
  static constexpr int item_unit = ItemBytes < 4 ? 4 : ItemBytes;
  static constexpr int group = item_unit >= 128 ? 1 : static_cast<int>(1LL << log2_floor(128 / item_unit));
  static constexpr int low_bit = ItemsPerThread & -ItemsPerThread;
  static constexpr int period = (ItemsPerThread % 2 == 1) ? 0
                                : is_pow2(ItemsPerThread) ? (ItemsPerThread > group ? ItemsPerThread : group)
                                                          : low_bit;
  static constexpr int shift = period == 0 ? 0 : log2_floor(period);

  // Shared-memory slot of tile position p.
  TILESORT_HD static constexpr int index(int p) { return period == 0 ? p : p + (p >> shift); }
  // index(t*IPT + i) - index(t*IPT): a compile-time offset for every thread
  // (period divides IPT, or IPT divides period).
  TILESORT_HD static constexpr int thread_offset(int i) {
    return (period == 0 || period > ItemsPerThread) ? i : i + (i >> shift);
  }
  // Slots for positions [0, n] (position n: the merge may read one past the end).
  TILESORT_HD static constexpr int slots(int n) { return index(n) + 1; }
};

}  // namespace tilesort::detail
