// device/locality_sort/policy.cuh — the tuning of the early-exit merge sort
// (device/locality_sort/merge.cuh, run by locality sort and by segmented sort's
// long segments) and the host-side choice of where a locality sort's dense
// passes run (random keys). Merge tiles, threads and items per thread are
// merge_sort's (device/merge_sort/policy.cuh); what is added are the
// blocksort shape, the job phase's search groups, the window half widths,
// the blocks per SM of its cooperative kernels, the sizes from which random
// keys take other kernels, and the share of sampled in-order pairs above
// which a blocksort tile counts as local. Chosen for sm_90; the
// measurements are in docs/tuning/locality_sort.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../detail/config.cuh"
#include "../../detail/merge_jobs.cuh"
#include "../../detail/merge_sort_plan.cuh"
#include "../../thread/thread_sort.cuh"
#include "../merge_sort/policy.cuh"  // merge_sort_policy: the same tiles as the merge sort

namespace tilesort {

/// Tuning of the early-exit merge sort (locality_sort_keys / pairs and the
/// long segments of segmented_sort_keys / pairs) for items of KeyBytes +
/// ValueBytes bytes, chosen for sm_90; the measurements are in
/// docs/tuning/locality_sort.md.
///
/// @code
/// using policy = tilesort::locality_sort_policy<sizeof(std::uint32_t), 0>;
/// static_assert(policy::tile_items == 8192 && policy::merge_tile_items == 4096);
/// @endcode
template <std::size_t KeyBytes, std::size_t ValueBytes>
struct locality_sort_policy {
  /// merge_sort's policy for the same items: merge tiles and k-way passes.
  using base = merge_sort_policy<KeyBytes, ValueBytes>;
  /// Blocksort 512 x merge_sort's items per thread (T = 8192 also for items
  /// of exactly 8 bytes: the windows and pairwise passes were tuned with it).
  static constexpr int block_threads = 512;
  /// @copydoc block_threads
  static constexpr int block_items = base::block_items;
  /// One blocksort block per SM (up to 128 registers): 2 made sorted input,
  /// the case this sort is for, slower.
  static constexpr int block_min_blocks = 1;
  static constexpr int tile_items = block_threads * block_items;  ///< T, the blocksort tile
  /// The same tile as 1024 x half the items (locality_wide_blocksort, no
  /// spill), for 4-byte keys with at most 4-byte values: faster on nearly
  /// sorted input. Not where merge_sort's k-way passes may follow (a
  /// locality sort from dense_kway_min_keys on), where it slowed random keys.
  static constexpr bool wide_blocksort = KeyBytes == 4 && ValueBytes <= 4;
  static constexpr int merge_threads = base::merge_threads;        ///< merge_sort's merge tile shape
  static constexpr int merge_items = base::merge_items;            ///< merge_sort's merge tile shape
  static constexpr int merge_tile_items = base::merge_tile_items;  ///< M, the merge tile
  /// Lanes per merge-path search in the job phase (merge_path_kway): a pass's
  /// searches wait for DRAM about log2(run) / log2(ways) times instead of
  /// log2(run); merge_sort's partition kernel measured 8 best. A block's
  /// threads form job_groups groups, which decide job_groups - 1 tiles.
  static constexpr int job_ways = base::partition_ways;
  /// @copydoc job_ways
  static constexpr int job_groups = merge_threads / job_ways;
  /// Blocks per SM the passes kernel's registers must allow, which is also
  /// its grid per SM (a cooperative launch): 3, 80 registers at 256 threads
  /// (4 spilled around the merge loop).
  static constexpr int merge_min_blocks = 3;
  /// Blocks per SM of the pairwise dense passes kernel (random input,
  /// merge_sort's pairwise passes in one cooperative launch): the most
  /// without spill in the merge loop.
  static constexpr int dense_min_blocks = ValueBytes > 0 ? 3 : 4;
  /// Below this many keys the passes kernel runs the dense passes itself,
  /// saving the dense kernel's launch, which sorted and nearly sorted input
  /// would pay too: 2^21 for pairs, 2^23 for keys (with the wide blocksort,
  /// random keys had room; pairs lost on random input beyond 2^21).
  static constexpr std::int64_t dense_kernel_min_keys = std::int64_t(1) << (ValueBytes > 0 ? 21 : 23);
  /// From this many keys on, random keys in a locality sort run merge_sort's
  /// own k-way kernels (items of 4 bytes and more), launched after the
  /// passes kernel on grids of about a wave and returning at once unless no
  /// blocksort tile looked local. Below it (from dense_kernel_min_keys), one
  /// cooperative launch runs the k-way passes instead, replacing the pairwise
  /// dense kernel's launch: cheaper for sorted input, but its two grid
  /// barriers a pass cost random keys too much at 2^24 and above.
  static constexpr std::int64_t dense_kway_min_keys = std::int64_t(1) << 24;
  /// Blocks per SM of the one-launch k-way dense passes: one fewer than
  /// merge_sort's k-way kernels, which leaves the pass loop no spill.
  static constexpr int dense_kway_min_blocks = base::merge_min_blocks - 1;
  /// The passes kernel asks for the largest shared-memory carveout (less
  /// L1) for pairs of 8 bytes only: faster for u32 pairs, slower for keys.
  static constexpr bool merge_prefers_shared = ValueBytes > 0 && KeyBytes + ValueBytes <= 8;
  /// Window half widths as fractions of M (64, 256, 1024, 2048 keys for
  /// M = 4096), ascending, the last at most M / 2 so that a window fits one
  /// merge tile; chosen by reasoning for sm_90.
  static constexpr int window_divisors[4] = {64, 16, 4, 2};
  /// A blocksort tile is local when >= local_num / local_den of its sampled
  /// pairs (keys 16 threads apart, i.e. 16 x block_items positions) are in
  /// order: nearly sorted input (displacement below that distance) gives
  /// 100%, random 50%.
  static constexpr int local_num = 15;
  /// @copydoc local_num
  static constexpr int local_den = 16;
  /// ... out of local_min_samples samples at least (a full tile has 256): a
  /// shorter tile never counts as local.
  static constexpr int local_min_samples = 16;
  static_assert(merge_tile_items / window_divisors[3] * 2 <= merge_tile_items, "a window must fit one merge tile");
  static_assert(merge_threads % 32 == 0 && 32 % job_ways == 0, "search groups tile whole warps");
};

/// The former name of locality_sort_policy (the early-exit merge sort's
/// tuning), kept so that code naming it compiles unchanged.
///
/// @code
/// static_assert(tilesort::early_exit_merge_policy<4, 0>::tile_items == tilesort::locality_sort_policy<4, 0>::tile_items);
/// @endcode
template <std::size_t KeyBytes, std::size_t ValueBytes>
using early_exit_merge_policy = locality_sort_policy<KeyBytes, ValueBytes>;

namespace detail {

// The early-exit blocksort's wide shape (locality_sort_policy::wide_blocksort).
template <typename Policy>
struct locality_wide_blocksort : Policy {
  static constexpr int block_threads = 2 * Policy::block_threads;
  static constexpr int block_items = Policy::block_items / 2;
  static_assert(block_threads * block_items == Policy::tile_items, "the same tile");
};

extern __shared__ __align__(16) unsigned char locality_smem[];

template <typename Key, typename Value>
using locality_policy_for = locality_sort_policy<sizeof(Key), value_bytes_of<Value>>;

template <typename Policy>
using locality_tiling = merge_tiling<Policy::tile_items, Policy::merge_tile_items>;

// Where the dense passes (random keys in a locality sort) run: nowhere
// (segmented sort), in the passes kernel, in a pairwise kernel of their own
// after it, as merge_sort's k-way passes in one cooperative kernel, or as
// merge_sort's k-way kernels.
enum class dense_passes : int { none, in_passes_kernel, own_kernel, kway_kernel, kway_kernels };

template <typename Policy>
TILESORT_HD constexpr dense_passes locality_dense_choice(bool one_segment, std::int64_t n) {
  if (!one_segment) return dense_passes::none;
  if (n < Policy::dense_kernel_min_keys) return dense_passes::in_passes_kernel;
  if (Policy::base::merge_ways == 2) return dense_passes::own_kernel;
  return n < Policy::dense_kway_min_keys ? dense_passes::kway_kernel : dense_passes::kway_kernels;
}

// Whether the dense passes are merge_sort's k-way passes (either form).
TILESORT_HD constexpr bool takes_kway_passes(dense_passes dense) {
  return dense == dense_passes::kway_kernel || dense == dense_passes::kway_kernels;
}

// Whether random keys in a locality sort of n keys take merge_sort's k-way
// passes, and their passes from this policy's tiles.
template <typename Policy>
TILESORT_HD constexpr bool locality_dense_kway(std::int64_t n) {
  return takes_kway_passes(locality_dense_choice<Policy>(true, n));
}
template <typename Policy>
TILESORT_HD constexpr kway_merge_sort_plan locality_dense_plan(std::int64_t n) {
  using base = typename Policy::base;
  return make_kway_merge_sort_plan(n, Policy::tile_items, base::merge_ways, base::cut_stride, base::cut_samples);
}

}  // namespace detail
}  // namespace tilesort
