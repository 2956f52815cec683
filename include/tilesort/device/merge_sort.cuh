// device/merge_sort.cuh — stable device-wide merge sort of keys or key-value
// pairs, any trivially copyable key, any strict weak order, 64-bit sizes.
//
// Algorithm (ModernGPU/CUB shape, flat, plus sm_90 clusters):
//   1. first kernel, one of:
//      cluster sort (devices with thread-block clusters, n > T): a cluster of
//        C blocks sorts C·T keys on chip: each block sorts a tile of T =
//        block_threads x block_items keys into its shared memory (block_sort,
//        stable), then log2(C) merge rounds read the cluster's tiles through
//        distributed shared memory (see "cluster sort" below), and each
//        block stores its part of the cluster's run of C·T keys;
//      blocksort (otherwise): each block loads a tile of T keys (coalesced,
//        transposed to the blocked arrangement in shared memory), sorts it
//        with block_sort and stores it back: runs of T.
//   2. ceil(log2(ceil(n / R))) merge passes (R = the first kernel's run);
//      pass p merges sorted runs of R << p keys in pairs. Each pass is two
//      launches:
//        partition: one 64-bit merge-path search in global memory per merge-tile
//                   boundary (ceil(n / M) + 1 searches, M = merge tile), a
//                   warp per search;
//        merge:     each block loads its A and B slices (coalesced) into
//                   shared memory, every thread runs a merge-path search there
//                   and serially merges merge_items outputs, and the block
//                   stores its M outputs coalesced through padded shared memory.
//      Pairs merge keys only, carrying each output's source index; the
//      values of A and B are loaded into shared memory with the keys (so a
//      tile waits for DRAM once) and stored by that index.
//   Buffers ping-pong between keys_out and the temp buffer; the first kernel
//   picks its destination by the parity of the pass count, so the last pass
//   writes keys_out and no copy is ever needed (detail/merge_sort_plan.cuh).
//
// Cost: 1 + merge_passes reads and writes of every key (and value), 1 + 2 x
// merge_passes launches; n <= T: one launch, keys_in -> keys_out directly;
// n == 1: a copy (when out != in); n == 0: nothing. With the sm_90 policy
// below (T = 8192 for items of up to 8 bytes: u32 keys, u64 keys, u32+u32
// pairs; C = 8, so R = 65536), passes over DRAM (first kernel + merges) at
// 2^20 / 2^24 / 2^28 keys are 5 / 9 / 13 (without clusters 8 / 12 / 16);
// CUB's 4352-key tiles (u32 keys, pairs) take 9 / 13 / 17 and its 2048-key
// tiles (u64 keys) 10 / 14 / 18. merge_sort_passes(n) says it for any n.
// Shared memory: blocksort max(block_sort's temp_storage, the transposes)
// (u32 keys 33 KB; u64 keys and u32 pairs 68 KB, opted in above 48 KB);
// cluster sort that or the merge scratch, plus two padded tile buffers;
// merge M keys (+ M ints and M values for pairs), keys and ints padded by
// one word per 128 bytes (u32 keys 16.5 KB, u64 keys 33 KB, u32 pairs 49 KB).
// Temp storage: n keys (+ n values) + 8 bytes per merge tile boundary when a
// merge pass is needed (256-byte aligned buffers); 1 byte otherwise.
//
// In place (keys_out == keys_in, values likewise) works: the blocksort reads
// each tile into registers before any block writes that tile, and every
// merge pass reads one buffer and writes the other.
//
//   std::size_t temp_bytes = 0;
//   tilesort::merge_sort_keys(nullptr, temp_bytes, d_in, d_out, n);          // size query
//   cudaMallocAsync(&d_temp, temp_bytes, stream);
//   tilesort::merge_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::less{}, stream);
//   // or, allocating stream-ordered temp storage itself:
//   tilesort::merge_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::greater{}, stream);
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "../block/block_sort.cuh"
#include "../comparators.cuh"
#include "../detail/config.cuh"
#include "../detail/error.cuh"
#include "../detail/merge_path.cuh"
#include "../detail/merge_sort_plan.cuh"
#include "../thread/thread_sort.cuh"

namespace tilesort {

// ------------------------------------------------------------------ tuning
// One policy per (key size, value size); ValueBytes = 0 for keys only.
// Chosen for sm_90 (H100) by reasoning, to be confirmed by tilesort-bench (no
// GPU was at hand when it was written):
// * blocksort tile T = 512 x 16 = 8192 items of up to 8 bytes (key + value):
//   1.9x CUB's 4352 for u32 keys and u32 pairs, 4x its 2048 for u64 keys,
//   i.e. one (u32, pairs) or two (u64) fewer global merge passes at every
//   size; merge passes are DRAM-bound, so passes are the lever. The tile
//   lives in registers (16 items per thread) and block_sort's shared memory
//   (33 KB for u32 keys, 68 KB for 8-byte items); 512 threads keep 16 warps
//   per block busy during the in-block merges. Candidates for the benchmark:
//   1024 x 16 (one more pass saved, half the blocks per SM).
// * merge tile M = 256 x 16 = 4096 outputs: power of two (M must divide 2T),
//   16 outputs per thread amortise the per-thread merge-path search;
//   merge_min_blocks = 4 caps registers at 64 so that 4 blocks (32 warps) per
//   SM hide DRAM latency in these bandwidth-bound passes (shared memory
//   16.5 KB for u32 keys to 49 KB for u32 pairs per block; -Xptxas -v: no
//   spills for u32 keys, u64 keys and u64 pairs, 12 bytes for u32 pairs,
//   which would otherwise take 68 registers and fit 3 blocks). To be
//   confirmed against merge_min_blocks = 3 with tilesort-bench.
// * Bigger items halve items per thread to keep registers in check.
// * block_min_blocks = 1 (the blocksort's __launch_bounds__ minimum) lets a
//   thread use up to 128 registers, which keeps ptxas from spilling: with no
//   minimum its heuristic spilled 8-byte keys (double 44 bytes), and a cap of
//   64 registers (2 blocks per SM) spilled u32 keys (~104 bytes) with the
//   register-shuffle warp rounds of block_sort. Checked with -Xptxas -v
//   (u32 keys ~117 registers, u64 keys and u32 pairs ~128, 0 bytes stack).
//   If block_sort gets leaner, 2 for items of up to 4 bytes doubles the
//   blocks per SM (re-check -Xptxas -v).
// * cluster_blocks = 8 (sm_90 thread-block clusters, the portable maximum):
//   the first log2(8) = 3 merge passes run on chip. The 8 blocks of a cluster
//   each sort their tile into shared memory, then merge the cluster's tiles
//   in rounds, reading each other's tiles through distributed shared memory,
//   and only then write global memory: sorted runs of 8T = 65536
//   items leave the first kernel, 3 fewer passes over DRAM at every n > T.
//   It costs a second tile buffer per block (u32 keys ~100 KB of shared
//   memory per block, 8-byte items and u32 pairs ~200 KB), affordable because
//   the blocksort runs one 512-thread block per SM anyway (registers). Used
//   where the device has clusters (compute capability >= 9) and room for it;
//   elsewhere the sort runs as with cluster_blocks = 1.
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct merge_sort_policy {
  static constexpr std::size_t item_bytes = KeyBytes + ValueBytes;
  static constexpr int block_threads = 512;
  static constexpr int block_items = item_bytes <= 8 ? 16 : item_bytes <= 16 ? 8 : 4;
  static constexpr int block_min_blocks = 1;
  static constexpr int cluster_blocks = 8;
  static constexpr int merge_threads = 256;
  static constexpr int merge_min_blocks = 4;
  static constexpr int merge_items = item_bytes <= 8 ? 16 : item_bytes <= 16 ? 8 : 4;
  static constexpr int tile_items = block_threads * block_items;
  static constexpr int merge_tile_items = merge_threads * merge_items;
  static_assert(block_threads % 32 == 0 && merge_threads % 32 == 0, "whole warps");
  static_assert((2 * tile_items) % merge_tile_items == 0, "a merge tile must never straddle two merge groups");
  static_assert(cluster_blocks >= 1 && cluster_blocks <= 8 && (cluster_blocks & (cluster_blocks - 1)) == 0,
                "a power of two up to the portable cluster size");
};

namespace detail {

template <typename Value>
inline constexpr bool merge_sort_has_values = !std::is_same_v<Value, no_value>;

template <typename Key, typename Value>
using merge_sort_policy_for = merge_sort_policy<sizeof(Key), merge_sort_has_values<Value> ? sizeof(Value) : 0>;

// Both kernels take their shared memory dynamically (the blocksort's can pass
// 48 KB); one declaration so that every instantiation agrees on it.
extern __shared__ __align__(16) unsigned char merge_sort_smem[];

// The kernels' data movement is written as steps that take the thread (or
// lane) as an argument and contain no barrier: the kernels run each step with
// threadIdx and put the barriers between steps; the host test runs the same
// steps thread by thread (tests/host/merge_sort_plan.cu).

// ------------------------------------------------------------------ warp transposes
// A warp moves 32 x Items consecutive items between global memory (striped:
// lane l touches l + 32k, so each access is one contiguous 32-item row) and
// registers (blocked: lane l holds l·Items + i), through its own padded
// region of shared memory; a __syncwarp separates the two steps of each
// direction. `valid` counts the warp's in-range items (any int; <= 0: none).
// Full = every item valid (no bounds checks).
template <int Items>
struct merge_sort_warp_transpose {
  // Load, step 1: global (striped) -> region.
  template <bool Full, typename T>
  TILESORT_HD static void load_striped(const T* src, int valid, T* region, int lane) {
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = lane + 32 * k;
      if (Full || j < valid) region[transpose_slot<T>(j)] = src[j];
    }
  }
  // Load, step 2: region -> registers (blocked). Out-of-range slots get a
  // real item (`fill`: the tile's first), so no comparator ever sees garbage.
  template <bool Full, typename T>
  TILESORT_HD static void read_blocked(const T* region, int valid, int lane, T (&items)[Items], const T* fill) {
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int j = lane * Items + i;
      if (Full || j < valid) {
        items[i] = region[transpose_slot<T>(j)];
      } else {
        items[i] = *fill;
      }
    }
  }
  // Store, step 1: registers (blocked) -> region.
  template <typename T>
  TILESORT_HD static void write_blocked(T* region, int lane, const T (&items)[Items]) {
#pragma unroll
    for (int i = 0; i < Items; ++i) region[transpose_slot<T>(lane * Items + i)] = items[i];
  }
  // Store, step 2: region -> global (striped), in-range items only.
  template <bool Full, typename T>
  TILESORT_HD static void store_striped(const T* region, int valid, T* dst, int lane) {
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = lane + 32 * k;
      if (Full || j < valid) dst[j] = region[transpose_slot<T>(j)];
    }
  }
};

// ------------------------------------------------------------------ blocksort
template <typename Key, typename Value, int Threads, int Items>
struct merge_sort_blocksort_parts {
  static constexpr bool pairs = merge_sort_has_values<Value>;
  static constexpr int warps = Threads / 32;
  static constexpr int warp_items = 32 * Items;
  using sort_type = block_sort<Key, Threads, Items, std::conditional_t<pairs, Value, void>>;
  using transpose = merge_sort_warp_transpose<Items>;
  struct transpose_storage {
    Key keys[warps][transpose_slots<Key>(warp_items)];
    Value values[warps][pairs ? transpose_slots<Value>(warp_items) : 1];
  };
  // The transposes and the sort never overlap in time (barriers between them).
  union storage {
    typename sort_type::temp_storage sort;
    transpose_storage transpose;
  };
  // The calling thread's warp: its lane, its items [offset, offset + 32·Items)
  // of the tile (`valid` of them in range) and its transpose regions.
  struct warp_view {
    int lane, offset, valid;
    Key* keys;
    Value* values;
    TILESORT_DEVICE warp_view(storage& s, int tile_valid)
        : lane(static_cast<int>(threadIdx.x) % 32),
          offset(static_cast<int>(threadIdx.x) / 32 * warp_items),
          valid(tile_valid - offset),
          keys(s.transpose.keys[threadIdx.x / 32]),
          values(s.transpose.values[threadIdx.x / 32]) {}
  };
};

// block_sort on a tile in registers (blocked; `valid` in range unless Full).
template <bool Full, typename Parts, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_sort_registers(typename Parts::storage& storage, Key (&keys)[Items],
                                               Value (&values)[Items], int valid, Compare comp) {
  typename Parts::sort_type sorter(storage.sort);
  if constexpr (Parts::pairs) {
    if constexpr (Full) {
      sorter.sort_pairs(keys, values, comp);
    } else {
      sorter.sort_pairs(keys, values, valid, comp);
    }
  } else {
    if constexpr (Full) {
      sorter.sort(keys, comp);
    } else {
      sorter.sort(keys, valid, comp);
    }
  }
}

// Load a tile (warp transposes to the blocked arrangement) and sort it:
// thread t ends with ranks t·Items .. t·Items + Items - 1 in keys/values.
template <bool Full, typename Parts, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_blocksort_load_sort(typename Parts::storage& storage, const Key* keys_in,
                                                    const Value* values_in, int valid, Compare comp, Key (&keys)[Items],
                                                    Value (&values)[Items]) {
  using transpose = typename Parts::transpose;
  const typename Parts::warp_view w(storage, valid);
  transpose::template load_striped<Full>(keys_in + w.offset, w.valid, w.keys, w.lane);
  if constexpr (Parts::pairs) transpose::template load_striped<Full>(values_in + w.offset, w.valid, w.values, w.lane);
  __syncwarp();
  transpose::template read_blocked<Full>(w.keys, w.valid, w.lane, keys, keys_in);
  if constexpr (Parts::pairs) transpose::template read_blocked<Full>(w.values, w.valid, w.lane, values, values_in);
  __syncthreads();  // the sort reuses the transpose bytes

  merge_sort_sort_registers<Full, Parts>(storage, keys, values, valid, comp);
  __syncthreads();  // every thread is done with the sort's storage
}

template <bool Full, typename Parts, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_blocksort_tile(typename Parts::storage& storage, const Key* keys_in, Key* keys_out,
                                               const Value* values_in, Value* values_out, int valid, Compare comp) {
  using transpose = typename Parts::transpose;
  Key keys[Items];
  Value values[Items];
  merge_sort_blocksort_load_sort<Full, Parts>(storage, keys_in, values_in, valid, comp, keys, values);

  const typename Parts::warp_view w(storage, valid);
  transpose::write_blocked(w.keys, w.lane, keys);
  if constexpr (Parts::pairs) transpose::write_blocked(w.values, w.lane, values);
  __syncwarp();
  transpose::template store_striped<Full>(w.keys, w.valid, keys_out + w.offset, w.lane);
  if constexpr (Parts::pairs) transpose::template store_striped<Full>(w.values, w.valid, values_out + w.offset, w.lane);
}

// One block per tile of T keys: keys_in -> sorted runs of T in keys_out.
// keys_out may equal keys_in: every read of the tile precedes the first
// barrier, every write follows it, and no other block touches the tile.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::block_threads, Policy::block_min_blocks)
    merge_sort_blocksort_kernel(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                std::int64_t n, Compare comp) {
  using parts = merge_sort_blocksort_parts<Key, Value, Policy::block_threads, Policy::block_items>;
  auto& storage = *reinterpret_cast<typename parts::storage*>(merge_sort_smem);
  const std::int64_t tile_begin = std::int64_t(blockIdx.x) * Policy::tile_items;
  const int valid = static_cast<int>(merge_sort_min(n - tile_begin, Policy::tile_items));
  keys_in += tile_begin;
  keys_out += tile_begin;
  if constexpr (parts::pairs) {
    values_in += tile_begin;
    values_out += tile_begin;
  }
  if (valid == Policy::tile_items) {
    merge_sort_blocksort_tile<true, parts, Policy::block_items>(storage, keys_in, keys_out, values_in, values_out,
                                                                valid, comp);
  } else {
    merge_sort_blocksort_tile<false, parts, Policy::block_items>(storage, keys_in, keys_out, values_in, values_out,
                                                                 valid, comp);
  }
}

// ------------------------------------------------------------------ merge pass
// partitions[i] = absolute index into A of the first A key that merge tile i
// takes, for i = 0 .. merge_tiles, one warp each: a 32-way search waits for
// DRAM about log2(2 run) / 5 times (5 at run = 2^23) where a thread's binary
// search waits log2(2 run) times, and this kernel is all waiting.
template <typename Key, typename Compare>
__global__ void merge_sort_partition_kernel(const Key* keys, std::int64_t n, std::int64_t run, int merge_tile_items,
                                            std::int64_t partition_count, std::int64_t* partitions, Compare comp) {
  const std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (i >= partition_count) return;  // whole warps
  const int lane = static_cast<int>(threadIdx.x % 32);
  const auto ballot = [lane](auto pred) { return __ballot_sync(0xffffffffu, pred(lane)); };
  const std::int64_t partition = merge_sort_partition(keys, n, run, merge_tile_items, i, comp, ballot);
  if (lane == 0) partitions[i] = partition;
}

// Shared memory of one merge tile. StageValues: the values of A ++ B are
// loaded with the keys (one DRAM latency per tile instead of two: the merge
// passes); else each output's value is read from A or B where they lie (the
// cluster rounds, whose tiles are on chip already).
template <typename Key, typename Value, int TileItems, bool StageValues>
struct merge_sort_merge_storage {
  using key_type = Key;
  using value_type = Value;
  static constexpr bool pairs = merge_sort_has_values<Value>;
  static constexpr bool staged = pairs && StageValues;
  // Unpadded A ++ B while merging (serial_merge reads a plain array), then the
  // padded blocked -> striped transpose of the outputs.
  Key keys[transpose_slots<Key>(TileItems)];
  int sources[pairs ? transpose_slots<int>(TileItems) : 1];
  Value values[staged ? TileItems : 1];  // A ++ B, unpadded
};

// Where output values come from, by source index s into the tile's A ++ B:
// staged in shared memory, or in A and B where they lie.
template <typename Value>
struct staged_values {
  const Value* values;
  TILESORT_HD Value operator()(int s) const { return values[s]; }
};
template <typename ValueSrc>
struct gathered_values {
  ValueSrc src;
  std::int64_t a_begin, b_begin;
  int a_count;
  TILESORT_HD auto operator()(int s) const { return src[s < a_count ? a_begin + s : b_begin + (s - a_count)]; }
};
template <typename ValueSrc>
TILESORT_HD gathered_values<ValueSrc> gather_values(ValueSrc src, const merge_tile_slices& slices) {
  return {src, slices.a_begin, slices.b_begin, slices.a_count()};
}

// One merge tile: `slices` says which A and B keys make outputs
// [out_begin, out_end); count <= Threads x Items. Steps, barrier after each:
template <int Threads, int Items>
struct merge_sort_merge_steps {
  // 1. A ++ B into keys[0, count), striped: each warp reads one contiguous row
  //    (two where it crosses from A to B). Staged values load the same way.
  template <bool Full, typename Key, typename KeySrc>
  TILESORT_HD static void load(Key* keys, const merge_tile_slices& slices, KeySrc src, int thread) {
    const int a_count = slices.a_count();
    const int count = slices.count();
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (Full || j < count) keys[j] = src[j < a_count ? slices.a_begin + j : slices.b_begin + (j - a_count)];
    }
  }

  // 2. The thread's outputs [diagonal, diagonal + Items) of the tile, and
  //    where each came from in keys[] (outputs past count are junk).
  template <typename Key, typename Compare>
  TILESORT_HD static void merge(const Key* keys, const merge_tile_slices& slices, int thread, Key (&out)[Items],
                                int (&source)[Items], Compare comp) {
    const int a_count = slices.a_count();
    const int count = slices.count();
    const int diagonal = thread * Items < count ? thread * Items : count;
    const int split = merge_path<int>(keys, a_count, keys + a_count, count - a_count, diagonal, comp);
    serial_merge(keys, split, a_count, a_count + diagonal - split, count, out, source, comp);
  }

  // 3. Blocked -> padded slots (keys, and the sources when values follow).
  template <bool Full, bool Pairs, typename Key>
  TILESORT_HD static void write_blocked(Key* keys, int* sources, const merge_tile_slices& slices, int thread,
                                        const Key (&out)[Items], const int (&source)[Items]) {
    const int count = slices.count();
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int j = thread * Items + i;
      if (Full || j < count) {
        keys[transpose_slot<Key>(j)] = out[i];
        if constexpr (Pairs) sources[transpose_slot<int>(j)] = source[i];
      }
    }
  }

  // 4. Striped, coalesced stores; values looked up by source index
  //    (staged_values or gathered_values).
  template <bool Full, bool Pairs, typename Key, typename KeyDst, typename ValueOf, typename ValueDst>
  TILESORT_HD static void store(const Key* keys, const int* sources, const merge_tile_slices& slices, int thread,
                                KeyDst keys_dst, ValueOf value_of, ValueDst values_dst) {
    const int count = slices.count();
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (Full || j < count) {
        keys_dst[slices.out_begin + j] = keys[transpose_slot<Key>(j)];
        if constexpr (Pairs) values_dst[slices.out_begin + j] = value_of(sources[transpose_slot<int>(j)]);
      }
    }
  }
};

// The sources and destinations are pointers into global memory, or (the
// cluster rounds below) iterators over shared-memory tiles.
template <bool Full, int Threads, int Items, typename Storage, typename KeySrc, typename KeyDst, typename ValueSrc,
          typename ValueDst, typename Compare>
TILESORT_DEVICE void merge_sort_merge_tile(Storage& storage, const merge_tile_slices& slices, KeySrc keys_src,
                                           KeyDst keys_dst, ValueSrc values_src, ValueDst values_dst, Compare comp) {
  using Key = typename Storage::key_type;
  constexpr bool pairs = Storage::pairs;
  using steps = merge_sort_merge_steps<Threads, Items>;
  const int thread = static_cast<int>(threadIdx.x);
  steps::template load<Full>(storage.keys, slices, keys_src, thread);
  if constexpr (Storage::staged) steps::template load<Full>(storage.values, slices, values_src, thread);
  __syncthreads();
  Key out[Items];
  int source[Items];
  steps::merge(storage.keys, slices, thread, out, source, comp);
  __syncthreads();  // everyone is done reading A ++ B
  steps::template write_blocked<Full, pairs>(storage.keys, storage.sources, slices, thread, out, source);
  __syncthreads();
  if constexpr (Storage::staged) {
    steps::template store<Full, pairs>(storage.keys, storage.sources, slices, thread, keys_dst,
                                       staged_values<typename Storage::value_type>{storage.values}, values_dst);
  } else {
    steps::template store<Full, pairs>(storage.keys, storage.sources, slices, thread, keys_dst,
                                       gather_values(values_src, slices), values_dst);
  }
}

// One block per merge tile of M outputs: runs of `run` in keys_src -> runs of 2·run in keys_dst.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::merge_min_blocks)
    merge_sort_merge_kernel(const Key* keys_src, Key* keys_dst, const Value* values_src, Value* values_dst,
                            const std::int64_t* partitions, std::int64_t n, std::int64_t run, Compare comp) {
  using storage_type = merge_sort_merge_storage<Key, Value, Policy::merge_tile_items, true>;
  auto& storage = *reinterpret_cast<storage_type*>(merge_sort_smem);
  const std::int64_t tile = blockIdx.x;
  const merge_tile_slices slices =
      merge_tile_range(tile, Policy::merge_tile_items, run, n, partitions[tile], partitions[tile + 1]);
  // One code path for full and partial tiles: with a second, unchecked
  // instantiation inlined beside this one, nvcc 13.0 produced wrong merges
  // for full tiles on sm_90 (keys alone; found on the H100, not reproduced on
  // the host, where the same steps are correct).
  merge_sort_merge_tile<false, Policy::merge_threads, Policy::merge_items>(storage, slices, keys_src, keys_dst,
                                                                           values_src, values_dst, comp);
}

// ------------------------------------------------------------------ cluster sort
// sm_90: a cluster of C blocks sorts C consecutive tiles into one run of
// C·T items without leaving the chip. Each block sorts its tile into its shared
// memory (tile buffer 0), then log2(C) rounds merge runs of T, 2T, .. in
// pairs: in each round block r produces outputs [r·T, r·T + T) of its merge
// group exactly as a merge-pass block produces its merge tile (merge_path
// partition, merge_sort_merge_tile), reading the runs from the cluster's tile
// buffers through distributed shared memory and writing its own other buffer.
// One cluster barrier per round; the buffers alternate, so a round never
// overwrites a tile another block reads. Then each block stores its tile of
// the cluster's run (coalesced). Every round is the same code: a last round
// that wrote global memory directly would be a second inlined copy of the
// merge under a branch, the shape nvcc 13.0 miscompiled on sm_90 (see
// merge_sort_merge_kernel).

// Item i of the cluster's runs: block i / T's tile buffer, slot i % T (padded
// like the transposes). `tiles` lists the C buffers of one generation.
template <typename T, int TileItems>
struct cluster_tile_iter {
  T* const* tiles;
  std::int64_t offset;
  TILESORT_HD T& operator[](std::int64_t i) const {
    const std::int64_t p = offset + i;
    return tiles[p / TileItems][transpose_slot<T>(static_cast<int>(p % TileItems))];
  }
  TILESORT_HD cluster_tile_iter operator+(std::int64_t d) const { return {tiles, offset + d}; }
};

// Outputs [origin, origin + T) of a round, into this block's next tile buffer.
template <typename T>
struct own_tile_iter {
  T* tile;
  std::int64_t origin;
  TILESORT_HD T& operator[](std::int64_t i) const { return tile[transpose_slot<T>(static_cast<int>(i - origin))]; }
};

// Round `round` (0-based) of a cluster of C tiles holding cluster_n items:
// which outputs block `rank` merges and from where, given the two partitions
// it searched (merge_sort_partition over the round's runs, boundaries rank
// and rank + 1). Blocks at or past cluster_n have nothing to merge.
TILESORT_HD constexpr std::int64_t cluster_round_run(int round, int tile_items) {
  return std::int64_t(tile_items) << round;
}
TILESORT_HD constexpr int cluster_rounds(int cluster_blocks) {
  return cluster_blocks <= 1 ? 0 : log2_floor(cluster_blocks);
}
// After the rounds: the tile buffer that holds the block's part of the run.
TILESORT_HD constexpr int cluster_final_buffer(int cluster_blocks) { return cluster_rounds(cluster_blocks) & 1; }

// The block's part of the run, tile buffer -> global memory, striped (each
// warp access one contiguous row); `valid` items.
template <int Threads, int Items, typename T>
TILESORT_HD void cluster_store_tile(const T* tile, int valid, T* dst, int thread) {
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int j = thread + k * Threads;
    if (j < valid) dst[j] = tile[transpose_slot<T>(j)];
  }
}

template <typename Policy, typename Key, typename Value>
struct merge_sort_cluster_parts {
  static constexpr bool pairs = merge_sort_has_values<Value>;
  static constexpr int cluster_blocks = Policy::cluster_blocks;
  static constexpr int tile_items = Policy::tile_items;
  using blocksort = merge_sort_blocksort_parts<Key, Value, Policy::block_threads, Policy::block_items>;
  using merge_storage = merge_sort_merge_storage<Key, Value, tile_items, false>;
  struct storage {
    union work_storage {
      typename blocksort::storage sort;
      merge_storage merge;
    } work;
    Key keys[2][transpose_slots<Key>(tile_items)];
    Value values[2][pairs ? transpose_slots<Value>(tile_items) : 1];
    Key* key_tiles[2][cluster_blocks];  // every block's buffers, as this block addresses them
    Value* value_tiles[2][cluster_blocks];
    std::int64_t partitions[2];
  };
};

// One cluster of C blocks per C·T items: keys_in -> sorted runs of C·T in
// keys_out. keys_out may equal keys_in (every read of the cluster's items
// happens before its first cluster barrier, every write after).
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::block_threads, Policy::block_min_blocks)
    merge_sort_cluster_sort_kernel(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                   std::int64_t n, Compare comp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using parts = merge_sort_cluster_parts<Policy, Key, Value>;
  constexpr int C = Policy::cluster_blocks, T = Policy::tile_items, Items = Policy::block_items;
  auto& s = *reinterpret_cast<typename parts::storage*>(merge_sort_smem);
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t cluster_begin = (std::int64_t(blockIdx.x) - rank) * T;
  const std::int64_t cluster_n = merge_sort_min(n - cluster_begin, std::int64_t(C) * T);
  const std::int64_t own_begin = std::int64_t(rank) * T;
  const int valid = static_cast<int>(merge_sort_min(cluster_n - own_begin, T));
  const int thread = static_cast<int>(threadIdx.x);
  if (thread < C) {
    for (int b = 0; b < 2; ++b) {
      s.key_tiles[b][thread] = cluster.map_shared_rank(&s.keys[b][0], thread);
      s.value_tiles[b][thread] = cluster.map_shared_rank(&s.values[b][0], thread);
    }
  }
  if (valid > 0) {  // __syncthreads inside: the condition is the same for the whole block
    Key keys[Items];
    Value values[Items];
    const Value* tile_values = values_in;
    if constexpr (parts::pairs) tile_values += cluster_begin + own_begin;
    if (valid == T) {
      merge_sort_blocksort_load_sort<true, typename parts::blocksort>(s.work.sort, keys_in + cluster_begin + own_begin,
                                                                      tile_values, valid, comp, keys, values);
    } else {
      merge_sort_blocksort_load_sort<false, typename parts::blocksort>(s.work.sort, keys_in + cluster_begin + own_begin,
                                                                       tile_values, valid, comp, keys, values);
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      s.keys[0][transpose_slot<Key>(thread * Items + i)] = keys[i];
      if constexpr (parts::pairs) s.values[0][transpose_slot<Value>(thread * Items + i)] = values[i];
    }
  }
  cluster.sync();  // every tile sorted, every block's buffer addresses known

  for (int round = 0; round < cluster_rounds(C); ++round) {
    const std::int64_t run = cluster_round_run(round, T);
    const int from = round & 1;
    const cluster_tile_iter<Key, T> src_keys{s.key_tiles[from], 0};
    const cluster_tile_iter<Value, T> src_values{s.value_tiles[from], 0};
    if (thread < 64) {  // warps 0 and 1 search the block's two boundaries, 32 probes per remote wait
      const int lane = thread % 32;
      const auto ballot = [lane](auto pred) { return __ballot_sync(0xffffffffu, pred(lane)); };
      const std::int64_t p = merge_sort_partition(src_keys, cluster_n, run, T, rank + thread / 32, comp, ballot);
      if (lane == 0) s.partitions[thread / 32] = p;
    }
    __syncthreads();
    if (valid > 0) {
      const merge_tile_slices slices = merge_tile_range(rank, T, run, cluster_n, s.partitions[0], s.partitions[1]);
      merge_sort_merge_tile<false, Policy::block_threads, Items>(
          s.work.merge, slices, src_keys, own_tile_iter<Key>{s.keys[from ^ 1], own_begin}, src_values,
          own_tile_iter<Value>{s.values[from ^ 1], own_begin}, comp);
    }
    cluster.sync();  // the round's tiles are complete; nobody reads the old ones any more
  }
  // No block reads another's buffers past the last barrier, so each may store and exit.
  constexpr int last = cluster_final_buffer(C);
  cluster_store_tile<Policy::block_threads, Items>(s.keys[last], valid, keys_out + cluster_begin + own_begin, thread);
  if constexpr (parts::pairs)
    cluster_store_tile<Policy::block_threads, Items>(s.values[last], valid, values_out + cluster_begin + own_begin,
                                                     thread);
#else
  (void)keys_in, (void)keys_out, (void)values_in, (void)values_out, (void)n, (void)comp;
  __trap();  // launched only on devices with clusters (merge_sort_cluster_usable)
#endif
}

// ------------------------------------------------------------------ host side
inline constexpr int merge_sort_partition_threads = 256;  // 8 searches per block

// Kernels with more than 48 KB of dynamic shared memory must say so first.
// The call is not stream-ordered; the thread switches to relaxed capture mode
// around it so that it stays legal while the caller captures a graph (in any
// capture mode), then restores the caller's mode.
template <typename Kernel>
cudaError_t merge_sort_allow_smem(Kernel* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  TILESORT_RETURN_IF_ERROR(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t error =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  const cudaError_t restore_error = cudaThreadExchangeStreamCaptureMode(&mode);
  return error != cudaSuccess ? error : restore_error;
}

// The first kernel's runs: C·T keys where the cluster sort runs (n > T), else
// T.
template <typename Policy>
TILESORT_HD constexpr int merge_sort_run_items(std::int64_t n, bool cluster) {
  return cluster && Policy::cluster_blocks > 1 && n > Policy::tile_items ? Policy::tile_items * Policy::cluster_blocks
                                                                         : Policy::tile_items;
}

// The launch configuration of `clusters` clusters of the cluster sort.
template <typename Policy>
struct cluster_launch {
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t config{};
  cluster_launch(std::int64_t clusters, std::size_t smem_bytes, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = Policy::cluster_blocks;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(static_cast<unsigned>(clusters * Policy::cluster_blocks));
    config.blockDim = dim3(Policy::block_threads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  cluster_launch(const cluster_launch&) = delete;  // config points at attribute
  cluster_launch& operator=(const cluster_launch&) = delete;
};

// Whether the cluster sort can run on `device`: clusters (compute capability
// >= 9), the kernel built for sm_90 or later (a program built only for an
// older architecture, e.g. PTX for sm_80 JIT-compiled on an H100, holds the
// kernel's trapping stub), room for its shared memory, and one cluster
// fitting on the GPU at once.
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t merge_sort_cluster_query(int device, bool& usable) {
  using storage = typename merge_sort_cluster_parts<Policy, Key, Value>::storage;
  auto* kernel = merge_sort_cluster_sort_kernel<Policy, Key, Value, Compare>;
  usable = false;
  int major = 0, optin = 0;
  TILESORT_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TILESORT_RETURN_IF_ERROR(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};
  TILESORT_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, kernel));
  if (major < 9 || attributes.binaryVersion < 90 || attributes.ptxVersion < 90 ||
      sizeof(storage) > static_cast<std::size_t>(optin))
    return cudaSuccess;
  TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(kernel, sizeof(storage)));
  const cluster_launch<Policy> launch(1, sizeof(storage), nullptr);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config) != cudaSuccess) {
    (void)cudaGetLastError();  // no answer: sort without clusters
    return cudaSuccess;
  }
  usable = clusters > 0;
  return cudaSuccess;
}

// The same, asked once per device and kernel, then remembered. The queries
// are not stream-ordered: the thread switches to relaxed capture mode around
// them so that they stay legal while the caller captures a graph.
// TILESORT_MERGE_CLUSTERS=0 in the environment turns the cluster sort off
// (to compare both on one GPU, or to rule it out when hunting a problem).
template <typename Policy, typename Key, typename Value, typename Compare>
cudaError_t merge_sort_cluster_usable(bool& usable) {
  usable = false;
  const char* setting = std::getenv("TILESORT_MERGE_CLUSTERS");
  if (setting != nullptr && setting[0] == '0') return cudaSuccess;
  if constexpr (Policy::cluster_blocks > 1) {
    static std::atomic<signed char> known[64] = {};  // per device: 0 not asked yet, 1 no, 2 yes
    int device = 0;
    TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
    if (device < 64 && known[device] != 0) {
      usable = known[device] == 2;
      return cudaSuccess;
    }
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    TILESORT_RETURN_IF_ERROR(cudaThreadExchangeStreamCaptureMode(&mode));
    const cudaError_t error = merge_sort_cluster_query<Policy, Key, Value, Compare>(device, usable);
    TILESORT_RETURN_IF_ERROR(cudaThreadExchangeStreamCaptureMode(&mode));
    TILESORT_RETURN_IF_ERROR(error);
    if (device < 64) known[device] = usable ? 2 : 1;
  }
  return cudaSuccess;
}

// `plan` runs the sort (its first kernel's runs depend on the device);
// `layout` is the temp storage, sized for the plan without clusters, which
// needs the most, so that the size query does not depend on the device.
template <typename Key, typename Value>
struct merge_sort_setup {
  using policy = merge_sort_policy_for<Key, Value>;
  merge_sort_plan plan;
  merge_sort_temp_layout layout;
  merge_sort_setup(std::int64_t n, bool use_cluster)
      : plan(make_merge_sort_plan(n, merge_sort_run_items<policy>(n, use_cluster), policy::merge_tile_items)),
        layout(make_merge_sort_temp_layout(make_merge_sort_plan(n, policy::tile_items, policy::merge_tile_items),
                                           sizeof(Key), merge_sort_has_values<Value> ? sizeof(Value) : 0)) {}
  // The first kernel is the cluster sort (its runs are longer than a tile).
  bool cluster() const { return plan.tile_items != policy::tile_items; }
};

// Whether a sort of n keys runs the cluster sort on the current device.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_wants_cluster(std::int64_t n, bool& cluster) {
  using policy = merge_sort_policy_for<Key, Value>;
  cluster = false;
  if (n <= policy::tile_items) return cudaSuccess;
  return merge_sort_cluster_usable<policy, Key, Value, Compare>(cluster);
}

// Launch everything. Arguments are checked; `temp` holds layout.total_bytes.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_launch(const merge_sort_setup<Key, Value>& setup, void* temp, const Key* keys_in, Key* keys_out,
                              const Value* values_in, Value* values_out, Compare comp, cudaStream_t stream) {
  using policy = typename merge_sort_setup<Key, Value>::policy;
  constexpr bool pairs = merge_sort_has_values<Value>;
  const merge_sort_plan& plan = setup.plan;
  const std::int64_t n = plan.n;
  if (n == 0) return cudaSuccess;
  if (n == 1) {
    if (keys_out != keys_in)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (pairs) {
      if (values_out != values_in)
        TILESORT_RETURN_IF_ERROR(
            cudaMemcpyAsync(values_out, values_in, sizeof(Value), cudaMemcpyDeviceToDevice, stream));
    }
    return cudaSuccess;
  }
  // Grid sizes are 32-bit (n up to 2^43 keys with the policy above).
  if (plan.tiles * (setup.cluster() ? policy::cluster_blocks : 1) > INT_MAX ||
      ceil_div(plan.partition_count() * 32, merge_sort_partition_threads) > INT_MAX || plan.merge_tiles > INT_MAX)
    return cudaErrorInvalidValue;

  // No merge pass (one tile, or one cluster's run): no temp storage, maybe none given.
  const auto buffers = plan.merge_passes > 0 ? carve_merge_sort_temp<Key, Value>(temp, setup.layout)
                                             : merge_sort_buffers<Key, Value>{nullptr, nullptr, nullptr};
  // Step k writes keys_out when plan.writes_output(k), else the temp buffers.
  auto keys_of = [&](int step) { return plan.writes_output(step) ? keys_out : buffers.keys; };
  auto values_of = [&](int step) { return plan.writes_output(step) ? values_out : buffers.values; };

  if (setup.cluster()) {
    using storage = typename merge_sort_cluster_parts<policy, Key, Value>::storage;
    static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
    auto* kernel = merge_sort_cluster_sort_kernel<policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(kernel, sizeof(storage)));
    const cluster_launch<policy> launch(plan.tiles, sizeof(storage),
                                        stream);  // plan.tiles = clusters
    TILESORT_RETURN_IF_ERROR(
        cudaLaunchKernelEx(&launch.config, kernel, keys_in, keys_of(0), values_in, values_of(0), n, comp));
  } else {
    using storage =
        typename merge_sort_blocksort_parts<Key, Value, policy::block_threads, policy::block_items>::storage;
    static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
    auto* kernel = merge_sort_blocksort_kernel<policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(kernel, sizeof(storage)));
    kernel<<<static_cast<unsigned>(plan.tiles), policy::block_threads, sizeof(storage), stream>>>(
        keys_in, keys_of(0), values_in, values_of(0), n, comp);
    TILESORT_RETURN_IF_ERROR(cudaGetLastError());
  }

  using storage = merge_sort_merge_storage<Key, Value, policy::merge_tile_items, true>;
  static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
  auto* merge_kernel = merge_sort_merge_kernel<policy, Key, Value, Compare>;
  if (plan.merge_passes > 0) TILESORT_RETURN_IF_ERROR(merge_sort_allow_smem(merge_kernel, sizeof(storage)));
  const std::int64_t partitions = plan.partition_count();
  const auto partition_blocks = static_cast<unsigned>(ceil_div(partitions * 32, merge_sort_partition_threads));
  for (int pass = 0; pass < plan.merge_passes; ++pass) {
    const Key* keys_src = keys_of(pass);
    const std::int64_t run = plan.run_length(pass);
    merge_sort_partition_kernel<<<partition_blocks, merge_sort_partition_threads, 0, stream>>>(
        keys_src, n, run, policy::merge_tile_items, partitions, buffers.partitions, comp);
    TILESORT_RETURN_IF_ERROR(cudaGetLastError());
    merge_kernel<<<static_cast<unsigned>(plan.merge_tiles), policy::merge_threads, sizeof(storage), stream>>>(
        keys_src, keys_of(pass + 1), values_of(pass), values_of(pass + 1), buffers.partitions, n, run, comp);
    TILESORT_RETURN_IF_ERROR(cudaGetLastError());
  }
  return cudaSuccess;
}

// Two-phase entry: size query, argument checks, launch.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_two_phase(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                 const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                                 cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (d_temp == nullptr) {
    temp_bytes = merge_sort_setup<Key, Value>(n, false).layout.total_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, merge_sort_has_values<Value>, n));
  bool cluster = false;
  TILESORT_RETURN_IF_ERROR((merge_sort_wants_cluster<Key, Value, Compare>(n, cluster)));
  const merge_sort_setup<Key, Value> setup(n, cluster);
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, setup.layout.total_bytes));
  return merge_sort_launch(setup, d_temp, keys_in, keys_out, values_in, values_out, comp, stream);
}

// Convenience entry: stream-ordered temp storage, allocated only when a merge
// pass needs it, freed on the same stream whatever happens after the allocation.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_allocating(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                  std::int64_t n, Compare comp, cudaStream_t stream) {
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, merge_sort_has_values<Value>, n));
  bool cluster = false;
  TILESORT_RETURN_IF_ERROR((merge_sort_wants_cluster<Key, Value, Compare>(n, cluster)));
  const merge_sort_setup<Key, Value> setup(n, cluster);
  if (setup.plan.merge_passes == 0)
    return merge_sort_launch(setup, nullptr, keys_in, keys_out, values_in, values_out, comp, stream);
  void* temp = nullptr;
  if (cudaMallocAsync(&temp, setup.layout.total_bytes, stream) != cudaSuccess) {
    (void)cudaGetLastError();  // our failure, not a sticky error: do not leave it for the caller's next check
    return cudaErrorMemoryAllocation;
  }
  const cudaError_t sort_error = merge_sort_launch(setup, temp, keys_in, keys_out, values_in, values_out, comp, stream);
  const cudaError_t free_error = cudaFreeAsync(temp, stream);
  return sort_error != cudaSuccess ? sort_error : free_error;
}

}  // namespace detail

// ------------------------------------------------------------------ public API
// Times merge_sort_keys/pairs reads and writes every key in DRAM for n keys
// (first kernel + merge passes; 1 for n == 1, 0 for n == 0) on a device with
// thread-block clusters (sm_90 and later; `cluster` = false: older devices).
// The benchmark reports bytes moved per key as 2 x passes x (sizeof(Key) +
// sizeof(Value)).
template <typename Key, typename Value = void>
constexpr int merge_sort_passes(std::int64_t n, bool cluster = true) {
  using payload = std::conditional_t<std::is_void_v<Value>, detail::no_value, Value>;
  using policy = detail::merge_sort_policy_for<Key, payload>;
  return detail::merge_sort_passes(n, detail::merge_sort_run_items<policy>(n, cluster));
}

// Stable sort of n keys: keys_out[0, n) = keys_in[0, n) ordered by comp.
// Call with d_temp == nullptr to get temp_bytes (nothing else happens).
//
//   std::size_t bytes = 0;
//   tilesort::merge_sort_keys(nullptr, bytes, d_in, d_out, n);
//   void* d_temp; cudaMalloc(&d_temp, bytes);
//   tilesort::merge_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::greater{}, stream);
template <typename Key, typename Compare = less>
cudaError_t merge_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n,
                            Compare comp = {}, cudaStream_t stream = 0) {
  return detail::merge_sort_two_phase<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n,
                                                             comp, stream);
}

// Stable sort of n (key, value) pairs by key; values travel with their keys.
//
//   tilesort::merge_sort_pairs(nullptr, bytes, d_keys, d_keys, d_vals, d_vals, n);   // size query
//   tilesort::merge_sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n);    // in place
template <typename Key, typename Value, typename Compare = less>
cudaError_t merge_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                             const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                             cudaStream_t stream = 0) {
  return detail::merge_sort_two_phase(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
}

// Same, with stream-ordered temp storage (cudaMallocAsync/cudaFreeAsync on
// `stream`, only when a merge pass needs it); graph-capturable. A failed
// allocation returns cudaErrorMemoryAllocation with nothing written.
//
//   tilesort::merge_sort_keys(d_keys, d_keys, n, tilesort::less{}, stream);
template <typename Key, typename Compare = less>
cudaError_t merge_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                            cudaStream_t stream = 0) {
  return detail::merge_sort_allocating<Key, detail::no_value>(keys_in, keys_out, nullptr, nullptr, n, comp, stream);
}

template <typename Key, typename Value, typename Compare = less>
cudaError_t merge_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                             std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::merge_sort_allocating(keys_in, keys_out, values_in, values_out, n, comp, stream);
}

}  // namespace tilesort
