// device/segmented_sort.cuh — stable segmented sort: many independent
// segments of one array, each sorted on its own, in one call. Every segment
// description of device/segments.cuh works: offsets (32- or 64-bit, empty
// segments, gaps), heads, a head-flag bitfield, uniform rows of any length.
//
// Uniform rows of up to uniform_segments_policy::max_row keys (16384 for
// 4-byte keys) take the fast path: one launch, no scratch memory, the
// smallest row sorter that holds a row:
//   * rows of up to 512 keys: one logical warp per row (warp_sort, keys in
//     registers, exchanged by shuffles); stability comes from breaking ties by
//     the key's position in its row, which travels with the key (skipped for
//     keys alone when equivalent keys are bitwise equal, e.g. integers under
//     less/greater);
//   * rows of up to 16384 keys (8192 for 8-byte keys, or pairs wider than 8
//     bytes): one block per row (block_sort, stable by construction).
// Each row is read once and written once. detail::row_positions_sort runs
// the same sorters with each key's position in its row made at load as its
// value and written as int64 (torch.sort's indices, for the Python package).
//
// Every other description (and longer rows) takes the general path, binning
// segments by length on the device, with no host synchronisation:
//   1. (flags only) three kernels turn the bitfield into a heads list.
//   2. classify: one thread per segment puts it in the bin of the smallest
//      sorter that holds it (warp-aggregated atomic counters; each bin is a
//      list of packed (begin, length) words), copies segments of one key and
//      short gaps through (out of place), and lists the long segments (longer
//      than max_row) and the long gaps.
//   3. expand: the long segments' blocksort tiles and the gaps' copy chunks
//      get their entries.
//   4. one launch per bin: the row sorters above, a fixed grid looping over
//      the bin's list (its length is read on the device).
//   5. long segments: the early-exit merge sort of device/locality_sort/merge.cuh
//      with tiles aligned to each segment's first key: blocksort, then merge
//      passes in which a segment that needs no more passes costs nothing.
//   6. the long gaps are copied (out of place).
// (Files: device/segmented_sort/row_sorters.cuh holds the row sorters,
// device/segmented_sort/classify.cuh steps 1-3 and 6, device/locality_sort/merge.cuh
// step 5; this file sizes everything and launches it.)
// Launches: 1 memset + 2 + 10 bins + 2 long-segment launches (blocksort, and
// one cooperative launch for up to P passes) + 1 gap copy,
// P = ceil(log2(longest possible segment / T)) (T = 8192 for 4-byte keys);
// every launch has a fixed grid and reads its work count on the device, so
// the whole call can be captured in a CUDA graph. From 2^20 keys on, the
// bins run on side streams beside the long segments (detail/side_streams.cuh),
// forked from and joined back to the caller's stream with events. A key is read and written
// once when its segment holds at most max_row keys; otherwise like a merge
// sort of its segment (with early exit).
//
// Segments and gaps (offsets): segments must be listed in position order and
// must not overlap (begin[i] <= end[i] <= begin[i + 1]; empty segments
// anywhere). Keys outside every segment are left where they are in place;
// out of place they are copied to keys_out, so that keys_out is always a full
// array. A malformed description is rejected with cudaErrorInvalidValue only
// when sort_options::check_segments asks for it (that synchronises the
// stream); without the check it gives an unspecified order but never touches
// memory outside [0, n).
//
//   std::size_t temp_bytes = 0;
//   auto segs = tilesort::segments::offsets(d_offsets, d_offsets + 1, num_segments);
//   tilesort::segmented_sort_keys(nullptr, temp_bytes, d_in, d_out, n, segs);   // size query
//   cudaMalloc(&d_temp, temp_bytes);
//   tilesort::segmented_sort_keys(d_temp, temp_bytes, d_in, d_out, n, segs);
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../block/block_sort.cuh"
#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/radix_order.cuh"
#include "../detail/segment_ranges.cuh"
#include "../detail/side_streams.cuh"
#include "../detail/temp_storage.cuh"
#include "../thread/thread_load.cuh"
#include "../thread/thread_sort.cuh"
#include "../warp/warp_shuffle.cuh"
#include "../warp/warp_sort.cuh"
#include "locality_sort/merge.cuh"
#include "segmented_sort/classify.cuh"
#include "segmented_sort/row_sorters.cuh"
#include "segments.cuh"
#include "sort_stats.cuh"

namespace tilesort {

/// Tuning of the segmented sort's general path (any description). The bins
/// are the row sorters of uniform_segments_policy: a segment goes to the
/// first whose capacity holds it, longer ones to the early-exit merge sort
/// (locality_sort_policy). Tuning history: docs/tuning/segmented_sort.md.
///
/// @code
/// using policy = tilesort::segmented_sort_policy<std::uint32_t>;
/// static_assert(policy::bin_capacity(policy::bin_count - 1) == 16384);
/// @endcode
template <typename Key, typename Value = void>
struct segmented_sort_policy {
  using sorters = uniform_segments_policy<Key, Value>;  ///< the row sorters, one per bin
  /// Bins: the warp shapes, then the block shapes.
  static constexpr int bin_count = sorters::warp_shape_count + sorters::block_shape_count;
  static constexpr int classify_threads = 256;  ///< threads per block of the classify kernel
  static constexpr int expand_threads = 256;    ///< threads per block of the expand kernel
  static constexpr int copy_threads = 256;      ///< threads per block of the gap copy
  /// Gaps of at most direct_gap_items keys are copied by the classify thread
  /// itself, longer ones in chunks of gap_chunk_items by whole blocks.
  static constexpr int direct_gap_items = 64;
  /// @copydoc direct_gap_items
  static constexpr int gap_chunk_items = 4096;
  static constexpr int flag_threads = 256;         ///< threads per block of the flags-to-heads kernels
  static constexpr int flag_words_per_thread = 8;  ///< 256 x 8 words = 65536 positions per block
  /// Grids of the looping kernels are capped at resident_threads per SM
  /// (sm_90 runs at most 2048).
  static constexpr int resident_threads = 2048;
  /// From this many keys on, each bin runs on a side stream of its own
  /// (detail/side_streams.cuh), beside the long segments' merge sort on the
  /// caller's stream; below it the events are assumed to cost more than the
  /// overlap gains (not measured yet).
  static constexpr std::int64_t side_stream_min_keys = std::int64_t(1) << 20;
  /// Capacity in keys of bin `bin` (< bin_count): threads x items of its sorter.
  static constexpr int bin_capacity(int bin) {
    const auto shape = bin < sorters::warp_shape_count ? sorters::warp_shape(bin)
                                                       : sorters::block_shape(bin - sorters::warp_shape_count);
    return shape.threads * shape.items;
  }
};

namespace detail {

// ------------------------------------------------------------------ host side
// The largest n the general path takes: packed bin entries hold begin < 2^48,
// and entry indices of long segments stay 32-bit far below it.
inline constexpr std::int64_t max_segmented_keys = std::int64_t(1) << 40;


// Everything the general path sizes on the host: bin capacities, the long
// segments' entries and passes, the gap lists, the temp layout.
template <typename Key, typename Value>
struct segmented_setup {
  using payload = std::conditional_t<has_values<Value>, Value, void>;
  using policy = segmented_sort_policy<Key, payload>;
  using sorters = typename policy::sorters;
  using merge_policy = locality_policy_for<Key, Value>;
  static constexpr int bins = policy::bin_count;
  static_assert(bins <= max_segment_bins && bins <= max_side_streams, "too many bins");
  static_assert(sorters::max_row < 65536, "binned segments are packed with 16-bit lengths");

  std::int64_t n = 0;
  bool binned = true;                    // false: every segment of 2+ keys takes the merge path
  int bin_count = bins;                  // sorters in use (0 when not binned)
  int capacity[bins] = {};               // keys per sorter
  std::int64_t bin_entries[bins] = {};   // list capacity per bin (0: never used)
  std::int64_t long_segments = 0;        // bound on long segments
  std::int64_t long_blocks = 0;          // bound on their blocksort entries
  int passes = 0;
  std::int64_t gaps = 0, gap_chunks = 0;  // bounds (offsets only)
  std::int64_t flag_words = 0, flag_blocks = 0;  // flags only
  std::int64_t items = 0;                 // classify items (bound)

  std::size_t bins_offset[bins] = {};
  std::size_t long_offset = 0, block_segment_offset = 0, gaps_offset = 0, chunk_gap_offset = 0;
  std::size_t flag_totals_offset = 0, heads_offset = 0;
  locality_layout engine;
  std::size_t total_bytes = 0;

  // segments: most segments the description can make; longest: longest
  // segment it can make; with_gaps: offsets (gaps are possible);
  // use_bins: false sends every segment of 2 keys or more to the merge path
  // (uniform rows longer than every sorter: only the last row may be short,
  // and one partial blocksort tile sorts it); scratch_given: the caller
  // passes the merge path's n keys and values of scratch to
  // segmented_sort_general (the temp storage leaves them out).
  segmented_setup(std::int64_t count, std::int64_t segments, std::int64_t longest, bool with_gaps, bool from_flags,
                  bool use_bins = true, bool scratch_given = false)
      : n(count), binned(use_bins), bin_count(use_bins ? bins : 0) {
    std::size_t offset = align_temp(sizeof(segmented_control));
    auto take = [&](std::size_t bytes) {
      const std::size_t at = offset;
      offset = align_temp(offset + bytes);
      return at;
    };
    items = segments + (with_gaps ? 1 : 0);
    for (int b = 0; b < bins; ++b) {
      capacity[b] = policy::bin_capacity(b);
      const bool duplicate = b > 0 && capacity[b] <= capacity[b - 1];
      bin_entries[b] = duplicate || !binned ? 0 : segments_of_at_least(n, bin_min_length(capacity, b), segments);
      bins_offset[b] = take(static_cast<std::size_t>(bin_entries[b]) * sizeof(std::uint64_t));
    }
    const std::int64_t shortest_long = binned ? std::int64_t(capacity[bins - 1]) + 1 : 2;
    if (longest >= shortest_long) {
      long_segments = segments_of_at_least(n, shortest_long, segments);
      long_blocks = tiles_of_ranges(n, merge_policy::tile_items, long_segments);
      passes = merge_passes_for(longest, merge_policy::tile_items);
    }
    long_offset = take(static_cast<std::size_t>(long_segments) * sizeof(merge_segment));
    block_segment_offset = take(static_cast<std::size_t>(long_blocks) * sizeof(int));
    if (with_gaps) {
      gaps = segments_of_at_least(n, policy::direct_gap_items + 1, segments + 1);
      gap_chunks = tiles_of_ranges(n, policy::gap_chunk_items, gaps);
    }
    gaps_offset = take(static_cast<std::size_t>(gaps) * sizeof(merge_segment));
    chunk_gap_offset = take(static_cast<std::size_t>(gap_chunks) * sizeof(std::int64_t));
    if (from_flags) {
      flag_words = ceil_div(n, 32);
      flag_blocks = ceil_div(flag_words, policy::flag_threads * policy::flag_words_per_thread);
    }
    flag_totals_offset = take(static_cast<std::size_t>(flag_blocks) * sizeof(unsigned long long));
    heads_offset = take(from_flags ? static_cast<std::size_t>(n) * sizeof(std::int64_t) : 0);
    total_bytes = plan_locality_layout<merge_policy>(engine, offset, long_blocks > 0 && !scratch_given ? n : 0, long_blocks,
                                                     sizeof(Key), value_bytes_of<Value>);
  }
};

template <typename T>
T* temp_at(void* base, std::size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

// Launch each bin's row sorter over its list (a fixed grid per bin).
template <typename Setup, int Shape, typename Key, typename Value, typename Compare>
cudaError_t launch_bins(const Setup& setup, void* temp, segmented_control* control, int sms, const Key* keys_in,
                        Key* keys_out, const Value* values_in, Value* values_out, Compare comp,
                        cudaStream_t stream, const side_stream_set* side) {
  using sorters = typename Setup::sorters;
  using policy = typename Setup::policy;
  if constexpr (Shape < Setup::bins) {
    if (setup.bin_entries[Shape] > 0) {
      const listed_rows rows{temp_at<std::uint64_t>(temp, setup.bins_offset[Shape]), &control->bin_count[Shape],
                             &control->overflow};
      const int threads = row_sorter_threads<sorters>(Shape);
      const std::int64_t needed = ceil_div(setup.bin_entries[Shape], rows_per_block<sorters>(Shape));
      const std::int64_t resident = std::int64_t(sms) * (policy::resident_threads / threads);
      const auto grid = static_cast<unsigned>(needed < resident ? needed : resident);
      TILESORT_RETURN_IF_ERROR((launch_row_sorter<sorters, Shape>(rows, grid, keys_in, keys_out, values_in,
                                                                  values_out, comp,
                                                                  side ? side->streams[Shape] : stream)));
    }
    return launch_bins<Setup, Shape + 1>(setup, temp, control, sms, keys_in, keys_out, values_in, values_out, comp,
                                         stream, side);
  } else {
    return cudaSuccess;
  }
}

// The general path. Arguments are checked; `setup` was built for this call
// (with setup.binned == Binned: without bins no row sorter is instantiated;
// with scratch_given: scratch_keys and scratch_values hold n keys and values
// the merge path may use).
template <bool Binned, typename Key, typename Value, typename Source, typename Compare>
cudaError_t segmented_sort_general(const segmented_setup<Key, Value>& setup, void* temp, const Key* keys_in,
                                   Key* keys_out, const Value* values_in, Value* values_out, Source source,
                                   const std::uint32_t* flag_bits, Compare comp, cudaStream_t stream,
                                   const sort_options& options, Key* scratch_keys = nullptr,
                                   Value* scratch_values = nullptr) {
  using setup_type = segmented_setup<Key, Value>;
  using policy = typename setup_type::policy;
  using merge_policy = typename setup_type::merge_policy;
  const std::int64_t n = setup.n;
  auto* control = reinterpret_cast<segmented_control*>(temp);
  int sms = 0;
  TILESORT_RETURN_IF_ERROR(device_sm_count(sms));
  TILESORT_RETURN_IF_ERROR(cudaMemsetAsync(control, 0, sizeof(segmented_control), stream));

  if (options.check_segments && source.checked_items() > 0) {
    const std::int64_t checked = source.checked_items();
    const std::int64_t blocks = std::min<std::int64_t>(ceil_div(checked, 256), std::int64_t(sms) * 8);
    TILESORT_RETURN_IF_ERROR(launch_kernel(validate_segments_kernel<Source>, static_cast<unsigned>(blocks), 256, 0,
                                           stream, false, source, &control->malformed));
    unsigned malformed = 0;
    TILESORT_RETURN_IF_ERROR(
        cudaMemcpyAsync(&malformed, &control->malformed, sizeof malformed, cudaMemcpyDeviceToHost, stream));
    TILESORT_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    if (malformed != 0) return cudaErrorInvalidValue;
  }
  if (n == 0) {
    return write_sort_stats(options.stats, merge_stats_inputs<merge_policy>(0), stream);
  }

  if (setup.flag_blocks > 0) {
    constexpr int threads = policy::flag_threads;
    constexpr int words = policy::flag_words_per_thread;
    auto* totals = temp_at<unsigned long long>(temp, setup.flag_totals_offset);
    const auto blocks = static_cast<unsigned>(setup.flag_blocks);
    TILESORT_RETURN_IF_ERROR(launch_kernel(flag_count_kernel<threads, words>, blocks, threads, 0, stream, false,
                                           flag_bits, n, setup.flag_words, totals));
    TILESORT_RETURN_IF_ERROR(launch_kernel(flag_scan_kernel<1024>, 1, 1024, 0, stream, false, totals,
                                           setup.flag_blocks, &control->head_count));
    TILESORT_RETURN_IF_ERROR(launch_kernel(flag_heads_kernel<threads, words>, blocks, threads, 0, stream, false,
                                           flag_bits, n, setup.flag_words, totals,
                                           temp_at<std::int64_t>(temp, setup.heads_offset)));
  }

  const bool copy_keys = keys_out != keys_in;
  const bool copy_values = has_values<Value> && static_cast<const void*>(values_out) != static_cast<const void*>(values_in);
  auto* long_segments = temp_at<merge_segment>(temp, setup.long_offset);
  auto* block_segment = temp_at<int>(temp, setup.block_segment_offset);
  auto* gaps = temp_at<merge_segment>(temp, setup.gaps_offset);
  auto* chunk_gap = temp_at<std::int64_t>(temp, setup.chunk_gap_offset);
  {
    segment_bins bins{};
    bins.count = setup.bin_count;
    for (int b = 0; b < setup_type::bins; ++b) {
      bins.lists[b] = temp_at<std::uint64_t>(temp, setup.bins_offset[b]);
      bins.entries[b] = setup.bin_entries[b];
      bins.capacity[b] = setup.capacity[b];
    }
    const segment_list_bounds bounds{setup.long_segments, setup.long_blocks, setup.gaps, setup.gap_chunks};
    constexpr int threads = policy::classify_threads;
    const std::int64_t needed = ceil_div(setup.items, threads);
    const std::int64_t resident = std::int64_t(sms) * (policy::resident_threads / threads);
    const auto grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(needed, resident)));
    TILESORT_RETURN_IF_ERROR(
        launch_kernel(classify_segments_kernel<policy, merge_policy::tile_items, Source, Key, Value>, grid, threads, 0,
                      stream, false, source, keys_in, keys_out, values_in, values_out, copy_keys, copy_values, bins,
                      bounds, long_segments, gaps, control));
  }
  if (setup.long_segments > 0 || setup.gaps > 0) {
    const std::int64_t ranges = setup.long_segments + setup.gaps;
    const std::int64_t resident = std::int64_t(sms) * (policy::resident_threads / policy::expand_threads);
    const auto grid = static_cast<unsigned>(std::min(ranges, resident));
    TILESORT_RETURN_IF_ERROR(launch_kernel(expand_ranges_kernel<policy, merge_policy::tile_items>, grid,
                                           policy::expand_threads, 0, stream, false, long_segments, block_segment, gaps,
                                           chunk_gap, control));
  }

  // The bins, the long segments and the gaps touch disjoint keys: large
  // sorts run each bin on a side stream, beside the long segments' merge
  // sort on `stream`, and join them before the statistics. Once forked, the
  // side streams are joined even when a launch fails (a capture would
  // otherwise end with unjoined work), and the launch's error is returned.
  side_stream_set* side = nullptr;
  if constexpr (Binned) {
    if (n >= policy::side_stream_min_keys) {
      TILESORT_RETURN_IF_ERROR(side_streams(setup_type::bins, side));
      TILESORT_RETURN_IF_ERROR(fork_side_streams(*side, setup_type::bins, stream));
    }
  }
  const auto sort_parts = [&]() -> cudaError_t {
    if constexpr (Binned)
      TILESORT_RETURN_IF_ERROR((launch_bins<setup_type, 0>(setup, temp, control, sms, keys_in, keys_out, values_in,
                                                           values_out, comp, stream, side)));
    if (setup.long_blocks > 0) {
      const merge_buffers<Key, Value> buffers{
          keys_out, scratch_keys != nullptr ? scratch_keys : temp_at<Key>(temp, setup.engine.keys_offset), values_out,
          scratch_keys != nullptr ? scratch_values : temp_at<Value>(temp, setup.engine.values_offset)};
      const merge_segment_list list{long_segments, block_segment, &control->long_blocks, &control->overflow, n, 0};
      TILESORT_RETURN_IF_ERROR(launch_locality_merge<merge_policy>(keys_in, values_in, buffers, list,
                                                                   setup.engine, temp, setup.passes,
                                                                   &control->merge, comp, stream));
    }
    if (setup.gaps > 0 && (copy_keys || copy_values)) {
      const std::int64_t resident = std::int64_t(sms) * (policy::resident_threads / policy::copy_threads);
      const auto grid = static_cast<unsigned>(std::min(setup.gap_chunks, resident));
      TILESORT_RETURN_IF_ERROR(launch_kernel(copy_gaps_kernel<policy, Key, Value>, grid, policy::copy_threads, 0,
                                             stream, false, keys_in, keys_out, values_in, values_out, copy_keys,
                                             copy_values, gaps, chunk_gap, control));
    }
    return cudaSuccess;
  };
  const cudaError_t sort_error = sort_parts();
  const cudaError_t join_error = side ? join_side_streams(*side, setup_type::bins, stream) : cudaSuccess;
  TILESORT_RETURN_IF_ERROR(sort_error);
  TILESORT_RETURN_IF_ERROR(join_error);
  locality_stats_inputs stats = merge_stats_inputs<merge_policy>(n);
  stats.control = setup.long_blocks > 0 ? &control->merge : nullptr;
  stats.passes = setup.passes;
  stats.direct_segments = &control->direct_segments;
  stats.direct_keys = &control->direct_keys;
  return write_sort_stats(options.stats, stats, stream);
}

// Shared front end: size query, argument checks, then the general path.
template <bool Binned = true, typename Key, typename Value, typename Source, typename Compare>
cudaError_t segmented_sort_checked(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                   const Value* values_in, Value* values_out, const segmented_setup<Key, Value>& setup,
                                   Source source, const std::uint32_t* flag_bits, Compare comp, cudaStream_t stream,
                                   const sort_options& options) {
  if (d_temp == nullptr) {  // size query: nothing else happens
    temp_bytes = setup.total_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, setup.n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, setup.total_bytes));
  if (setup.n > max_segmented_keys) return cudaErrorInvalidValue;
  return segmented_sort_general<Binned>(setup, d_temp, keys_in, keys_out, values_in, values_out, source, flag_bits,
                                        comp, stream, options);
}

// ------------------------------------------------------------------ one entry per description
template <typename Key, typename Value, typename Offset, typename Compare>
cudaError_t segmented_sort_dispatch(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                    const Value* values_in, Value* values_out, std::int64_t n,
                                    segments::offsets_t<Offset> s, Compare comp, cudaStream_t stream,
                                    const sort_options& options) {
  static_assert(std::is_integral_v<Offset>, "segment offsets must be integers");
  if (n < 0 || s.count < 0 || (s.count > 0 && (s.begin == nullptr || s.end == nullptr)))
    return cudaErrorInvalidValue;
  const segmented_setup<Key, Value> setup(n, s.count, n, true, false);
  return segmented_sort_checked(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, setup,
                                offsets_source<Offset>{s.begin, s.end, s.count, n}, nullptr, comp, stream, options);
}

template <typename Key, typename Value, typename Index, typename Compare>
cudaError_t segmented_sort_dispatch(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                    const Value* values_in, Value* values_out, std::int64_t n,
                                    segments::heads_t<Index> s, Compare comp, cudaStream_t stream,
                                    const sort_options& options) {
  static_assert(std::is_integral_v<Index>, "segment heads must be integers");
  if (n < 0 || s.count < 0 || (s.count > 0 && s.indices == nullptr)) return cudaErrorInvalidValue;
  const segmented_setup<Key, Value> setup(n, s.count + 1, n, false, false);
  return segmented_sort_checked(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, setup,
                                heads_source<Index>{s.indices, s.count, nullptr, n}, nullptr, comp, stream, options);
}

template <typename Key, typename Value, typename Compare>
cudaError_t segmented_sort_dispatch(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                    const Value* values_in, Value* values_out, std::int64_t n, segments::flags_t s,
                                    Compare comp, cudaStream_t stream, const sort_options& options) {
  if (n < 0 || (n > 0 && s.bits == nullptr)) return cudaErrorInvalidValue;
  const segmented_setup<Key, Value> setup(n, n, n, false, true);
  char* base = static_cast<char*>(d_temp);
  // The heads the flag kernels find; their count stays on the device.
  const heads_source<std::int64_t> source{
      d_temp ? reinterpret_cast<const std::int64_t*>(base + setup.heads_offset) : nullptr, 0,
      d_temp ? &reinterpret_cast<segmented_control*>(base)->head_count : nullptr, n};
  return segmented_sort_checked(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, setup, source, s.bits,
                                comp, stream, options);
}

// Rows of one key: the values stay (copied out of place; positions are all 0).
template <typename Value>
cudaError_t copy_unsorted_values(const Value* values_in, Value* values_out, std::int64_t n, cudaStream_t stream) {
  if constexpr (has_values<Value>) {
    if (values_out != values_in)
      return cudaMemcpyAsync(values_out, values_in, n * sizeof(Value), cudaMemcpyDeviceToDevice, stream);
  }
  return cudaSuccess;
}
template <typename Wide>
cudaError_t copy_unsorted_values(row_positions, widening_sink<Wide> sink, std::int64_t n, cudaStream_t stream) {
  return cudaMemsetAsync(sink.out, 0, n * sizeof(Wide), stream);
}

// Rows of one length that fit one sorter of Policy (length <= max_row,
// already clamped to n): one launch of the first shape that holds a row.
// Sources and sinks as the row sorters take them (pointers, row_positions,
// widening_sink).
template <typename Policy, typename Key, typename Source, typename Sink, typename Compare>
cudaError_t sort_uniform_rows(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                              Source values_in, Sink values_out, std::int64_t n, std::int64_t length, Compare comp,
                              cudaStream_t stream, const sort_options& options) {
  using merge_policy = locality_policy_for<Key, row_value_t<Source>>;
  if (d_temp == nullptr) {  // size query: nothing else happens
    temp_bytes = min_temp_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, min_temp_bytes));
  const std::int64_t rows = n > 0 ? ceil_div(n, length) : 0;
  auto stats = [&] {
    locality_stats_inputs inputs = merge_stats_inputs<merge_policy>(n);
    inputs.host_direct_segments = length > 1 ? rows : 0;
    inputs.host_direct_keys = length > 1 ? n : 0;
    return write_sort_stats(options.stats, inputs, stream);
  };
  if (n == 0) return stats();
  if (length == 1) {  // every row is sorted already
    if (keys_out != keys_in)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, n * sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    TILESORT_RETURN_IF_ERROR(copy_unsorted_values(values_in, values_out, n, stream));
    return stats();
  }
  TILESORT_RETURN_IF_ERROR(
      (launch_uniform_rows<Policy, 0>(uniform_rows{n, length}, keys_in, keys_out, values_in, values_out, length, comp,
                                      stream)));
  return stats();
}

// Uniform rows: the fast path when a row fits one sorter, else the general path.
template <typename Key, typename Value, typename Compare>
cudaError_t segmented_sort_dispatch(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                    const Value* values_in, Value* values_out, std::int64_t n,
                                    segments::uniform_t segments, Compare comp, cudaStream_t stream,
                                    const sort_options& options) {
  using policy = uniform_segments_policy<Key, std::conditional_t<has_values<Value>, Value, void>>;
  if (n < 0 || segments.length <= 0) return cudaErrorInvalidValue;
  const std::int64_t length = std::min(segments.length, std::max<std::int64_t>(n, 1));
  if (length > policy::max_row) {
    const segmented_setup<Key, Value> setup(n, ceil_div(n, length), length, false, false, false);
    return segmented_sort_checked<false>(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, setup,
                                         uniform_source{length, n}, nullptr, comp, stream, options);
  }
  if (d_temp != nullptr)
    TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, n));
  return sort_uniform_rows<policy>(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, length, comp,
                                   stream, options);
}

// The row sorters of row_positions_sort. Keys of up to 4 bytes with a
// radix image of 32 bits or fewer sort packed (packed_row_keys): words alone
// under less, with the shapes of keys alone of the word's width. Other keys: the warp shapes of keys
// alone (the positions do not ride through the warp network: each sorted
// key's tie-break rank is its position) and the block shapes of pairs with
// 4-byte values (block_sort moves the positions with the keys). Keys of 8
// bytes leave the warps above 128 keys: their ranked keys are 16 bytes, and
// the 32 x 16 warp sorter took 161 registers (sm_90, nvcc 13.0).
template <typename Key, typename Compare>
constexpr bool packs_row_positions() {
  if constexpr (sizeof(Key) <= 4 && radix_sortable<Key, Compare>)
    return sizeof(typename radix_image_of<Key, Compare>::type::bits_type) <= 4;
  else
    return false;
}
template <typename Key>
struct row_positions_policy {
  using keys = uniform_segments_policy<Key>;
  using pairs = uniform_segments_policy<Key, std::uint32_t>;
  using shape = typename pairs::shape;
  static constexpr int warp_block_threads = keys::warp_block_threads;
  static constexpr int warp_shape_count = sizeof(Key) > 4 ? 3 : keys::warp_shape_count;
  static constexpr int block_shape_count = pairs::block_shape_count;
  static constexpr shape warp_shape(int i) { return {keys::warp_shape(i).threads, keys::warp_shape(i).items}; }
  static constexpr shape block_shape(int i) { return pairs::block_shape(i); }
  static constexpr std::int64_t max_row = pairs::max_row;
};
// Packed rows: the shapes of keys alone of the word's width, except that rows
// of 257-512 keys take a block (128 x 4 for 64-bit words, 32 x 16 for 32-bit
// ones) instead of the 32 x 16 logical warp, the faster shape for rows of
// 300 (the timing: docs/tuning/python.md).
template <typename Word>
struct packed_rows_policy {
  using keys = uniform_segments_policy<Word>;
  using shape = typename keys::shape;
  static constexpr int warp_block_threads = keys::warp_block_threads;
  static constexpr int warp_shape_count = keys::warp_shape_count - 1;
  static constexpr int block_shape_count = keys::block_shape_count + 1;
  static constexpr shape warp_shape(int i) { return keys::warp_shape(i); }
  static constexpr shape block_shape(int i) {
    return i > 0 ? keys::block_shape(i - 1) : sizeof(Word) == 8 ? shape{128, 4} : shape{32, 16};
  }
  static constexpr std::int64_t max_row = keys::max_row;
  static_assert(keys::warp_shape(keys::warp_shape_count - 1).threads *
                        keys::warp_shape(keys::warp_shape_count - 1).items ==
                    512,
                "the 512-key warp sorter is the one replaced");
};

template <typename Key, typename Compare, bool Packed = packs_row_positions<Key, Compare>()>
struct row_positions_choice {
  using policy = row_positions_policy<Key>;
};
template <typename Key, typename Compare>
struct row_positions_choice<Key, Compare, true> {
  using packed = packed_row_keys<Key, typename radix_image_of<Key, Compare>::type>;
  using policy = packed_rows_policy<typename packed::word>;
  static_assert(policy::max_row <= (std::int64_t(1) << packed::position_bits), "positions overflow the word");
};
template <typename Key, typename Compare>
using row_positions_policy_for = typename row_positions_choice<Key, Compare>::policy;

// Stable sort of uniform rows of `length` keys that also writes each sorted
// key's position in its row as an int64 (torch.sort's indices) to
// positions_out, with no index array to fill or read: keys of up to 4 bytes
// that have a radix image of 32 bits or fewer (tilesort::less/greater on
// native keys, a bits_order of 32 bits or fewer) sort as words of image and
// position (64 bits, or 32 for images of 1 or 2 bytes), other keys sort with
// their positions made at load as 4-byte values.
// Packed keys_out may be null: the positions alone are written. Rows of more than
// row_positions_policy_for<Key, Compare>::max_row keys are not handled
// (cudaErrorNotSupported): the caller fills the positions and calls
// segmented_sort_pairs. Two-phase like the public entries.
// stride > 1: the rows lie along a dim other than the last of a contiguous
// array (shape (outer, length, stride), sorted along the middle dim, in
// place of a transposed copy): n must be a multiple of length * stride
// (cudaErrorInvalidValue otherwise), and the keys, sorted keys and positions
// all have that layout; the rows are read and written `stride` apart.
//
//   std::size_t bytes = 0;
//   tilesort::detail::row_positions_sort(nullptr, bytes, d_in, d_out, d_idx, n, 1000);   // size query
//   tilesort::detail::row_positions_sort(d_temp, bytes, d_in, d_out, d_idx, n, 1000, tilesort::less{}, stream);
//   // x of shape (4, 1000, 256) along dim 1: n = 4 * 1000 * 256
//   tilesort::detail::row_positions_sort(d_temp, bytes, d_x, d_out, d_idx, n, 1000, tilesort::less{}, stream, 256);
template <typename Key, typename Compare = less>
cudaError_t row_positions_sort(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                               std::int64_t* positions_out, std::int64_t n, std::int64_t length, Compare comp = {},
                               cudaStream_t stream = 0, std::int64_t stride = 1) {
  using policy = row_positions_policy_for<Key, Compare>;
  if (n < 0 || length <= 0 || stride <= 0) return cudaErrorInvalidValue;
  const bool strided = stride > 1;
  if (strided && n % length != 0) return cudaErrorInvalidValue;
  if (strided && (n / length) % stride != 0) return cudaErrorInvalidValue;
  const std::int64_t clamped = strided ? length : std::min(length, std::max<std::int64_t>(n, 1));
  if (clamped > policy::max_row) return cudaErrorNotSupported;
  if (d_temp != nullptr)
    TILESORT_RETURN_IF_ERROR(
        check_sort_args(keys_in, keys_out != nullptr ? keys_out : keys_in, keys_in, positions_out, true, n));
  constexpr bool packed_rows = packs_row_positions<Key, Compare>();
  if constexpr (!packed_rows) {
    if (d_temp != nullptr && keys_out == nullptr) return cudaErrorInvalidValue;
  }
  if (packed_rows || strided) {  // one launch, no temp storage
    if (d_temp == nullptr) {     // size query
      temp_bytes = min_temp_bytes;
      return cudaSuccess;
    }
    TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, min_temp_bytes));
    if (n == 0) return cudaSuccess;
    const strided_rows columns{n / length, length, stride};
    if constexpr (packed_rows) {
      const typename row_positions_choice<Key, Compare>::packed packed{keys_in, keys_out, positions_out,
                                                                       radix_image_of<Key, Compare>::make(comp)};
      const auto* none = static_cast<const no_value*>(nullptr);
      if (strided)
        return launch_uniform_rows<policy, 0>(columns, packed, packed, none, static_cast<no_value*>(nullptr),
                                              clamped, less{}, stream);
      return launch_uniform_rows<policy, 0>(uniform_rows{n, clamped}, packed, packed, none,
                                            static_cast<no_value*>(nullptr), clamped, less{}, stream);
    } else {
      if (length == 1) {  // rows of one key: a copy, every position 0
        if (keys_out != keys_in)
          TILESORT_RETURN_IF_ERROR(
              cudaMemcpyAsync(keys_out, keys_in, n * sizeof(Key), cudaMemcpyDeviceToDevice, stream));
        return cudaMemsetAsync(positions_out, 0, n * sizeof(std::int64_t), stream);
      }
      return launch_uniform_rows<policy, 0>(columns, keys_in, keys_out, row_positions{},
                                            widening_sink<std::int64_t>{positions_out}, clamped, comp, stream);
    }
  } else {
    return sort_uniform_rows<policy>(d_temp, temp_bytes, keys_in, keys_out, row_positions{},
                                     widening_sink<std::int64_t>{positions_out}, n, clamped, comp, stream,
                                     sort_options{});
  }
}

template <typename T>
inline constexpr bool is_segment_description = false;
template <typename Offset>
inline constexpr bool is_segment_description<segments::offsets_t<Offset>> = true;
template <typename Index>
inline constexpr bool is_segment_description<segments::heads_t<Index>> = true;
template <>
inline constexpr bool is_segment_description<segments::flags_t> = true;
template <>
inline constexpr bool is_segment_description<segments::uniform_t> = true;

}  // namespace detail

/// Stable segmented sort of keys: each segment of `segments` (any
/// description of segments.cuh) is sorted on its own. Two-phase: call with
/// d_temp == nullptr to get temp_bytes. keys_out may equal keys_in (keys
/// outside every segment then stay where they are; out of place they are
/// copied through).
///
/// @param d_temp     device temp storage, or nullptr for the size query
/// @param temp_bytes size of d_temp; set by the size query
/// @param keys_in    device input keys
/// @param keys_out   device output keys
/// @param n          number of keys (64-bit)
/// @param segments   segments::offsets, heads, flags or uniform
/// @param comp       strict weak order (tilesort::less, tilesort::greater or any functor)
/// @param stream     stream the kernels run on
/// @return cudaSuccess, or the first CUDA or argument error (nothing launched then)
///
/// @code
/// auto segs = tilesort::segments::heads(d_heads, num_heads);
/// tilesort::segmented_sort_keys(nullptr, temp_bytes, d_keys, d_keys, n, segs);   // size query
/// tilesort::segmented_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n, segs, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Segments, typename Compare = less,
          typename = std::enable_if_t<detail::is_segment_description<Segments>>>
cudaError_t segmented_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                std::int64_t n, Segments segments, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::segmented_sort_dispatch(d_temp, temp_bytes, keys_in, keys_out,
                                         static_cast<const detail::no_value*>(nullptr),
                                         static_cast<detail::no_value*>(nullptr), n, segments, comp, stream,
                                         sort_options{});
}

/// With options: statistics (options.stats, see sort_stats.cuh) and the check
/// of the description (options.check_segments: malformed -> cudaErrorInvalidValue
/// with nothing written; synchronises the stream).
///
/// @code
/// tilesort::sort_options options;
/// options.check_segments = true;
/// tilesort::segmented_sort_keys(d_temp, temp_bytes, d_in, d_out, n, segs, tilesort::less{}, stream, options);
/// @endcode
template <typename Key, typename Segments, typename Compare,
          typename = std::enable_if_t<detail::is_segment_description<Segments>>>
cudaError_t segmented_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                std::int64_t n, Segments segments, Compare comp, cudaStream_t stream,
                                const sort_options& options) {
  return detail::segmented_sort_dispatch(d_temp, temp_bytes, keys_in, keys_out,
                                         static_cast<const detail::no_value*>(nullptr),
                                         static_cast<detail::no_value*>(nullptr), n, segments, comp, stream,
                                         options);
}

/// Stable segmented sort of key-value pairs; values travel with their keys.
/// values_out may equal values_in.
///
/// @code
/// tilesort::segmented_sort_pairs(d_temp, temp_bytes, d_keys, d_keys, d_vals, d_vals, n,
///                                tilesort::segments::offsets(d_off, d_off + 1, num_segments));
/// @endcode
template <typename Key, typename Value, typename Segments, typename Compare = less,
          typename = std::enable_if_t<detail::is_segment_description<Segments>>>
cudaError_t segmented_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                 const Value* values_in, Value* values_out, std::int64_t n, Segments segments,
                                 Compare comp = {}, cudaStream_t stream = 0) {
  return detail::segmented_sort_dispatch(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, segments,
                                         comp, stream, sort_options{});
}

/// segmented_sort_pairs with options, as the segmented_sort_keys overload
/// that takes them.
///
/// @code
/// tilesort::segmented_sort_pairs(d_temp, temp_bytes, d_keys, d_keys, d_vals, d_vals, n, segs, tilesort::less{},
///                                stream, options);
/// @endcode
template <typename Key, typename Value, typename Segments, typename Compare,
          typename = std::enable_if_t<detail::is_segment_description<Segments>>>
cudaError_t segmented_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                 const Value* values_in, Value* values_out, std::int64_t n, Segments segments,
                                 Compare comp, cudaStream_t stream, const sort_options& options) {
  return detail::segmented_sort_dispatch(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, segments,
                                         comp, stream, options);
}

/// Convenience form: allocates its temp storage on `stream` (cudaMallocAsync);
/// graph-capturable unless options.check_segments is set.
///
/// @code
/// tilesort::segmented_sort_keys(d_keys, d_keys, n, tilesort::segments::flags(d_bits));
/// @endcode
template <typename Key, typename Segments, typename Compare = less,
          typename = std::enable_if_t<detail::is_segment_description<Segments>>>
cudaError_t segmented_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Segments segments,
                                Compare comp = {}, cudaStream_t stream = 0, const sort_options& options = {}) {
  return detail::sort_with_stream_temp(keys_in, keys_out, n, stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return segmented_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, segments, comp, stream, options);
  });
}

/// segmented_sort_pairs with stream-ordered temp storage, as the
/// segmented_sort_keys overload without d_temp.
///
/// @code
/// tilesort::segmented_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::segments::uniform(1000));
/// @endcode
template <typename Key, typename Value, typename Segments, typename Compare = less,
          typename = std::enable_if_t<detail::is_segment_description<Segments>>>
cudaError_t segmented_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                 std::int64_t n, Segments segments, Compare comp = {}, cudaStream_t stream = 0,
                                 const sort_options& options = {}) {
  return detail::sort_with_stream_temp(keys_in, keys_out, values_in, values_out, n, stream,
                                       [&](void* d_temp, std::size_t& temp_bytes) {
    return segmented_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, segments, comp,
                                stream, options);
  });
}

}  // namespace tilesort
