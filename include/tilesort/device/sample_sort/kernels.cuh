// device/sample_sort/kernels.cuh — the kernels of the sample sort
// (device/sample_sort.cuh has the algorithm, the policy and the launches;
// detail/sample_sort_plan.cuh the arithmetic they share).
//
//   sample:    a block draws keys of its part of the input (level 1: all of
//              it; level 2: one level-1 bucket), sorts them (block_sort) and
//              writes the part's splitters, in order. Level 2's launch has
//              one more block, which writes the level-2 bucket table;
//   histogram: each block builds its splitter tree in shared memory,
//              classifies its run of keys (level 1: consecutive tiles of the
//              input; level 2: one chunk of one bucket) and writes its count
//              of every bucket;
//   scan:      three kernels turn the counts into exclusive offsets: chunk
//              sums, a one-block scan of those, the chunks;
//   scatter:   each block classifies its run again, tile by tile; a warp
//              ranks its keys within their buckets in input order
//              (ballots on the bucket's bits, per-warp counts), a block
//              scan over the buckets places each key in shared memory in
//              bucket order, and consecutive threads write consecutive keys
//              of a bucket to consecutive positions;
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
#include <type_traits>

#include "../../block/block_scan.cuh"
#include "../../block/block_sort.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/merge_path.cuh"
#include "../../detail/sample_sort_plan.cuh"
#include "../../thread/thread_sort.cuh"
#include "../../warp/warp_peers.cuh"
#include "../merge_sort/blocksort.cuh"

namespace tilesort::detail {

extern __shared__ __align__(16) unsigned char sample_sort_smem[];

// ------------------------------------------------------------------ sample
template <typename Key, int Threads, int Items>
union sample_sort_sample_storage {
  typename block_sort<Key, Threads, Items>::temp_storage sort;
  Key sorted[Threads * Items];
  std::int64_t warp_sums[Threads / 32 + 1];
};

// The level-2 bucket table (one block): infos[b] for every level-1 bucket
// from the level-1 offsets, then the total in infos[plan.buckets].
template <int Threads>
TILESORT_DEVICE void sample_sort_write_table(const sample_sort_plan& plan, const std::int64_t* offsets, int bucket_tile,
                                             sample_sort_bucket_info* infos, std::int64_t* warp_sums) {
  std::int64_t chunks_before = 0;
  for (int base = 0; base < plan.buckets; base += Threads) {
    const int b = base + static_cast<int>(threadIdx.x);
    sample_sort_bucket_info info{};
    std::int64_t chunks = 0;
    if (b < plan.buckets) {
      info = sample_sort_bucket_of(plan, offsets, b, bucket_tile);
      chunks = plan.chunks_of(info.size);
    }
    std::int64_t total = 0;
    info.first_chunk = chunks_before + block_exclusive_sum<Threads>(chunks, warp_sums, total);
    if (b < plan.buckets) infos[b] = info;
    chunks_before += total;
  }
  if (threadIdx.x == 0) infos[plan.buckets] = sample_sort_bucket_info{plan.n, 0, chunks_before, 0, 0};
}

// Level 1 (offsets null, one block): splitters of the whole input. Level 2
// (plan.buckets + 1 blocks): block b < plan.buckets writes the splitters of
// level-1 bucket b (read from `keys`, the level-1 output) to splitters + b x
// (2^max_levels - 1) when that bucket is classified again; the last block
// writes the bucket table.
template <typename Policy, typename Key, typename Compare>
__global__ void __launch_bounds__(Policy::sample_threads)
    sample_sort_sample_kernel(const Key* keys, sample_sort_plan plan, Key* splitters, const std::int64_t* offsets,
                              sample_sort_bucket_info* infos, const unsigned* skip_unless_zero, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
  constexpr int threads = Policy::sample_threads, items = Policy::sample_items;
  using storage_type = sample_sort_sample_storage<Key, threads, items>;
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const int t = static_cast<int>(threadIdx.x);
  std::int64_t begin = 0, size = plan.n;
  int count = plan.splitters, samples = plan.samples;
  if (offsets != nullptr) {
    const int b = static_cast<int>(blockIdx.x);
    if (b == plan.buckets) {
      sample_sort_write_table<threads>(plan, offsets, Policy::bucket_tile, infos, storage.warp_sums);
      return;
    }
    const sample_sort_bucket_info info = sample_sort_bucket_of(plan, offsets, b, Policy::bucket_tile);
    if (info.levels == 0) return;
    begin = info.begin;
    size = info.size;
    count = (1 << info.levels) - 1;
    samples = sample_sort_sample_count(count, size, Policy::oversampling, Policy::sample_tile);
    splitters += std::int64_t(b) * ((1 << plan.max_levels) - 1);
  }
  Key sample[items];
TILESORT_UNROLL
  for (int i = 0; i < items; ++i) {
    const int j = t * items + i;
    sample[i] = keys[begin + (j < samples ? sample_position(j, samples, size) : 0)];
  }
  block_sort<Key, threads, items>(storage.sort).sort(sample, samples, comp);
  __syncthreads();  // the sort's storage becomes the sorted samples
TILESORT_UNROLL
  for (int i = 0; i < items; ++i) storage.sorted[t * items + i] = sample[i];
  __syncthreads();
  for (int j = t; j < count; j += threads) splitters[j] = storage.sorted[splitter_sample_rank(j, samples, count)];
}

// ------------------------------------------------------------------ splitter tree
template <typename Key, int MaxLevels>
struct sample_sort_tree {
  static constexpr int max_splitters = (1 << MaxLevels) - 1;
  Key tree[max_splitters + 1];  // slot 0 unused

  // Every thread of the block; a barrier must follow before use. `splitters`
  // holds the 2^levels - 1 splitters in order.
  TILESORT_DEVICE void load(const Key* splitters, int levels) {
    for (int slot = static_cast<int>(threadIdx.x) + 1; slot < (1 << levels); slot += blockDim.x)
      tree[slot] = splitters[splitter_tree_rank(slot, levels)];
  }
};

// ------------------------------------------------------------------ jobs
// What one histogram or scatter block classifies: keys [begin, end) with the
// tree of `levels` levels made of `splitters`; its count of bucket s is
// counter `base + s x stride`. An idle block (level 2, past the last chunk)
// owns counters [base, base + max_buckets) and only zeroes them.
template <typename Key>
struct sample_sort_job {
  std::int64_t begin = 0, end = 0;
  const Key* splitters = nullptr;
  int levels = 0;
  int buckets = 1;
  std::int64_t base = 0, stride = 1;
  bool idle = false;
};

// Level 1 when infos is null (block k: its tiles of the input), else level 2
// (block k: the k-th chunk over all level-1 buckets, in order).
template <typename Key>
TILESORT_DEVICE sample_sort_job<Key> sample_sort_job_of(const sample_sort_plan& plan, int scatter_tile,
                                                        const Key* splitters,
                                                        const sample_sort_bucket_info* infos) {
  const std::int64_t k = blockIdx.x;
  sample_sort_job<Key> job;
  if (infos == nullptr) {
    job.begin = plan.first_tile(k) * scatter_tile;
    const std::int64_t end = plan.end_tile(k) * scatter_tile;
    job.end = end < plan.n ? end : plan.n;
    job.splitters = splitters;
    job.levels = plan.levels;
    job.buckets = plan.buckets;
    job.base = k;
    job.stride = plan.scatter_blocks;
    return job;
  }
  sample_sort_chunk chunk;
  if (!sample_sort_chunk_of(plan, infos, k, chunk)) {
    job.idle = true;
    job.base = k * plan.max_buckets;
    return job;
  }
  job.begin = chunk.begin;
  job.end = chunk.end;
  job.splitters = splitters + std::int64_t(chunk.bucket) * ((1 << plan.max_levels) - 1);
  job.levels = chunk.levels;
  job.buckets = sample_sort_buckets(chunk.levels);
  job.base = chunk.base;
  job.stride = chunk.stride;
  return job;
}

// Position in a tile of a thread's k-th key: each warp owns 32 x Items
// consecutive keys and reads them 32 at a time (coalesced), so the order
// (warp, k, lane) is the input order.
template <int Items>
TILESORT_DEVICE int sample_sort_tile_index(int k) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  return warp * 32 * Items + k * 32 + lane;
}

// Load up to Items keys of a tile (past `valid`: the tile's first key, its
// bucket unused) and classify them.
template <int Items, typename Key, int MaxLevels, typename Compare>
TILESORT_DEVICE void sample_sort_classify_tile(const sample_sort_tree<Key, MaxLevels>& tree, int levels,
                                               const Key* tile_keys, int valid, Key (&keys)[Items],
                                               int (&buckets)[Items], Compare comp) {
TILESORT_UNROLL
  for (int k = 0; k < Items; ++k) {
    const int j = sample_sort_tile_index<Items>(k);
    keys[k] = tile_keys[j < valid ? j : 0];
  }
  classify_keys(tree.tree, levels, keys, buckets, comp);
}

// ------------------------------------------------------------------ histogram
template <typename Key, int MaxLevels>
struct sample_sort_histogram_storage {
  sample_sort_tree<Key, MaxLevels> tree;
  unsigned counts[sample_sort_buckets(MaxLevels)];
};

// infos null: level 1 over the input; else level 2 over the level-1 output.
template <typename Policy, typename Key, typename Compare>
__global__ void __launch_bounds__(Policy::scatter_threads)
    sample_sort_histogram_kernel(const Key* keys, const Key* splitters, sample_sort_plan plan,
                                 const sample_sort_bucket_info* infos, std::int64_t* counters,
                                 const unsigned* skip_unless_zero, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
  constexpr int threads = Policy::scatter_threads, items = Policy::scatter_items, tile = Policy::scatter_tile;
  constexpr int max_buckets = sample_sort_buckets(Policy::max_levels);
  using storage_type = sample_sort_histogram_storage<Key, Policy::max_levels>;
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const int t = static_cast<int>(threadIdx.x);
  const sample_sort_job<Key> job = sample_sort_job_of(plan, tile, splitters, infos);
  if (job.idle) {
    for (int s = t; s < max_buckets; s += threads) counters[job.base + s] = 0;
    return;
  }
  storage.tree.load(job.splitters, job.levels);
  for (int s = t; s < max_buckets; s += threads) storage.counts[s] = 0;
  __syncthreads();
  for (std::int64_t base = job.begin; base < job.end; base += tile) {
    const int valid = job.end - base < tile ? static_cast<int>(job.end - base) : tile;
    Key keys_here[items];
    int buckets[items];
    sample_sort_classify_tile(storage.tree, job.levels, keys + base, valid, keys_here, buckets, comp);
TILESORT_UNROLL
    for (int k = 0; k < items; ++k)
      if (sample_sort_tile_index<items>(k) < valid) atomicAdd(&storage.counts[buckets[k]], 1u);
  }
  __syncthreads();
  // Level 2 writes all max_buckets entries of its chunk (zeros past its tree).
  const int written = infos == nullptr ? plan.buckets : max_buckets;
  for (int s = t; s < written; s += threads) counters[job.base + std::int64_t(s) * job.stride] = storage.counts[s];
}

// ------------------------------------------------------------------ scan
// partials[c] = sum of counters[c x Chunk, (c + 1) x Chunk).
template <int Threads, int Chunk>
__global__ void __launch_bounds__(Threads)
    sample_sort_scan_reduce_kernel(const std::int64_t* counters, std::int64_t count, std::int64_t* partials,
                                   const unsigned* skip_unless_zero) {
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
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
__global__ void __launch_bounds__(Threads)
    sample_sort_scan_partials_kernel(std::int64_t* partials, std::int64_t chunks, const unsigned* skip_unless_zero) {
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
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
    sample_sort_scan_apply_kernel(std::int64_t* counters, std::int64_t count, const std::int64_t* partials,
                                  const unsigned* skip_unless_zero) {
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
  __shared__ std::int64_t warp_sums[Threads / 32 + 1];
  const std::int64_t first = std::int64_t(blockIdx.x) * Threads * Items + std::int64_t(threadIdx.x) * Items;
  std::int64_t mine[Items];
  std::int64_t sum = 0;
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) {
    mine[i] = first + i < count ? counters[first + i] : 0;
    sum += mine[i];
  }
  std::int64_t total = 0;
  std::int64_t running = partials[blockIdx.x] + block_exclusive_sum<Threads>(sum, warp_sums, total);
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) {
    if (first + i < count) counters[first + i] = running;
    running += mine[i];
  }
}


// ------------------------------------------------------------------ scatter
// Shared memory of a scatter block: the tree, each bucket's next output
// position, per-warp counts, the tile's bucket starts and the tile itself
// staged in bucket order (4-byte keys: about 47 KB, four blocks per SM).
template <typename Key, typename Value, typename Policy>
struct sample_sort_scatter_storage {
  static constexpr int tile = Policy::scatter_tile;
  static constexpr int warps = Policy::scatter_threads / 32;
  static constexpr int max_buckets = sample_sort_buckets(Policy::max_levels);
  static constexpr bool pairs = has_values<Value>;
  sample_sort_tree<Key, Policy::max_levels> tree;
  std::int64_t next[max_buckets];  // this block's next output position in each bucket
  std::int64_t warp_sums[warps + 1];
  // A warp's keys of each bucket so far; then, per bucket, the keys of the
  // warps before it in the tile.
  unsigned warp_counts[warps][max_buckets];
  int tile_start[max_buckets];  // first position of each bucket in the staged tile
  unsigned short staged_buckets[tile];
  Key staged_keys[tile];
  std::conditional_t<pairs, Value, char> staged_values[pairs ? tile : 1];
};

// What a scatter launch moves: keys (and values) from `keys_in` to their
// buckets' places in `keys_dst`, classified by `splitters` at the exclusive
// offsets `offsets` (the scanned counters). `infos` null: level 1, input ->
// temp; else level 2 (the level-1 bucket table), temp -> output.
template <typename Key, typename Value>
struct sample_sort_scatter_work {
  const Key* keys_in = nullptr;
  const Value* values_in = nullptr;
  const Key* splitters = nullptr;
  const std::int64_t* offsets = nullptr;
  const sample_sort_bucket_info* infos = nullptr;
  Key* keys_dst = nullptr;
  Value* values_dst = nullptr;
};

template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::scatter_threads, Policy::scatter_blocks_per_sm)
    sample_sort_scatter_kernel(sample_sort_scatter_work<Key, Value> work, sample_sort_plan plan,
                               const unsigned* skip_unless_zero, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
  constexpr int threads = Policy::scatter_threads, items = Policy::scatter_items, tile = Policy::scatter_tile;
  using storage_type = sample_sort_scatter_storage<Key, Value, Policy>;
  constexpr int max_buckets = storage_type::max_buckets, warps = storage_type::warps;
  constexpr int per_thread = (max_buckets + threads - 1) / threads;  // buckets a thread scans
  constexpr bool pairs = storage_type::pairs;
  static_assert(max_buckets < 65536, "staged bucket numbers fit 16 bits");
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
  const Key* keys_in = work.keys_in;
  const Value* values_in = work.values_in;
  Key* keys_dst = work.keys_dst;
  Value* values_dst = work.values_dst;
  const sample_sort_job<Key> job = sample_sort_job_of(plan, tile, work.splitters, work.infos);
  if (job.idle) return;
  storage.tree.load(job.splitters, job.levels);
  for (int s = t; s < job.buckets; s += threads)
    storage.next[s] = work.offsets[job.base + std::int64_t(s) * job.stride];
  __syncthreads();
  for (std::int64_t base = job.begin; base < job.end; base += tile) {
    const int valid = job.end - base < tile ? static_cast<int>(job.end - base) : tile;
    Key keys[items];
    int buckets[items];
    sample_sort_classify_tile(storage.tree, job.levels, keys_in + base, valid, keys, buckets, comp);
    Value values[items];
    if constexpr (pairs) {
TILESORT_UNROLL
      for (int k = 0; k < items; ++k) {
        const int j = sample_sort_tile_index<items>(k);
        values[k] = values_in[base + (j < valid ? j : 0)];
      }
    }
    // Ranks within the warp's keys of a bucket, in input order.
    for (int s = lane; s < job.buckets; s += 32) storage.warp_counts[warp][s] = 0;
    __syncwarp();
    int ranks[items];
TILESORT_UNROLL
    for (int k = 0; k < items; ++k) {
      // The lowest lane of each group of equal buckets takes the group's
      // places from the warp's count (an atomic, so the steps need no
      // barrier between them); the shuffle waits for it, so step k's
      // places are taken before step k + 1's.
      const bool live = sample_sort_tile_index<items>(k) < valid;
      const unsigned peers = warp_peers(live ? buckets[k] : job.buckets, job.levels + 1);
      const int leader = __ffs(peers) - 1;
      unsigned before = 0;
      if (live && lane == leader) before = atomicAdd(&storage.warp_counts[warp][buckets[k]], unsigned(__popc(peers)));
      before = __shfl_sync(0xffffffffu, before, leader);
      ranks[k] = static_cast<int>(before) + __popc(peers & ((1u << lane) - 1u));
    }
    __syncthreads();
    // Per bucket: the warps' counts -> exclusive sums over the warps; the
    // bucket totals -> the tile's bucket starts (a thread takes per_thread
    // consecutive buckets, so one block scan orders them).
    int totals[per_thread];
    int mine = 0;
TILESORT_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      const int s = t * per_thread + i;
      int running = 0;
      if (s < job.buckets) {
TILESORT_UNROLL
        for (int w = 0; w < warps; ++w) {
          const int c = static_cast<int>(storage.warp_counts[w][s]);
          storage.warp_counts[w][s] = static_cast<unsigned>(running);
          running += c;
        }
      }
      totals[i] = running;
      mine += running;
    }
    std::int64_t tile_total = 0;
    int start = static_cast<int>(block_exclusive_sum<threads>(mine, storage.warp_sums, tile_total));
TILESORT_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      const int s = t * per_thread + i;
      if (s < job.buckets) storage.tile_start[s] = start;
      start += totals[i];
    }
    __syncthreads();
    // Stage the tile in bucket order.
TILESORT_UNROLL
    for (int k = 0; k < items; ++k) {
      if (sample_sort_tile_index<items>(k) < valid) {
        const int at = storage.tile_start[buckets[k]] + static_cast<int>(storage.warp_counts[warp][buckets[k]]) + ranks[k];
        storage.staged_buckets[at] = static_cast<unsigned short>(buckets[k]);
        storage.staged_keys[at] = keys[k];
        if constexpr (pairs) storage.staged_values[at] = values[k];
      }
    }
    __syncthreads();
    // Consecutive threads, consecutive keys of a bucket: consecutive outputs.
    for (int at = t; at < valid; at += threads) {
      const int s = storage.staged_buckets[at];
      const std::int64_t dst = storage.next[s] + (at - storage.tile_start[s]);
      keys_dst[dst] = storage.staged_keys[at];
      if constexpr (pairs) values_dst[dst] = storage.staged_values[at];
    }
    __syncthreads();  // next[] and the staged tile are read by all
TILESORT_UNROLL
    for (int i = 0; i < per_thread; ++i) {
      const int s = t * per_thread + i;
      if (s < job.buckets) storage.next[s] += totals[i];
    }
  }
}

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
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
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
  const Key* keys_src = nullptr;
  const Value* values_src = nullptr;
  Key* keys_dst = nullptr;
  Value* values_dst = nullptr;
  Key* keys_spare = nullptr;  // the merges' spare buffer (buckets larger than a tile)
  Value* values_spare = nullptr;
  const std::int64_t* offsets = nullptr;         // one level: the scanned level-1 counters
  const sample_sort_bucket_info* infos = nullptr;  // two levels: the level-1 bucket table
  const sample_sort_group* groups = nullptr;       // two levels: the pack kernel's runs
};

template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::bucket_threads, Policy::bucket_blocks_per_sm)
    sample_sort_bucket_kernel(sample_sort_bucket_work<Key, Value> work, sample_sort_plan plan,
                              const unsigned* skip_unless_zero, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // the previous kernel's output (the first one's wait returns at once)
  if (skip_requested(skip_unless_zero)) return;
  constexpr bool pairs = has_values<Value>;
  using storage_type = sample_sort_bucket_storage<Key, Value, Policy>;
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const Key* keys_src = work.keys_src;
  const Value* values_src = work.values_src;
  Key* keys_dst = work.keys_dst;
  Value* values_dst = work.values_dst;
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
    sample_sort_one_bucket<Policy>(storage, keys_src, values_src, keys_dst, values_dst, work.keys_spare,
                                   work.values_spare, begin, end, comp);
  }
}

}  // namespace tilesort::detail
