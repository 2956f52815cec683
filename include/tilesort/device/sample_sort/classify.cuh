// device/sample_sort/classify.cuh — the kernels of the sample sort that
// classify the keys into buckets and move them there (device/sample_sort.cuh
// has the algorithm and the launches; device/sample_sort/buckets.cuh sorts
// the buckets; detail/sample_sort_plan.cuh holds the arithmetic they share).
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
//              sums, a one-block scan of those (block_exclusive_sum), the
//              chunks;
//   scatter:   each block classifies its run again, tile by tile; a warp
//              ranks its keys within their buckets in input order
//              (warp_peers: ballots on the bucket's bits, per-warp counts),
//              a block scan over the buckets places each key in shared
//              memory in bucket order, and consecutive threads write
//              consecutive keys of a bucket to consecutive positions.
// Every kernel is a dependent launch of the one before (begin_dependent_kernel).
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

namespace tilesort::detail {

extern __shared__ __align__(16) unsigned char sample_sort_smem[];

// Keys and (pairs) their values: one array each, where a kernel reads or
// writes items.
template <typename Key, typename Value>
struct sample_sort_items {
  Key* keys = nullptr;
  Value* values = nullptr;
};

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
  if (!begin_dependent_kernel(skip_unless_zero)) return;
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
  if (!begin_dependent_kernel(skip_unless_zero)) return;
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
  if (!begin_dependent_kernel(skip_unless_zero)) return;
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
  if (!begin_dependent_kernel(skip_unless_zero)) return;
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
  if (!begin_dependent_kernel(skip_unless_zero)) return;
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

// What a scatter launch moves: items `from` to their buckets' places `to`,
// classified by `splitters` at the exclusive offsets `offsets` (the scanned
// counters). `infos` null: level 1, input -> temp; else level 2 (the level-1
// bucket table), temp -> output.
template <typename Key, typename Value>
struct sample_sort_scatter_work {
  sample_sort_items<const Key, const Value> from;
  const Key* splitters = nullptr;
  const std::int64_t* offsets = nullptr;
  const sample_sort_bucket_info* infos = nullptr;
  sample_sort_items<Key, Value> to;
};

template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::scatter_threads, Policy::scatter_blocks_per_sm)
    sample_sort_scatter_kernel(sample_sort_scatter_work<Key, Value> work, sample_sort_plan plan,
                               const unsigned* skip_unless_zero, Compare comp) {
  if (!begin_dependent_kernel(skip_unless_zero)) return;
  constexpr int threads = Policy::scatter_threads, items = Policy::scatter_items, tile = Policy::scatter_tile;
  using storage_type = sample_sort_scatter_storage<Key, Value, Policy>;
  constexpr int max_buckets = storage_type::max_buckets, warps = storage_type::warps;
  constexpr int per_thread = (max_buckets + threads - 1) / threads;  // buckets a thread scans
  constexpr bool pairs = storage_type::pairs;
  static_assert(max_buckets < 65536, "staged bucket numbers fit 16 bits");
  auto& storage = *reinterpret_cast<storage_type*>(sample_sort_smem);
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
  const Key* keys_in = work.from.keys;
  const Value* values_in = work.from.values;
  Key* keys_dst = work.to.keys;
  Value* values_dst = work.to.values;
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

}  // namespace tilesort::detail
