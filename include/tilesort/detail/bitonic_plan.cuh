// detail/bitonic_plan.cuh — the schedule of the bitonic sort as integer
// arithmetic: which stages run in which global pass, which keys each block of
// a pass gathers, and where each key sits in a thread's registers. Everything
// is __host__ __device__; the kernels use exactly these functions and
// tests/host/bitonic_plan.cu runs them (and the block engine) on the host.
//
// The network. Batcher's bitonic network on P = 2^K slots, K = ceil(log2 n),
// in the "flip" form: merge m (m = 1..K) sorts each block of 2^m slots; its
// first stage compares slot i with its mirror i ^ (2^m - 1), its later stages
// compare i with i ^ 2^p for p = m-2 .. 0, and the lower slot always receives
// the smaller key. Slots >= n are virtual +infinity. In this form they never
// move, so every comparison whose upper slot is >= n is skipped: no sentinel,
// no padding in memory, no work on the padding. "Stage (m, p)" is the stage of
// merge m with stride bit p; p = m-1 is the flip.
//
// The passes (global-memory round trips) for n keys and tiles of 2^G keys.
// A pass's block holds 2^G keys whose indices vary in a set of G bits: a run
// of 2^A consecutive keys (bits [0, A), A >= L for coalescing) and a group of
// G - A higher bits; it can run any sequence of consecutive stages whose bits
// lie in that set. The plan walks the network's stages greedily:
//   1. sort_tiles: each tile runs merges 1..min(K, G) on chip.
//   2. then, from the next stage (m, b) to run, the first that applies:
//      - merge_fused, when b + 1 = A is one of the policy's fused runs
//        (L < A < G) and merge m+1 exists: the tail of merge m (bits A-1 .. 0,
//        inside each run of 2^A keys) and the head of merge m+1 (its flip at
//        bit m and bits m-1 .. m-G+A+1, across the runs; group [m-G+A+1, m]
//        above the run) in one round trip. The mirror-image halves the flip
//        pairs are the block's two halves, as for merge_global's first pass.
//      - merge_tiles, when b < G: stages (m, b) .. (m, 0), tile by tile (the
//        kernel runs bits G-1 .. b+1 too: after the stages above b they pair
//        keys already in order and move nothing);
//      - merge_global: stages (m, b) .. (m, b-h+1) for runs of 2^L keys, at
//        most H = G - L of them (h = H when a fused pass can follow, else
//        down to bit G).
//   Launches: 1 for n <= 2^G, else bitonic_plan::pass_count(). With G = 14,
//   L = 5 and fused runs {6, 8, 11} (u32 keys): 2^16: 4, 2^20: 10, 2^24: 18,
//   2^28: 27 (without fused passes: 5, 13, 22, 34). Blocks whose keys all lie
//   at or past n are not launched, so n = 2^k + 1 costs one more merge, not a
//   doubled array.
//
// Inside a block (see block/bitonic_tile.cuh) each thread holds 2^R
// keys in registers: a "layout" puts local bits [window, window + R) of the
// key index in the register number and the other bits in the thread number,
// so that R consecutive stage bits run in registers between two trips through
// shared memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.cuh"

namespace tilesort::detail {

// The default run of a merge_global pass: 2^5 consecutive keys, a warp's worth.
inline constexpr int bitonic_run_log = 5;

// The runs of merge_fused passes (bit A set: runs of 2^A keys) that the
// device policies offer; with them the greedy plan takes as few passes as
// any set of runs would for G = 13..14, L = 4..5 and n up to 2^30 (checked
// by dynamic programming over all plans when they were chosen). Each is one
// more kernel per key type.
inline constexpr unsigned bitonic_fused_runs = (1u << 6) | (1u << 8) | (1u << 11);

// Every run a tile of 2^tile_log keys, 2^item_log per thread, can fuse with
// global runs of 2^run_log: max(item_log, run_log) < A < tile_log (the tail
// takes a register round, the head at least one stage).
TILESORT_HD constexpr unsigned bitonic_fused_runs_for(int tile_log, int item_log, int run_log) {
  return ~((2u << (item_log > run_log ? item_log : run_log)) - 1) & ((1u << tile_log) - 1);
}

TILESORT_HD constexpr int ceil_log2(std::int64_t x) { return x <= 1 ? 0 : log2_floor(x - 1) + 1; }
TILESORT_HD constexpr int min_int(int a, int b) { return a < b ? a : b; }
TILESORT_HD constexpr int max_int(int a, int b) { return a > b ? a : b; }

// ------------------------------------------------------------------ the network
struct bitonic_stage {
  int merge_log;  // m: the stage belongs to the merge of blocks of 2^m slots
  int bit;        // p: stride 2^p; p == m - 1 is the flip
  TILESORT_HD constexpr bool flip() const { return bit == merge_log - 1; }
};

// Stages of the network on 2^padded_log slots.
TILESORT_HD constexpr int bitonic_stage_count(int padded_log) { return padded_log * (padded_log + 1) / 2; }

// The index-th stage (0-based) of every bitonic network: (1,0), (2,1), (2,0), (3,2), ...
TILESORT_HD constexpr bitonic_stage bitonic_network_stage(int index) {
  int m = 1;
  while (bitonic_stage_count(m) <= index) ++m;
  return {m, m - 1 - (index - bitonic_stage_count(m - 1))};
}

// The slot that `slot` is compared with in stage s.
TILESORT_HD constexpr std::int64_t bitonic_partner(std::int64_t slot, bitonic_stage s) {
  return s.flip() ? slot ^ ((std::int64_t(1) << s.merge_log) - 1) : slot ^ (std::int64_t(1) << s.bit);
}

// ------------------------------------------------------------------ register layouts
// Register k of thread t holds local key index
//   base = (t's low `window` bits) | k << window | (t's other bits) << (window + R)
// and, when `reflect` = m > 0 and bit m-1 of base is set, base ^ (2^(m-1) - 1):
// the upper half of each 2^m block is stored mirrored. Then merge m's flip
// pairs (i, i ^ (2^m - 1)) become register pairs k, k ^ 2^(m-1-window), and the
// merge's later stages stay register pairs too, with the smaller key going to
// the higher register in the mirrored half. `window` must contain bit m-1.
// window == 0, reflect == 0 is the blocked layout (thread t holds keys
// [t * 2^R, (t+1) * 2^R)).
struct bitonic_layout {
  int window;
  int reflect;
};

TILESORT_HD constexpr int bitonic_thread_part(int thread, int window, int item_log) {
  return (thread & ((1 << window) - 1)) | ((thread >> window) << (window + item_log));
}
// The thread part of a mirrored register's index (the bits below the window are
// thread bits, and they are all below m-1).
TILESORT_HD constexpr int bitonic_mirrored_thread_part(int thread_part, int window) {
  return thread_part ^ ((1 << window) - 1);
}
TILESORT_HD constexpr bool bitonic_mirrored(bitonic_layout lay, int k) {
  return lay.reflect != 0 && (((k << lay.window) >> (lay.reflect - 1)) & 1) != 0;
}
TILESORT_HD constexpr int bitonic_register_part(bitonic_layout lay, int k) {
  const int part = k << lay.window;
  return bitonic_mirrored(lay, k) ? part ^ (((1 << (lay.reflect - 1)) - 1) & ~((1 << lay.window) - 1)) : part;
}
// Local index of register k of thread t. The two parts have disjoint bits, so
// the kernels add a per-thread part to a compile-time register part.
TILESORT_HD constexpr int bitonic_layout_index(bitonic_layout lay, int item_log, int thread, int k) {
  const int plain = bitonic_thread_part(thread, lay.window, item_log);
  return (bitonic_mirrored(lay, k) ? bitonic_mirrored_thread_part(plain, lay.window) : plain) |
         bitonic_register_part(lay, k);
}

// The window of the register round that runs stage bits [low, low + R) (or
// fewer) of a tile of 2^tile_log keys. Windows at or above bit 5 leave the
// lanes of a warp on 32 consecutive keys (coalesced global accesses,
// conflict-free shared memory); low == 0 gives the blocked layout.
TILESORT_HD constexpr int bitonic_window(int low, int tile_log, int item_log) { return min_int(low, tile_log - item_log); }

// Shared-memory padding: one spare slot after every 2^row_log keys. With the
// row at 128 bytes (32 slots for keys of 4 bytes or less) the blocked layout's
// stride of 2^R keys lands successive lanes in successive banks; every other
// layout has lanes on consecutive keys. The padding is additive over disjoint
// index bits, so padded(thread part) + padded(register part) is exact.
TILESORT_HD constexpr int bitonic_bank_row_log(std::size_t bytes) {
  return bytes <= 4 ? 5 : bytes <= 8 ? 4 : bytes <= 16 ? 3 : 30;
}
TILESORT_HD constexpr int bitonic_padded(int index, int row_log) { return index + (index >> row_log); }
TILESORT_HD constexpr int bitonic_padded_size(int items, int row_log) { return items + (items >> row_log); }

// ------------------------------------------------------------------ passes
enum class bitonic_pass_kind : int { sort_tiles, merge_global, merge_tiles, merge_fused };

// merge_fused: merge_log, top_bit, stages and flip describe the head (merge
// m+1 from its flip); the tail is merge m's bits run - 1 .. 0.
struct bitonic_pass {
  bitonic_pass_kind kind;
  int merge_log;  // m. sort_tiles: the last merge it runs, min(K, G)
  int top_bit;    // the first stage's bit
  int stages;     // stage bits top_bit, top_bit - 1, ... (sort_tiles: all stages of merges 1..merge_log)
  bool flip;      // the first stage is merge m's flip
  int run;        // merge_fused: A, the tail's bits (runs of 2^A keys); else 0
};

// Which keys block b of a pass holds: local index e in [0, 2^G) is global key
//   base + (e's bits below run_log)
//        + (e's bits [run_log, G-1)) << (shift - run_log)
//        + (e's bit G-1 ? upper : 0).
// The map is increasing in e, so the keys that exist (index < n) are exactly
// e < valid. Tiles: base = b * 2^G, index = base + e.
struct bitonic_block_map {
  std::int64_t base;
  std::int64_t upper;
  int run_log;
  int shift;
  int tile_log;
  int valid;

  TILESORT_HD constexpr std::int64_t offset(int e) const {
    const int half = 1 << (tile_log - 1);
    return (e & ((1 << run_log) - 1)) + (std::int64_t((e & (half - 1)) >> run_log) << shift) + ((e & half) ? upper : 0);
  }
  TILESORT_HD constexpr std::int64_t index(int e) const { return base + offset(e); }
};

// Count of (a, l), a < 2^a_bits, l < 2^run_log, with (a << shift) + l < limit (shift >= run_log).
TILESORT_HD constexpr std::int64_t bitonic_count_below(std::int64_t limit, int run_log, int shift, int a_bits) {
  if (limit <= 0) return 0;
  const std::int64_t a_full = limit >> shift;
  if (a_full >= (std::int64_t(1) << a_bits)) return std::int64_t(1) << (a_bits + run_log);
  const std::int64_t rest = limit - (a_full << shift);
  const std::int64_t run = std::int64_t(1) << run_log;
  return (a_full << run_log) + (rest < run ? rest : run);
}
// Count of (h, f), h >= 0, f < 2^f_bits, with (h << shift) + f < limit (shift >= f_bits).
TILESORT_HD constexpr std::int64_t bitonic_count_blocks(std::int64_t limit, int f_bits, int shift) {
  if (limit <= 0) return 0;
  const std::int64_t rest = limit & ((std::int64_t(1) << shift) - 1);
  const std::int64_t f_count = std::int64_t(1) << f_bits;
  return ((limit >> shift) << f_bits) + (rest < f_count ? rest : f_count);
}

struct bitonic_plan {
  std::int64_t n;
  int tile_log;        // G: a block holds 2^G keys
  int run_log;         // L: merge_global passes read runs of 2^L consecutive keys
  int padded_log;      // K = ceil(log2 n)
  unsigned fused_runs;  // bit A set: merge_fused passes with runs of 2^A keys may run (L < A < G)

  TILESORT_HD static constexpr bitonic_plan make(std::int64_t n, int tile_log, int run_log = bitonic_run_log,
                                                 unsigned fused_runs = 0) {
    return {n, tile_log, run_log, ceil_log2(n), fused_runs};
  }

  // H: stages one merge_global pass can run (its keys span H index bits above the run).
  TILESORT_HD constexpr int global_span() const { return tile_log - run_log; }
  TILESORT_HD constexpr std::int64_t tile_items() const { return std::int64_t(1) << tile_log; }
  TILESORT_HD constexpr std::int64_t tiles() const { return ceil_div(n, tile_items()); }

  // The run A of a merge_fused pass that starts at stage (m, b), or 0 when none can.
  TILESORT_HD constexpr int fused_run(int m, int b) const {
    // (The head's group [m-G+A+1, m] then lies above the run: m > G.)
    const int a = b + 1;
    return a > run_log && a < tile_log && a < 32 && ((fused_runs >> a) & 1u) != 0 && m < padded_log ? a : 0;
  }

  // The passes in order: f(index, pass) for each; returns their count (0 for n <= 1).
  template <typename F>
  TILESORT_HD constexpr int walk(F&& f) const {
    if (n <= 1) return 0;
    const int first = min_int(padded_log, tile_log);
    int count = 0;
    if (f(count++, bitonic_pass{bitonic_pass_kind::sort_tiles, first, first - 1, bitonic_stage_count(first), true, 0}))
      return count;
    int m = tile_log + 1, b = tile_log;  // the next stage to run is (m, b)
    while (m <= padded_log) {
      bitonic_pass pass{};
      if (const int a = fused_run(m, b)) {
        pass = {bitonic_pass_kind::merge_fused, m + 1, m, tile_log - a, true, a};
        b = m - tile_log + a;  // merge m+1 goes on at the bit below the head's group
        ++m;
      } else if (b < tile_log) {
        pass = {bitonic_pass_kind::merge_tiles, m, b, b + 1, false, 0};
        ++m;
        b = m - 1;
      } else {
        int h = min_int(global_span(), b - tile_log + 1);
        for (int t = global_span(); t > h; --t)
          if (fused_run(m, b - t)) {
            h = t;
            break;
          }
        pass = {bitonic_pass_kind::merge_global, m, b, h, b == m - 1, 0};
        b -= h;  // >= L: b >= G here
      }
      if (f(count++, pass)) return count;
    }
    return count;
  }

  // Kernel launches (global passes) for n keys; 0 for n <= 1 (a copy at most).
  TILESORT_HD constexpr int pass_count() const {
    return walk([](int, const bitonic_pass&) { return false; });
  }

  // The index-th pass, 0 <= index < pass_count().
  TILESORT_HD constexpr bitonic_pass pass(int index) const {
    bitonic_pass found{bitonic_pass_kind::sort_tiles, 0, 0, 0, false, 0};  // out of range
    walk([&](int i, const bitonic_pass& p) {
      if (i == index) found = p;
      return i >= index;
    });
    return found;
  }

  // Bits of the run a pass's blocks read (merge_global: L; merge_fused: A).
  TILESORT_HD constexpr int run_bits(const bitonic_pass& pass) const {
    return pass.kind == bitonic_pass_kind::merge_fused ? pass.run : run_log;
  }

  // Blocks to launch for a pass: exactly those holding at least one key < n.
  TILESORT_HD constexpr std::int64_t blocks(const bitonic_pass& pass) const {
    if (pass.kind == bitonic_pass_kind::sort_tiles || pass.kind == bitonic_pass_kind::merge_tiles) return tiles();
    // Block bases are multiples of 2^run, increasing with the block number.
    const int rl = run_bits(pass);
    const std::int64_t runs = ceil_div(n, std::int64_t(1) << rl);
    if (pass.flip) return bitonic_count_blocks(runs, pass.merge_log - tile_log, pass.merge_log - rl);
    const int shift = pass.top_bit - global_span() + 1;
    return bitonic_count_blocks(runs, shift - run_log, pass.top_bit + 1 - run_log);
  }

  // The keys block `block` of `pass` holds.
  TILESORT_HD constexpr bitonic_block_map block_map(const bitonic_pass& pass, std::int64_t block) const {
    const int half = 1 << (tile_log - 1);
    if (pass.kind == bitonic_pass_kind::sort_tiles || pass.kind == bitonic_pass_kind::merge_tiles) {
      const std::int64_t base = block << tile_log;
      const std::int64_t left = n - base;
      return {base, half, tile_log - 1, tile_log - 1, tile_log, int(left < tile_items() ? left : tile_items())};
    }
    const int rl = run_bits(pass);
    const int span = tile_log - rl;
    if (pass.flip) {
      // Lower half: block of 2^m slots `high`, fixed bits f at [rl, m-G+rl); the
      // span-1 bits [m-span, m-1) and the run vary. Upper half: their mirrors,
      // which are the same pattern with f complemented, in the block's upper half.
      const int m = pass.merge_log;
      const int f_bits = m - tile_log;
      const int shift = m - span;
      const std::int64_t f = block & ((std::int64_t(1) << f_bits) - 1);
      const std::int64_t high = block >> f_bits;
      const std::int64_t base = (high << m) + (f << rl);
      const std::int64_t upper = (std::int64_t(1) << (m - 1)) + (((std::int64_t(1) << f_bits) - 1 - 2 * f) << rl);
      std::int64_t valid = bitonic_count_below(n - base, rl, shift, span - 1);
      if (valid == half) valid += bitonic_count_below(n - base - upper, rl, shift, span - 1);
      return {base, upper, rl, shift, tile_log, int(valid)};
    }
    // Stage bits top-H+1 .. top vary (H bits, the top one as the "upper half"),
    // and the run; the bits between the run and them, and above top, are fixed.
    const int shift = pass.top_bit - span + 1;
    const int f_bits = shift - run_log;
    const std::int64_t f = block & ((std::int64_t(1) << f_bits) - 1);
    const std::int64_t high = block >> f_bits;
    const std::int64_t base = (high << (pass.top_bit + 1)) + (f << run_log);
    const std::int64_t valid = bitonic_count_below(n - base, run_log, shift, span);
    return {base, std::int64_t(1) << pass.top_bit, run_log, shift, tile_log, int(valid)};
  }
};

}  // namespace tilesort::detail
