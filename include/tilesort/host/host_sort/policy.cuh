// host/host_sort/policy.cuh — the tuning of the sort of host-resident arrays
// (host/host_sort.cuh): the shape detail::make_host_sort_plan works from, the
// threads that fault in the scratch, the pinned staging of pageable arrays
// the driver will not register and the margin left when no budget is
// given. Chosen without measurements so far; the measurements that will set
// them go to docs/tuning/host_sort.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../detail/host_sort_plan.cuh"

namespace tilesort {

/// Tuning of host_sort_keys / host_sort_pairs (one policy for every item size).
///
/// @code
/// static_assert(tilesort::host_sort_policy::oversampling == 64);
/// @endcode
struct host_sort_policy {
  /// Pass 1 (out of core): a budget that cannot hold two slots of this many
  /// items is too small (the partition's launches would dominate).
  static constexpr std::int64_t min_chunk = std::int64_t(1) << 14;
  /// Pass 2: likewise for a batch of buckets.
  static constexpr std::int64_t min_batch = std::int64_t(1) << 14;
  /// Splitter tree depth: at most 2^11 - 1 splitters (4095 buckets), and a
  /// tree of at most 32 KB (it is loaded into shared memory to classify).
  static constexpr int max_levels = 11;
  /// @copydoc max_levels
  static constexpr std::size_t max_tree_bytes = 32 * 1024;
  /// Samples per bucket between splitters (a key that fills more than
  /// 1 / 2^levels of the input is then a splitter: its bucket is only copied).
  static constexpr int oversampling = 64;
  /// @copydoc oversampling
  static constexpr std::int64_t max_samples = std::int64_t(1) << 20;
  /// Buckets between splitters hold a quarter of a batch on average, so
  /// sampling error rarely makes one larger than a batch.
  static constexpr int bucket_slack = 4;
  /// (chunk, bucket) entries of the host's table of bucket ends (4 bytes each).
  static constexpr std::int64_t max_table_entries = std::int64_t(1) << 26;
  /// Threads that fault in the pages of a fresh out-of-core scratch before
  /// it is registered (at most the machine's hardware threads).
  static constexpr unsigned touch_threads = 16;
  /// Pageable arrays the driver will not register are staged through this
  /// many pinned buffers of stage_bytes: the host copies one while the link
  /// carries another.
  static constexpr int stages = 2;
  /// @copydoc stages
  static constexpr std::size_t stage_bytes = std::size_t(16) << 20;
  /// With device_memory_budget = 0: the free device memory less
  /// max(min_margin, free / margin_fraction).
  static constexpr std::size_t min_margin = std::size_t(256) << 20;
  /// @copydoc min_margin
  static constexpr std::size_t margin_fraction = 16;

  /// The plan's shape.
  static constexpr detail::host_sort_shape shape() {
    return {min_chunk, min_batch, max_levels, max_tree_bytes, oversampling, max_samples, bucket_slack,
            max_table_entries};
  }
};

}  // namespace tilesort
