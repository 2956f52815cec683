// device/merge_sort/blocksort.cuh — the first launch of the device merge sort
// (device/merge_sort.cuh): one block per tile of T = block_threads x
// block_items keys loads its tile coalesced (striped), turns it blocked
// through per-warp padded shared memory, sorts it with block_sort (stable)
// and stores it back the same way: runs of T keys, each read and written
// once. Shared memory: max(block_sort's temp_storage, the warp transposes),
// taken dynamically (merge_sort_smem). Pairs carry their values through the
// same steps. The early-exit sort (device/locality_sort/blocksort.cuh) reuses
// the transposes and storage.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../block/block_sort.cuh"
#include "../../detail/config.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/merge_sort_plan.cuh"
#include "policy.cuh"

namespace tilesort::detail {

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
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      const int j = lane + 32 * k;
      if (Full || j < valid) region[transpose_slot<T>(j)] = src[j];
    }
  }
  // Load, step 2: region -> registers (blocked). Out-of-range slots get a
  // real item (`fill`: the tile's first), so no comparator ever sees garbage.
  template <bool Full, typename T>
  TILESORT_HD static void read_blocked(const T* region, int valid, int lane, T (&items)[Items], const T* fill) {
TILESORT_UNROLL
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
TILESORT_UNROLL
    for (int i = 0; i < Items; ++i) region[transpose_slot<T>(lane * Items + i)] = items[i];
  }
  // Store, step 2: region -> global (striped), in-range items only.
  template <bool Full, typename T>
  TILESORT_HD static void store_striped(const T* region, int valid, T* dst, int lane) {
TILESORT_UNROLL
    for (int k = 0; k < Items; ++k) {
      const int j = lane + 32 * k;
      if (Full || j < valid) dst[j] = region[transpose_slot<T>(j)];
    }
  }
};

// ------------------------------------------------------------------ blocksort
template <typename Key, typename Value, int Threads, int Items>
struct merge_sort_blocksort_parts {
  static constexpr bool pairs = has_values<Value>;
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
// `nearly`: sort_nearly's boundary windows first (full tiles).
template <bool Full, typename Parts, int Items, typename Key, typename Value, typename Compare>
TILESORT_DEVICE void merge_sort_sort_registers(typename Parts::storage& storage, Key (&keys)[Items],
                                               Value (&values)[Items], int valid, Compare comp, bool nearly = false) {
  typename Parts::sort_type sorter(storage.sort);
  if constexpr (Parts::pairs) {
    if constexpr (Full) {
      sorter.sort_pairs_nearly(keys, values, comp, nearly);
    } else {
      sorter.sort_pairs(keys, values, valid, comp);
    }
  } else {
    if constexpr (Full) {
      sorter.sort_nearly(keys, comp, nearly);
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
// `skip_unless_zero`: as skip_requested's (the front door's probe verdict).
template <typename Policy, typename Key, typename Value, typename Compare>
__global__ void __launch_bounds__(Policy::block_threads, Policy::block_min_blocks)
    merge_sort_blocksort_kernel(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                std::int64_t n, const unsigned* skip_unless_zero, Compare comp) {
  using parts = merge_sort_blocksort_parts<Key, Value, Policy::block_threads, Policy::block_items>;
  allow_next_kernel();  // the first partition kernel waits for this grid to finish
  if (skip_requested(skip_unless_zero)) return;  // written before this kernel's launch (not a dependent one)
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

}  // namespace tilesort::detail
