// device/sample_sort/policy.cuh — the tuning of the sample sort
// (device/sample_sort.cuh): one policy struct per (key size, value size),
// the shape detail::make_sample_sort_plan works from. The reason for each
// number is given beside it; the measurements behind them are in
// docs/tuning/sample_sort.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../detail/sample_sort_plan.cuh"
#include "../../detail/values.cuh"

namespace tilesort {

/// Tuning of sample_sort_keys / sample_sort_pairs for items of KeyBytes +
/// ValueBytes bytes (ValueBytes = 0 for keys only). The bucket sorts take the
/// merge sort's blocksort tile (and its half and quarter); each
/// classification level has at most 255 splitters, so a scatter tile's
/// writes to a bucket are long runs. Measurements and where the time goes:
/// docs/tuning/sample_sort.md.
///
/// @code
/// using policy = tilesort::sample_sort_policy<sizeof(std::uint32_t), 0>;
/// static_assert(policy::bucket_tile == 4096);
/// @endcode
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct sample_sort_policy {
  /// Bytes per item: key plus value.
  static constexpr std::size_t item_bytes = KeyBytes + ValueBytes;
  /// Bucket sorts: a block sorts a bucket of up to bucket_threads x
  /// bucket_items items in registers (block_sort), bucket_blocks_per_sm
  /// blocks per SM (so one block's loads overlap another's sorting).
  static constexpr int bucket_threads = 256;
  /// @copydoc bucket_threads
  static constexpr int bucket_blocks_per_sm = 2;
  /// @copydoc bucket_threads
  static constexpr int bucket_items = item_bytes <= 8 ? 16 : item_bytes <= 16 ? 8 : 4;
  /// Items a bucket sort holds at once; larger buckets are merged.
  static constexpr int bucket_tile = bucket_threads * bucket_items;
  /// Smaller shapes in the same kernel: a bucket of at most
  /// bucket_threads x bucket_items_half (_quarter) items is sorted with that
  /// many items per thread, so an average bucket (half a tile) does not pay
  /// for a padded full tile.
  static constexpr int bucket_items_half = bucket_items / 2;
  /// @copydoc bucket_items_half
  static constexpr int bucket_items_quarter = bucket_items / 4 > 0 ? bucket_items / 4 : 1;
  /// Classification and scatter: tiles of scatter_threads x scatter_items
  /// items, staged in shared memory (at most 32 KB of items).
  static constexpr int scatter_threads = 256;
  /// @copydoc scatter_threads
  static constexpr int scatter_items = item_bytes <= 8    ? 16
                                       : item_bytes <= 16 ? 8
                                       : item_bytes <= 32 ? 4
                                       : item_bytes <= 64 ? 2
                                                          : 1;
  /// Scatter blocks resident per SM the registers must allow: 4 for 4-byte
  /// items (64 registers), 2 for wider ones (no limit below 128). Measured
  /// against 3 for all (docs/tuning/sample_sort.md).
  static constexpr int scatter_blocks_per_sm = item_bytes <= 4 ? 4 : 2;
  /// Keys a scatter block classifies at once.
  static constexpr int scatter_tile = scatter_threads * scatter_items;
  /// Level-1 scatter blocks (counters: buckets x blocks, 8 bytes each):
  /// about n / (buckets x keys_per_counter), so that the counters grow slower
  /// than the keys, but at least min_scatter_blocks (2 per SM of a
  /// 132-SM sm_90 GPU) and at most max_scatter_blocks.
  static constexpr int min_scatter_blocks = 264;
  /// @copydoc min_scatter_blocks
  static constexpr int max_scatter_blocks = 1024;
  /// @copydoc min_scatter_blocks
  static constexpr int keys_per_counter = 16;
  /// Splitter tree depth of one classification level: at most 255
  /// splitters, 511 buckets.
  static constexpr int max_levels = 8;
  /// Level 2: a block classifies a chunk of chunk_tiles scatter tiles of one
  /// level-1 bucket.
  static constexpr int chunk_tiles = 4;
  /// Samples per bucket (fewer when sample_tile is reached).
  static constexpr int oversampling = 16;
  /// A sample sort: one block of sample_threads x sample_items keys.
  static constexpr int sample_threads = 256;
  /// @copydoc sample_threads
  static constexpr int sample_items = KeyBytes <= 8 ? 8 : KeyBytes <= 16 ? 4 : 2;
  /// At most this many samples.
  static constexpr int sample_tile = sample_threads * sample_items;
  /// The counters' exclusive scan: chunks of scan_threads x scan_items.
  static constexpr int scan_threads = 256;
  /// @copydoc scan_threads
  static constexpr int scan_items = 16;
  /// Counters one scan block sums.
  static constexpr int scan_chunk = scan_threads * scan_items;

  /// The shape detail::make_sample_sort_plan works from.
  static constexpr detail::sample_sort_shape shape() {
    return {bucket_tile, scatter_tile, min_scatter_blocks, max_scatter_blocks, keys_per_counter,
            max_levels,  sample_tile,  oversampling,       scan_chunk,         chunk_tiles};
  }
  static_assert(max_levels >= 1 && max_levels <= 8, "at most 511 buckets per level: ranks and bucket numbers in 16 bits");
  static_assert(sample_threads >= 32 && sample_threads % 32 == 0, "whole warps");
};

namespace detail {

template <typename Key, typename Value>
using sample_sort_policy_for = sample_sort_policy<sizeof(Key), value_bytes_of<Value>>;

// The plan of a sample sort of n keys of Key (and values of Value).
template <typename Key, typename Value>
sample_sort_plan make_sample_sort_plan_for(std::int64_t n) {
  return make_sample_sort_plan(n, sizeof(Key), value_bytes_of<Value>, sample_sort_policy_for<Key, Value>::shape());
}

}  // namespace detail
}  // namespace tilesort
