// device/sort.cuh — the front door: sort_keys / sort_pairs, one stable sort
// that runs whichever of our algorithms is fastest for n, the key size and
// the value size (detail/sort_choice.cuh holds the table: per key and value
// size, the bitonic sort for small sorts of keys alone whose stability
// cannot be observed (integers under less / greater), the radix sort for
// keys with a radix image (integers and floats under less / greater, or a
// bits_order) from its row's radix_from, otherwise the merge sort below a
// measured crossover and the sample sort from it on).
//
// The table's choice depends only on n and the sizes, so the size query and
// the sort agree. From the row's probe_from on (4- and 8-byte keys, alone or
// with values), a one-block probe kernel first reads 2048 pairs of keys a
// blocksort tile apart; if at most 4 are out of order the keys look sorted
// and the locality sort runs, else the table's algorithm. Both are launched;
// the probe's verdict, in device memory, makes the other's kernels return at
// once, so nothing waits on the host and the call can be captured in a CUDA
// graph. The price is those empty launches (a few microseconds each). Temp
// storage is the chosen algorithm's, or, probed, the larger of the two. With
// sort_options, `options.stats` receives n and the algorithm that ran
// (sort_stats::algorithm), written by a one-thread kernel after the sort.
//
//   std::size_t temp_bytes = 0;
//   tilesort::sort_keys(nullptr, temp_bytes, d_in, d_out, n);                 // size query
//   cudaMallocAsync(&d_temp, temp_bytes, stream);
//   tilesort::sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::less{}, stream);
//   // or, allocating stream-ordered temp storage itself:
//   tilesort::sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream);
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/sort_choice.cuh"
#include "../detail/temp_storage.cuh"
#include "bitonic_sort.cuh"
#include "locality_sort.cuh"
#include "merge_sort.cuh"
#include "radix_sort.cuh"
#include "sample_sort.cuh"
#include "sort_stats.cuh"

namespace tilesort {
namespace detail {

// The algorithm that ran: the table's choice, or (`control` not null: the
// keys were probed) the locality sort where the probe found them sorted.
template <int Unused = 0>
__global__ void sort_choice_stats_kernel(sort_stats* stats, std::int64_t n, sort_algorithm algorithm,
                                         const merge_control* control) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  sort_stats s{};
  s.n = n;
  s.algorithm = control != nullptr && control->probe.looks_sorted != 0 ? sort_algorithm::locality : algorithm;
  *stats = s;
}

// The probe (sort_probe_policy): zeroes the locality sort's control, then
// counts the sampled pairs (keys[p], keys[p + distance]) out of order and
// writes the verdict there. Keys that do not look sorted stop the locality
// sort's kernels: its blocksort returns at once, and with local_tiles = 1 and
// unfinished_tiles = 0 so does everything after it.
template <typename Key, typename Compare>
__global__ void __launch_bounds__(sort_probe_policy::threads)
    sort_probe_kernel(const Key* keys, std::int64_t n, std::int64_t distance, merge_control* control, Compare comp) {
  using policy = sort_probe_policy;
  auto* words = reinterpret_cast<unsigned*>(control);
  static_assert(sizeof(merge_control) % sizeof(unsigned) == 0, "whole words");
  for (int i = threadIdx.x; i < int(sizeof(merge_control) / sizeof(unsigned)); i += policy::threads) words[i] = 0;
  int descents = 0;
  for (int i = 0; i < policy::items; ++i) {
    const std::int64_t first = probe_pair_first(n, distance, i * policy::threads + int(threadIdx.x));
    descents += __syncthreads_count(comp(keys[first + distance], keys[first]));
  }
  if (threadIdx.x != 0) return;  // the zeroing above is visible to this thread: __syncthreads_count is a barrier
  if (probe_looks_sorted(descents)) {
    control->probe.looks_sorted = 1;
  } else {
    control->probe.looks_unsorted = 1;
    control->local_tiles = 1;
    control->unfinished_tiles = 0;
  }
}

// The probe in front of the locality sort of (Key, Value) items: one block,
// its pairs a blocksort tile of that sort apart; first of the call's kernels.
template <typename Key, typename Value, typename Compare>
cudaError_t launch_sort_probe(const Key* keys, std::int64_t n, merge_control* control, Compare comp,
                              cudaStream_t stream) {
  using locality_policy = typename locality_setup<Key, Value>::policy;
  return launch_kernel(sort_probe_kernel<Key, Compare>, 1, sort_probe_policy::threads, 0, stream, false, keys, n,
                       std::int64_t(locality_policy::tile_items), control, comp);
}

// The algorithm sort_keys (Value = no_value) or sort_pairs runs for n keys
// (without a probe, or where the probe finds the keys unsorted).
template <typename Key, typename Value, typename Compare>
constexpr sort_algorithm front_door_choice(std::int64_t n) {
  return choose_sort_algorithm(n, sizeof(Key), value_bytes_of<Value>,
                               !has_values<Value> && equivalence_is_identity<Key, Compare>,
                               radix_sortable<Key, Compare>);
}

// Whether sort_keys / sort_pairs may probe keys of this type (a row with a
// probe_from: the radix sort's keys, whose histogram skips everything, and
// items the merge sort merges k-way, whose kernels are the skippable ones),
// and whether they probe n keys.
template <typename Key, typename Value, typename Compare>
inline constexpr bool front_door_may_probe =
    radix_sortable<Key, Compare> && sort_choice_for(sizeof(Key), value_bytes_of<Value>).radix_from != radix_never
        ? sort_choice_for(sizeof(Key), value_bytes_of<Value>).radix_probe_from != probe_never ||
              (merge_sort_setup<Key, Value>::kway &&
               sort_choice_for(sizeof(Key), value_bytes_of<Value>).probe_from != probe_never)
        : merge_sort_setup<Key, Value>::kway &&
              sort_choice_for(sizeof(Key), value_bytes_of<Value>).probe_from != probe_never;
template <typename Key, typename Value, typename Compare>
constexpr bool front_door_probes(std::int64_t n) {
  return front_door_may_probe<Key, Value, Compare> &&
         front_door_probes(n, sizeof(Key), value_bytes_of<Value>, radix_sortable<Key, Compare>);
}

// Temp storage of the table's algorithm (the radix, sample or merge sort).
template <typename Key, typename Value, typename Compare>
std::size_t table_temp_bytes(sort_algorithm algorithm, std::int64_t n) {
  if constexpr (radix_sortable<Key, Compare>) {
    if (algorithm == sort_algorithm::radix)
      return make_radix_sort_plan_for<radix_policy_for<Key, Value>, Key, Value, Compare>(n).total_bytes;
  }
  if (algorithm == sort_algorithm::sample) return make_sample_sort_plan_for<Key, Value>(n).total_bytes;
  return merge_sort_setup<Key, Value>(n).layout.total_bytes;
}

// Probed keys: the probe, the locality sort, then the table's algorithm
// (skipped unless the probe found the keys unsorted), the two sharing the
// temp storage after the locality sort's control: the probe runs exactly one
// of them. Arguments are checked by the caller.
template <typename Key, typename Value, typename Compare>
cudaError_t sort_probed(sort_algorithm algorithm, void* d_temp, std::size_t& temp_bytes, const Key* keys_in,
                        Key* keys_out, const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                        cudaStream_t stream) {
  const locality_setup<Key, Value> locality(n);
  const std::size_t control_bytes = align_temp(sizeof(merge_control));
  const std::size_t total =
      std::max(locality.total_bytes, control_bytes + table_temp_bytes<Key, Value, Compare>(algorithm, n));
  if (d_temp == nullptr) {
    temp_bytes = total;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, total));
  auto* control = static_cast<merge_control*>(d_temp);
  // The merge sort behind the probe; from persistent_merge_from keys on its
  // k-way passes are persistent, with the control's zeroed counters.
  const merge_sort_setup<Key, Value> merge(n);
  merge_sort_gate gate;
  gate.skip_unless_zero = &control->probe.looks_sorted;
  if (algorithm == sort_algorithm::merge && n >= sort_probe_policy::persistent_merge_from) {
    if (merge.plan.merge_passes > max_merge_passes) return cudaErrorInvalidValue;
    using merge_policy = typename merge_sort_setup<Key, Value>::policy;
    TILESORT_RETURN_IF_ERROR((resident_kway_grids<merge_policy, Key, Value, Compare>(gate.most)));
    gate.tiles_taken = control->kway_tiles_taken;
  }
  TILESORT_RETURN_IF_ERROR((launch_sort_probe<Key, Value>(keys_in, n, control, comp, stream)));
  TILESORT_RETURN_IF_ERROR(
      locality_sort_launch<true>(locality, d_temp, keys_in, keys_out, values_in, values_out, comp, stream));
  void* table_temp = static_cast<char*>(d_temp) + control_bytes;
  if constexpr (radix_sortable<Key, Compare>) {
    if (algorithm == sort_algorithm::radix) {
      using policy = radix_policy_for<Key, Value>;
      return radix_sort_launch<policy>(make_radix_sort_plan_for<policy, Key, Value, Compare>(n), table_temp, keys_in,
                                       keys_out, values_in, values_out, comp, stream, gate.skip_unless_zero);
    }
  }
  if (algorithm == sort_algorithm::sample)
    return sample_sort_launch(make_sample_sort_plan_for<Key, Value>(n), table_temp, keys_in, keys_out, values_in,
                              values_out, comp, stream, gate.skip_unless_zero);
  return merge_sort_launch(merge, table_temp, keys_in, keys_out, values_in, values_out, comp, stream, gate);
}

// Behind the probe of sort_positions: where the keys look sorted, positions
// 0, 1, ..., n - 1 and the keys in keys_out, for the locality sort to sort
// in place; otherwise nothing.
template <typename Key>
__global__ void sort_positions_seed_kernel(const Key* keys_in, Key* keys_out, std::int64_t* positions,
                                           std::int64_t n, const merge_control* control) {
  if (control->probe.looks_sorted == 0) return;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    positions[i] = i;
    if (keys_out != keys_in) keys_out[i] = keys_in[i];
  }
}

// The front door's stable sort of keys with each key's input position as an
// int64 value made by the sort (no position array read): the Python
// package's 1-D sort and argsort. Keys with a radix image, from
// positions_radix_from(sizeof(Key)) (detail/sort_choice.cuh) to 2^32: the radix sort
// carries 4-byte positions and stores them as int64; where the row probes
// (for 4-byte positions), keys that look sorted take the locality sort
// instead (positions written, then sorted in place with the keys).
// Elsewhere, size query included: cudaErrorNotSupported, nothing done (the
// caller writes the positions and calls sort_pairs).
template <typename Key, typename Compare>
cudaError_t sort_positions(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                           std::int64_t* positions, std::int64_t n, Compare comp, cudaStream_t stream) {
  using carried = std::uint32_t;
  if constexpr (!radix_sortable<Key, Compare>) {
    return cudaErrorNotSupported;
  } else {
    if (n < 0) return cudaErrorInvalidValue;
    if (n < positions_radix_from(sizeof(Key)) || n > std::int64_t(UINT32_MAX)) return cudaErrorNotSupported;
    using policy = radix_policy_for<Key, carried>;
    const sort_choice_row& row = sort_choice_for(sizeof(Key), sizeof(carried));
    const std::int64_t probe_from = row.radix_from != radix_never ? row.radix_probe_from : row.probe_from;
    if (probe_from == probe_never || n < probe_from)
      return radix_sort_two_phase<policy, Key, carried, std::int64_t>(d_temp, temp_bytes, keys_in, keys_out, nullptr,
                                                                     positions, n, comp, stream, true);
    const radix_sort_plan plan = make_radix_sort_plan_for<policy, Key, carried, Compare, std::int64_t>(n);
    const locality_setup<Key, std::int64_t> locality(n);
    const std::size_t control_bytes = align_temp(sizeof(merge_control));
    const std::size_t total = std::max(locality.total_bytes, control_bytes + plan.total_bytes);
    if (d_temp == nullptr) {
      temp_bytes = total;
      return cudaSuccess;
    }
    TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, positions, positions, true, n));
    TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, total));
    auto* control = static_cast<merge_control*>(d_temp);
    TILESORT_RETURN_IF_ERROR((launch_sort_probe<Key, std::int64_t>(keys_in, n, control, comp, stream)));
    unsigned seed_grid = 0;
    TILESORT_RETURN_IF_ERROR(remembered_grid<sort_positions_seed_kernel<Key>>(256, 0, seed_grid));
    TILESORT_RETURN_IF_ERROR(launch_kernel(sort_positions_seed_kernel<Key>, seed_grid, 256, 0, stream, false, keys_in,
                                           keys_out, positions, n, static_cast<const merge_control*>(control)));
    TILESORT_RETURN_IF_ERROR(locality_sort_launch<true>(locality, d_temp, keys_out, keys_out, positions, positions,
                                                        comp, stream));
    return radix_sort_launch<policy>(plan, static_cast<char*>(d_temp) + control_bytes, keys_in, keys_out,
                                     static_cast<const carried*>(nullptr), positions, comp, stream,
                                     &control->probe.looks_sorted);
  }
}

// Size query or sort by the chosen algorithm; then the statistics, if asked.
template <typename Key, typename Value, typename Compare>
cudaError_t sort_front_door(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                            const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                            cudaStream_t stream, const sort_options& options) {
  if (n < 0) return cudaErrorInvalidValue;
  constexpr bool pairs = has_values<Value>;
  const sort_algorithm algorithm = front_door_choice<Key, Value, Compare>(n);
  const bool probes = front_door_probes<Key, Value, Compare>(n);
  cudaError_t error = cudaSuccess;
  if (probes) {  // (only where front_door_may_probe: the probed path is compiled for those items alone)
    if constexpr (front_door_may_probe<Key, Value, Compare>) {
      if (d_temp != nullptr)
        TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, pairs, n));
      error = sort_probed(algorithm, d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
    }
  } else if (algorithm == sort_algorithm::radix) {
    if constexpr (radix_sortable<Key, Compare>)
      error = radix_sort_two_phase<radix_policy_for<Key, Value>>(d_temp, temp_bytes, keys_in, keys_out, values_in,
                                                                 values_out, n, comp, stream);
  } else if (algorithm == sort_algorithm::bitonic) {  // keys alone, equivalent keys bitwise equal
    if constexpr (!pairs && equivalence_is_identity<Key, Compare>)
      error = bitonic_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream);
  } else if (algorithm == sort_algorithm::sample) {
    error = sample_sort_two_phase(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  } else if constexpr (pairs) {
    error = merge_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  } else {
    error = merge_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream);
  }
  if (d_temp == nullptr || error != cudaSuccess || options.stats == nullptr) return error;
  return launch_kernel(sort_choice_stats_kernel<>, 1, 32, 0, stream, false, options.stats, n, algorithm,
                       probes ? static_cast<const merge_control*>(d_temp) : nullptr);
}

}  // namespace detail

/// Stable sort of n keys by comp with the fastest of our algorithms for n
/// and the key size. Call with d_temp == nullptr to get temp_bytes (nothing
/// else happens). keys_out may equal keys_in.
///
/// @param d_temp     device temp storage, or nullptr for the size query
/// @param temp_bytes size of d_temp; set by the size query
/// @param keys_in    device input keys
/// @param keys_out   device output keys
/// @param n          number of keys (64-bit)
/// @param comp       strict weak order (tilesort::less, tilesort::greater or any functor)
/// @param stream     stream the kernels run on
/// @return cudaSuccess, or the first CUDA or argument error (nothing launched then)
///
/// @code
/// std::size_t bytes = 0;
/// tilesort::sort_keys(nullptr, bytes, d_in, d_out, n);   // size query
/// void* d_temp; cudaMalloc(&d_temp, bytes);
/// tilesort::sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::greater{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n,
                      Compare comp = {}, cudaStream_t stream = 0) {
  return detail::sort_front_door<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n,
                                                        comp, stream, sort_options{});
}

/// sort_keys with options: `options.stats` (if not null) receives n and the
/// algorithm that ran, in stream order.
///
/// @code
/// tilesort::sort_options options;
/// options.stats = pinned_stats;
/// tilesort::sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::less{}, stream, options);
/// cudaStreamSynchronize(stream);   // then pinned_stats->algorithm is valid
/// @endcode
template <typename Key, typename Compare>
cudaError_t sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n,
                      Compare comp, cudaStream_t stream, const sort_options& options) {
  return detail::sort_front_door<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n,
                                                        comp, stream, options);
}

/// Stable sort of n (key, value) pairs by key; values travel with their keys.
/// keys_out may equal keys_in, values_out values_in. Parameters as
/// sort_keys, plus the device arrays values_in and values_out.
///
/// @code
/// tilesort::sort_pairs(nullptr, bytes, d_keys, d_keys, d_vals, d_vals, n);   // size query
/// tilesort::sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n);    // in place
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                       const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                       cudaStream_t stream = 0) {
  return detail::sort_front_door(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream,
                                 sort_options{});
}

/// sort_pairs with options: `options.stats` (if not null) receives n and
/// the algorithm that ran, in stream order.
///
/// @code
/// tilesort::sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream, options);
/// @endcode
template <typename Key, typename Value, typename Compare>
cudaError_t sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                       const Value* values_in, Value* values_out, std::int64_t n, Compare comp, cudaStream_t stream,
                       const sort_options& options) {
  return detail::sort_front_door(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream,
                                 options);
}

/// sort_keys with stream-ordered temp storage (cudaMallocAsync /
/// cudaFreeAsync on `stream`); graph-capturable. A failed allocation returns
/// cudaErrorMemoryAllocation with nothing written.
///
/// @code
/// tilesort::sort_keys(d_keys, d_keys, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {}, cudaStream_t stream = 0,
                      const sort_options& options = {}) {
  return detail::sort_with_stream_temp(keys_in, keys_out, n, stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream, options);
  });
}

/// sort_pairs with stream-ordered temp storage, as the sort_keys overload
/// without d_temp.
///
/// @code
/// tilesort::sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, std::int64_t n,
                       Compare comp = {}, cudaStream_t stream = 0, const sort_options& options = {}) {
  return detail::sort_with_stream_temp(keys_in, keys_out, values_in, values_out, n, stream,
                                       [&](void* d_temp, std::size_t& temp_bytes) {
    return sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream, options);
  });
}

}  // namespace tilesort
