// detail/radix_sort_plan.cuh — the radix sort's arithmetic, tested on the
// host: the temp-storage layout, the schedule of digit passes (which are
// skipped, where each reads and writes), and the look-back words.
//
// Schedule. The histogram kernel counts every digit of every key; a digit
// whose keys all share one value (one bin holds all n) moves nothing, so its
// pass is skipped. With E passes left, they ping-pong between the output and
// the alternate buffer so that the last one writes the output:
//   out of place: pass j writes the output if E - 1 - j is even, else the
//                 alternate; pass 0 reads the input.
//   in place:     pass 0 must not write the buffer it reads, so pass j
//                 writes the alternate if j is even, else the output; an odd
//                 E ends in the alternate and a copy follows.
// E == 0: the keys are in order already (all images equal): a copy, or
// nothing in place. The schedule is made on the device (no host
// synchronisation) by radix_schedule_passes, the same function the host
// tests call.
//
// Look-back. Each digit pass ranks tiles in the order blocks take them and
// finds, per digit, how many keys of earlier tiles share it: decoupled
// look-back over one 64-bit word per (tile, digit): a 40-bit count, a flag
// (the tile's own count, or the inclusive count of it and every earlier
// tile), the pass's parity and the tile's ring cycle. The words live in a
// ring of `ring_tiles` tiles (reused by tile t + ring_tiles once every tile
// that may still read them is done), so temp storage stays small at any n:
// a tile looks back at most `window` tiles (at the window's end it waits for
// an inclusive count), and tile t writes its slot only once tiles
// [t - ring, t - ring + window] are done. The parity and cycle tell a word
// of this pass and tile from what an earlier pass or tile left there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.cuh"
#include "error.cuh"

namespace tilesort::detail {

inline constexpr int radix_max_passes = 8;  // 64-bit images, 8-bit digits
inline constexpr int radix_bins = 256;      // 8-bit digits

// Where a pass reads or writes (radix_none: no copy is needed).
enum radix_buffer : int { radix_none = 0, radix_input = 1, radix_output = 2, radix_alternate = 3 };

struct radix_pass {
  int executed;     // 0: skipped (the digit is the same in every key)
  int source;       // radix_buffer
  int destination;  // radix_buffer
  int first;        // the first executed pass (reads the input; makes generated values)
  int last;         // the last executed pass (writes the final values)
  int parity;       // executed-pass index mod 2 (look-back words of this pass)
};

struct radix_schedule {
  radix_pass pass[radix_max_passes];
  int executed;          // passes that move keys
  int copy_source;       // after the passes: copy this buffer to the output (radix_none: no copy)
  int copy_after_last;   // the copy must wait for the last launched pass (it executed)
  int buckets;           // 1: the passes sort by bucket digits alone, the buckets are sorted next
  int bucket_digit[2];   // the bucket digits, most significant first (radix_bucket_digits of them)
};

// The schedule of `passes` digit passes, `varies[p]` false where digit p is
// the same in every key. `in_place`: the output (keys or values) is the input.
TILESORT_HD void radix_schedule_passes(const bool* varies, int passes, bool in_place, radix_schedule& s) {
  int executed = 0;
  for (int p = 0; p < passes; ++p) executed += varies[p] ? 1 : 0;
  s.executed = executed;
  int j = 0, previous = radix_input;
  for (int p = 0; p < radix_max_passes; ++p) {
    radix_pass& pass = s.pass[p];
    pass = radix_pass{0, radix_none, radix_none, 0, 0, 0};
    if (p >= passes || !varies[p]) continue;
    const bool to_output = in_place ? (j % 2 == 1) : ((executed - 1 - j) % 2 == 0);
    pass.executed = 1;
    pass.source = previous;
    pass.destination = to_output ? radix_output : radix_alternate;
    pass.first = j == 0 ? 1 : 0;
    pass.last = j == executed - 1 ? 1 : 0;
    pass.parity = j % 2;
    previous = pass.destination;
    ++j;
  }
  // Where the sorted keys are after the passes, when that is not the output.
  if (executed == 0) {
    s.copy_source = radix_input;  // the copy kernel skips what is already in place
  } else {
    s.copy_source = previous == radix_output ? radix_none : previous;
  }
  s.copy_after_last = s.copy_source != radix_none && passes > 0 && varies[passes - 1] ? 1 : 0;
}

// Hybrid sort. From the policy's hybrid_min_keys on, the plan allows
// `bucket_digits` (1 or 2) digits per bucket. Then, where the histogram
// shows that the keys spread over the buckets, only the top bucket_digits
// varying digits get passes (least significant first, as before), which
// leaves every run of keys that share those digits (a bucket) contiguous and
// in input order; each bucket is then sorted on its own, all its bits, on
// chip (device/radix_sort/buckets.cuh). The digits between and above the
// bucket digits are the same in every key, so bucket order is key order.
// Where the keys do not spread (the estimated largest bucket, the product of
// each bucket digit's largest bin share times n, exceeds
// `largest_bucket`), or the hybrid sort would save fewer than
// `min_passes_saved` LSD passes (the bucket sort costs about as much as a
// few passes), the sort stays LSD: `run` = `varies`.
inline constexpr int radix_bucket_digits = 2;

struct radix_hybrid_limits {
  int bucket_digits = 0;            // 0: LSD only
  std::int64_t largest_bucket = 0;  // keys the estimated largest bucket may hold
  int min_passes_saved = 1;         // LSD passes the hybrid sort must save (varying digits - bucket_digits)
};

// Chooses the passes to run from the histogram: `varies[p]`, `largest[p]`
// (the largest bin count of digit p). Writes run[p] and, when it returns
// true (hybrid), bucket_digit (most significant first).
TILESORT_HD bool radix_choose_buckets(const bool* varies, const std::int64_t* largest, int passes, std::int64_t n,
                                      const radix_hybrid_limits& limits, bool* run, int* bucket_digit) {
  int varying = 0;
  for (int p = 0; p < passes; ++p) {
    run[p] = varies[p];
    varying += varies[p] ? 1 : 0;
  }
  if (limits.bucket_digits <= 0 || varying - limits.bucket_digits < limits.min_passes_saved ||
      varying <= limits.bucket_digits || n <= 0)
    return false;
  int chosen[radix_bucket_digits] = {};
  double largest_bucket = static_cast<double>(n);
  for (int p = passes - 1, k = 0; p >= 0 && k < limits.bucket_digits; --p) {
    if (!varies[p]) continue;
    chosen[k++] = p;
    largest_bucket *= static_cast<double>(largest[p]) / static_cast<double>(n);
  }
  if (largest_bucket > static_cast<double>(limits.largest_bucket)) return false;
  for (int p = 0; p < passes; ++p) run[p] = false;
  for (int k = 0; k < limits.bucket_digits; ++k) {
    run[chosen[k]] = true;
    bucket_digit[k] = chosen[k];
  }
  return true;
}

// The bucket of a key's image: its bucket digits side by side (8 bits each).
template <typename Bits>
TILESORT_HD std::int64_t radix_bucket_of(Bits bits, const int* bucket_digit, int digits) {
  std::int64_t bucket = 0;
  for (int k = 0; k < digits; ++k)
    bucket = bucket << 8 | static_cast<std::int64_t>((static_cast<std::uint64_t>(bits) >> (8 * bucket_digit[k])) & 0xffu);
  return bucket;
}

// The hybrid sort's bucket tiles (device/radix_sort/buckets.cuh): a block
// per bucket of up to `capacity[k]` keys, shapes by increasing capacity.
// For n keys in `buckets` buckets, the first shape whose capacity holds
// 1.5 x the mean bucket plus 64 keys (random keys' buckets spread by about
// the square root of the mean), from a mean of `min_mean` keys on; -1 where
// none does or the mean is smaller (the segmented sort takes every bucket).
TILESORT_HD int radix_bucket_tile_for(std::int64_t n, std::int64_t buckets, const int* capacity, int shapes,
                                      std::int64_t min_mean) {
  if (n <= 0 || buckets <= 0) return -1;
  const std::int64_t mean = n / buckets;
  if (mean < min_mean) return -1;
  const std::int64_t wanted = mean + mean / 2 + 64;
  for (int k = 0; k < shapes; ++k)
    if (capacity[k] >= wanted) return k;
  return -1;
}

// The look-back word of one (tile, digit).
struct radix_lookback {
  static constexpr int count_bits = 40;
  static constexpr unsigned long long count_mask = (1ull << count_bits) - 1;
  static constexpr unsigned long long flag_aggregate = 1ull << count_bits;  // the tile's own count
  static constexpr unsigned long long flag_inclusive = 2ull << count_bits;  // this and every earlier tile
  static constexpr unsigned long long flag_mask = 3ull << count_bits;
  static constexpr int tag_shift = count_bits + 2;  // parity, then the ring cycle (21 bits)
  static constexpr unsigned long long cycle_mask = (1ull << 21) - 1;

  // The tag of a tile of ring cycle `cycle` during a pass of `parity`.
  TILESORT_HD static unsigned long long tag(unsigned cycle, int parity) {
    return ((static_cast<unsigned long long>(cycle) & cycle_mask) << 1 | static_cast<unsigned long long>(parity))
           << tag_shift;
  }
  TILESORT_HD static unsigned long long word(unsigned long long tag, unsigned long long flag,
                                             unsigned long long count) {
    return tag | flag | (count & count_mask);
  }
  // The word holds a count of the tile `tag` names (not an older tile's).
  TILESORT_HD static bool is_for(unsigned long long word, unsigned long long tag) {
    return (word >> tag_shift) == (tag >> tag_shift) && (word & flag_mask) != 0;
  }
  TILESORT_HD static bool is_inclusive(unsigned long long word) { return (word & flag_mask) == flag_inclusive; }
  TILESORT_HD static unsigned long long count(unsigned long long word) { return word & count_mask; }

  // The done word a tile of ring cycle `cycle` leaves in its slot once it
  // has looked back (never 0, the value the ring starts with).
  TILESORT_HD static unsigned done(unsigned cycle, int parity) { return (cycle << 1 | unsigned(parity)) + 1u; }
};

// Where tile t's words live: slot t of `slots` until the ring wraps (slots
// == tiles), then slot t mod slots of a power-of-two ring, cycle t / slots.
struct radix_ring {
  unsigned slots = 0;
  int shift = 0;  // log2(slots) when the ring wraps
  bool wraps = false;
  TILESORT_HD unsigned slot(unsigned tile) const { return wraps ? tile & (slots - 1u) : tile; }
  TILESORT_HD unsigned cycle(unsigned tile) const { return wraps ? tile >> shift : 0u; }
};

// Keys past this many could overflow a look-back count (a count reaches n
// only where one digit holds every key: that pass is skipped); tile numbers
// then fit 32 bits for tiles of at least 512 keys.
inline constexpr std::int64_t radix_max_keys = std::int64_t(radix_lookback::count_mask) + 1;

// Tile t writes slot t mod slots once tiles [t - slots, t - slots + window]
// are done: the slot's previous user, and the tiles that may still read its
// words (a tile looks back at most `window` tiles). Only once the ring wraps.
TILESORT_HD std::int64_t radix_ring_wait_first(std::int64_t tile, unsigned slots) { return tile - std::int64_t(slots); }
TILESORT_HD std::int64_t radix_ring_wait_last(std::int64_t tile, unsigned slots, int window) {
  return tile - std::int64_t(slots) + window;
}

// The shape the plan works from (the policy's numbers).
struct radix_sort_shape {
  int tile_items;   // keys per onesweep tile
  int ring_tiles;   // look-back ring length in tiles once it wraps (a power of two, at least 2 x window)
  int window;       // look-back window in tiles
  int passes;       // digit passes of the key image
  radix_hybrid_limits hybrid;  // from the policy and n (bucket_digits 0: LSD only)
};

// Temp storage: the alternate keys and values, the control block (the
// digit counts, the schedule, tile counters) and the look-back ring; what
// the sort zeroes before it starts is [zero_offset, zero_offset + zero_bytes).
struct radix_sort_plan {
  std::int64_t n = 0;
  std::int64_t tiles = 0;
  radix_ring ring;     // the look-back ring (tiles slots until it must wrap)
  int passes = 0;
  std::size_t keys_offset = 0, values_offset = 0;
  std::size_t control_offset = 0, ring_offset = 0, done_offset = 0;
  std::size_t zero_offset = 0, zero_bytes = 0;
  radix_hybrid_limits hybrid;  // bucket_digits 0: LSD only
  std::int64_t buckets = 0;    // 256^bucket_digits (hybrid)
  std::size_t offsets_offset = 0;    // buckets + 1 bucket starts (zeroed: empty buckets unless the sort fills them)
  std::size_t buckets_offset = 0;    // the bucket sort's temp storage
  int bucket_tile = -1;              // the bucket tiles' shape (radix_bucket_tile_for), -1: none
  std::size_t ends_offset = 0;       // with bucket tiles: each bucket's end for the segmented sort
  std::size_t total_bytes = 0;
};

// The control block of one sort (zeroed before the histogram).
struct radix_control {
  unsigned long long digit_start[radix_max_passes][radix_bins];  // counts, then exclusive starts
  radix_schedule schedule;
  unsigned tiles_taken[radix_max_passes];
  unsigned histogram_blocks_done;
};

// The plan for n keys of key_bytes with value_bytes values (0: keys alone);
// `bucket_sort_bytes`: the bucket sort's temp storage, `bucket_tile` the
// bucket tiles' shape (hybrid plans only; -1: no tiles).
inline radix_sort_plan make_radix_sort_plan(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes,
                                            const radix_sort_shape& shape, std::size_t bucket_sort_bytes = 0,
                                            int bucket_tile = -1) {
  radix_sort_plan plan;
  plan.n = n;
  plan.passes = shape.passes;
  plan.tiles = n > 0 ? ceil_div(n, shape.tile_items) : 0;
  plan.ring.wraps = plan.tiles > shape.ring_tiles;
  plan.ring.slots = static_cast<unsigned>(plan.ring.wraps ? shape.ring_tiles : plan.tiles);
  plan.ring.shift = log2_floor(shape.ring_tiles);
  std::size_t offset = 0;
  const auto take = [&](std::size_t bytes) {
    const std::size_t at = offset;
    offset += align_temp(bytes);
    return at;
  };
  plan.keys_offset = take(static_cast<std::size_t>(n) * key_bytes);
  plan.values_offset = take(static_cast<std::size_t>(n) * value_bytes);
  plan.control_offset = take(sizeof(radix_control));
  plan.ring_offset = take(static_cast<std::size_t>(plan.ring.slots) * radix_bins * sizeof(unsigned long long));
  plan.done_offset = take(static_cast<std::size_t>(plan.ring.slots) * sizeof(unsigned));
  plan.hybrid = shape.hybrid;
  plan.buckets = plan.hybrid.bucket_digits > 0 ? std::int64_t(1) << (8 * plan.hybrid.bucket_digits) : 0;
  plan.offsets_offset = take(plan.buckets > 0 ? static_cast<std::size_t>(plan.buckets + 1) * sizeof(std::int64_t) : 0);
  plan.zero_offset = plan.control_offset;
  plan.zero_bytes = offset - plan.control_offset;
  plan.buckets_offset = take(plan.buckets > 0 ? bucket_sort_bytes : 0);
  plan.bucket_tile = plan.buckets > 0 ? bucket_tile : -1;
  plan.ends_offset = take(plan.bucket_tile >= 0 ? static_cast<std::size_t>(plan.buckets) * sizeof(std::int64_t) : 0);
  plan.total_bytes = offset;
  return plan;
}

}  // namespace tilesort::detail
