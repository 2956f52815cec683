// device/merge_sort/policy.cuh — the tuning of the device merge sort
// (device/merge_sort.cuh): one policy struct per (key size, value size), the
// smaller shape of one-block sorts, and the dynamic shared memory its kernels
// share. Every number was chosen for sm_90 against CUB in the same
// run; the reason for each is given in a line or two below, the measurements
// behind it are in docs/tuning/merge_sort.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../detail/config.cuh"
#include "../../thread/thread_sort.cuh"

namespace tilesort {

/// Tuning of merge_sort_keys / merge_sort_pairs for items of KeyBytes +
/// ValueBytes bytes (ValueBytes = 0 for keys only), chosen for sm_90;
/// the measurements are in docs/tuning/merge_sort.md.
///
/// Blocksort tile T = block_threads x block_items (8192 items under 8
/// bytes, 4096 of 8 to 16 bytes, 2048 above), merge tile M = merge_threads x
/// merge_items, merge_ways-way merge passes (2: pairwise).
///
/// @code
/// using policy = tilesort::merge_sort_policy<sizeof(std::uint32_t), 0>;
/// static_assert(policy::tile_items == 8192);
/// @endcode
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct merge_sort_policy {
  /// Bytes per item: key plus value.
  static constexpr std::size_t item_bytes = KeyBytes + ValueBytes;
  /// Blocksort threads and items per thread. T = 8192 (twice to four times
  /// CUB's tile: one or two fewer merge passes) lives in registers, one block
  /// per SM; items of exactly 8 bytes take 256 x 16 at 2 blocks per SM (same
  /// pass count with the k-way passes, cheaper blocksort); bigger items halve
  /// the items per thread to keep registers in check.
  static constexpr int block_threads = item_bytes == 8 ? 256 : 512;
  /// @copydoc block_threads
  static constexpr int block_items = item_bytes <= 8 ? 16 : item_bytes <= 16 ? 8 : 4;
  /// The blocksort's __launch_bounds__ minimum: 1 allows 128 registers, so
  /// that block_sort's register rounds do not spill.
  static constexpr int block_min_blocks = item_bytes == 8 ? 2 : 1;
  /// Merge tile M = 256 x 16 = 4096 outputs: a power of two that divides 2T;
  /// 16 outputs per thread amortise each thread's merge-path search.
  static constexpr int merge_threads = 256;
  /// Merge blocks per SM: 6 for 4-byte items (the fastest without spill),
  /// 4 for bigger ones (they spill at 6).
  static constexpr int merge_min_blocks = item_bytes <= 4 ? 6 : 4;
  /// @copydoc merge_threads
  static constexpr int merge_items = item_bytes <= 8 ? 16 : item_bytes <= 16 ? 8 : 4;
  /// Lanes per merge-path search in the partition kernel (fewer bytes than a
  /// warp, fewer rounds than one thread).
  static constexpr int partition_ways = 8;
  /// Runs merged per pass: 4 (k-way passes, detail/merge_sort_plan.cuh) for
  /// items of 4 bytes and more, 8 for 8-byte keys alone, 2 (pairwise passes)
  /// below 4 bytes. A K-way pass moves the bytes of a pairwise one but merges
  /// log2(K) times in shared memory, which pays where the bytes dominate.
  static constexpr int merge_ways = item_bytes < 4 ? 2 : KeyBytes == 8 && ValueBytes == 0 ? 8 : 4;
  /// K-way tiles are cut every cut_samples samples, one sample per
  /// cut_stride keys: at most (cut_samples + merge_ways) x cut_stride = M
  /// keys, 3/4 of that on average; one lane per run and sample searches.
  static constexpr int cut_stride = merge_items * merge_threads / (4 * merge_ways);
  /// @copydoc cut_stride
  static constexpr int cut_samples = 3 * merge_ways;
  /// n <= small_threads x small_items (1024 keys of up to 8 bytes): one block
  /// of this smaller shape, fewer merge levels for latency.
  static constexpr int small_threads = 128;
  /// @copydoc small_threads
  static constexpr int small_items = block_items / 2;
  static constexpr int tile_items = block_threads * block_items;        ///< T, the blocksort tile
  static constexpr int merge_tile_items = merge_threads * merge_items;  ///< M, the merge tile
  static_assert(block_threads % 32 == 0 && merge_threads % 32 == 0, "whole warps");
  static_assert(32 % partition_ways == 0, "search groups tile a warp");
  static_assert((2 * tile_items) % merge_tile_items == 0, "a merge tile must never straddle two merge groups");
  static_assert((cut_samples + merge_ways) * cut_stride <= merge_tile_items, "a k-way tile fits the merge tile");
  static_assert(tile_items % cut_stride == 0, "samples fall at the same places in every run");
  static_assert(detail::is_pow2(cut_stride) && detail::is_pow2(tile_items / cut_stride),
                "the k-way passes index samples by shifts");
  static_assert(merge_ways >= 2 && detail::is_pow2(merge_ways) && 32 % merge_ways == 0, "ways: 2, 4, 8, ...");
};

namespace detail {

// Threads per block of the partition and cut kernels (a group of
// partition_ways or merge_ways lanes per search).
inline constexpr int merge_sort_partition_threads = 256;

// The blocksort shape of small sorts (n <= Policy::small_threads x small_items).
template <typename Policy>
struct merge_sort_small_policy {
  static constexpr int block_threads = Policy::small_threads;
  static constexpr int block_items = Policy::small_items;
  static constexpr int block_min_blocks = 1;
  static constexpr int tile_items = block_threads * block_items;
};

template <typename Key, typename Value>
using merge_sort_policy_for = merge_sort_policy<sizeof(Key), value_bytes_of<Value>>;

// Both kernels take their shared memory dynamically (the blocksort's can pass
// 48 KB); one declaration so that every instantiation agrees on it.
extern __shared__ __align__(16) unsigned char merge_sort_smem[];

// The kernels' data movement is written as steps that take the thread (or
// lane) as an argument and contain no barrier: the kernels run each step with
// threadIdx and put the barriers between steps; the host test runs the same
// steps thread by thread (tests/host/merge_sort_plan.cu).

}  // namespace detail
}  // namespace tilesort
