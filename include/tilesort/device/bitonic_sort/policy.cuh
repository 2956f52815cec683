// device/bitonic_sort/policy.cuh — the tuning of the device bitonic sort
// (device/bitonic_sort.cuh): the tile engine's shape per key and value type
// (bitonic_sort_policy_for), the smaller one-block shapes of small sorts and
// the cluster shape. The reason for each number is given below; the
// measurements and what was tried are in docs/tuning/bitonic_sort.md.
#pragma once

#include <cstddef>
#include <type_traits>

#include "../../block/bitonic_tile.cuh"
#include "../../comparators.cuh"
#include "../../detail/bitonic_plan.cuh"
#include "../../detail/values.cuh"

namespace tilesort::detail {

// Tuning, in one place. Chosen for sm_90 (228 KB shared memory, 64K
// registers per SM) from the resource budget and -Xptxas -v (no spills with
// tilesort::less/greater), and checked against CUB; the
// measurements and what was tried are in docs/tuning/bitonic_sort.md.
//   * Tile 2^G keys: 512 threads, each with 128 bytes of keys (+ values) in
//     registers: 32 u32 keys (G = 14, 66 KB of shared memory with the bank
//     padding), 16 u64 keys or u32 pairs (G = 13); see bitonic_sort_policy_for
//     for narrow keys and user structs. Two blocks per SM (<= 64 registers per
//     thread): one block's loads overlap the other's compute.
//   * Register-fusion depth R = log2(keys per thread): stages run R at a time
//     between two trips through shared memory (5 for u32 keys).
//   * Global passes fuse H = G - L stages, reading runs of 2^L consecutive
//     keys: runs of at least 128 bytes (64-byte runs were slower), so L = 5
//     (H = 9 for u32 keys, 8 for u32 pairs) and L = 4 for 8-byte keys (H =
//     9). A block of the same tile, reshaped to 1024 threads x half the keys
//     (the 32-key flip pass sits at the 64-register edge and spills), runs
//     them in registers alone when there are at most log2(keys per thread).
//   * Fused passes (runs of 2^6, 2^8, 2^11 keys; detail::bitonic_fused_runs)
//     save launches and passes over DRAM at every size but 2^20, where a
//     pass costs one block's latency.
//   * n <= 1024, 4096, 8192: one block of 128 x 8, 256 x 16 or 512 x 16
//     keys (more threads holding keys: 2-3x less latency than the big tile).
//     n <= 1024: each warp first sorts its 256 keys with its shuffle network
//     (small_warp_first). On sm_90, 4096 < n <= 16 x 4096: one cluster of up
//     to 16 blocks of 256 x 16, each sorting only the merges its keys need
//     (ceil(log2(valid))). Other cluster shapes, and clusters for the passes
//     of large n, were slower.
template <typename Key, typename Value, int Threads, int Items, int RunLog = bitonic_run_log>
struct bitonic_policy {
  using key_type = Key;
  using value_type = Value;
  static constexpr int run_log = RunLog;
  static constexpr int strided_items = Items / 2 >= 2 ? Items / 2 : 2;
  using tile = bitonic_tile<Key, Value, Threads, Items, RunLog>;  // sort_tiles, merge_tiles
  using strided_tile = bitonic_tile<Key, Value, Threads * Items / strided_items, strided_items, RunLog>;  // merge_global
  // Sorts of up to 1024, 4096 or 8192 keys are one block of a smaller shape:
  // more threads with keys, fewer stages (latency, not throughput).
  using tile_1k = bitonic_tile<Key, Value, 128, (Items < 8 ? Items : 8), RunLog>;
  using tile_4k = bitonic_tile<Key, Value, 256, (Items < 16 ? Items : 16), RunLog>;
  using tile_8k = bitonic_tile<Key, Value, 512, (Items < 16 ? Items : 16), RunLog>;
  // Sorts of tile_4k < n <= 16 tile_4k keys are one launch of one thread
  // block cluster on sm_90: up to 16 blocks of tile_4k.
  static constexpr int cluster_blocks = 16;
  // n <= tile_1k: each warp's first merges (its 32 x 8 keys) by the warp's
  // shuffle network rather than register rounds and shared-memory exchanges.
  static constexpr bool small_warp_first = true;
  // merge_fused passes: runs of 2^A keys for the A in bitonic_fused_runs that
  // leave the tail a register round (A > R) and the head a stage (A < G).
  static constexpr unsigned fused_runs = bitonic_fused_runs & bitonic_fused_runs_for(tile::tile_log, tile::item_log, RunLog);
  static_assert(tile::tile_log == strided_tile::tile_log, "one tile, two block shapes");
  static_assert(sizeof(typename tile::temp_storage) <= 227 * 1024, "tile does not fit in shared memory");
};

// Blocks per SM that __launch_bounds__ asks for: 64 registers per thread.
template <typename Tile>
inline constexpr int bitonic_min_blocks = 65536 / (Tile::threads * 64) > 0 ? 65536 / (Tile::threads * 64) : 1;

template <typename Key, typename Value>
struct bitonic_sort_policy_for {
  // Built-in keys take max(4, sizeof) bytes of registers each; keys narrower
  // than 4 bytes stop at 16 per thread and user structs get half the count
  // (their fields take registers of their own): both spill at 32 otherwise.
  static constexpr bool builtin = std::is_arithmetic_v<Key> || is_floating_key<Key>::value;
  static constexpr std::size_t key_bytes = builtin && sizeof(Key) < 4 ? 4 : sizeof(Key);
  static constexpr std::size_t payload = key_bytes + value_bytes_of<Value>;
  static constexpr int by_bytes = payload <= 4 ? 32 : payload <= 8 ? 16 : payload <= 16 ? 8 : payload <= 32 ? 4 : 2;
  static constexpr int capped = builtin && sizeof(Key) < 4 && by_bytes > 16 ? 16 : by_bytes;
  static constexpr int items = builtin || capped == 2 ? capped : capped / 2;
  using type = bitonic_policy<Key, Value, 512, items, sizeof(Key) >= 8 ? 4 : 5>;
};

}  // namespace tilesort::detail
