// device/sample_sort_kernels.cuh — the kernels of the sample sort
// (device/sample_sort.cuh has the algorithm, the policy and the launches;
// detail/sample_sort_plan.cuh the arithmetic they share).
//
//   sample:    one block draws plan.samples keys, sorts them (block_sort) and
//              writes the 2^levels - 1 splitters, in order;
//   histogram: each scatter block builds the splitter tree in shared memory,
//              classifies its tiles and writes its count of every bucket;
//   scan:      three kernels turn the counts (bucket major) into exclusive
//              offsets: chunk sums, a one-block scan of those, the chunks;
//   scatter:   each scatter block classifies its tiles again, in order; a
//              tile's keys are ranked by sorting (bucket, position) codes
//              with block_sort, so a key's place in its bucket follows the
//              input order, and written to the temp buffer bucket by bucket
//              (read again by position);
//   buckets:   one block per bucket: an equal-key bucket is copied, a bucket
//              of at most one tile is loaded, sorted (block_sort, stable, the
//              smallest of three tile shapes that holds it) and stored; a
//              larger one is sorted in tiles and merged by the
//              same block in passes that alternate between the temp buffer
//              and the output (merge-path splits in global memory).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../block/block_sort.cuh"
#include "../detail/config.cuh"
#include "../detail/merge_path.cuh"
#include "../detail/sample_sort_plan.cuh"
#include "../thread/thread_sort.cuh"

namespace tilesort::detail {

template <typename Value>
inline constexpr bool sample_sort_has_values = !std::is_same_v<Value, no_value>;

extern __shared__ __align__(16) unsigned char sample_sort_smem[];

// ------------------------------------------------------------------ block scan
// Exclusive sum over the block of one 64-bit number per thread; `total` gets
// the block's sum. `warp_sums` holds Threads / 32 + 1 entries of shared memory;
// every thread of the block calls this (it has barriers).
template <int Threads>
TILESORT_DEVICE std::int64_t block_exclusive_sum(std::int64_t x, std::int64_t* warp_sums, std::int64_t& total) {
  static_assert(Threads % 32 == 0 && Threads <= 1024, "whole warps, at most 32");
  constexpr int warps = Threads / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  std::int64_t inclusive = x;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const std::int64_t y = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += y;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const std::int64_t mine = lane < warps ? warp_sums[lane] : 0;
    std::int64_t scan = mine;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const std::int64_t y = __shfl_up_sync(0xffffffffu, scan, offset);
      if (lane >= offset) scan += y;
    }
    if (lane < warps) warp_sums[lane] = scan - mine;
    if (lane == warps - 1) warp_sums[warps] = scan;
  }
  __syncthreads();
  const std::int64_t prefix = warp_sums[warp] + inclusive - x;
  total = warp_sums[warps];
  __syncthreads();  // warp_sums may be reused at once
  return prefix;
}

// ------------------------------------------------------------------ sample
template <typename Key, int Threads, int Items>
union sample_sort_sample_storage {
  typename block_sort<Key, Threads, Items>::temp_storage sort;
  Key sorted[Threads * Items];
};

template <typename Policy, typename Key, typename Compare>
__global__ void __launch_bounds__(Policy::sample_threads)
    sample_sort_sample_kernel(const Key* keys, sample_sort_plan plan, Key* splitters, Compare comp) {
  constexpr int threads = Policy::sample_threads, items = Policy::sample_items;
  using storage_type = sample_sort_sample_storage<Key, threads, items>;
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const int t = static_cast<int>(threadIdx.x);
  Key sample[items];
#pragma unroll
  for (int i = 0; i < items; ++i) {
    const int j = t * items + i;
    sample[i] = keys[j < plan.samples ? sample_position(j, plan.samples, plan.n) : 0];
  }
  block_sort<Key, threads, items>(storage.sort).sort(sample, plan.samples, comp);
  __syncthreads();  // the sort's storage becomes the sorted samples
#pragma unroll
  for (int i = 0; i < items; ++i) storage.sorted[t * items + i] = sample[i];
  __syncthreads();
  for (int j = t; j < plan.splitters; j += threads)
    splitters[j] = storage.sorted[splitter_sample_rank(j, plan.samples, plan.splitters)];
}

// ------------------------------------------------------------------ splitter tree
template <typename Key, int MaxLevels>
struct sample_sort_tree {
  static constexpr int max_splitters = (1 << MaxLevels) - 1;
  Key tree[max_splitters + 1];  // slot 0 unused

  // Every thread of the block; a barrier must follow before use.
  TILESORT_DEVICE void load(const Key* splitters, const sample_sort_plan& plan) {
    for (int slot = static_cast<int>(threadIdx.x) + 1; slot <= plan.splitters; slot += blockDim.x)
      tree[slot] = splitters[splitter_tree_rank(slot, plan.levels)];
  }
  template <int Items, typename Compare>
  TILESORT_DEVICE void classify(const Key (&keys)[Items], int levels, int (&buckets)[Items], Compare comp) const {
    classify_keys(tree, levels, keys, buckets, comp);
  }
};

// Load a scatter tile's keys striped (thread t takes positions t + k x
// Threads: coalesced) and classify them; past `valid` a thread loads the
// tile's first key (its bucket is not used).
template <int Threads, int Items, typename Key, int MaxLevels, typename Compare>
TILESORT_DEVICE void sample_sort_classify_tile(const sample_sort_tree<Key, MaxLevels>& tree, const Key* tile_keys,
                                               int valid, int levels, int (&buckets)[Items], Compare comp) {
  Key keys[Items];
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int j = static_cast<int>(threadIdx.x) + k * Threads;
    keys[k] = tile_keys[j < valid ? j : 0];
  }
  tree.classify(keys, levels, buckets, comp);
}

// ------------------------------------------------------------------ histogram
template <typename Key, int MaxLevels>
struct sample_sort_histogram_storage {
  sample_sort_tree<Key, MaxLevels> tree;
  unsigned counts[2 * sample_sort_tree<Key, MaxLevels>::max_splitters + 1];
};

template <typename Policy, typename Key, typename Compare>
__global__ void __launch_bounds__(Policy::scatter_threads)
    sample_sort_histogram_kernel(const Key* keys, const Key* splitters, sample_sort_plan plan,
                                 std::int64_t* counters, Compare comp) {
  using storage_type = sample_sort_histogram_storage<Key, Policy::max_levels>;
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const std::int64_t block = blockIdx.x;
  storage.tree.load(splitters, plan);
  for (int b = static_cast<int>(threadIdx.x); b < plan.buckets; b += blockDim.x) storage.counts[b] = 0;
  __syncthreads();
  // Tile by tile as the scatter: scatter_items keys per thread classified
  // together, then counted.
  for (std::int64_t tile_index = plan.first_tile(block); tile_index < plan.end_tile(block); ++tile_index) {
    const std::int64_t base = tile_index * Policy::scatter_tile;
    const int valid = plan.n - base < Policy::scatter_tile ? static_cast<int>(plan.n - base) : Policy::scatter_tile;
    int buckets[Policy::scatter_items];
    sample_sort_classify_tile<Policy::scatter_threads>(storage.tree, keys + base, valid, plan.levels, buckets, comp);
#pragma unroll
    for (int k = 0; k < Policy::scatter_items; ++k) {
      if (static_cast<int>(threadIdx.x) + k * Policy::scatter_threads < valid)
        atomicAdd(&storage.counts[buckets[k]], 1u);
    }
  }
  __syncthreads();
  for (int b = static_cast<int>(threadIdx.x); b < plan.buckets; b += blockDim.x)
    counters[plan.counter(b, block)] = storage.counts[b];
}

// ------------------------------------------------------------------ scan
// partials[c] = sum of counters[c x Chunk, (c + 1) x Chunk).
template <int Threads, int Chunk>
__global__ void __launch_bounds__(Threads)
    sample_sort_scan_reduce_kernel(const std::int64_t* counters, std::int64_t count, std::int64_t* partials) {
  __shared__ std::int64_t warp_sums[Threads / 32 + 1];
  const std::int64_t begin = std::int64_t(blockIdx.x) * Chunk;
  const std::int64_t end = begin + Chunk < count ? begin + Chunk : count;
  std::int64_t sum = 0;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += Threads) sum += counters[i];
  std::int64_t total = 0;
  block_exclusive_sum<Threads>(sum, warp_sums, total);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// One block: partials[0, chunks) -> their exclusive sums, in place.
template <int Threads>
__global__ void __launch_bounds__(Threads) sample_sort_scan_partials_kernel(std::int64_t* partials, std::int64_t chunks) {
  __shared__ std::int64_t warp_sums[Threads / 32 + 1];
  std::int64_t carry = 0;
  for (std::int64_t base = 0; base < chunks; base += Threads) {
    const std::int64_t i = base + threadIdx.x;
    const std::int64_t x = i < chunks ? partials[i] : 0;
    std::int64_t total = 0;
    const std::int64_t prefix = block_exclusive_sum<Threads>(x, warp_sums, total);
    if (i < chunks) partials[i] = carry + prefix;
    carry += total;
  }
}

// counters[c x Chunk, (c + 1) x Chunk) -> exclusive sums from partials[c], in place.
template <int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    sample_sort_scan_apply_kernel(std::int64_t* counters, std::int64_t count, const std::int64_t* partials) {
  __shared__ std::int64_t warp_sums[Threads / 32 + 1];
  const std::int64_t first = std::int64_t(blockIdx.x) * Threads * Items + std::int64_t(threadIdx.x) * Items;
  std::int64_t mine[Items];
  std::int64_t sum = 0;
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    mine[i] = first + i < count ? counters[first + i] : 0;
    sum += mine[i];
  }
  std::int64_t total = 0;
  std::int64_t running = partials[blockIdx.x] + block_exclusive_sum<Threads>(sum, warp_sums, total);
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    if (first + i < count) counters[first + i] = running;
    running += mine[i];
  }
}

// ------------------------------------------------------------------ scatter
// Shared memory of a scatter block: the tree, one 64-bit position per bucket
// and the tile's codes (8191 buckets and 4-byte keys: 16 + 64 + 17 KB, two
// blocks per SM). The tile's keys are not staged: the writes read them again
// by position (cache hits: the block has just loaded them).
template <typename Key, typename Policy>
struct sample_sort_scatter_storage {
  static constexpr int tile = Policy::scatter_tile;
  static constexpr int max_buckets = 2 * sample_sort_tree<Key, Policy::max_levels>::max_splitters + 1;
  using rank_sort = block_sort<unsigned, Policy::scatter_threads, Policy::scatter_items>;
  sample_sort_tree<Key, Policy::max_levels> tree;
  // This block's next output position in each bucket; while a tile is
  // written, that position minus the rank of the bucket's first key in the
  // tile, so a key goes to next[bucket] + its rank.
  std::int64_t next[max_buckets];
  union {
    typename rank_sort::temp_storage sort;
    unsigned codes[tile];  // sorted (bucket, position) codes
  } ranks;
};

template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::scatter_threads)
    sample_sort_scatter_kernel(const Key* keys_in, const Value* values_in, const Key* splitters,
                               const std::int64_t* offsets, Key* keys_dst, Value* values_dst, sample_sort_plan plan,
                               Compare comp) {
  constexpr int threads = Policy::scatter_threads, items = Policy::scatter_items, tile = Policy::scatter_tile;
  constexpr int position_bits = sample_sort_position_bits(tile);
  constexpr unsigned position_mask = (1u << position_bits) - 1u;
  constexpr bool pairs = sample_sort_has_values<Value>;
  static_assert(tile == threads * items, "one code per item");
  static_assert(sample_sort_scatter_storage<Key, Policy>::max_buckets < (1 << (31 - position_bits)),
                "(bucket, position) codes below 0xffffffff, the padding code");
  using storage_type = sample_sort_scatter_storage<Key, Policy>;
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const std::int64_t block = blockIdx.x;
  const int t = static_cast<int>(threadIdx.x);
  storage.tree.load(splitters, plan);
  for (int b = t; b < plan.buckets; b += threads) storage.next[b] = offsets[plan.counter(b, block)];
  __syncthreads();
  for (std::int64_t tile_index = plan.first_tile(block); tile_index < plan.end_tile(block); ++tile_index) {
    const std::int64_t base = tile_index * tile;
    const int valid = plan.n - base < tile ? static_cast<int>(plan.n - base) : tile;
    int buckets[items];
    sample_sort_classify_tile<threads>(storage.tree, keys_in + base, valid, plan.levels, buckets, comp);
    unsigned codes[items];
#pragma unroll
    for (int k = 0; k < items; ++k) {
      const int j = t + k * threads;  // striped
      codes[k] = j < valid ? (unsigned(buckets[k]) << position_bits) | unsigned(j) : 0xffffffffu;
    }
    typename storage_type::rank_sort(storage.ranks.sort).sort(codes);
    __syncthreads();  // the sort's storage becomes the codes
#pragma unroll
    for (int i = 0; i < items; ++i) storage.ranks.codes[t * items + i] = codes[i];
    __syncthreads();
    for (int rank = t; rank < valid; rank += threads) {  // a bucket's first key: next[bucket] - rank
      const unsigned bucket = storage.ranks.codes[rank] >> position_bits;
      if (rank == 0 || (storage.ranks.codes[rank - 1] >> position_bits) != bucket) storage.next[bucket] -= rank;
    }
    __syncthreads();
    for (int rank = t; rank < valid; rank += threads) {  // consecutive ranks of a bucket: consecutive outputs
      const unsigned code = storage.ranks.codes[rank];
      const std::int64_t dst = storage.next[code >> position_bits] + rank;
      keys_dst[dst] = keys_in[base + (code & position_mask)];
      if constexpr (pairs) values_dst[dst] = values_in[base + (code & position_mask)];
    }
    __syncthreads();  // next[] read by all
    for (int rank = t; rank < valid; rank += threads) {  // a bucket's last key: back to the next position
      const unsigned bucket = storage.ranks.codes[rank] >> position_bits;
      if (rank == valid - 1 || (storage.ranks.codes[rank + 1] >> position_bits) != bucket)
        storage.next[bucket] += rank + 1;
    }
    __syncthreads();  // codes and next[] are rewritten by the next tile
  }
}

// ------------------------------------------------------------------ buckets
template <typename Key, typename Value, int Threads, int Items>
using sample_sort_bucket_sorter =
    block_sort<Key, Threads, Items, std::conditional_t<sample_sort_has_values<Value>, Value, void>>;

// The bucket kernel's shared memory: one sorter shape at a time (a bucket
// takes the smallest that holds it).
template <typename Key, typename Value, typename Policy>
union sample_sort_bucket_storage {
  typename sample_sort_bucket_sorter<Key, Value, Policy::bucket_threads, Policy::bucket_items>::temp_storage tile;
  typename sample_sort_bucket_sorter<Key, Value, Policy::bucket_threads, Policy::bucket_items_half>::temp_storage half;
  typename sample_sort_bucket_sorter<Key, Value, Policy::bucket_threads, Policy::bucket_items_quarter>::temp_storage
      quarter;
};

// Sort count (1 < count <= Threads x Items) keys of src into dst (may be src):
// blocked loads, block_sort, blocked stores.
template <int Threads, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void sample_sort_sort_tile(typename sample_sort_bucket_sorter<Key, Value, Threads, Items>::temp_storage& storage,
                                           const Key* keys_src, const Value* values_src, Key* keys_dst,
                                           Value* values_dst, int count, Compare comp) {
  constexpr bool pairs = sample_sort_has_values<Value>;
  const int t = static_cast<int>(threadIdx.x);
  Key keys[Items];
  Value values[Items];
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int j = t * Items + i < count ? t * Items + i : 0;  // out of range: a real key, sorted last
    keys[i] = keys_src[j];
    if constexpr (pairs) values[i] = values_src[j];
  }
  __syncthreads();  // in place: every read before any write
  sample_sort_bucket_sorter<Key, Value, Threads, Items> sorter(storage);
  if constexpr (pairs) {
    sorter.sort_pairs(keys, values, count, comp);
  } else {
    sorter.sort(keys, count, comp);
  }
#pragma unroll
  for (int i = 0; i < Items; ++i) {
    const int j = t * Items + i;
    if (j < count) {
      keys_dst[j] = keys[i];
      if constexpr (pairs) values_dst[j] = values[i];
    }
  }
  __syncthreads();  // the storage is reused by the next tile
}

// Stable merge of sorted a[0, a_len) and b[0, b_len) into dst by the block.
template <int Threads, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void sample_sort_merge_runs(const Key* a_keys, const Value* a_values, std::int64_t a_len,
                                            std::int64_t b_len, Key* keys_dst, Value* values_dst, Compare comp) {
  constexpr bool pairs = sample_sort_has_values<Value>;
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

// One block per bucket. `offsets` null: one bucket, [0, n) (the direct sort,
// src may be dst). Otherwise bucket b is [offsets[counter(b, 0)],
// offsets[counter(b + 1, 0)]) of src (the temp buffer), sorted into dst;
// buckets larger than a tile use src as the other buffer of their merges.
// A bucket of at most a quarter (a half) of a tile is sorted by the quarter
// (half) shape: the same threads with fewer items each, so an average bucket
// does not pay for a padded full tile.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::bucket_threads, 1)
    sample_sort_bucket_kernel(Key* keys_src, Value* values_src, Key* keys_dst, Value* values_dst,
                              const std::int64_t* offsets, sample_sort_plan plan, Compare comp) {
  constexpr int threads = Policy::bucket_threads, items = Policy::bucket_items, tile = Policy::bucket_tile;
  constexpr bool pairs = sample_sort_has_values<Value>;
  auto& storage = *reinterpret_cast<sample_sort_bucket_storage<Key, Value, Policy>*>(sample_sort_smem);
  const int bucket = static_cast<int>(blockIdx.x);
  std::int64_t begin = 0, end = plan.n;
  if (offsets != nullptr) {
    begin = offsets[plan.counter(bucket, 0)];
    if (bucket + 1 < plan.buckets) end = offsets[plan.counter(bucket + 1, 0)];
  }
  const std::int64_t size = end - begin;
  if (size <= 0) return;
  keys_src += begin;
  keys_dst += begin;
  if constexpr (pairs) {
    values_src += begin;
    values_dst += begin;
  }
  if (size == 1 || (offsets != nullptr && is_equal_bucket(bucket))) {  // in order already
    if (keys_src == keys_dst) return;
    for (std::int64_t i = threadIdx.x; i < size; i += threads) {
      keys_dst[i] = keys_src[i];
      if constexpr (pairs) values_dst[i] = values_src[i];
    }
    return;
  }
  if (size <= threads * Policy::bucket_items_quarter) {
    sample_sort_sort_tile<threads, Policy::bucket_items_quarter>(storage.quarter, keys_src, values_src, keys_dst,
                                                                 values_dst, static_cast<int>(size), comp);
    return;
  }
  if (size <= threads * Policy::bucket_items_half) {
    sample_sort_sort_tile<threads, Policy::bucket_items_half>(storage.half, keys_src, values_src, keys_dst, values_dst,
                                                              static_cast<int>(size), comp);
    return;
  }
  const int passes = bucket_merge_passes(size, tile);
  // Tiles go where the merges' parity leaves the result in dst.
  Key* keys_to = passes % 2 == 0 ? keys_dst : keys_src;
  Value* values_to = passes % 2 == 0 ? values_dst : values_src;
  for (std::int64_t at = 0; at < size; at += tile) {
    const int count = size - at < tile ? static_cast<int>(size - at) : tile;
    if (count == 1) {
      if (threadIdx.x == 0) {
        keys_to[at] = keys_src[at];
        if constexpr (pairs) values_to[at] = values_src[at];
      }
      continue;
    }
    sample_sort_sort_tile<threads, items>(storage.tile, keys_src + at, pairs ? values_src + at : values_src,
                                          keys_to + at, pairs ? values_to + at : values_to, count, comp);
  }
  Key* keys_from = keys_to;
  Value* values_from = values_to;
  for (int pass = 0; pass < passes; ++pass) {
    __syncthreads();  // the block's writes of the previous step are visible to it
    Key* keys_into = keys_from == keys_dst ? keys_src : keys_dst;
    Value* values_into = values_from == values_dst ? values_src : values_dst;
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
}

}  // namespace tilesort::detail
