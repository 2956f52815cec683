// device/locality_sort.cuh — stable merge sort that exploits keys already near
// their sorted place (ModernGPU's locality sort, with finer early exit).
//
// Same shape as merge_sort (blocksort tiles of T keys, then ceil(log2(n / T))
// merge passes of merge tiles of M keys, same policy), plus early exit
// (device/locality_sort/merge.cuh, decisions in detail/merge_jobs.cuh):
//   * a blocksort tile already in order is not sorted again (and, sorted in
//     place, not even written); when every tile is in order and after the
//     tile before it (sorted input), nothing runs after the blocksort;
//   * a pair of runs already in order costs one comparison and moves nothing;
//   * a pair whose disorder is confined near its interface is fixed by one
//     in-place "window" merge of at most M keys;
//   * otherwise only the merge tiles whose outputs differ from their keys are
//     merged; tiles never get copied just to keep the ping-pong in step (each
//     tile records which buffer holds it; a final pass copies the tiles left
//     in the temp buffer).
// Cost: sorted input reads the keys once (and writes them once out of place);
// keys displaced by less than the window (keys[i] = i + rand() % 64) cost the
// blocksort plus a few small window merges; random input (no blocksort tile
// looks local) runs merge_sort's passes: pairwise in one cooperative launch,
// or from dense_kway_min_keys keys on (2^24; items of 4 bytes and more) its
// k-way kernels, which return at once for other input. Launches: 1 memset +
// 2, + 1 from dense_kernel_min_keys keys on, and from dense_kway_min_keys on
// + 2 per k-way pass instead (+1 with statistics); no host synchronisation,
// graph-capturable.
// Temp storage: n keys (+ n values) + 2 bytes and one 32-byte job per merge
// tile + 1.5 KB of counters (only the counters when n fits one tile).
// Tuning (locality_sort_policy) and its history: docs/tuning/locality_sort.md.
//
//   std::size_t temp_bytes = 0;
//   tilesort::locality_sort_keys(nullptr, temp_bytes, d_in, d_out, n);        // size query
//   cudaMallocAsync(&d_temp, temp_bytes, stream);
//   tilesort::locality_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::less{}, stream);
//   // or, allocating stream-ordered temp storage itself:
//   tilesort::locality_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream);
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>

#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/temp_storage.cuh"
#include "locality_sort/merge.cuh"
#include "sort_stats.cuh"

namespace tilesort {
namespace detail {

template <typename Key, typename Value>
struct locality_setup {
  using policy = locality_policy_for<Key, Value>;
  std::int64_t n = 0;
  std::int64_t blocks = 0;
  int passes = 0;
  kway_merge_sort_plan dense;  // merge_sort's k-way passes for random keys (merge_passes 0: not these)
  locality_layout layout;
  std::size_t total_bytes = 0;
  explicit locality_setup(std::int64_t count) : n(count < 0 ? 0 : count) {
    blocks = n > 0 ? (n - 1) / policy::tile_items + 1 : 0;
    passes = merge_passes_for(n, policy::tile_items);
    // [counters][temp keys][temp values][tile buffers x 2][jobs]; no temp
    // keys when one tile holds everything.
    const std::size_t after_control = align_temp(sizeof(merge_control));
    const std::int64_t buffered = passes > 0 ? n : 0;
    if (locality_dense_kway<policy>(n)) dense = locality_dense_plan<policy>(n);
    const auto cut_bytes = static_cast<std::size_t>(dense.partition_count()) * sizeof(std::int64_t);
    total_bytes = plan_locality_layout<policy>(layout, after_control, buffered, blocks, sizeof(Key),
                                               value_bytes_of<Value>, cut_bytes);
  }
};

// Launch everything (arguments checked, n > 0; `temp` holds
// setup.total_bytes). `Probed`: the front door's probe has zeroed the control
// and written its verdict (merge_control::probe): no memset, and no
// dense passes, which are there for random keys.
template <bool Probed, typename Key, typename Value, typename Compare>
cudaError_t locality_sort_launch(const locality_setup<Key, Value>& setup, void* temp, const Key* keys_in,
                                 Key* keys_out, const Value* values_in, Value* values_out, Compare comp,
                                 cudaStream_t stream) {
  using policy = typename locality_setup<Key, Value>::policy;
  // Blocksort, job and k-way tile indices are 32-bit; positions stay far from 2^63.
  if (setup.blocks > (std::int64_t(1) << 31) / locality_tiling<policy>::merge_tiles_per_block ||
      setup.dense.partition_count() / setup.dense.ways > INT_MAX)
    return cudaErrorInvalidValue;
  char* base = static_cast<char*>(temp);
  auto* control = reinterpret_cast<merge_control*>(base);
  // The counters are zeroed by a memset: a zeroing kernel with the blocksort
  // as its dependent, and zeroing in the blocksort's block 0, were both
  // slower (docs/tuning/locality_sort.md).
  if constexpr (!Probed) TILESORT_RETURN_IF_ERROR(cudaMemsetAsync(control, 0, sizeof(merge_control), stream));
  const merge_buffers<Key, Value> buffers{keys_out, setup.passes > 0 ? reinterpret_cast<Key*>(base + setup.layout.keys_offset) : nullptr,
                                          values_out,
                                          setup.passes > 0 ? reinterpret_cast<Value*>(base + setup.layout.values_offset) : nullptr};
  const merge_segment_list list{nullptr, nullptr, nullptr, nullptr, setup.n, setup.blocks};
  return launch_locality_merge<policy, !Probed>(keys_in, values_in, buffers, list, setup.layout, temp, setup.passes,
                                                control, comp, stream);
}

template <typename Key, typename Value, typename Compare>
cudaError_t locality_sort_run(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                              const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                              cudaStream_t stream, const sort_options& options) {
  if (n < 0) return cudaErrorInvalidValue;
  const locality_setup<Key, Value> setup(n);
  if (d_temp == nullptr) {  // size query: nothing else happens
    temp_bytes = setup.total_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, setup.total_bytes));
  using policy = typename locality_setup<Key, Value>::policy;
  auto* control = static_cast<merge_control*>(d_temp);
  locality_stats_inputs stats = merge_stats_inputs<policy>(n);
  if (n == 0) return write_sort_stats(options.stats, stats, stream);
  TILESORT_RETURN_IF_ERROR(
      locality_sort_launch<false>(setup, d_temp, keys_in, keys_out, values_in, values_out, comp, stream));
  stats.control = control;
  stats.passes = setup.passes;
  return write_sort_stats(options.stats, stats, stream, setup.dense);
}

}  // namespace detail

/// Stable sort of n keys, fast when keys start near their sorted place.
/// Call with d_temp == nullptr to get temp_bytes (nothing else happens).
/// keys_out may equal keys_in.
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
/// tilesort::locality_sort_keys(nullptr, bytes, d_in, d_out, n);           // size query
/// tilesort::locality_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t locality_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                               std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::locality_sort_run<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n,
                                                          comp, stream, sort_options{});
}

/// With options: `options.stats` receives the pass statistics (sort_stats.cuh).
///
/// @code
/// tilesort::sort_options options;
/// options.stats = pinned_stats;
/// tilesort::locality_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::less{}, stream, options);
/// @endcode
template <typename Key, typename Compare>
cudaError_t locality_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                               std::int64_t n, Compare comp, cudaStream_t stream, const sort_options& options) {
  return detail::locality_sort_run<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n,
                                                          comp, stream, options);
}

/// Stable sort of n (key, value) pairs by key; values travel with their keys.
/// values_out may equal values_in.
///
/// @code
/// tilesort::locality_sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n);   // in place
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t locality_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                                cudaStream_t stream = 0) {
  return detail::locality_sort_run(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream,
                                   sort_options{});
}

/// locality_sort_pairs with options: `options.stats` receives the pass
/// statistics (sort_stats.cuh).
///
/// @code
/// tilesort::locality_sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream, options);
/// @endcode
template <typename Key, typename Value, typename Compare>
cudaError_t locality_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                                cudaStream_t stream, const sort_options& options) {
  return detail::locality_sort_run(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream,
                                   options);
}

/// Convenience forms: stream-ordered temp storage (cudaMallocAsync/cudaFreeAsync
/// on `stream`); graph-capturable. A failed allocation returns
/// cudaErrorMemoryAllocation with nothing written.
///
/// @code
/// tilesort::locality_sort_keys(d_keys, d_keys, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t locality_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                               cudaStream_t stream = 0, const sort_options& options = {}) {
  return detail::sort_with_stream_temp(keys_in, keys_out, n, stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return locality_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream, options);
  });
}

/// locality_sort_pairs with stream-ordered temp storage, as the
/// locality_sort_keys overload without d_temp.
///
/// @code
/// tilesort::locality_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t locality_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                std::int64_t n, Compare comp = {}, cudaStream_t stream = 0,
                                const sort_options& options = {}) {
  return detail::sort_with_stream_temp(keys_in, keys_out, values_in, values_out, n, stream,
                                       [&](void* d_temp, std::size_t& temp_bytes) {
    return locality_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream,
                               options);
  });
}

}  // namespace tilesort
