// device/radix_sort/policy.cuh — tuning of radix_sort_keys / radix_sort_pairs:
// one struct per key and value size. Measurements: docs/tuning/radix_sort.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../detail/radix_sort_plan.cuh"

namespace tilesort {

/// Tuning of the radix sort for keys of KeyBytes bytes (their image's width)
/// and values of ValueBytes bytes (0: keys alone). A onesweep tile is
/// `threads` x `items` keys, staged in shared memory (so items shrink as
/// the items widen); the histogram reads histogram_threads x
/// histogram_items keys per step.
///
/// @code
/// using policy = tilesort::radix_sort_policy<4, 0>;
/// static_assert(policy::tile_items == policy::threads * policy::items);
/// @endcode
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct radix_sort_policy {
  /// Bits per digit (one pass per digit) and the bins of a digit.
  static constexpr int radix_bits = 8;
  /// @copydoc radix_bits
  static constexpr int bins = 1 << radix_bits;
  /// Widest item the onesweep tile stages in shared memory.
  static constexpr std::size_t staged_bytes = KeyBytes > ValueBytes ? KeyBytes : ValueBytes;  // widest item
  /// Onesweep blocks copy their next tile into shared memory (cp.async)
  /// while they write this one; the tile's keys and values stay there until
  /// they are staged, so no registers hold them while the block ranks (three
  /// blocks of 4-byte keys fit an SM's registers). Not for 8-byte keys
  /// alone or with 8-byte values (measured slower there).
  static constexpr bool prefetch = staged_bytes <= 8 && (ValueBytes == 0 ? KeyBytes <= 4 : KeyBytes <= 4 || ValueBytes <= 4);
  /// Onesweep blocks: threads and keys per thread. A block's shared memory
  /// (the tile staged, and with prefetch the next one) stays within the
  /// 99 KB that every GPU from sm_80 allows a block.
  static constexpr int threads = 384;
  /// @copydoc threads
  static constexpr int items = ValueBytes == 0 && KeyBytes <= 2 ? 24
                               : ValueBytes == 0 && KeyBytes <= 4 ? 19
                               : ValueBytes == 0 && KeyBytes <= 8 ? 24
                               : prefetch ? (KeyBytes + ValueBytes <= 8 ? 16 : 10)
                               : KeyBytes + ValueBytes <= 16 ? 16
                               : KeyBytes + ValueBytes <= 24 ? 10
                               : KeyBytes + ValueBytes <= 48 ? 5
                               : KeyBytes + ValueBytes <= 96 ? 2
                                                             : 1;
  /// Keys per onesweep tile.
  static constexpr int tile_items = threads * items;
  /// Onesweep blocks per SM the registers must allow.
  static constexpr int blocks_per_sm = ValueBytes == 0 && KeyBytes <= 4 ? 3 : prefetch ? 2 : 1;
  /// Histogram blocks: threads and keys per thread per step; at most
  /// histogram_blocks_per_sm blocks per SM.
  static constexpr int histogram_threads = 1024;
  /// @copydoc histogram_threads
  static constexpr int histogram_items = KeyBytes <= 4 ? 16 : 8;
  /// @copydoc histogram_threads
  static constexpr int histogram_blocks_per_sm = 1;
  /// Look-back: a ring of ring_tiles tiles' words, each tile looking back
  /// at most window tiles (more than the tiles in flight: blocks of a
  /// whole GPU). Until the ring wraps (2^27 4-byte keys) a tile needs no
  /// check that its slot is free, which costs about a tenth of a pass.
  static constexpr int ring_tiles = 16384;
  /// @copydoc ring_tiles
  static constexpr int window = 512;

  /// Hybrid sort (detail/radix_sort_plan.cuh): from hybrid_min_keys to
  /// hybrid_max_keys keys (0: never), passes over the top one or two
  /// varying digits, then each bucket sorted on chip. One bucket digit up
  /// to 256 x one_digit_bucket_keys keys, two beyond. Where the histogram
  /// estimates a bucket of more than largest_bucket keys (skewed top
  /// digits), the sort stays LSD. Keys of 8 bytes and more only: for
  /// 4-byte keys (four passes) the bucket sort costs more than the two
  /// passes it saves (docs/tuning/radix_sort.md).
  static constexpr std::int64_t hybrid_min_keys = KeyBytes >= 8 ? std::int64_t(1) << 22 : 0;
  /// The segmented sort's largest block tile: 16384 keys of up to 8 bytes
  /// alone (or with values, 8 bytes together), 8192 wider items.
  static constexpr int on_chip_bucket = KeyBytes + ValueBytes <= 8 ? 16384 : 8192;
  /// @copydoc hybrid_min_keys
  static constexpr std::int64_t hybrid_max_keys = KeyBytes >= 8 ? std::int64_t(65536) * (on_chip_bucket / 2) : 0;
  /// @copydoc hybrid_min_keys
  static constexpr int one_digit_bucket_keys = on_chip_bucket / 2;
  /// @copydoc hybrid_min_keys
  static constexpr int largest_bucket = on_chip_bucket / 8 * 5;
  /// The hybrid sort only where it saves this many LSD passes or more: the
  /// bucket sort costs about four passes (8-byte keys with 20 varying bits
  /// take three LSD passes, faster than two passes and the bucket sort).
  static constexpr int hybrid_min_passes_saved = 4;
  /// Bucket tiles (radix_sort/buckets.cuh), for keys alone whose equivalent
  /// keys are identical (integers under less / greater): one block sorts a
  /// bucket of up to threads x items keys in shared memory by splitting it
  /// on its top varying bits into runs of a few keys, each run then sorted
  /// by one thread. Shapes by increasing capacity; the plan takes the first
  /// that holds 1.5 x the mean bucket and 64 keys, from a mean bucket of
  /// bucket_tile_min_mean keys on (detail::radix_bucket_tile_for). A block
  /// whose runs give one thread more than bucket_tile_max_run keys, and
  /// every bucket longer than the tile, is left to the segmented sort.
  static constexpr int bucket_tile_shapes = 3;
  /// @copydoc bucket_tile_shapes
  static constexpr int bucket_tile_threads(int shape) { return shape == 0 ? 64 : shape == 1 ? 128 : 512; }
  /// @copydoc bucket_tile_shapes
  static constexpr int bucket_tile_items(int shape) { return shape == 0 ? 8 : 16; }
  /// @copydoc bucket_tile_shapes
  static constexpr int bucket_tile_capacity(int shape) { return bucket_tile_threads(shape) * bucket_tile_items(shape); }
  /// @copydoc bucket_tile_shapes
  static constexpr std::int64_t bucket_tile_min_mean = 128;
  /// @copydoc bucket_tile_shapes
  static constexpr int bucket_tile_max_run = 32;
  /// Threads per block of the kernel that finds the buckets' starts.
  static constexpr int bucket_start_threads = 256;
  /// Keys per thread of that kernel: a warp takes 32 x this many at a time.
  static constexpr int bucket_start_items = 8;

  static_assert(radix_bits == 8 && bins == detail::radix_bins, "8-bit digits: the control block's bins");
  static_assert(threads % 32 == 0 && threads >= bins, "whole warps, a thread per bin");
  static_assert(ring_tiles >= 2 * window, "a ring slot is reused only after its readers are done");
  static_assert((ring_tiles & (ring_tiles - 1)) == 0, "slots by a mask, cycles by a shift");
  static_assert(tile_items >= 512, "tile numbers fit 32 bits for 2^40 keys");
};

}  // namespace tilesort
