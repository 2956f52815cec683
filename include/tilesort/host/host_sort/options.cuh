// host/host_sort/options.cuh — what a caller can tell host_sort_keys and
// host_sort_pairs (host/host_sort.cuh) besides the array and the order.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace tilesort {

/// Progress of host_sort_keys / host_sort_pairs: bytes copied to and from
/// the device so far, and in all (the total grows when a bucket has to be
/// sorted again). Called on the calling thread, between transfers.
using host_sort_progress = std::function<void(std::size_t done_bytes, std::size_t total_bytes)>;

/// What a call of host_sort_keys / host_sort_pairs did and where its time
/// went (host clock, seconds), for benchmarks and tuning
/// (host_sort_options::stats). A bucket sorted again adds to every field.
struct host_sort_stats {
  bool in_core = false;               ///< one round trip
  std::int64_t chunks = 0;            ///< pass 1 chunks
  std::int64_t batches = 0;           ///< pass 2 batches sorted on the device
  std::int64_t copied_buckets = 0;    ///< buckets of equivalent keys only copied
  std::int64_t resorted_buckets = 0;  ///< buckets between splitters sorted again
  int registered_arrays = 0;          ///< pageable arrays registered for the call (the rest are staged)
  double setup_s = 0;                 ///< allocations, registrations, streams, events
  double round_trip_s = 0;            ///< in core: copies in, the sort, copies out
  double splitters_s = 0;             ///< samples, their sort, the splitter tree
  double partition_s = 0;             ///< pass 1
  double batches_s = 0;               ///< pass 2 on the device
  double host_copies_s = 0;           ///< pass 2 buckets copied on the host
  double release_s = 0;               ///< the last waits, the frees and unregistrations
};

/// Options of host_sort_keys / host_sort_pairs.
///
/// @code
/// tilesort::host_sort_options options;
/// options.device_memory_budget = std::size_t(4) << 30;
/// options.progress = [](std::size_t done, std::size_t total) { std::fprintf(stderr, "%zu/%zu\r", done, total); };
/// @endcode
struct host_sort_options {
  /// Bytes of device memory the sort may allocate; 0: the free memory less a
  /// margin (host_sort_policy::min_margin, or a sixteenth of it if larger).
  std::size_t device_memory_budget = 0;
  /// Work waits for what is already enqueued on this stream; the call returns
  /// when the array is sorted.
  cudaStream_t stream = 0;
  /// Called as bytes cross the link (may be empty).
  host_sort_progress progress;
  /// Pinned host memory for the out-of-core path's copy of the items, at
  /// least host_sort_scratch_bytes<Key, Value>(n); null: the call allocates
  /// it when the items do not fit the budget (pageable memory faulted in on
  /// several threads and registered, or cudaHostAlloc where the driver
  /// refuses) and frees it before returning.
  void* host_scratch = nullptr;
  /// Size of host_scratch in bytes.
  std::size_t host_scratch_bytes = 0;
  /// If not null, receives what the call did (written before it returns).
  host_sort_stats* stats = nullptr;
};

}  // namespace tilesort
