// device/segmented_sort/classify.cuh — the device side of the general segmented
// sort before any key is sorted: segment descriptions read on the device
// (offsets, heads, uniform rows; flags are first turned into a heads list by
// three kernels: count per block, scan of the counts, write), the optional
// well-formedness check, the classify kernel (each segment to the bin of the
// smallest sorter that holds it, or to the long-segment list; one-key
// segments and short gaps copied through out of place; long gaps listed),
// the expansion of long segments and long gaps into per-tile entries, and the
// gap copy. Lists are appended to with warp-aggregated atomics (one atomic
// per warp and list) and bounded by the host's capacities: a malformed,
// unchecked description that would overflow one sets `overflow` and the sort
// does nothing. Pure bookkeeping is in detail/segment_ranges.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../block/block_scan.cuh"
#include "../../detail/config.cuh"
#include "../../detail/control.cuh"
#include "../../detail/merge_jobs.cuh"
#include "../../detail/segment_ranges.cuh"
#include "../../detail/values.cuh"
#include "../../warp/warp_atomics.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ descriptions on the device
// Each source yields segments (and, for offsets, the gaps between them) by
// index. `segments()` may read a device counter (flags), so kernels call it
// once and pass the value back.
template <typename Offset>
struct offsets_source {
  const Offset* begin;
  const Offset* end;
  std::int64_t count;
  std::int64_t n;
  static constexpr bool has_gaps = true;
  TILESORT_DEVICE std::int64_t segments() const { return count; }
  TILESORT_DEVICE std::int64_t items(std::int64_t segments) const { return segments + 1; }  // + the last gap
  TILESORT_DEVICE key_range segment(std::int64_t i, std::int64_t) const { return offsets_segment(begin, end, i, n); }
  TILESORT_DEVICE key_range gap(std::int64_t i) const { return offsets_gap(begin, end, i, count, n); }
  TILESORT_HD std::int64_t checked_items() const { return count; }
  TILESORT_DEVICE bool well_formed_at(std::int64_t i) const { return offsets_well_formed_at(begin, end, i, count, n); }
};

template <typename Index>
struct heads_source {
  const Index* heads;
  std::int64_t count;                        // heads (when device_count is null)
  const unsigned long long* device_count;    // heads found on the device (flags)
  std::int64_t n;
  static constexpr bool has_gaps = false;
  TILESORT_DEVICE std::int64_t segments() const {
    return (device_count ? static_cast<std::int64_t>(*device_count) : count) + 1;
  }
  TILESORT_DEVICE std::int64_t items(std::int64_t segments) const { return segments; }
  TILESORT_DEVICE key_range segment(std::int64_t i, std::int64_t segments) const {
    return heads_segment(heads, i, segments - 1, n);
  }
  TILESORT_DEVICE key_range gap(std::int64_t) const { return {0, 0}; }
  TILESORT_HD std::int64_t checked_items() const { return device_count ? 0 : count; }
  TILESORT_DEVICE bool well_formed_at(std::int64_t i) const { return heads_well_formed_at(heads, i, count, n); }
};

struct uniform_source {
  std::int64_t length;
  std::int64_t n;
  static constexpr bool has_gaps = false;
  TILESORT_DEVICE std::int64_t segments() const { return ceil_div(n, length); }
  TILESORT_DEVICE std::int64_t items(std::int64_t segments) const { return segments; }
  TILESORT_DEVICE key_range segment(std::int64_t i, std::int64_t) const { return uniform_segment(i, length, n); }
  TILESORT_DEVICE key_range gap(std::int64_t) const { return {0, 0}; }
  TILESORT_HD std::int64_t checked_items() const { return 0; }
  TILESORT_DEVICE bool well_formed_at(std::int64_t) const { return true; }
};

// ------------------------------------------------------------------ counters
inline constexpr int max_segment_bins = 16;

// Zeroed (cudaMemsetAsync) before the first kernel.
struct segmented_control {
  merge_control merge;                              // the long segments' merge passes
  unsigned long long bin_count[max_segment_bins];  // segments per bin list
  unsigned long long direct_segments;               // segments sorted by a bin's sorter
  unsigned long long direct_keys;
  unsigned long long head_count;                    // flags: heads found
  unsigned long long long_count;                    // long segments listed
  unsigned long long gap_count;                     // long gaps listed
  unsigned long long gap_chunks;                    // their copy chunks
  unsigned long_blocks;                             // blocksort entries of the long segments
  unsigned malformed;                               // the check found a bad segment
  unsigned overflow;                                // unchecked, malformed: a list overflowed, sort nothing
};

// ------------------------------------------------------------------ flags -> heads
// Block b covers words [b·W, (b+1)·W), W = threads x words per thread.
template <int Threads, int Words>
TILESORT_DEVICE unsigned count_heads(const std::uint32_t* bits, std::int64_t n, std::int64_t words,
                                     std::int64_t first_word) {
  unsigned count = 0;
TILESORT_UNROLL
  for (int w = 0; w < Words; ++w)
    if (first_word + w < words) count += __popc(head_bits_of_word(bits[first_word + w], first_word + w, n));
  return count;
}

template <int Threads, int Words>
__global__ void __launch_bounds__(Threads) flag_count_kernel(const std::uint32_t* bits, std::int64_t n,
                                                             std::int64_t words, unsigned long long* block_totals) {
  __shared__ std::int64_t warp_sums[Threads / 32 + 1];
  const std::int64_t first_word = (std::int64_t(blockIdx.x) * Threads + threadIdx.x) * Words;
  std::int64_t total = 0;
  block_exclusive_sum<Threads>(count_heads<Threads, Words>(bits, n, words, first_word), warp_sums, total);
  if (threadIdx.x == 0) block_totals[blockIdx.x] = static_cast<unsigned long long>(total);
}

// One block turns the per-block totals into offsets and counts the heads.
template <int Threads>
__global__ void __launch_bounds__(Threads) flag_scan_kernel(unsigned long long* block_totals, std::int64_t blocks,
                                                            unsigned long long* head_count) {
  __shared__ std::int64_t warp_sums[Threads / 32 + 1];
  std::int64_t carry = 0;
  for (std::int64_t base = 0; base < blocks; base += Threads) {
    const std::int64_t i = base + threadIdx.x;
    const auto value = static_cast<std::int64_t>(i < blocks ? block_totals[i] : 0);
    std::int64_t total = 0;
    const std::int64_t before = block_exclusive_sum<Threads>(value, warp_sums, total);
    if (i < blocks) block_totals[i] = static_cast<unsigned long long>(carry + before);
    carry += total;
  }
  if (threadIdx.x == 0) *head_count = static_cast<unsigned long long>(carry);
}

template <int Threads, int Words>
__global__ void __launch_bounds__(Threads) flag_heads_kernel(const std::uint32_t* bits, std::int64_t n,
                                                             std::int64_t words,
                                                             const unsigned long long* block_offsets,
                                                             std::int64_t* heads) {
  __shared__ std::int64_t warp_sums[Threads / 32 + 1];
  const std::int64_t first_word = (std::int64_t(blockIdx.x) * Threads + threadIdx.x) * Words;
  std::int64_t total = 0;
  std::int64_t slot =
      static_cast<std::int64_t>(block_offsets[blockIdx.x]) +
      block_exclusive_sum<Threads>(count_heads<Threads, Words>(bits, n, words, first_word), warp_sums, total);
  for (int w = 0; w < Words; ++w) {
    if (first_word + w >= words) break;
    std::uint32_t b = head_bits_of_word(bits[first_word + w], first_word + w, n);
    while (b != 0) {
      heads[slot++] = (first_word + w) * 32 + (__ffs(static_cast<int>(b)) - 1);
      b &= b - 1;
    }
  }
}

// ------------------------------------------------------------------ check
template <typename Source>
__global__ void validate_segments_kernel(Source source, unsigned* malformed) {
  const std::int64_t items = source.checked_items();
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < items; i += stride)
    if (!source.well_formed_at(i)) atomicOr(malformed, 1u);
}

// ------------------------------------------------------------------ classify
struct segment_bins {
  std::uint64_t* lists[max_segment_bins];
  std::int64_t entries[max_segment_bins];  // list capacity
  int capacity[max_segment_bins];          // keys the bin's sorter holds, ascending
  int count;
};

// Capacities of the other lists. Well-formed descriptions never exceed them;
// a malformed one (unchecked) that would sets `overflow` and nothing is sorted.
struct segment_list_bounds {
  std::int64_t long_segments, long_blocks, gaps, gap_chunks;
};

template <typename Policy, int TileItems, typename Source, typename Key, typename Value>
__global__ void __launch_bounds__(Policy::classify_threads)
    classify_segments_kernel(Source source, const Key* keys_in, Key* keys_out, const Value* values_in,
                             Value* values_out, bool copy_keys, bool copy_values, segment_bins bins,
                             segment_list_bounds bounds, merge_segment* long_segments, merge_segment* gaps,
                             segmented_control* control) {
  const std::int64_t segments = source.segments();
  const std::int64_t items = source.items(segments);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  // Statistics, added once per warp after the loop: per-iteration atomics on
  // these two addresses serialised in L2 (most of the kernel's time for
  // many short segments).
  static_assert(Policy::classify_threads >= max_segment_bins, "a thread per bin adds the block's reservation");
  unsigned long long direct_segments = 0, direct_keys = 0;
  // Bin slots are reserved by the whole block, one global atomic per bin
  // present in the block's segments: per-warp atomics on the few bin
  // counters serialised in L2 (about 2 ns each on one address).
  __shared__ unsigned block_total[max_segment_bins];
  __shared__ unsigned long long block_first[max_segment_bins];
  // A block-uniform loop: barriers inside; the other counters are reserved
  // by whole warps.
  for (std::int64_t block_base = std::int64_t(blockIdx.x) * blockDim.x; block_base < items; block_base += stride) {
    const std::int64_t i = block_base + threadIdx.x;
    const bool is_segment = i < segments;
    const key_range r = is_segment ? source.segment(i, segments) : key_range{0, 0};
    const std::int64_t length = r.size();
    const int bin = bin_of_length(length, bins.capacity, bins.count);

    if (length == 1) {  // sorted already; out of place it still has to move
      if (copy_keys) keys_out[r.begin] = keys_in[r.begin];
      if constexpr (has_values<Value>) {
        if (copy_values) values_out[r.begin] = values_in[r.begin];
      }
    }
    // Only the bins some lane of the warp has (one shared-memory
    // reservation each); none at all for a warp of one-key segments. Then
    // one global reservation per bin for the block.
    const bool direct = bin >= 0 && bin < bins.count;
    if (threadIdx.x < max_segment_bins) block_total[threadIdx.x] = 0;
    __syncthreads();  // also: every thread has read last round's block_first
    unsigned in_block = 0;  // this segment's place among the block's segments of its bin
    unsigned present = __reduce_or_sync(0xffffffffu, direct ? 1u << bin : 0u);
    while (present != 0) {
      const int b = __ffs(static_cast<int>(present)) - 1;
      present &= present - 1;
      const unsigned slot = warp_reserve(&block_total[b], bin == b);
      if (bin == b) in_block = slot;
    }
    __syncthreads();
    if (threadIdx.x < bins.count && block_total[threadIdx.x] > 0)
      block_first[threadIdx.x] =
          atomicAdd(&control->bin_count[threadIdx.x], static_cast<unsigned long long>(block_total[threadIdx.x]));
    __syncthreads();
    if (direct) {
      const unsigned long long slot = block_first[bin] + in_block;
      if (static_cast<std::int64_t>(slot) < bins.entries[bin]) {
        bins.lists[bin][slot] = pack_segment(r.begin, length);
      } else {
        atomicOr(&control->overflow, 1u);
      }
    }
    direct_segments += direct ? 1ull : 0ull;
    direct_keys += direct ? static_cast<unsigned long long>(length) : 0ull;

    const bool is_long = bin == bins.count;
    if (__any_sync(0xffffffffu, is_long)) {
      const unsigned long long slot = warp_reserve_n(&control->long_count, is_long ? 1ull : 0ull);
      const unsigned blocks = is_long ? static_cast<unsigned>((length - 1) / TileItems + 1) : 0u;
      const unsigned first_block = warp_reserve_n(&control->long_blocks, blocks);
      if (is_long) {
        if (static_cast<std::int64_t>(slot) < bounds.long_segments &&
            std::int64_t(first_block) + blocks <= bounds.long_blocks) {
          long_segments[slot] = merge_segment{r.begin, r.end, first_block};
        } else {
          atomicOr(&control->overflow, 1u);
        }
      }
    }

    if constexpr (Source::has_gaps) {
      if (copy_keys || copy_values) {
        const key_range gap = i < items ? source.gap(i) : key_range{0, 0};
        const std::int64_t size = gap.size();
        if (size <= Policy::direct_gap_items) {
          for (std::int64_t p = gap.begin; p < gap.end; ++p) {
            if (copy_keys) keys_out[p] = keys_in[p];
            if constexpr (has_values<Value>) {
              if (copy_values) values_out[p] = values_in[p];
            }
          }
        }
        const bool listed = size > Policy::direct_gap_items;
        if (__any_sync(0xffffffffu, listed)) {
          const unsigned long long slot = warp_reserve_n(&control->gap_count, listed ? 1ull : 0ull);
          const unsigned long long chunks =
              listed ? static_cast<unsigned long long>((size - 1) / Policy::gap_chunk_items + 1) : 0ull;
          const unsigned long long first_chunk = warp_reserve_n(&control->gap_chunks, chunks);
          if (listed) {
            if (static_cast<std::int64_t>(slot) < bounds.gaps &&
                static_cast<std::int64_t>(first_chunk + chunks) <= bounds.gap_chunks) {
              gaps[slot] = merge_segment{gap.begin, gap.end, static_cast<std::int64_t>(first_chunk)};
            } else {
              atomicOr(&control->overflow, 1u);
            }
          }
        }
      }
    }
  }
  warp_add(&control->direct_segments, direct_segments);
  warp_add(&control->direct_keys, direct_keys);
}

// Every long segment's blocksort tiles and every long gap's copy chunks get
// their entries (entry -> index of the segment or gap); one block per range.
template <typename Policy, int TileItems>
__global__ void __launch_bounds__(Policy::expand_threads)
    expand_ranges_kernel(const merge_segment* long_segments, int* block_segment, const merge_segment* gaps,
                         std::int64_t* chunk_gap, const segmented_control* control) {
  if (control->overflow) return;
  const std::int64_t longs = static_cast<std::int64_t>(control->long_count);
  const std::int64_t ranges = longs + static_cast<std::int64_t>(control->gap_count);
  for (std::int64_t item = blockIdx.x; item < ranges; item += gridDim.x) {
    if (item < longs) {
      const merge_segment s = long_segments[item];
      const std::int64_t blocks = (s.end - s.begin - 1) / TileItems + 1;
      for (std::int64_t j = threadIdx.x; j < blocks; j += blockDim.x)
        block_segment[s.first_block + j] = static_cast<int>(item);
    } else {
      const merge_segment g = gaps[item - longs];
      const std::int64_t chunks = (g.end - g.begin - 1) / Policy::gap_chunk_items + 1;
      for (std::int64_t j = threadIdx.x; j < chunks; j += blockDim.x) chunk_gap[g.first_block + j] = item - longs;
    }
  }
}

template <typename Policy, typename Key, typename Value>
__global__ void __launch_bounds__(Policy::copy_threads)
    copy_gaps_kernel(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, bool copy_keys,
                     bool copy_values, const merge_segment* gaps, const std::int64_t* chunk_gap,
                     const segmented_control* control) {
  if (control->overflow) return;
  const std::int64_t chunks = static_cast<std::int64_t>(control->gap_chunks);
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const merge_segment g = gaps[chunk_gap[c]];
    const std::int64_t begin = g.begin + (c - g.first_block) * Policy::gap_chunk_items;
    const std::int64_t end = begin + Policy::gap_chunk_items < g.end ? begin + Policy::gap_chunk_items : g.end;
    for (std::int64_t p = begin + threadIdx.x; p < end; p += Policy::copy_threads) {
      if (copy_keys) keys_out[p] = keys_in[p];
      if constexpr (has_values<Value>) {
        if (copy_values) values_out[p] = values_in[p];
      }
    }
  }
}

}  // namespace tilesort::detail
