// device/bitonic_sort.cuh — Batcher's bitonic sort of a whole device array.
// Not stable; any comparator (ascending or descending through it); any n.
//
// Cost: n log2(P) (log2(P) + 1) / 4 comparisons for P = next_pow2(n), none of
// them on the virtual padding past n (the flip form of the network skips
// them; detail/bitonic_plan.cuh). Passes over global memory, for tiles of
// 2^G keys per block (G = 14 for 4-byte keys, 13 for 8-byte keys or 4+4-byte
// pairs):
//   * n <= 2^G: ONE launch, all stages on chip (registers + shared memory);
//   * else: one sort_tiles launch, then per merge m = G+1 .. log2(P):
//     ceil((m - G) / (G - 5)) register-fused global passes (runs of 32
//     keys) plus one shared-memory pass: 22 launches for 2^24 u32 keys
//     (detail::bitonic_plan::pass_count() has the exact count for any n).
// Works in place in keys_out (the first launch reads keys_in and writes
// keys_out, so out-of-place costs nothing extra); needs no scratch memory.
//
// Temp storage: bitonic sort needs none, but a size query still reports one
// byte (detail::min_temp_bytes, never read or written) so that the query
// (d_temp == nullptr) and the run stay two different calls; the run then
// needs a non-null d_temp with temp_bytes >= 1.
//
//   std::size_t bytes = 0;
//   tilesort::bitonic_sort_keys(nullptr, bytes, d_in, d_out, n);      // bytes = 1
//   cudaMalloc(&d_temp, bytes);
//   tilesort::bitonic_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::greater{}, stream);
//   tilesort::bitonic_sort_pairs(d_keys, d_keys, d_vals, d_vals, n);  // in place, allocates itself
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../block/block_bitonic_sort.cuh"
#include "../comparators.cuh"
#include "../detail/bitonic_plan.cuh"
#include "../detail/config.cuh"
#include "../detail/dependent_launch.cuh"
#include "../detail/error.cuh"
#include "../detail/temp_storage.cuh"
#include "../thread/thread_sort.cuh"

namespace tilesort {
namespace detail {

// Tuning, in one place. Chosen for H100 (sm_90: 228 KB shared memory, 64K
// registers per SM) from the resource budget and -Xptxas -v (no spills with
// tilesort::less/greater), and checked on an H100 80GB HBM3 (2026-11-23,
// events around one call, CUB 3.0.1 beside it): u32 keys 2^10 9.8 us (CUB
// merge 16.3), 2^13 21 us (23), 2^14 32 us (29), 2^16 57 us (49), 2^24
// 12.7 GKeys/s (CUB merge 19.2); at 2^24 each global or tile pass runs at
// 52-68 us (~87% of copy bandwidth) and sort_tiles takes 200 us.
//   * Tile 2^G keys: 512 threads, each with 128 bytes of keys (+ values) in
//     registers: 32 u32 keys (G = 14, 66 KB of shared memory with the bank
//     padding), 16 u64 keys or u32 pairs (G = 13); see bitonic_sort_policy_for
//     for narrow keys and user structs. Two blocks per SM (<= 64 registers per
//     thread): one block's loads overlap the other's compute.
//   * Register-fusion depth R = log2(keys per thread): stages run R at a time
//     between two trips through shared memory (5 for u32 keys).
//   * Global passes fuse H = G - L stages, reading runs of 2^L consecutive
//     keys: runs of at least 128 bytes (H100: 64-byte runs of u32 made these
//     passes 20% slower), so L = 5 (H = 9 for u32 keys, 8 for u32 pairs) and
//     L = 4 for 8-byte keys (H = 9). A block of the same tile, reshaped to
//     1024 threads x half the keys (the 32-key flip pass sits at the
//     64-register edge and spills), runs them in registers alone when there
//     are at most log2(keys per thread) of them.
//   * n <= 1024, 4096, 8192: one block of 128 x 8, 256 x 16 or 512 x 16
//     keys (more threads holding keys: 2-3x less latency than the big tile).
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
  static constexpr std::size_t payload = key_bytes + (std::is_same_v<Value, no_value> ? 0 : sizeof(Value));
  static constexpr int by_bytes = payload <= 4 ? 32 : payload <= 8 ? 16 : payload <= 16 ? 8 : payload <= 32 ? 4 : 2;
  static constexpr int capped = builtin && sizeof(Key) < 4 && by_bytes > 16 ? 16 : by_bytes;
  static constexpr int items = builtin || capped == 2 ? capped : capped / 2;
  using type = bitonic_policy<Key, Value, 512, items, sizeof(Key) >= 8 ? 4 : 5>;
};

// ---------------------------------------------------------------- kernels
template <typename Tile, typename Compare>
__global__ void __launch_bounds__(Tile::threads, bitonic_min_blocks<Tile>)
    bitonic_sort_tiles_kernel(const typename Tile::key_type* keys_in, typename Tile::key_type* keys_out,
                              const typename Tile::value_type* values_in, typename Tile::value_type* values_out,
                              bitonic_plan plan, bitonic_pass pass, Compare comp) {
  allow_next_kernel();  // the first merge pass waits for this grid to finish
  extern __shared__ __align__(16) unsigned char bitonic_shared[];
  auto& storage = *reinterpret_cast<typename Tile::temp_storage*>(bitonic_shared);
  typename Tile::registers registers;
  const bitonic_device_threads<typename Tile::registers> ex{registers};
  const bitonic_block_map map = plan.block_map(pass, blockIdx.x);
  Tile::sort_tile(ex, storage, keys_in, keys_out, values_in, values_out, map, comp);
}

// Strided: a merge_global pass (Flip: the merge's first); else merge_tiles.
template <typename Policy, bool Flip, bool Strided, typename Compare,
          typename Tile = std::conditional_t<Strided, typename Policy::strided_tile, typename Policy::tile>>
__global__ void __launch_bounds__(Tile::threads, bitonic_min_blocks<Tile>)
    bitonic_merge_kernel(typename Policy::key_type* keys, typename Policy::value_type* values, bitonic_plan plan,
                         bitonic_pass pass, Compare comp) {
  allow_next_kernel();
  wait_for_previous_kernel();  // keys are the previous pass's output
  extern __shared__ __align__(16) unsigned char bitonic_shared[];
  auto& storage = *reinterpret_cast<typename Tile::temp_storage*>(bitonic_shared);
  typename Tile::registers registers;
  const bitonic_device_threads<typename Tile::registers> ex{registers};
  const bitonic_block_map map = plan.block_map(pass, blockIdx.x);
  Tile::template merge_tile<Flip, Strided>(ex, storage, keys, values, map, pass.stages, comp);
}

// ---------------------------------------------------------------- host side
// More than 48 KB of dynamic shared memory must be allowed per kernel and
// device first. The call is not stream-ordered; relaxed capture mode around it
// keeps it legal while the caller captures a graph, in any capture mode. It is
// made once per kernel and device (a host call on every pass would add to the
// latency of small sorts); `again` forces it, for a launch that was refused
// because the device was reset since.
template <auto Kernel>
cudaError_t bitonic_allow_shared(std::size_t bytes, bool again) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  static std::atomic<std::uint64_t> devices_done{0};
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  const std::uint64_t bit = device < 64 ? std::uint64_t(1) << device : 0;
  if (!again && (devices_done.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  TILESORT_RETURN_IF_ERROR(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t error =
      cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  const cudaError_t restored = cudaThreadExchangeStreamCaptureMode(&mode);
  TILESORT_RETURN_IF_ERROR(error);
  TILESORT_RETURN_IF_ERROR(restored);
  devices_done.fetch_or(bit, std::memory_order_release);
  return cudaSuccess;
}

// Launch one pass and check the launch; `dependent`: as a dependent of the
// previous pass (detail/dependent_launch.cuh), so that no launch gap separates
// the passes.
template <auto Kernel, typename... Args>
cudaError_t bitonic_launch(std::int64_t blocks, int threads, std::size_t shared, cudaStream_t stream, bool dependent,
                           Args... args) {
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  cudaError_t error = cudaSuccess;
  for (int attempt = 0; attempt < 2; ++attempt) {
    TILESORT_RETURN_IF_ERROR(bitonic_allow_shared<Kernel>(shared, attempt > 0));
    error = launch_kernel(Kernel, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), shared, stream,
                          dependent, args...);
    if (error == cudaSuccess || shared <= 48 * 1024) break;
  }
  return error;
}

// 2 <= n <= the policy's tile: one launch, one block, of the smallest shape that holds n.
template <typename Policy, typename Compare>
cudaError_t bitonic_sort_one_tile(const typename Policy::key_type* keys_in, typename Policy::key_type* keys_out,
                                  const typename Policy::value_type* values_in, typename Policy::value_type* values_out,
                                  std::int64_t n, Compare comp, cudaStream_t stream) {
  using tile_1k = typename Policy::tile_1k;
  using tile_4k = typename Policy::tile_4k;
  using tile_8k = typename Policy::tile_8k;
  using tile = typename Policy::tile;
  const auto launch = [&](auto shape) {
    using shape_tile = decltype(shape);
    const bitonic_plan plan = bitonic_plan::make(n, shape_tile::tile_log, Policy::run_log);
    return bitonic_launch<bitonic_sort_tiles_kernel<shape_tile, Compare>>(
        1, shape_tile::threads, sizeof(typename shape_tile::temp_storage), stream, false, keys_in, keys_out, values_in,
        values_out, plan, plan.pass(0), comp);
  };
  if (tile_1k::tile_items < tile::tile_items && n <= tile_1k::tile_items) return launch(tile_1k{});
  if (tile_4k::tile_items < tile::tile_items && n <= tile_4k::tile_items) return launch(tile_4k{});
  if (tile_8k::tile_items < tile::tile_items && n <= tile_8k::tile_items) return launch(tile_8k{});
  return launch(tile{});
}

// The whole sort for checked arguments, n >= 0. Public so that tests can run
// small policies (many passes at small n).
template <typename Policy, typename Compare>
cudaError_t bitonic_sort_run(const typename Policy::key_type* keys_in, typename Policy::key_type* keys_out,
                             const typename Policy::value_type* values_in, typename Policy::value_type* values_out,
                             std::int64_t n, Compare comp, cudaStream_t stream) {
  using Key = typename Policy::key_type;
  using Value = typename Policy::value_type;
  constexpr bool has_values = !std::is_same_v<Value, no_value>;
  if (n == 0) return cudaSuccess;
  if (n == 1) {
    if (keys_out != keys_in)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (has_values) {
      if (values_out != values_in)
        TILESORT_RETURN_IF_ERROR(
            cudaMemcpyAsync(values_out, values_in, sizeof(Value), cudaMemcpyDeviceToDevice, stream));
    }
    return cudaSuccess;
  }
  using tile = typename Policy::tile;
  using strided_tile = typename Policy::strided_tile;
  if (n <= tile::tile_items) return bitonic_sort_one_tile<Policy>(keys_in, keys_out, values_in, values_out, n, comp, stream);
  const bitonic_plan plan = bitonic_plan::make(n, tile::tile_log, Policy::run_log);
  constexpr std::size_t shared = sizeof(typename tile::temp_storage);
  constexpr std::size_t strided_shared = sizeof(typename strided_tile::temp_storage);
  const int passes = plan.pass_count();
  bool dependent = false;  // every pass after the first
  TILESORT_RETURN_IF_ERROR(dependent_launch_supported(dependent));
  for (int i = 0; i < passes; ++i) {
    const bitonic_pass pass = plan.pass(i);
    const std::int64_t blocks = plan.blocks(pass);
    if (pass.kind == bitonic_pass_kind::sort_tiles) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_sort_tiles_kernel<tile, Compare>>(
          blocks, tile::threads, shared, stream, false, keys_in, keys_out, values_in, values_out, plan, pass, comp)));
    } else if (pass.kind == bitonic_pass_kind::merge_tiles) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, false, false, Compare>>(
          blocks, tile::threads, shared, stream, dependent, keys_out, values_out, plan, pass, comp)));
    } else if (pass.flip) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, true, true, Compare>>(
          blocks, strided_tile::threads, strided_shared, stream, dependent, keys_out, values_out, plan, pass, comp)));
    } else {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, false, true, Compare>>(
          blocks, strided_tile::threads, strided_shared, stream, dependent, keys_out, values_out, plan, pass, comp)));
    }
  }
  return cudaSuccess;
}

// Two-phase entry shared by keys and pairs: validate, answer the size query, run.
template <typename Policy, typename Compare>
cudaError_t bitonic_sort_two_phase(void* d_temp, std::size_t& temp_bytes, const typename Policy::key_type* keys_in,
                                   typename Policy::key_type* keys_out, const typename Policy::value_type* values_in,
                                   typename Policy::value_type* values_out, std::int64_t n, Compare comp,
                                   cudaStream_t stream) {
  constexpr bool has_values = !std::is_same_v<typename Policy::value_type, no_value>;
  if (n < 0) return cudaErrorInvalidValue;
  if (d_temp == nullptr) {
    temp_bytes = min_temp_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, min_temp_bytes));
  return bitonic_sort_run<Policy>(keys_in, keys_out, values_in, values_out, n, comp, stream);
}

}  // namespace detail

// Sort n keys (not stable). keys_out may equal keys_in. d_temp == nullptr:
// set temp_bytes (1) and return; nothing else happens.
//
//   tilesort::bitonic_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n);   // in place, ascending
template <typename Key, typename Compare = less>
cudaError_t bitonic_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                              std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  using policy = typename detail::bitonic_sort_policy_for<Key, detail::no_value>::type;
  return detail::bitonic_sort_two_phase<policy>(d_temp, temp_bytes, keys_in, keys_out,
                                                static_cast<const detail::no_value*>(nullptr),
                                                static_cast<detail::no_value*>(nullptr), n, comp, stream);
}

// Sort n (key, value) pairs by key (not stable: equal keys' values may come
// out in any order). keys_out may equal keys_in, values_out values_in.
//
//   tilesort::bitonic_sort_pairs(d_temp, temp_bytes, d_keys, d_keys, d_vals, d_vals, n, tilesort::greater{});
template <typename Key, typename Value, typename Compare = less>
cudaError_t bitonic_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                               const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                               cudaStream_t stream = 0) {
  using policy = typename detail::bitonic_sort_policy_for<Key, Value>::type;
  return detail::bitonic_sort_two_phase<policy>(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n,
                                                comp, stream);
}

// Convenience overloads: temp storage is allocated and freed on `stream`
// (cudaMallocAsync / cudaFreeAsync; one byte, see above).
//
//   tilesort::bitonic_sort_keys(d_in, d_out, n, tilesort::greater{}, stream);
template <typename Key, typename Compare = less>
cudaError_t bitonic_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                              cudaStream_t stream = 0) {
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return bitonic_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream);
  });
}

template <typename Key, typename Value, typename Compare = less>
cudaError_t bitonic_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                               std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return bitonic_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  });
}

}  // namespace tilesort
