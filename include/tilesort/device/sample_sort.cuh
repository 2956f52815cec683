// device/sample_sort.cuh — stable device-wide sample sort of keys or
// key-value pairs, any trivially copyable key, any strict weak order, 64-bit
// sizes.
//
// Algorithm (kernels in device/sample_sort/classify.cuh and buckets.cuh,
// tuning in device/sample_sort/policy.cuh, arithmetic in
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
// two (+ the samples), 7 or 14 launches, every one after the first a
// programmatic dependent launch on sm_90; no host synchronisation (bucket
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
#include "sample_sort/buckets.cuh"
#include "sample_sort/classify.cuh"
#include "sample_sort/policy.cuh"

namespace tilesort {
namespace detail {

// Launch everything. Arguments are checked; `temp` holds plan.total_bytes.
// `skip` (null: never skipped): a device word written before this call's
// first kernel; nonzero, every kernel returns at once (the front door's
// probe chose another sort). The first kernel is a plain launch, every
// later one a dependent launch where the device supports it
// (detail/launch.cuh).
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
  TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(bucket_kernel, sizeof(bucket_storage)));
  if (plan.direct) {
    if (n == 1 && keys_in == keys_out && (!pairs || values_in == values_out)) return cudaSuccess;
    // One tile, no merge pass: no spare buffer.
    sample_sort_bucket_work<Key, Value> direct;
    direct.from = {keys_in, values_in};
    direct.to = {keys_out, values_out};
    return launch_kernel(bucket_kernel, 1, policy::bucket_threads, sizeof(bucket_storage), stream, false, direct, plan,
                         skip, comp);
  }
  bool dependent = false;
  TILESORT_RETURN_IF_ERROR(dependent_launch_supported(dependent));
  char* base = static_cast<char*>(temp);
  Key* keys_temp = reinterpret_cast<Key*>(base + plan.keys_offset);
  Value* values_temp = pairs ? reinterpret_cast<Value*>(base + plan.values_offset) : nullptr;
  const sample_sort_items<Key, Value> temp_items{keys_temp, values_temp}, output{keys_out, values_out};
  Key* splitters = reinterpret_cast<Key*>(base + plan.splitters_offset);
  auto* counters = reinterpret_cast<std::int64_t*>(base + plan.counters_offset);
  auto* partials = reinterpret_cast<std::int64_t*>(base + plan.partials_offset);
  constexpr int scan_threads = policy::scan_threads;
  const auto blocks = [](std::int64_t count) { return static_cast<unsigned>(count); };
  auto scan = [&](std::int64_t* entries, std::int64_t count, std::int64_t* sums, std::int64_t chunks) {
    TILESORT_RETURN_IF_ERROR(launch_kernel(sample_sort_scan_reduce_kernel<scan_threads, policy::scan_chunk>,
                                           blocks(chunks), scan_threads, 0, stream, dependent, entries, count, sums,
                                           skip));
    TILESORT_RETURN_IF_ERROR(launch_kernel(sample_sort_scan_partials_kernel<scan_threads>, 1, scan_threads, 0, stream,
                                           dependent, sums, chunks, skip));
    return launch_kernel(sample_sort_scan_apply_kernel<scan_threads, policy::scan_items>, blocks(chunks), scan_threads,
                         0, stream, dependent, entries, count, static_cast<const std::int64_t*>(sums), skip);
  };
  auto* sample_kernel = sample_sort_sample_kernel<policy, Key, Compare>;
  auto* histogram_kernel = sample_sort_histogram_kernel<policy, Key, Compare>;
  auto* scatter_kernel = sample_sort_scatter_kernel<policy, Key, Value, Compare>;
  constexpr std::size_t sample_bytes = sizeof(sample_sort_sample_storage<Key, policy::sample_threads, policy::sample_items>);
  constexpr std::size_t histogram_bytes = sizeof(sample_sort_histogram_storage<Key, policy::max_levels>);
  constexpr std::size_t scatter_bytes = sizeof(sample_sort_scatter_storage<Key, Value, policy>);
  TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(sample_kernel, sample_bytes));
  TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(histogram_kernel, histogram_bytes));
  TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(scatter_kernel, scatter_bytes));
  const sample_sort_bucket_info* no_infos = nullptr;
  const std::int64_t* no_offsets = nullptr;
  // Level 1: input -> temp.
  TILESORT_RETURN_IF_ERROR(launch_kernel(sample_kernel, 1, policy::sample_threads, sample_bytes, stream, false, keys_in,
                                         plan, splitters, no_offsets, static_cast<sample_sort_bucket_info*>(nullptr),
                                         skip, comp));
  TILESORT_RETURN_IF_ERROR(launch_kernel(histogram_kernel, blocks(plan.scatter_blocks), policy::scatter_threads,
                                         histogram_bytes, stream, dependent, keys_in, splitters, plan, no_infos,
                                         counters, skip, comp));
  TILESORT_RETURN_IF_ERROR(scan(counters, plan.counters, partials, plan.scan_chunks));
  sample_sort_scatter_work<Key, Value> level1;
  level1.from = {keys_in, values_in};
  level1.splitters = splitters;
  level1.offsets = counters;
  level1.to = temp_items;
  TILESORT_RETURN_IF_ERROR(launch_kernel(scatter_kernel, blocks(plan.scatter_blocks), policy::scatter_threads,
                                         scatter_bytes, stream, dependent, level1, plan, skip, comp));
  // The bucket sorts write the output; buckets larger than a tile merge through temp.
  sample_sort_bucket_work<Key, Value> buckets;
  buckets.to = output;
  buckets.spare = temp_items;
  buckets.offsets = counters;
  if (!plan.two_level) {  // the buckets: temp -> output
    buckets.from = {keys_temp, values_temp};
    return launch_kernel(bucket_kernel, blocks(plan.buckets), policy::bucket_threads, sizeof(bucket_storage), stream,
                         dependent, buckets, plan, skip, comp);
  }
  // Level 2: temp -> output, each level-1 bucket with its own splitters.
  auto* infos = reinterpret_cast<sample_sort_bucket_info*>(base + plan.infos_offset);
  Key* splitters2 = reinterpret_cast<Key*>(base + plan.splitters2_offset);
  auto* counters2 = reinterpret_cast<std::int64_t*>(base + plan.counters2_offset);
  auto* partials2 = reinterpret_cast<std::int64_t*>(base + plan.partials2_offset);
  TILESORT_RETURN_IF_ERROR(launch_kernel(sample_kernel, blocks(plan.buckets + 1), policy::sample_threads, sample_bytes,
                                         stream, dependent, static_cast<const Key*>(keys_temp), plan, splitters2,
                                         static_cast<const std::int64_t*>(counters), infos, skip, comp));
  TILESORT_RETURN_IF_ERROR(launch_kernel(histogram_kernel, blocks(plan.chunks_bound), policy::scatter_threads,
                                         histogram_bytes, stream, dependent, static_cast<const Key*>(keys_temp),
                                         static_cast<const Key*>(splitters2), plan,
                                         static_cast<const sample_sort_bucket_info*>(infos), counters2, skip, comp));
  TILESORT_RETURN_IF_ERROR(scan(counters2, plan.counters2, partials2, plan.scan_chunks2));
  sample_sort_scatter_work<Key, Value> level2;
  level2.from = {keys_temp, values_temp};
  level2.splitters = splitters2;
  level2.offsets = counters2;
  level2.infos = infos;
  level2.to = output;
  TILESORT_RETURN_IF_ERROR(launch_kernel(scatter_kernel, blocks(plan.chunks_bound), policy::scatter_threads,
                                         scatter_bytes, stream, dependent, level2, plan, skip, comp));
  // The final buckets, in place in the output (temp is the merges' spare).
  auto* groups = reinterpret_cast<sample_sort_group*>(base + plan.groups_offset);
  TILESORT_RETURN_IF_ERROR(launch_kernel(sample_sort_pack_kernel<policy>, blocks(plan.splitters + 1), 32, 0, stream,
                                         dependent, plan, infos, static_cast<const std::int64_t*>(counters2), groups,
                                         skip));
  buckets.from = {keys_out, values_out};  // in place
  buckets.infos = infos;
  buckets.groups = groups;
  return launch_kernel(bucket_kernel, dim3(plan.splitters + 1, plan.range_blocks), policy::bucket_threads,
                       sizeof(bucket_storage), stream, dependent, buckets, plan, skip, comp);
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
  return detail::sort_with_stream_temp(keys_in, keys_out, n, stream, [&](void* d_temp, std::size_t& temp_bytes) {
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
  return detail::sort_with_stream_temp(keys_in, keys_out, values_in, values_out, n, stream,
                                       [&](void* d_temp, std::size_t& temp_bytes) {
    return sample_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  });
}

}  // namespace tilesort
