// device/bitonic_sort.cuh — Batcher's bitonic sort of a whole device array.
// Not stable; any comparator (ascending or descending through it); any n.
//
// Cost: n log2(P) (log2(P) + 1) / 4 comparisons for P = next_pow2(n), none of
// them on the virtual padding past n (the flip form of the network skips
// them; detail/bitonic_plan.cuh). Passes over global memory, for tiles of
// 2^G keys per block (G = 14 for 4-byte keys, 13 for 8-byte keys or 4+4-byte
// pairs):
//   * n <= 2^G: ONE launch, all stages on chip (registers + shared memory);
//     on sm_90, 4096 < n <= 16 * 4096 (u32): ONE launch of one thread block
//     cluster of up to 16 blocks, whose stages across blocks go through
//     distributed shared memory (more SMs on a small sort: lower latency);
//   * else: one sort_tiles launch, then passes that each run as many
//     consecutive stages as 2^G keys gathered in runs of consecutive keys
//     allow (detail/bitonic_plan.cuh): global passes of up to G - 5 stages
//     across runs of 32 keys, tile passes, and fused passes that finish one
//     merge inside runs of 2^A keys and start the next across them. 2^20 /
//     2^24 / 2^28 u32 keys: 10 / 18 / 27 launches (13 / 22 / 34 without fused
//     passes); detail::bitonic_plan::pass_count() has the count for any n.
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

#include "../comparators.cuh"
#include "../detail/bitonic_plan.cuh"
#include "../detail/config.cuh"
#include "../detail/error.cuh"
#include "../detail/launch.cuh"
#include "../detail/temp_storage.cuh"
#include "../detail/values.cuh"
#include "bitonic_sort/kernels.cuh"
#include "bitonic_sort/policy.cuh"

namespace tilesort {
namespace detail {

// ---------------------------------------------------------------- host side
// More than 48 KB of dynamic shared memory must be allowed per kernel and
// device first (allow_dynamic_shared_memory), and so must clusters of more
// than 8 blocks; both are capture-safe (detail/launch.cuh). They are made
// once per kernel and device (a host call on every pass would add to the
// latency of small sorts); `again` forces them, for a launch that was
// refused because the device was reset since.
template <auto Kernel>
cudaError_t bitonic_kernel_attributes(std::size_t bytes, bool clusters, bool again) {
  if (bytes <= 48 * 1024 && !clusters) return cudaSuccess;
  static std::atomic<std::uint64_t> devices_done{0};
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  const std::uint64_t bit = device < 64 ? std::uint64_t(1) << device : 0;
  if (!again && (devices_done.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
  TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(Kernel, bytes));
  if (clusters) TILESORT_RETURN_IF_ERROR(set_kernel_attribute(Kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  devices_done.fetch_or(bit, std::memory_order_release);
  return cudaSuccess;
}

// Launch one pass and check the launch; `dependent`: as a dependent of the
// previous pass (detail/launch.cuh), so that no launch gap separates
// the passes.
// cluster > 0: in thread block clusters of `cluster` blocks.
template <auto Kernel, typename... Args>
cudaError_t bitonic_launch(std::int64_t blocks, int threads, std::size_t shared, cudaStream_t stream, bool dependent,
                           int cluster, Args... args) {
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  cudaError_t error = cudaSuccess;
  for (int attempt = 0; attempt < 2; ++attempt) {
    TILESORT_RETURN_IF_ERROR(bitonic_kernel_attributes<Kernel>(shared, cluster > 0, attempt > 0));
    error = cluster > 0 ? launch_cluster_kernel(Kernel, static_cast<unsigned>(blocks), static_cast<unsigned>(cluster),
                                                static_cast<unsigned>(threads), shared, stream, dependent, args...)
                    : launch_kernel(Kernel, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), shared,
                                    stream, dependent, args...);
    if (error == cudaSuccess || (shared <= 48 * 1024 && cluster == 0)) break;
  }
  return error;
}

// Whether Kernel's code on the current device was compiled for sm_90 or later
// (a binary for an older GPU, or PTX of an older one JIT-compiled, has an
// empty cluster kernel). Asked once per kernel and device.
template <auto Kernel>
cudaError_t bitonic_cluster_code(bool& usable) {
  static std::atomic<std::uint64_t> asked{0}, yes{0};
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  const std::uint64_t bit = device < 64 ? std::uint64_t(1) << device : 0;
  if ((asked.load(std::memory_order_acquire) & bit) != 0) {
    usable = (yes.load(std::memory_order_relaxed) & bit) != 0;
    return cudaSuccess;
  }
  cudaFuncAttributes attributes{};
  TILESORT_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, Kernel));
  usable = attributes.ptxVersion >= 90 && attributes.binaryVersion >= 90;
  if (usable) yes.fetch_or(bit, std::memory_order_relaxed);
  asked.fetch_or(bit, std::memory_order_release);
  return cudaSuccess;
}

// n keys (1 < n <= 16 tiles of Tile) in one cluster launch of 2 .. 16 blocks; `launched`
// is false when this device or build cannot (the caller sorts another way).
template <typename Tile, typename Compare>
cudaError_t bitonic_sort_cluster(const typename Tile::key_type* keys_in, typename Tile::key_type* keys_out,
                                 const typename Tile::value_type* values_in, typename Tile::value_type* values_out,
                                 std::int64_t n, Compare comp, cudaStream_t stream, bool& launched) {
  constexpr auto kernel = bitonic_cluster_sort_kernel<Tile, Compare>;
  launched = false;
  bool usable = false;
  TILESORT_RETURN_IF_ERROR(bitonic_cluster_code<kernel>(usable));
  if (!usable) return cudaSuccess;
  int blocks = 2;
  while (std::int64_t(blocks) * Tile::tile_items < n) blocks *= 2;
  const cudaError_t error =
      bitonic_launch<kernel>(blocks, Tile::threads, sizeof(bitonic_cluster_storage<Tile>), stream, false,
                             blocks, keys_in, keys_out, values_in, values_out, n, comp);
  // A cluster the device cannot place (a partitioned GPU) leaves the sort to the other path.
  if (error == cudaErrorInvalidClusterSize || error == cudaErrorLaunchOutOfResources) return cudaSuccess;
  TILESORT_RETURN_IF_ERROR(error);
  launched = true;
  return cudaSuccess;
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
  const auto launch = [&](auto shape, auto warp_first) {
    using shape_tile = decltype(shape);
    const bitonic_plan plan = bitonic_plan::make(n, shape_tile::tile_log, Policy::run_log);
    return bitonic_launch<bitonic_sort_tiles_kernel<shape_tile, Compare, decltype(warp_first)::value>>(
        1, shape_tile::threads, sizeof(typename shape_tile::temp_storage), stream, false, 0, keys_in, keys_out, values_in,
        values_out, plan, plan.pass(0), comp);
  };
  if (tile_1k::tile_items < tile::tile_items && n <= tile_1k::tile_items)
    return launch(tile_1k{}, std::bool_constant<Policy::small_warp_first>{});
  if (tile_4k::tile_items < tile::tile_items && n <= tile_4k::tile_items) return launch(tile_4k{}, std::false_type{});
  if (tile_8k::tile_items < tile::tile_items && n <= tile_8k::tile_items) return launch(tile_8k{}, std::false_type{});
  return launch(tile{}, std::false_type{});
}

// The whole sort for checked arguments, n >= 0. Public so that tests can run
// small policies (many passes at small n).
template <typename Policy, typename Compare>
cudaError_t bitonic_sort_run(const typename Policy::key_type* keys_in, typename Policy::key_type* keys_out,
                             const typename Policy::value_type* values_in, typename Policy::value_type* values_out,
                             std::int64_t n, Compare comp, cudaStream_t stream) {
  using Key = typename Policy::key_type;
  using Value = typename Policy::value_type;
  if (n == 0) return cudaSuccess;
  if (n == 1) {
    if (keys_out != keys_in)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (has_values<Value>) {
      if (values_out != values_in)
        TILESORT_RETURN_IF_ERROR(
            cudaMemcpyAsync(values_out, values_in, sizeof(Value), cudaMemcpyDeviceToDevice, stream));
    }
    return cudaSuccess;
  }
  using tile = typename Policy::tile;
  using strided_tile = typename Policy::strided_tile;
  if (n <= tile::tile_items) return bitonic_sort_one_tile<Policy>(keys_in, keys_out, values_in, values_out, n, comp, stream);
  const bitonic_plan plan = bitonic_plan::make(n, tile::tile_log, Policy::run_log, Policy::fused_runs);
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
          blocks, tile::threads, shared, stream, false, 0, keys_in, keys_out, values_in, values_out, plan, pass, comp)));
    } else if (pass.kind == bitonic_pass_kind::merge_tiles) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, false, false, 0, Compare>>(
          blocks, tile::threads, shared, stream, dependent, 0, keys_out, values_out, plan, pass, comp)));
    } else if (pass.kind == bitonic_pass_kind::merge_fused) {
      cudaError_t error = cudaErrorInvalidValue;  // a run the policy has no kernel for (the plan never asks)
      static_for<1, tile::tile_log - 1, 1>([&](auto a) {
        constexpr int A = decltype(a)::value;
        if constexpr (((Policy::fused_runs >> A) & 1u) != 0) {
          if (pass.run == A)
            error = bitonic_launch<bitonic_merge_kernel<Policy, true, false, A, Compare>>(blocks, tile::threads, shared, stream,
                                                                             dependent, 0, keys_out, values_out, plan,
                                                                             pass, comp);
        }
      });
      TILESORT_RETURN_IF_ERROR(error);
    } else if (pass.flip) {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, true, true, 0, Compare>>(
          blocks, strided_tile::threads, strided_shared, stream, dependent, 0, keys_out, values_out, plan, pass, comp)));
    } else {
      TILESORT_RETURN_IF_ERROR((bitonic_launch<bitonic_merge_kernel<Policy, false, true, 0, Compare>>(
          blocks, strided_tile::threads, strided_shared, stream, dependent, 0, keys_out, values_out, plan, pass, comp)));
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
  constexpr bool pairs = has_values<typename Policy::value_type>;
  if (n < 0) return cudaErrorInvalidValue;
  if (d_temp == nullptr) {
    temp_bytes = min_temp_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, pairs, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, min_temp_bytes));
  // The cluster launch is chosen here, not in bitonic_sort_run, so that the
  // tests' small policies still reach the multi-pass path at small n.
  using cluster_tile = typename Policy::tile_4k;
  if (n > cluster_tile::tile_items && n <= Policy::cluster_blocks * std::int64_t(cluster_tile::tile_items)) {
    bool launched = false;
    TILESORT_RETURN_IF_ERROR(
        (bitonic_sort_cluster<cluster_tile>(keys_in, keys_out, values_in, values_out, n, comp, stream, launched)));
    if (launched) return cudaSuccess;
  }
  return bitonic_sort_run<Policy>(keys_in, keys_out, values_in, values_out, n, comp, stream);
}

}  // namespace detail

/// Sort n keys (not stable). keys_out may equal keys_in. d_temp == nullptr:
/// set temp_bytes (1) and return; nothing else happens.
///
/// @param d_temp     non-null for the run (never read or written), nullptr for the size query
/// @param temp_bytes set to 1 by the size query; at least 1 for the run
/// @param keys_in    device input keys
/// @param keys_out   device output keys
/// @param n          number of keys (64-bit)
/// @param comp       comparator (tilesort::less, tilesort::greater or any strict weak order)
/// @param stream     stream the kernels run on
/// @return cudaSuccess, or the first CUDA or argument error (nothing launched then)
///
/// @code
/// tilesort::bitonic_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n);   // in place, ascending
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t bitonic_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                              std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  using policy = typename detail::bitonic_sort_policy_for<Key, detail::no_value>::type;
  return detail::bitonic_sort_two_phase<policy>(d_temp, temp_bytes, keys_in, keys_out,
                                                static_cast<const detail::no_value*>(nullptr),
                                                static_cast<detail::no_value*>(nullptr), n, comp, stream);
}

/// Sort n (key, value) pairs by key (not stable: equal keys' values may come
/// out in any order). keys_out may equal keys_in, values_out values_in.
///
/// @code
/// tilesort::bitonic_sort_pairs(d_temp, temp_bytes, d_keys, d_keys, d_vals, d_vals, n, tilesort::greater{});
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t bitonic_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                               const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                               cudaStream_t stream = 0) {
  using policy = typename detail::bitonic_sort_policy_for<Key, Value>::type;
  return detail::bitonic_sort_two_phase<policy>(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n,
                                                comp, stream);
}

/// Convenience overloads: temp storage is allocated and freed on `stream`
/// (cudaMallocAsync / cudaFreeAsync; one byte, see above).
///
/// @code
/// tilesort::bitonic_sort_keys(d_in, d_out, n, tilesort::greater{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t bitonic_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                              cudaStream_t stream = 0) {
  return detail::sort_with_stream_temp(keys_in, keys_out, n, stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return bitonic_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream);
  });
}

/// bitonic_sort_pairs with temp storage allocated and freed on `stream`, as
/// the bitonic_sort_keys overload without d_temp.
///
/// @code
/// tilesort::bitonic_sort_pairs(d_keys, d_keys, d_vals, d_vals, n);   // in place
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t bitonic_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                               std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::sort_with_stream_temp(keys_in, keys_out, values_in, values_out, n, stream,
                                       [&](void* d_temp, std::size_t& temp_bytes) {
    return bitonic_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  });
}

}  // namespace tilesort
