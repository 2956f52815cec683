// device/sample_sort.cuh — stable device-wide sample sort of keys or
// key-value pairs, any trivially copyable key, any strict weak order, 64-bit
// sizes.
//
// Algorithm (kernels in device/sample_sort_kernels.cuh, arithmetic in
// detail/sample_sort_plan.cuh):
//   1. sample: one block sorts `samples` keys drawn from strata of the input
//      and keeps S = 2^levels - 1 evenly spaced ones as splitters (levels
//      from n: buckets of about half a bucket tile, at most 2^max_levels:
//      4096 range buckets for 4-byte keys).
//   2. histogram: scatter blocks (each a run of consecutive tiles) classify
//      every key with the splitter tree in shared memory into one of 2S + 1
//      buckets: between two splitters, or equal to one (equal-key buckets
//      are never sorted), and count per (bucket, block).
//   3. scan: an exclusive sum over the counts, bucket major (3 launches).
//   4. scatter: the blocks classify again and write every key (and value) to
//      the temp buffer at its bucket's offset; within a tile, keys of one
//      bucket keep their input order (ranked by a block_sort of (bucket,
//      position) codes; the key and value are read again by position, from
//      the cache), and tiles follow in input order: stable.
//   5. buckets: one block per bucket copies an equal-key bucket, sorts a
//      bucket of at most a tile in registers (block_sort, stable; a quarter,
//      half or full tile shape, the smallest that holds it), and sorts
//      a larger one tile by tile and merges the tiles itself (pairwise
//      passes through global memory, temp and output alternating).
// Cost: keys read 3 times and written twice (+ the sample, + the scatter's
// second read of its tile, from the cache), 7 launches; no
// host synchronisation (bucket sizes stay on the device; the bucket grid is
// the bucket count), so the call can be captured in a CUDA graph. n <= one
// bucket tile: one launch, keys_in -> keys_out; n == 1: a copy; n == 0:
// nothing.
// Temp storage: n keys (+ n values), the splitters, 8 bytes per (bucket,
// scatter block) counter (at most max(8191 x 264, n / 16)) and per scan
// chunk; 1 byte when one tile holds everything.
// In place (keys_out == keys_in) works: the scatter reads the input and
// writes the temp buffer, the bucket sorts read the temp buffer.
//
//   std::size_t temp_bytes = 0;
//   tilesort::sample_sort_keys(nullptr, temp_bytes, d_in, d_out, n);         // size query
//   cudaMallocAsync(&d_temp, temp_bytes, stream);
//   tilesort::sample_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::less{}, stream);
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/sample_sort_plan.cuh"
#include "../detail/temp_storage.cuh"
#include "sample_sort_kernels.cuh"

namespace tilesort {

// ------------------------------------------------------------------ tuning
/// Tuning of sample_sort_keys / sample_sort_pairs for items of KeyBytes +
/// ValueBytes bytes (ValueBytes = 0 for keys only). Shapes chosen from the
/// first version's H100/H200 profile, not yet tuned by measurement: the
/// bucket sorts take the merge sort's blocksort tile (and its half and
/// quarter), up to 4095 splitters so that buckets fit a tile up to 2^24 u32
/// keys. Measurements and where the time goes: docs/tuning/sample_sort.md.
///
/// @code
/// using policy = tilesort::sample_sort_policy<sizeof(std::uint32_t), 0>;
/// static_assert(policy::bucket_tile == 8192);
/// @endcode
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct sample_sort_policy {
  /// Bytes per item: key plus value.
  static constexpr std::size_t item_bytes = KeyBytes + ValueBytes;
  /// Bucket sorts: one block per bucket, a tile of bucket_threads x
  /// bucket_items items in registers (block_sort).
  static constexpr int bucket_threads = 512;
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
  /// keys (ranks fit in 12 bits).
  static constexpr int scatter_threads = 256;
  /// @copydoc scatter_threads
  static constexpr int scatter_items = item_bytes <= 8 ? 16 : 8;
  /// Keys a scatter block classifies at once.
  static constexpr int scatter_tile = scatter_threads * scatter_items;
  /// Scatter blocks (counters: buckets x blocks, 8 bytes each): about
  /// n / (buckets x keys_per_counter), so that the counters grow slower than
  /// the keys, but at least min_scatter_blocks (2 per SM of an H100, 132 SMs)
  /// and at most max_scatter_blocks.
  static constexpr int min_scatter_blocks = 264;
  /// @copydoc min_scatter_blocks
  static constexpr int max_scatter_blocks = 1024;
  /// @copydoc min_scatter_blocks
  static constexpr int keys_per_counter = 16;
  /// Shared memory the splitter tree may take (one key per splitter): with
  /// the scatter's other arrays, two scatter blocks fit an SM.
  static constexpr std::size_t tree_bytes = 16384;
  /// Splitter tree depth: at most 2^max_levels - 1 splitters, 2^(max_levels +
  /// 1) - 1 buckets; the deepest tree that fits tree_bytes, at most 12: 12
  /// levels (4095 splitters) for keys of up to 4 bytes, 11 for 8 bytes, 10
  /// for 16.
  static constexpr int max_levels = detail::sample_sort_max_levels(KeyBytes, tree_bytes);
  /// Samples per bucket (fewer when sample_tile is reached: 4 with 4095
  /// splitters).
  static constexpr int oversampling = 8;
  /// The sample sort: one block of sample_threads x sample_items keys.
  static constexpr int sample_threads = 1024;
  /// @copydoc sample_threads
  static constexpr int sample_items = KeyBytes <= 8 ? 16 : KeyBytes <= 16 ? 8 : 4;
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
            max_levels,  sample_tile,  oversampling,       scan_chunk};
  }
  static_assert(scatter_tile <= 4096, "positions take 12 bits of a scatter code, buckets 13");
  static_assert(max_levels >= 1 && max_levels <= 12, "1 to 4095 splitters, at most 8191 buckets");
};

namespace detail {

template <typename Key, typename Value>
using sample_sort_policy_for = sample_sort_policy<sizeof(Key), sample_sort_has_values<Value> ? sizeof(Value) : 0>;

template <typename Key, typename Value>
sample_sort_plan make_sample_sort_plan_for(std::int64_t n) {
  return make_sample_sort_plan(n, sizeof(Key), sample_sort_has_values<Value> ? sizeof(Value) : 0,
                               sample_sort_policy_for<Key, Value>::shape());
}

template <typename Kernel>
cudaError_t sample_sort_allow_smem(Kernel* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

// kernel<<<grid, threads, shared, stream>>>(args...), opting in to more than
// 48 KB of dynamic shared memory first.
template <typename... Params, typename... Args>
cudaError_t sample_sort_run(void (*kernel)(Params...), std::int64_t grid, int threads, std::size_t shared,
                            cudaStream_t stream, Args... args) {
  TILESORT_RETURN_IF_ERROR(sample_sort_allow_smem(kernel, shared));
  kernel<<<static_cast<unsigned>(grid), threads, shared, stream>>>(static_cast<Params>(args)...);
  return cudaGetLastError();
}

// Launch everything. Arguments are checked; `temp` holds plan.total_bytes.
template <typename Key, typename Value, typename Compare>
cudaError_t sample_sort_launch(const sample_sort_plan& plan, void* temp, const Key* keys_in, Key* keys_out,
                               const Value* values_in, Value* values_out, Compare comp, cudaStream_t stream) {
  using policy = sample_sort_policy_for<Key, Value>;
  constexpr bool pairs = sample_sort_has_values<Value>;
  const std::int64_t n = plan.n;
  if (n == 0) return cudaSuccess;
  using bucket_storage = sample_sort_bucket_storage<Key, Value, policy>;
  auto* bucket_kernel = sample_sort_bucket_kernel<policy, Key, Value, Compare>;
  if (plan.direct) {
    if (n == 1 && keys_in == keys_out && (!pairs || values_in == values_out)) return cudaSuccess;
    // The direct sort never writes its source (one tile, no merge pass).
    return sample_sort_run(bucket_kernel, 1, policy::bucket_threads, sizeof(bucket_storage), stream,
                           const_cast<Key*>(keys_in), const_cast<Value*>(values_in), keys_out, values_out,
                           static_cast<const std::int64_t*>(nullptr), plan, comp);
  }
  char* base = static_cast<char*>(temp);
  Key* keys_temp = reinterpret_cast<Key*>(base + plan.keys_offset);
  Value* values_temp = pairs ? reinterpret_cast<Value*>(base + plan.values_offset) : nullptr;
  Key* splitters = reinterpret_cast<Key*>(base + plan.splitters_offset);
  auto* counters = reinterpret_cast<std::int64_t*>(base + plan.counters_offset);
  auto* partials = reinterpret_cast<std::int64_t*>(base + plan.partials_offset);

  using sample_storage = sample_sort_sample_storage<Key, policy::sample_threads, policy::sample_items>;
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_sample_kernel<policy, Key, Compare>, 1, policy::sample_threads,
                                           sizeof(sample_storage), stream, keys_in, plan, splitters, comp));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_histogram_kernel<policy, Key, Compare>, plan.scatter_blocks,
                                           policy::scatter_threads,
                                           sizeof(sample_sort_histogram_storage<Key, policy::max_levels>), stream,
                                           keys_in, splitters, plan, counters, comp));
  constexpr int scan_threads = policy::scan_threads;
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_scan_reduce_kernel<scan_threads, policy::scan_chunk>,
                                           plan.scan_chunks, scan_threads, 0, stream, counters, plan.counters,
                                           partials));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_scan_partials_kernel<scan_threads>, 1, scan_threads, 0, stream,
                                           partials, plan.scan_chunks));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_scan_apply_kernel<scan_threads, policy::scan_items>,
                                           plan.scan_chunks, scan_threads, 0, stream, counters, plan.counters,
                                           partials));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_scatter_kernel<policy, Key, Value, Compare>,
                                           plan.scatter_blocks, policy::scatter_threads,
                                           sizeof(sample_sort_scatter_storage<Key, policy>), stream, keys_in,
                                           values_in, splitters, counters, keys_temp, values_temp, plan, comp));
  return sample_sort_run(bucket_kernel, plan.buckets, policy::bucket_threads, sizeof(bucket_storage), stream,
                         keys_temp, values_temp, keys_out, values_out, static_cast<const std::int64_t*>(counters),
                         plan, comp);
}

// Two-phase entry: size query, argument checks, launch.
template <typename Key, typename Value, typename Compare>
cudaError_t sample_sort_two_phase(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                  const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                                  cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  const sample_sort_plan plan = make_sample_sort_plan_for<Key, Value>(n);
  if (d_temp == nullptr) {
    temp_bytes = plan.total_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, sample_sort_has_values<Value>, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, plan.total_bytes));
  return sample_sort_launch(plan, d_temp, keys_in, keys_out, values_in, values_out, comp, stream);
}

}  // namespace detail

// ------------------------------------------------------------------ public API
/// Stable sample sort of n keys: keys_out[0, n) = keys_in[0, n) ordered by
/// comp. Call with d_temp == nullptr to get temp_bytes (nothing else
/// happens). keys_out may equal keys_in.
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
/// tilesort::sample_sort_keys(nullptr, bytes, d_in, d_out, n);   // size query
/// void* d_temp; cudaMalloc(&d_temp, bytes);
/// tilesort::sample_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t sample_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                             std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::sample_sort_two_phase<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr,
                                                              n, comp, stream);
}

/// Stable sample sort of n (key, value) pairs by key; values travel with
/// their keys. keys_out may equal keys_in, values_out values_in. Parameters
/// as sample_sort_keys, plus the device arrays values_in and values_out.
///
/// @code
/// tilesort::sample_sort_pairs(nullptr, bytes, d_keys, d_keys, d_vals, d_vals, n);   // size query
/// tilesort::sample_sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n);    // in place
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t sample_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                              const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                              cudaStream_t stream = 0) {
  return detail::sample_sort_two_phase(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
}

/// sample_sort_keys with stream-ordered temp storage (cudaMallocAsync /
/// cudaFreeAsync on `stream`); graph-capturable. A failed allocation returns
/// cudaErrorMemoryAllocation with nothing written.
///
/// @code
/// tilesort::sample_sort_keys(d_keys, d_keys, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t sample_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                             cudaStream_t stream = 0) {
  TILESORT_RETURN_IF_ERROR(detail::check_sort_args(keys_in, keys_out, nullptr, nullptr, false, n));
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return sample_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream);
  });
}

/// sample_sort_pairs with stream-ordered temp storage, as the
/// sample_sort_keys overload without d_temp.
///
/// @code
/// tilesort::sample_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t sample_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                              std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  TILESORT_RETURN_IF_ERROR(detail::check_sort_args(keys_in, keys_out, values_in, values_out, true, n));
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return sample_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  });
}

}  // namespace tilesort
