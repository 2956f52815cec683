// device/sort.cuh — the front door: sort_keys / sort_pairs, one stable sort
// that runs whichever of our algorithms is fastest for n, the key size and
// the value size (detail/sort_choice.cuh holds the table: per key and value
// size, the bitonic sort for small sorts of keys alone whose stability
// cannot be observed (integers under less / greater), the merge sort below a
// measured crossover and the sample sort from it on; today 8-byte keys alone
// and 4-byte keys with 4-byte values take the sample sort from 2^25 keys).
//
// The choice depends only on n and the sizes, never on the data, so the
// size query and the sort agree and nothing waits on the host: the call can
// be captured in a CUDA graph. Temp storage is the chosen algorithm's. With
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

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/sort_choice.cuh"
#include "../detail/temp_storage.cuh"
#include "bitonic_sort.cuh"
#include "merge_sort.cuh"
#include "sample_sort.cuh"
#include "sort_stats.cuh"

namespace tilesort {
namespace detail {

template <int Unused = 0>
__global__ void sort_choice_stats_kernel(sort_stats* stats, std::int64_t n, sort_algorithm algorithm) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  sort_stats s{};
  s.n = n;
  s.algorithm = algorithm;
  *stats = s;
}

// The algorithm sort_keys (Value = no_value) or sort_pairs runs for n keys.
template <typename Key, typename Value, typename Compare>
constexpr sort_algorithm front_door_choice(std::int64_t n) {
  constexpr bool pairs = sample_sort_has_values<Value>;
  return choose_sort_algorithm(n, sizeof(Key), pairs ? sizeof(Value) : 0,
                               !pairs && equivalence_is_identity<Key, Compare>);
}

// Size query or sort by the chosen algorithm; then the statistics, if asked.
template <typename Key, typename Value, typename Compare>
cudaError_t sort_front_door(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                            const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                            cudaStream_t stream, const sort_options& options) {
  if (n < 0) return cudaErrorInvalidValue;
  constexpr bool pairs = sample_sort_has_values<Value>;
  const sort_algorithm algorithm = front_door_choice<Key, Value, Compare>(n);
  cudaError_t error = cudaSuccess;
  if (algorithm == sort_algorithm::bitonic) {  // keys alone, equivalent keys bitwise equal
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
  sort_choice_stats_kernel<><<<1, 32, 0, stream>>>(options.stats, n, algorithm);
  return cudaGetLastError();
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
  TILESORT_RETURN_IF_ERROR(detail::check_sort_args(keys_in, keys_out, nullptr, nullptr, false, n));
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
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
  TILESORT_RETURN_IF_ERROR(detail::check_sort_args(keys_in, keys_out, values_in, values_out, true, n));
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream, options);
  });
}

}  // namespace tilesort
