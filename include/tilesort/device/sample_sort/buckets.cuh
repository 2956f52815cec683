// device/sample_sort/buckets.cuh — the kernels of the sample sort that sort
// its final buckets (device/sample_sort.cuh launches them after the
// classification of device/sample_sort/classify.cuh):
//
//   pack:      one warp per level-1 range bucket groups its sub-buckets
//              into runs of at most a tile (two levels only);
//   buckets:   a block sorts final buckets: an equal-key bucket stays (or is
//              copied), a bucket of at most one tile is loaded, sorted and
//              stored by the merge sort's blocksort steps (stable; the
//              smallest of three tile shapes that holds it); a larger one is
//              sorted in tiles and merged by the same block in passes
//              between the output and the spare buffer (merge-path splits
//              in global memory).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/merge_path.cuh"
#include "../../detail/sample_sort_plan.cuh"
#include "../../detail/values.cuh"
#include "../merge_sort/blocksort.cuh"
#include "classify.cuh"  // sample_sort_smem, sample_sort_items

namespace tilesort::detail {

// ------------------------------------------------------------------ buckets
// A bucket sorter: the merge sort's blocksort steps (coalesced loads and
// stores through per-warp transposes, block_sort in registers).
template <typename Key, typename Value, int Threads, int Items>
using sample_sort_tile_parts = merge_sort_blocksort_parts<Key, Value, Threads, Items>;

// The bucket kernel's shared memory: one sorter shape at a time (a bucket
// takes the smallest that holds it).
template <typename Key, typename Value, typename Policy>
struct sample_sort_bucket_storage {
  union {
    typename sample_sort_tile_parts<Key, Value, Policy::bucket_threads, Policy::bucket_items>::storage tile;
    typename sample_sort_tile_parts<Key, Value, Policy::bucket_threads, Policy::bucket_items_half>::storage half;
    typename sample_sort_tile_parts<Key, Value, Policy::bucket_threads, Policy::bucket_items_quarter>::storage quarter;
  } sorters;
};

// Sort count (1 < count <= Threads x Items) keys of src into dst (may be
// src); ends with a barrier (the storage is reused by the next tile).
template <int Threads, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void sample_sort_sort_tile(typename sample_sort_tile_parts<Key, Value, Threads, Items>::storage& storage,
                                           const Key* keys_src, const Value* values_src, Key* keys_dst,
                                           Value* values_dst, int count, Compare comp) {
  merge_sort_blocksort_tile<false, sample_sort_tile_parts<Key, Value, Threads, Items>, Items>(
      storage, keys_src, keys_dst, values_src, values_dst, count, comp);
  __syncthreads();
}

// Stable merge of sorted a[0, a_len) and b[0, b_len) into dst by the block.
template <int Threads, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void sample_sort_merge_runs(const Key* a_keys, const Value* a_values, std::int64_t a_len,
                                            std::int64_t b_len, Key* keys_dst, Value* values_dst, Compare comp) {
  constexpr bool pairs = has_values<Value>;
  const Key* b_keys = a_keys + a_len;
  const Value* b_values = pairs ? a_values + a_len : a_values;
  const std::int64_t total = a_len + b_len;
  for (std::int64_t chunk = 0; chunk < total; chunk += std::int64_t(Threads) * Items) {
    const std::int64_t wanted = chunk + std::int64_t(threadIdx.x) * Items;
    const std::int64_t diagonal = wanted < total ? wanted : total;
    std::int64_t ai = merge_path<std::int64_t>(a_keys, a_len, b_keys, b_len, diagonal, comp);
    std::int64_t bi = diagonal - ai;
    for (int i = 0; i < Items && diagonal + i < total; ++i) {
      const bool take_a = bi >= b_len || (ai < a_len && !comp(b_keys[bi], a_keys[ai]));
      if (take_a) {
        keys_dst[diagonal + i] = a_keys[ai];
        if constexpr (pairs) values_dst[diagonal + i] = a_values[ai];
        ++ai;
      } else {
        keys_dst[diagonal + i] = b_keys[bi];
        if constexpr (pairs) values_dst[diagonal + i] = b_values[bi];
        ++bi;
      }
    }
  }
}

// One bucket [begin, end) of src sorted into dst by the block (src may be
// dst): a bucket of at most a quarter (a half) of a tile is sorted by the
// quarter (half) shape: the same threads with fewer items each, so an
// average bucket does not pay for a padded full tile. A larger one is sorted
// tile by tile and merged in passes between dst and `spare`. Ends with a
// barrier (the storage is reused).
template <typename Policy, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void sample_sort_one_bucket(sample_sort_bucket_storage<Key, Value, Policy>& storage, const Key* keys_src,
                                            const Value* values_src, Key* keys_dst, Value* values_dst, Key* keys_spare,
                                            Value* values_spare, std::int64_t begin, std::int64_t end, Compare comp) {
  constexpr int threads = Policy::bucket_threads, items = Policy::bucket_items, tile = Policy::bucket_tile;
  constexpr bool pairs = has_values<Value>;
  const std::int64_t size = end - begin;
  if (size <= 0) return;
  keys_src += begin;
  keys_dst += begin;
  keys_spare += begin;
  if constexpr (pairs) {
    values_src += begin;
    values_dst += begin;
    values_spare += begin;
  }
  if (size == 1) {
    if (keys_src != keys_dst && threadIdx.x == 0) {
      keys_dst[0] = keys_src[0];
      if constexpr (pairs) values_dst[0] = values_src[0];
    }
    return;
  }
  if (size <= threads * Policy::bucket_items_quarter) {
    sample_sort_sort_tile<threads, Policy::bucket_items_quarter>(storage.sorters.quarter, keys_src, values_src,
                                                                 keys_dst, values_dst, static_cast<int>(size), comp);
    return;
  }
  if (size <= threads * Policy::bucket_items_half) {
    sample_sort_sort_tile<threads, Policy::bucket_items_half>(storage.sorters.half, keys_src, values_src, keys_dst,
                                                              values_dst, static_cast<int>(size), comp);
    return;
  }
  const int passes = bucket_merge_passes(size, tile);
  // Tiles go where the merges' parity leaves the result in dst.
  Key* keys_to = passes % 2 == 0 ? keys_dst : keys_spare;
  Value* values_to = passes % 2 == 0 ? values_dst : values_spare;
  for (std::int64_t at = 0; at < size; at += tile) {
    const int count = size - at < tile ? static_cast<int>(size - at) : tile;
    if (count == 1) {
      if (threadIdx.x == 0) {
        keys_to[at] = keys_src[at];
        if constexpr (pairs) values_to[at] = values_src[at];
      }
      continue;
    }
    sample_sort_sort_tile<threads, items>(storage.sorters.tile, keys_src + at, pairs ? values_src + at : values_src,
                                          keys_to + at, pairs ? values_to + at : values_to, count, comp);
  }
  Key* keys_from = keys_to;
  Value* values_from = values_to;
  for (int pass = 0; pass < passes; ++pass) {
    __syncthreads();  // the block's writes of the previous step are visible to it
    Key* keys_into = keys_from == keys_dst ? keys_spare : keys_dst;
    Value* values_into = values_from == values_dst ? values_spare : values_dst;
    const std::int64_t run = std::int64_t(tile) << pass;
    for (std::int64_t lo = 0; lo < size; lo += 2 * run) {
      const std::int64_t a_len = size - lo < run ? size - lo : run;
      const std::int64_t b_len = size - lo - a_len < run ? size - lo - a_len : run;
      sample_sort_merge_runs<threads, items>(keys_from + lo, pairs ? values_from + lo : values_from, a_len, b_len,
                                             keys_into + lo, pairs ? values_into + lo : values_into, comp);
    }
    keys_from = keys_into;
    values_from = values_into;
  }
  __syncthreads();  // the next bucket of this block may read what this one wrote
}

// ------------------------------------------------------------------ packing
// One warp per level-1 range bucket (bucket 2 x blockIdx.x): after level 2,
// the runs of its sub-buckets that one bucket sort takes (sample_sort_pack),
// to groups + blockIdx.x x max_buckets, and their count to its table entry.
template <typename Policy>
__global__ void __launch_bounds__(32)
    sample_sort_pack_kernel(sample_sort_plan plan, sample_sort_bucket_info* infos, const std::int64_t* offsets2,
                            sample_sort_group* groups, const unsigned* skip_unless_zero) {
  if (!begin_dependent_kernel(skip_unless_zero)) return;
  __shared__ std::int64_t starts[sample_sort_buckets(Policy::max_levels)];
  const int bucket = 2 * static_cast<int>(blockIdx.x);
  const sample_sort_bucket_info info = infos[bucket];
  groups += std::int64_t(blockIdx.x) * plan.max_buckets;
  if (info.levels == 0) {  // moved whole: one sort
    if (threadIdx.x == 0) {
      if (info.size > 1) groups[0] = sample_sort_group{info.begin, info.begin + info.size};
      infos[bucket].groups = info.size > 1 ? 1 : 0;
    }
    return;
  }
  const int subs = sample_sort_buckets(info.levels);
  for (int s = static_cast<int>(threadIdx.x); s < subs; s += 32)
    starts[s] = s == 0 ? info.begin : offsets2[plan.counter2(info, s, 0)];
  __syncwarp();
  if (threadIdx.x == 0)
    infos[bucket].groups = sample_sort_pack(starts, subs, info.begin + info.size, Policy::bucket_tile, groups);
}

// The direct sort (offsets null): one block, [0, n) of src (may be dst).
// One level (infos null): block b sorts bucket b, [offsets[counter(b, 0)],
// offsets[counter(b + 1, 0)]) of src (the temp buffer), into dst. Two
// levels: the level-2 output is already in dst (src == dst); block (x, y)
// takes level-1 range bucket 2x and sorts its groups y, y + gridDim.y, ...
// (the pack kernel's runs of sub-buckets). Buckets of keys equal to a
// splitter keep their order: copied when src is not dst. Buckets larger than
// a tile merge through `spare`.
template <typename Key, typename Value>
struct sample_sort_bucket_work {
  sample_sort_items<const Key, const Value> from;
  sample_sort_items<Key, Value> to;
  sample_sort_items<Key, Value> spare;             // the merges' spare buffer (buckets larger than a tile)
  const std::int64_t* offsets = nullptr;           // one level: the scanned level-1 counters
  const sample_sort_bucket_info* infos = nullptr;  // two levels: the level-1 bucket table
  const sample_sort_group* groups = nullptr;       // two levels: the pack kernel's runs
};

template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::bucket_threads, Policy::bucket_blocks_per_sm)
    sample_sort_bucket_kernel(sample_sort_bucket_work<Key, Value> work, sample_sort_plan plan,
                              const unsigned* skip_unless_zero, Compare comp) {
  if (!begin_dependent_kernel(skip_unless_zero)) return;
  constexpr bool pairs = has_values<Value>;
  using storage_type = sample_sort_bucket_storage<Key, Value, Policy>;
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const Key* keys_src = work.from.keys;
  const Value* values_src = work.from.values;
  Key* keys_dst = work.to.keys;
  Value* values_dst = work.to.values;
  const std::int64_t* offsets = work.offsets;
  const sample_sort_bucket_info* infos = work.infos;
  const sample_sort_group* groups = work.groups;
  // The block's ranges: [begin, end) from `first`, every `step`-th of `ranges`.
  int first = 0, ranges = 1, step = 1;
  std::int64_t begin = 0, end = plan.n;
  if (infos == nullptr && offsets != nullptr) {  // one level
    const int bucket = static_cast<int>(blockIdx.x);
    begin = offsets[plan.counter(bucket, 0)];
    end = bucket + 1 < plan.buckets ? offsets[plan.counter(bucket + 1, 0)] : plan.n;
    if (is_equal_bucket(bucket)) {  // in order already
      for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        keys_dst[i] = keys_src[i];
        if constexpr (pairs) values_dst[i] = values_src[i];
      }
      return;
    }
  } else if (infos != nullptr) {  // two levels: in place in dst
    groups += std::int64_t(blockIdx.x) * plan.max_buckets;
    first = static_cast<int>(blockIdx.y);
    step = static_cast<int>(gridDim.y);
    ranges = infos[2 * blockIdx.x].groups;
  }
  for (int j = first; j < ranges; j += step) {
    if (infos != nullptr) {
      begin = groups[j].begin;
      end = groups[j].end;
    }
    sample_sort_one_bucket<Policy>(storage, keys_src, values_src, keys_dst, values_dst, work.spare.keys,
                                   work.spare.values, begin, end, comp);
  }
}

}  // namespace tilesort::detail
