// device/sample_sort.cuh — stable device-wide sample sort of keys or
// key-value pairs, any trivially copyable key, any strict weak order, 64-bit
// sizes.
//
// Algorithm (kernels in device/sample_sort/kernels.cuh, arithmetic in
// detail/sample_sort_plan.cuh):
//   1. sample: one block sorts keys drawn from strata of the input and keeps
//      S = 2^levels - 1 evenly spaced ones as splitters (at most 255, so a
//      scatter tile sends long runs to each bucket).
//   2. histogram: blocks (each a run of consecutive tiles) classify every
//      key with the splitter tree in shared memory into one of 2S + 1
//      buckets: between two splitters, or equal to one (equal-key buckets
//      are never sorted), and count per (bucket, block).
//   3. scan: an exclusive sum over the counts, bucket major (3 launches).
//   4. scatter: the blocks classify again and write every key (and value) to
//      the temp buffer at its bucket's offset, in input order within a
//      bucket (ranked per warp, staged in shared memory in bucket order, and
//      written by consecutive threads to consecutive positions): stable.
//   5. When 255 splitters cannot make buckets of half a bucket tile (n >
//      128 bucket tiles: 2^19 4-byte keys), a second level: every level-1
//      bucket larger than a tile gets its own splitters (one block each),
//      and 2-4 run again over chunks of the buckets, temp -> output.
//   6. pack (two levels): a warp per level-1 bucket groups its consecutive
//      sub-buckets into runs of at most a tile (they are in order with each
//      other, so a run sorts as one), leaving large equal-key ones out.
//   7. buckets: blocks sort the buckets (one level) or the runs (two), in
//      registers (block_sort, stable; a quarter, half or full tile shape, the
//      smallest that holds it), a larger one tile by tile merged by the same
//      block; equal-key buckets are copied or left in place.
// Cost: keys read 3 times and written twice with one level, 5 and 3 with
// two (+ the samples), 7 or 14 launches; no host synchronisation (bucket
// sizes stay on the device; the level-2 and bucket grids are bounds, blocks
// past the work exit), so the call can be captured in a CUDA graph. n <= one
// bucket tile: one launch, keys_in -> keys_out; n == 1: a copy; n == 0:
// nothing.
// Temp storage: n keys (+ n values), the splitters, 8 bytes per (bucket,
// block) counter (level 1: at most max(511 x 264, n / 16); level 2: 511 per
// chunk of 16 K keys, about n / 32) and per scan chunk; 1 byte when one tile
// holds everything.
// In place (keys_out == keys_in) works: level 1 reads the input and writes
// the temp buffer, everything after reads the temp buffer or the output.
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
#include "sample_sort/kernels.cuh"

namespace tilesort {

// ------------------------------------------------------------------ tuning
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
  /// on an H100 against 3 for all (docs/tuning/sample_sort.md).
  static constexpr int scatter_blocks_per_sm = item_bytes <= 4 ? 4 : 2;
  /// Keys a scatter block classifies at once.
  static constexpr int scatter_tile = scatter_threads * scatter_items;
  /// Level-1 scatter blocks (counters: buckets x blocks, 8 bytes each):
  /// about n / (buckets x keys_per_counter), so that the counters grow slower
  /// than the keys, but at least min_scatter_blocks (2 per SM of an H100,
  /// 132 SMs) and at most max_scatter_blocks.
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

template <typename Key, typename Value>
sample_sort_plan make_sample_sort_plan_for(std::int64_t n) {
  return make_sample_sort_plan(n, sizeof(Key), value_bytes_of<Value>,
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
cudaError_t sample_sort_run(void (*kernel)(Params...), dim3 grid, int threads, std::size_t shared, cudaStream_t stream,
                            Args... args) {
  TILESORT_RETURN_IF_ERROR(sample_sort_allow_smem(kernel, shared));
  kernel<<<grid, threads, shared, stream>>>(static_cast<Params>(args)...);
  return cudaGetLastError();
}
template <typename... Params, typename... Args>
cudaError_t sample_sort_run(void (*kernel)(Params...), std::int64_t grid, int threads, std::size_t shared,
                            cudaStream_t stream, Args... args) {
  return sample_sort_run(kernel, dim3(static_cast<unsigned>(grid)), threads, shared, stream, args...);
}

// Launch everything. Arguments are checked; `temp` holds plan.total_bytes.
// `skip` (null: never skipped): a device word written before this call's
// first kernel; nonzero, every kernel returns at once (the front door's
// probe chose another sort).
template <typename Key, typename Value, typename Compare>
cudaError_t sample_sort_launch(const sample_sort_plan& plan, void* temp, const Key* keys_in, Key* keys_out,
                               const Value* values_in, Value* values_out, Compare comp, cudaStream_t stream,
                               const unsigned* skip = nullptr) {
  using policy = sample_sort_policy_for<Key, Value>;
  constexpr bool pairs = has_values<Value>;
  const std::int64_t n = plan.n;
  if (n == 0) return cudaSuccess;
  using bucket_storage = sample_sort_bucket_storage<Key, Value, policy>;
  auto* bucket_kernel = sample_sort_bucket_kernel<policy, Key, Value, Compare>;
  constexpr std::nullptr_t none = nullptr;
  if (plan.direct) {
    if (n == 1 && keys_in == keys_out && (!pairs || values_in == values_out)) return cudaSuccess;
    // One tile, no merge pass: no spare buffer.
    return sample_sort_run(bucket_kernel, dim3(1), policy::bucket_threads, sizeof(bucket_storage), stream, keys_in,
                           values_in, keys_out, values_out, none, none, none, none, none, plan, skip, comp);
  }
  char* base = static_cast<char*>(temp);
  Key* keys_temp = reinterpret_cast<Key*>(base + plan.keys_offset);
  Value* values_temp = pairs ? reinterpret_cast<Value*>(base + plan.values_offset) : nullptr;
  Key* splitters = reinterpret_cast<Key*>(base + plan.splitters_offset);
  auto* counters = reinterpret_cast<std::int64_t*>(base + plan.counters_offset);
  auto* partials = reinterpret_cast<std::int64_t*>(base + plan.partials_offset);
  constexpr int scan_threads = policy::scan_threads;
  auto scan = [&](std::int64_t* entries, std::int64_t count, std::int64_t* sums, std::int64_t chunks) {
    TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_scan_reduce_kernel<scan_threads, policy::scan_chunk>,
                                             chunks, scan_threads, 0, stream, entries, count, sums, skip));
    TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_scan_partials_kernel<scan_threads>, 1, scan_threads, 0,
                                             stream, sums, chunks, skip));
    return sample_sort_run(sample_sort_scan_apply_kernel<scan_threads, policy::scan_items>, chunks, scan_threads, 0,
                           stream, entries, count, sums, skip);
  };
  auto* sample_kernel = sample_sort_sample_kernel<policy, Key, Compare>;
  auto* histogram_kernel = sample_sort_histogram_kernel<policy, Key, Compare>;
  auto* scatter_kernel = sample_sort_scatter_kernel<policy, Key, Value, Compare>;
  constexpr std::size_t sample_bytes = sizeof(sample_sort_sample_storage<Key, policy::sample_threads, policy::sample_items>);
  constexpr std::size_t histogram_bytes = sizeof(sample_sort_histogram_storage<Key, policy::max_levels>);
  constexpr std::size_t scatter_bytes = sizeof(sample_sort_scatter_storage<Key, Value, policy>);
  const sample_sort_bucket_info* no_infos = nullptr;
  // Level 1: input -> temp.
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_kernel, 1, policy::sample_threads, sample_bytes, stream, keys_in,
                                           plan, splitters, none, none, skip, comp));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(histogram_kernel, plan.scatter_blocks, policy::scatter_threads,
                                           histogram_bytes, stream, keys_in, splitters, plan, no_infos, counters,
                                           skip, comp));
  TILESORT_RETURN_IF_ERROR(scan(counters, plan.counters, partials, plan.scan_chunks));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(scatter_kernel, plan.scatter_blocks, policy::scatter_threads, scatter_bytes,
                                           stream, keys_in, values_in, splitters, counters, no_infos, keys_temp,
                                           values_temp, plan, skip, comp));
  if (!plan.two_level)  // the buckets: temp -> output
    return sample_sort_run(bucket_kernel, dim3(plan.buckets), policy::bucket_threads, sizeof(bucket_storage), stream,
                           keys_temp, values_temp, keys_out, values_out, keys_temp, values_temp, counters, no_infos,
                           none, plan, skip, comp);
  // Level 2: temp -> output, each level-1 bucket with its own splitters.
  auto* infos = reinterpret_cast<sample_sort_bucket_info*>(base + plan.infos_offset);
  Key* splitters2 = reinterpret_cast<Key*>(base + plan.splitters2_offset);
  auto* counters2 = reinterpret_cast<std::int64_t*>(base + plan.counters2_offset);
  auto* partials2 = reinterpret_cast<std::int64_t*>(base + plan.partials2_offset);
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_kernel, plan.buckets + 1, policy::sample_threads, sample_bytes,
                                           stream, keys_temp, plan, splitters2, counters, infos, skip, comp));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(histogram_kernel, plan.chunks_bound, policy::scatter_threads,
                                           histogram_bytes, stream, keys_temp, splitters2, plan, infos, counters2,
                                           skip, comp));
  TILESORT_RETURN_IF_ERROR(scan(counters2, plan.counters2, partials2, plan.scan_chunks2));
  TILESORT_RETURN_IF_ERROR(sample_sort_run(scatter_kernel, plan.chunks_bound, policy::scatter_threads, scatter_bytes,
                                           stream, keys_temp, values_temp, splitters2, counters2, infos, keys_out,
                                           values_out, plan, skip, comp));
  // The final buckets, in place in the output (temp is the merges' spare).
  auto* groups = reinterpret_cast<sample_sort_group*>(base + plan.groups_offset);
  TILESORT_RETURN_IF_ERROR(sample_sort_run(sample_sort_pack_kernel<policy>, plan.splitters + 1, 32, 0, stream, plan,
                                           infos, static_cast<const std::int64_t*>(counters2), groups, skip));
  return sample_sort_run(bucket_kernel, dim3(plan.splitters + 1, plan.range_blocks), policy::bucket_threads,
                         sizeof(bucket_storage), stream, keys_out, values_out, keys_out, values_out, keys_temp,
                         values_temp, counters, infos, groups, plan, skip, comp);
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
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, n));
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
