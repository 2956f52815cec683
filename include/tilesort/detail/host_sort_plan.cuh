// detail/host_sort_plan.cuh — the host-testable arithmetic of the sort of
// host-resident arrays (host/host_sort.cuh): whether n items fit one round
// trip, the chunks, batches and buckets of the out-of-core path, the device
// layout inside the memory budget, and the bucket bookkeeping between the
// two passes.
//
// In core (the items, the device sort's temp storage and nothing else fit
// the budget): one allocation [keys | values | temp]; the items cross the
// link once each way.
//
// Out of core: the allocation is [splitter tree | slot 0 | slot 1], the two
// slots taking turns on two streams so that one slot's copies overlap the
// other's kernels.
//   pass 1, chunk by chunk (chunk_items each): the chunk in, every item's
//     bucket (the sample sort's splitter tree: 2^levels - 1 splitters make
//     2^(levels+1) - 1 buckets, odd ones holding keys equivalent to a
//     splitter), a stable partition by bucket, the partitioned chunk out to
//     the host scratch at the chunk's own place, and the chunk's bucket ends
//     to the host's table;
//   pass 2, batch by batch: consecutive buckets whose items fit batch_items,
//     gathered from every chunk's part of the scratch (one piece per chunk,
//     chunks in input order, so stable), sorted, and copied to their final
//     place in the caller's array.
// A bucket of equivalent keys larger than a batch is only copied (its keys
// are in input order already); a bucket between two splitters larger than a
// batch (a bad sample) is copied to its place and sorted again there, from
// its own sample.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "config.cuh"
#include "error.cuh"
#include "sample_sort_plan.cuh"

namespace tilesort::detail {

// The tuning a plan needs (from host_sort_policy).
struct host_sort_shape {
  std::int64_t min_chunk;          // pass 1: a chunk of fewer items means the budget is too small
  std::int64_t min_batch;          // pass 2: likewise for a batch
  int max_levels;                  // splitter tree depth: at most 2^max_levels - 1 splitters
  std::size_t max_tree_bytes;      // the tree is loaded into shared memory to classify
  int oversampling;                // samples per bucket between splitters
  std::int64_t max_samples;
  int bucket_slack;                // buckets average batch_items / bucket_slack items
  std::int64_t max_table_entries;  // (chunk, bucket) ends the host keeps
};

// Byte offsets of consecutive buffers, each starting 256-byte aligned.
template <int Count>
struct host_sort_layout {
  std::size_t offset[Count] = {};
  std::size_t total = 0;
  static host_sort_layout of(const std::size_t (&bytes)[Count]) {
    host_sort_layout l;
    for (int i = 0; i < Count; ++i) {
      l.offset[i] = l.total;
      l.total += align_temp(bytes[i]);
    }
    return l;
  }
};

// One round trip's buffers (in core) and a pass-2 slot: keys, values, temp.
enum host_sort_sort_buffer { sort_keys_at, sort_values_at, sort_temp_at };
// A pass-1 slot: the chunk in, the partitioned chunk out, the bucket of each
// item and its position (sorted together), the bucket ends, the partition's temp.
enum host_sort_chunk_buffer { chunk_keys_in, chunk_values_in, chunk_keys_out, chunk_values_out, chunk_buckets,
                              chunk_positions, chunk_ends, chunk_temp };
// Slot 0 while the splitters are chosen: the samples and their sort's temp.
enum host_sort_sample_buffer { sample_keys_at, sample_temp_at };

struct host_sort_plan {
  cudaError_t status = cudaSuccess;  // cudaErrorInvalidValue: n < 0 or the budget is too small
  std::int64_t n = 0;
  std::size_t key_bytes = 0, value_bytes = 0;
  std::size_t budget = 0;
  bool in_core = false;
  std::int64_t core_items = 0;  // the most items one round trip sorts in this budget (any n)
  // Out of core.
  std::int64_t chunk_items = 0, chunks = 0;
  std::int64_t batch_items = 0;
  int levels = 0;   // splitter tree depth
  int samples = 0;  // keys sampled for the splitters
  std::size_t tree_bytes = 0, slot_bytes = 0;
  host_sort_layout<3> core;    // in core: offsets from the allocation's start
  host_sort_layout<8> chunk;   // pass 1, from a slot's start
  host_sort_layout<3> batch;   // pass 2, from a slot's start
  host_sort_layout<2> sample;  // from slot 0's start
  std::size_t device_bytes = 0;  // the allocation

  std::size_t item_bytes() const { return key_bytes + value_bytes; }
  int splitters() const { return (1 << levels) - 1; }
  int buckets() const { return sample_sort_buckets(levels); }
  std::size_t slot_offset(int slot) const { return tree_bytes + std::size_t(slot) * slot_bytes; }
  std::int64_t chunk_begin(std::int64_t c) const { return c * chunk_items; }
  std::int64_t chunk_size(std::int64_t c) const {
    return c + 1 < chunks ? chunk_items : n - c * chunk_items;
  }
  // Bytes that cross the link, both ways together (the progress callback's total).
  std::size_t link_bytes() const { return std::size_t(n) * item_bytes() * (in_core ? 2 : 4); }
};

// The largest count c in [0, limit] with fits(c) (fits(0) must hold; if fits
// is not monotone the count found still fits).
template <typename Fits>
std::int64_t host_sort_largest(std::int64_t limit, Fits fits) {
  std::int64_t lo = 0, hi = limit + 1;  // fits(lo); hi does not, or is past the limit
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The plan for n items of key_bytes + value_bytes in `budget` bytes of device
// memory. sort_temp(c): the device sort's temp storage for c items;
// sample_temp(c): for c keys alone; partition_temp(c): for c (bucket,
// position) pairs of 4-byte words.
template <typename SortTemp, typename SampleTemp, typename PartitionTemp>
host_sort_plan make_host_sort_plan(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes,
                                   std::size_t budget, const host_sort_shape& shape, SortTemp sort_temp,
                                   SampleTemp sample_temp, PartitionTemp partition_temp) {
  host_sort_plan p;
  p.n = n;
  p.key_bytes = key_bytes;
  p.value_bytes = value_bytes;
  p.budget = budget;
  if (n < 0) {
    p.status = cudaErrorInvalidValue;
    return p;
  }
  const std::size_t item = key_bytes + value_bytes;
  const auto sort_layout = [&](std::int64_t c) {
    return host_sort_layout<3>::of({std::size_t(c) * key_bytes, std::size_t(c) * value_bytes, sort_temp(c)});
  };
  const std::int64_t upper = std::int64_t(budget / item);
  p.core_items = host_sort_largest(upper, [&](std::int64_t c) { return sort_layout(c).total <= budget; });
  if (n <= p.core_items && sort_layout(n).total <= budget) {
    p.in_core = true;
    p.core = sort_layout(n);
    p.device_bytes = p.core.total;
    return p;
  }
  p.core = sort_layout(p.core_items);
  // The tree: as deep as shared memory and the policy allow.
  int max_levels = shape.max_levels;
  while (max_levels > 1 && (std::size_t(1) << max_levels) * key_bytes > shape.max_tree_bytes) --max_levels;
  p.tree_bytes = align_temp((std::size_t(1) << max_levels) * key_bytes);
  p.slot_bytes = budget > p.tree_bytes ? (budget - p.tree_bytes) / 2 / 256 * 256 : 0;
  const auto chunk_layout = [&](std::int64_t m) {
    const std::size_t words = std::size_t(m) * 4;
    return host_sort_layout<8>::of({std::size_t(m) * key_bytes, std::size_t(m) * value_bytes,
                                    std::size_t(m) * key_bytes, std::size_t(m) * value_bytes, words, words,
                                    std::size_t(sample_sort_buckets(max_levels)) * 4, partition_temp(m)});
  };
  const std::int64_t slot_upper = std::min<std::int64_t>(std::int64_t(p.slot_bytes / item), std::int64_t(1) << 31);
  p.chunk_items = std::min(n, host_sort_largest(slot_upper, [&](std::int64_t m) {
                            return chunk_layout(m).total <= p.slot_bytes;
                          }));
  p.batch_items = host_sort_largest(slot_upper, [&](std::int64_t c) { return sort_layout(c).total <= p.slot_bytes; });
  if (p.chunk_items < std::min(n, shape.min_chunk) || p.batch_items < shape.min_batch) {
    p.status = cudaErrorInvalidValue;
    return p;
  }
  p.chunks = ceil_div(n, p.chunk_items);
  p.chunk = chunk_layout(p.chunk_items);
  p.batch = sort_layout(p.batch_items);
  // Buckets between splitters of batch / slack items on average; the slack
  // shrinks to 2 before the tree's depth runs out.
  const std::int64_t target = std::max<std::int64_t>(1, p.batch_items / shape.bucket_slack);
  p.levels = 1;
  while (p.levels < max_levels && (std::int64_t(1) << p.levels) * target < n) ++p.levels;
  if ((std::int64_t(1) << p.levels) * (p.batch_items / 2) < n ||
      p.chunks * std::int64_t(p.buckets()) > shape.max_table_entries) {
    p.status = cudaErrorInvalidValue;
    return p;
  }
  const std::int64_t wanted = std::min<std::int64_t>(
      {std::int64_t(shape.oversampling) << p.levels, shape.max_samples, n, std::int64_t(INT32_MAX)});
  p.samples = int(host_sort_largest(wanted, [&](std::int64_t s) {
    return host_sort_layout<2>::of({std::size_t(s) * key_bytes, sample_temp(s)}).total <= p.slot_bytes;
  }));
  if (p.samples < p.splitters() + 1) {
    p.status = cudaErrorInvalidValue;
    return p;
  }
  p.sample = host_sort_layout<2>::of({std::size_t(p.samples) * key_bytes, sample_temp(p.samples)});
  // The allocation also holds one round trip of core_items, for a bucket
  // sorted again that fits one.
  p.device_bytes = std::max(p.tree_bytes + 2 * p.slot_bytes, p.core.total);
  return p;
}

// A chunk's bucket ends as the partition leaves them: ends[b] is one past
// bucket b's last item in the partitioned chunk, 0 where the chunk has no
// item of bucket b. Fills in the empty buckets (each ends where the one
// before it does), so that bucket b is [b == 0 ? 0 : ends[b - 1], ends[b]).
inline void host_sort_fill_ends(std::uint32_t* ends, int buckets) {
  std::uint32_t last = 0;
  for (int b = 0; b < buckets; ++b) {
    if (ends[b] == 0) ends[b] = last;
    last = ends[b];
  }
}

// Items of buckets [first, end) in a chunk with these (filled) ends.
struct host_sort_piece {
  std::int64_t begin = 0, size = 0;  // in the partitioned chunk
};
inline host_sort_piece host_sort_piece_of(const std::uint32_t* ends, int first, int end) {
  const std::int64_t begin = first == 0 ? 0 : ends[first - 1];
  return {begin, std::int64_t(ends[end - 1]) - begin};
}

// What pass 2 does with a run of consecutive buckets.
enum class host_sort_action {
  sort,    // gathered onto the device, sorted, copied to its place
  copy,    // one bucket of equivalent keys, larger than a batch: copied to its place in input order
  resort,  // one bucket between splitters, larger than a batch: copied to its place, then sorted there
};
struct host_sort_batch {
  int first_bucket = 0, end_bucket = 0;
  std::int64_t begin = 0, size = 0;  // items in the sorted array
  host_sort_action action = host_sort_action::sort;
};

// Pass 2's batches from the buckets' sizes (all chunks together): greedily,
// runs of consecutive buckets of at most batch_items items; a larger bucket
// alone (copy or resort). Empty runs are left out.
inline std::vector<host_sort_batch> host_sort_batches(const std::vector<std::int64_t>& bucket_sizes,
                                                      std::int64_t batch_items) {
  std::vector<host_sort_batch> batches;
  host_sort_batch run;
  std::int64_t at = 0;
  const auto close = [&](int end_bucket) {
    run.end_bucket = end_bucket;
    if (run.size > 0) batches.push_back(run);
    run = host_sort_batch{};
    run.first_bucket = end_bucket;
    run.begin = at;
  };
  for (int b = 0; b < int(bucket_sizes.size()); ++b) {
    const std::int64_t size = bucket_sizes[b];
    if (size > batch_items) {
      close(b);
      run.size = size;
      run.action = is_equal_bucket(b) ? host_sort_action::copy : host_sort_action::resort;
      at += size;
      close(b + 1);
      continue;
    }
    if (run.size + size > batch_items) close(b);
    run.size += size;
    at += size;
  }
  close(int(bucket_sizes.size()));
  return batches;
}

}  // namespace tilesort::detail
