// host/host_sort.cuh — host_sort_keys / host_sort_pairs: a stable sort, in
// place, of arrays in host memory, on the GPU, however many items there are
// and however little device memory the caller can spare.
//
// Items that fit the budget with the device sort's temp storage make one
// round trip: in, the front door's sort (device/sort.cuh), out. More items
// take two passes, each item crossing the link twice each way: pass 1
// streams chunks through the GPU, which puts every item in a bucket (2^L - 1
// splitters sampled from the array, the sample sort's buckets: between two
// splitters or equivalent to one) and partitions each chunk stably by bucket
// into a pinned host scratch; pass 2 gathers runs of consecutive buckets
// that fit the budget, sorts each with the front door and copies it to its
// final place. Equal keys always share a bucket and pieces arrive in input
// order, so the sort is stable; a bucket of equivalent keys is only copied.
// Two slots of device memory take turns on two streams so that copies in,
// copies out and kernels overlap. The plan is detail/host_sort_plan.cuh; the
// reasoning and measurements, docs/tuning/host_sort.md.
//
//   tilesort::host_sort_options options;
//   options.device_memory_budget = std::size_t(4) << 30;
//   cudaError_t e = tilesort::host_sort_keys(h_keys, n, tilesort::less{}, options);
//   cudaError_t f = tilesort::host_sort_pairs(h_keys, h_values, n, tilesort::less{}, options);
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../comparators.cuh"
#include "../detail/values.cuh"
#include "host_sort/options.cuh"
#include "host_sort/policy.cuh"
#include "host_sort/sorter.cuh"
#include "host_sort/transfers.cuh"

namespace tilesort {
namespace detail {

// The budget: the caller's, or the free device memory less the margin.
inline cudaError_t host_sort_budget(const host_sort_options& options, std::size_t& budget) {
  budget = options.device_memory_budget;
  if (budget != 0) return cudaSuccess;
  std::size_t free_bytes = 0, total_bytes = 0;
  TILESORT_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t margin =
      std::max(host_sort_policy::min_margin, free_bytes / host_sort_policy::margin_fraction);
  budget = free_bytes > margin ? free_bytes - margin : 0;
  return cudaSuccess;
}

template <typename Key, typename Value, typename Compare>
cudaError_t host_sort(Key* keys, Value* values, std::int64_t n, Compare comp, const host_sort_options& options) {
  constexpr bool pairs = has_values<Value>;
  if (n < 0 || (n > 0 && (keys == nullptr || (pairs && values == nullptr)))) return cudaErrorInvalidValue;
  if (n <= 1) return cudaSuccess;
  bool direct_keys = true, direct_values = true;
  TILESORT_RETURN_IF_ERROR(host_memory_is_direct(keys, std::size_t(n) * sizeof(Key), direct_keys));
  if constexpr (pairs)
    TILESORT_RETURN_IF_ERROR(host_memory_is_direct(values, std::size_t(n) * sizeof(Value), direct_values));
  std::size_t budget = 0;
  TILESORT_RETURN_IF_ERROR(host_sort_budget(options, budget));
  host_sorter<Key, Value, Compare> sorter(comp, options);
  const host_sort_plan plan = sorter.plan(n, budget);
  TILESORT_RETURN_IF_ERROR(plan.status);
  if (!plan.in_core && options.host_scratch != nullptr) {
    bool pinned = false;
    if (options.host_scratch_bytes < host_sort_scratch_size(n, sizeof(Key), value_bytes_of<Value>))
      return cudaErrorInvalidValue;
    TILESORT_RETURN_IF_ERROR(host_memory_is_direct(options.host_scratch, options.host_scratch_bytes, pinned));
    if (!pinned) return cudaErrorInvalidValue;
  }
  return sorter.run(keys, values, plan, direct_keys, direct_values);
}

}  // namespace detail

/// Bytes of pinned host scratch (host_sort_options::host_scratch) that
/// host_sort_keys (Value = void) or host_sort_pairs needs for n items when
/// they do not fit the budget: a copy of the keys and values.
///
/// @code
/// void* scratch;
/// cudaHostAlloc(&scratch, tilesort::host_sort_scratch_bytes<std::uint32_t>(n), cudaHostAllocDefault);
/// @endcode
template <typename Key, typename Value = void>
std::size_t host_sort_scratch_bytes(std::int64_t n) {
  return n <= 0 ? 0 : detail::host_sort_scratch_size(n, sizeof(Key), detail::value_bytes_of<Value>);
}

/// Stable sort, in place, of n keys in host memory, on the current device;
/// returns when h_keys is sorted (not graph-capturable). Keys and
/// comparators as for the device sorts. Pinned memory (cudaHostAlloc,
/// cudaHostRegister) or managed memory is copied directly. Pageable memory
/// is registered for the call (cudaHostRegister; unregistered before it
/// returns) and then copied directly, which costs a few hundredths of a
/// second per GiB; where the driver refuses (a page already in another
/// registered range, read-only memory) the array is staged through pinned
/// buffers (host_sort_policy::stages of stage_bytes), the host copying one
/// while the link carries another, at the rate of one host thread's memcpy.
/// Out of core the call also needs host_sort_scratch_bytes<Key>(n) of pinned
/// host memory (options.host_scratch, or allocated per call).
///
/// Errors: cudaErrorInvalidValue for n < 0, a null array with n > 0, a
/// device pointer, a scratch too small or not pinned, or a budget too small
/// for n (fewer than host_sort_policy::min_chunk items per chunk or
/// min_batch per batch); cudaErrorMemoryAllocation when an allocation fails
/// (all are made before the first transfer). The array is untouched after
/// all of these. An error from a copy or a kernel part way is returned as
/// it is; in core the array is then untouched unless the copy back had
/// begun, out of core unless pass 2 had begun; after that its contents are
/// unspecified (items may be lost).
///
/// @param h_keys  keys in host memory, sorted in place
/// @param n       number of keys (64-bit)
/// @param comp    strict weak order (tilesort::less, tilesort::greater or any device functor)
/// @param options budget, stream, progress callback, scratch
/// @return cudaSuccess or the first error
///
/// @code
/// std::vector<float> keys(std::size_t(1) << 30);
/// tilesort::host_sort_options options;
/// options.device_memory_budget = std::size_t(2) << 30;
/// cudaError_t e = tilesort::host_sort_keys(keys.data(), std::int64_t(keys.size()), tilesort::less{}, options);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t host_sort_keys(Key* h_keys, std::int64_t n, Compare comp = {}, const host_sort_options& options = {}) {
  return detail::host_sort<Key, detail::no_value>(h_keys, nullptr, n, comp, options);
}

/// Stable sort, in place, of n (key, value) pairs in host memory by key;
/// values (any trivially copyable type) travel with their keys. As
/// host_sort_keys; the scratch is host_sort_scratch_bytes<Key, Value>(n).
///
/// @code
/// tilesort::host_sort_pairs(h_keys, h_positions, n, tilesort::less{}, options);
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t host_sort_pairs(Key* h_keys, Value* h_values, std::int64_t n, Compare comp = {},
                            const host_sort_options& options = {}) {
  return detail::host_sort(h_keys, h_values, n, comp, options);
}

}  // namespace tilesort
