// device/merge_sort/pairwise.cuh — the pairwise merge passes of the device
// merge sort (device/merge_sort.cuh), used for items under 4 bytes and by the
// early-exit sort's merges. Pass p merges runs of T << p keys in pairs, in
// two launches: the partition kernel finds each merge tile's split by a
// 64-bit merge-path search in global memory (a group of partition_ways lanes
// per tile boundary); the merge kernel loads each tile's A and B slices
// coalesced into shared memory, every thread merges merge_items outputs after
// its own merge-path search there, and the block stores its M outputs
// coalesced through padded shared memory. Pairs merge keys carrying each
// output's source index and gather the values by it. One read and one write
// of every item per pass.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/merge_path.cuh"
#include "../../detail/merge_sort_plan.cuh"
#include "blocksort.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ merge pass
// The lanes of a warp in groups of Ways, one multi-lane search per group:
// this lane's index in its group, and (called with a predicate of a member
// index) the ballot over the group alone, bit j from member j.
template <int Ways>
struct search_lanes {
  static_assert(32 % Ways == 0, "groups tile whole warps");
  int member;
  int first_lane;
  TILESORT_DEVICE search_lanes()
      : member(static_cast<int>(threadIdx.x % 32) % Ways), first_lane(static_cast<int>(threadIdx.x % 32) - member) {}
  template <typename Pred>
  TILESORT_DEVICE unsigned operator()(Pred pred) const {
    constexpr unsigned members = Ways == 32 ? 0xffffffffu : (1u << Ways) - 1u;
    return (__ballot_sync(members << first_lane, pred(member)) >> first_lane) & members;
  }
};

// partitions[i] = absolute index into A of the first A key that merge tile i
// takes, for i = 0 .. merge_tiles, a group of Ways lanes each (merge_path_kway).
// This kernel is all waiting for DRAM, on latency and on bytes: with Ways = 8
// a search over 2^23 candidates takes 8 rounds of 16 sector reads, where a
// warp (Ways = 32) takes 5 rounds of 64 (2.5x the bytes, DRAM-bound) and one
// thread's binary search takes 23 rounds of 2 (docs/tuning/merge_sort.md).
template <int Ways, typename Key, typename Compare>
__global__ void merge_sort_partition_kernel(const Key* keys, std::int64_t n, std::int64_t run, int merge_tile_items,
                                            std::int64_t partition_count, std::int64_t* partitions, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // keys_src is the previous kernel's output
  const std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / Ways;
  if (i >= partition_count) return;  // whole groups
  const search_lanes<Ways> lanes;
  const std::int64_t partition = merge_sort_partition<Ways>(keys, n, run, merge_tile_items, i, comp, lanes);
  if (lanes.member == 0) partitions[i] = partition;
}

// Shared memory of one merge tile. For pairs the values of A ++ B are loaded
// with the keys (one DRAM latency per tile instead of two).
template <typename Key, typename Value, int TileItems>
struct merge_sort_merge_storage {
  static constexpr bool pairs = has_values<Value>;
  // Unpadded A ++ B while merging (serial_merge reads a plain array), then the
  // padded blocked -> striped transpose of the outputs.
  Key keys[transpose_slots<Key>(TileItems)];
  int sources[pairs ? transpose_slots<int>(TileItems) : 1];
  Value values[pairs ? TileItems : 1];  // A ++ B, unpadded
};

// One merge tile: `slices` says which A and B keys make outputs
// [out_begin, out_end); count <= Threads x Items. Steps, barrier after each:
template <int Threads, int Items>
struct merge_sort_merge_steps {
  // 1. A ++ B into keys[0, count), striped: each warp reads one contiguous row
  //    (two where it crosses from A to B). The values load the same way.
  template <bool Full, typename T>
  TILESORT_HD static void load(T* dst, const merge_tile_slices& slices, const T* src, int thread) {
    const int a_count = slices.a_count();
    const int count = slices.count();
    // Item j of A ++ B is a_src[j] (j < a_count) or b_src[j]. Two predicated
    // sweeps, A's then B's, address every load as one base register plus a
    // constant (a select per item would need Items live 64-bit addresses);
    // all loads are issued before the first shared-memory store, which the
    // compiler could not move above a later global load (dst is a generic
    // pointer), so a tile waits for DRAM once.
    const T* a_src = src + slices.a_begin + thread;
    const T* b_src = src + (slices.b_begin - a_count) + thread;
    T items[Items] = {};  // defined junk for the slots past count (host emulation reads no indeterminate value)
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      if (thread + k * Threads < a_count) items[k] = a_src[k * Threads];
    }
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (j >= a_count && (Full || j < count)) items[k] = b_src[k * Threads];
    }
    // Unconditional stores (slots past count get junk that nothing reads):
    // predicated ones made nvcc recompute the shared window's base per store.
    T* dst_thread = dst + thread;
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) dst_thread[k * Threads] = items[k];
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

  // 3. Blocked -> padded slots (keys, and the sources when values follow),
  //    every slot: those past count get junk that step 4 never reads, and
  //    unpredicated stores address as one base plus constants.
  template <bool Pairs, typename Key>
  TILESORT_HD static void write_blocked(Key* keys, int* sources, int thread, const Key (&out)[Items],
                                        const int (&source)[Items]) {
TILESORT_UNROLL
    for (int i = 0; i < Items; ++i) {
      const int j = thread * Items + i;
      keys[transpose_slot<Key>(j)] = out[i];
      if constexpr (Pairs) sources[transpose_slot<int>(j)] = source[i];
    }
  }

  // 4. Striped, coalesced stores; each value looked up in the loaded values
  //    of A ++ B by its source index.
  template <bool Full, bool Pairs, typename Key, typename Value>
  TILESORT_HD static void store(const Key* keys, const int* sources, const Value* values,
                                const merge_tile_slices& slices, int thread, Key* keys_dst, Value* values_dst) {
    const int count = slices.count();
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      const int j = thread + k * Threads;
      if (Full || j < count) {
        keys_dst[slices.out_begin + j] = keys[transpose_slot<Key>(j)];
        if constexpr (Pairs) values_dst[slices.out_begin + j] = values[sources[transpose_slot<int>(j)]];
      }
    }
  }
};

template <bool Full, int Threads, int Items, int TileItems, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_merge_tile(merge_sort_merge_storage<Key, Value, TileItems>& storage,
                                           const merge_tile_slices& slices, const Key* keys_src, Key* keys_dst,
                                           const Value* values_src, Value* values_dst, Compare comp) {
  constexpr bool pairs = has_values<Value>;
  using steps = merge_sort_merge_steps<Threads, Items>;
  const int thread = static_cast<int>(threadIdx.x);
  steps::template load<Full>(storage.keys, slices, keys_src, thread);
  if constexpr (pairs) steps::template load<Full>(storage.values, slices, values_src, thread);
  __syncthreads();
  Key out[Items];
  int source[Items];
  steps::merge(storage.keys, slices, thread, out, source, comp);
  __syncthreads();  // everyone is done reading A ++ B
  steps::template write_blocked<pairs>(storage.keys, storage.sources, thread, out, source);
  __syncthreads();
  steps::template store<Full, pairs>(storage.keys, storage.sources, storage.values, slices, thread, keys_dst,
                                     values_dst);
}

// One block per merge tile of M outputs: runs of `run` in keys_src -> runs of 2·run in keys_dst.
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::merge_threads, Policy::merge_min_blocks)
    merge_sort_merge_kernel(const Key* keys_src, Key* keys_dst, const Value* values_src, Value* values_dst,
                            const std::int64_t* partitions, std::int64_t n, std::int64_t run, Compare comp) {
  using storage_type = merge_sort_merge_storage<Key, Value, Policy::merge_tile_items>;
  allow_next_kernel();
  wait_for_previous_kernel();  // partitions and keys_src are earlier kernels' output
  auto& storage = *reinterpret_cast<storage_type*>(merge_sort_smem);
  const std::int64_t tile = blockIdx.x;
  const merge_tile_slices slices =
      merge_tile_range(tile, Policy::merge_tile_items, run, n, partitions[tile], partitions[tile + 1]);
  // One code path for full and partial tiles: with a second, unchecked
  // instantiation inlined beside this one, nvcc 13.0 produced wrong merges
  // for full tiles on sm_90 (keys alone; the same steps are correct on the host).
  merge_sort_merge_tile<false, Policy::merge_threads, Policy::merge_items>(storage, slices, keys_src, keys_dst,
                                                                           values_src, values_dst, comp);
}

}  // namespace tilesort::detail
