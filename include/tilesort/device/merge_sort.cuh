// device/merge_sort.cuh — stable device-wide merge sort of keys or key-value
// pairs: any trivially copyable key, any strict weak order, 64-bit sizes.
// This file holds the launch sequence and the public entry points; the
// pieces are in device/merge_sort/:
//   policy.cuh     tuning: tile shapes, ways, blocks per SM
//   blocksort.cuh  1. blocksort: runs of T = block_threads x block_items
//                  keys (block_sort, stable)
//   kway.cuh       2. K-way merge passes (items of 4 bytes and more; K = 4,
//                  8 for 8-byte keys): per pass a cut launch and a merge
//                  launch
//   pairwise.cuh   2'. pairwise passes (smaller items): per pass a
//                  partition launch and a merge launch
// Buffers ping-pong between keys_out and the temp buffer; the blocksort picks
// its destination by the parity of the pass count, so the last pass writes
// keys_out and no copy is needed (detail/merge_sort_plan.cuh). Every launch
// after the blocksort is a dependent launch on sm_90
// (detail/launch.cuh). Pairs merge keys only, carrying each
// output's source index; values are loaded with the keys and stored by it.
//
// Cost: 1 + P reads and writes of every item and 1 + 2P launches for P merge
// passes (merge_sort_passes(n) says the total for any n): with the sm_90
// policy 5 / 7 / 9 passes over DRAM at 2^20 / 2^24 / 2^28 u32 keys or u32
// pairs, 4 / 5 / 7 for u64 keys. n <= T: one launch, keys_in -> keys_out
// (n <= 1024 keys of up to 8 bytes: one block of 128 threads); n == 1: a
// copy; n == 0: nothing. Shared memory: blocksort 33-34 KB (68 KB for the
// early-exit sorts' 8192-key tiles of 8-byte items), merge M keys (+ M ints
// and M values for pairs), padded. Temp storage: n keys (+ n values) plus
// the partitions or cuts of the largest pass (256-byte aligned buffers) when
// a merge pass is needed; 1 byte otherwise. In place (keys_out == keys_in,
// values likewise) works. Tuning history: docs/tuning/merge_sort.md.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../block/block_sort.cuh"
#include "../comparators.cuh"
#include "../detail/config.cuh"
#include "../detail/launch.cuh"
#include "../detail/error.cuh"
#include "../detail/merge_path.cuh"
#include "../detail/merge_sort_plan.cuh"
#include "../thread/thread_sort.cuh"
#include "merge_sort/kway.cuh"
#include "merge_sort/policy.cuh"

namespace tilesort {
namespace detail {

template <typename Key, typename Value, typename Policy = merge_sort_policy_for<Key, Value>>
struct merge_sort_setup {
  using policy = Policy;
  static constexpr bool kway = Policy::merge_ways > 2;
  using plan_type = std::conditional_t<kway, kway_merge_sort_plan, merge_sort_plan>;
  static constexpr plan_type make_plan(std::int64_t n) {
    if constexpr (kway) {
      return make_kway_merge_sort_plan(n, policy::tile_items, policy::merge_ways, policy::cut_stride,
                                       policy::cut_samples);
    } else {
      return make_merge_sort_plan(n, policy::tile_items, policy::merge_tile_items);
    }
  }
  plan_type plan;
  merge_sort_temp_layout layout;
  explicit merge_sort_setup(std::int64_t n)
      : plan(make_plan(n)),
        layout(make_merge_sort_temp_layout(plan, sizeof(Key), value_bytes_of<Value>)) {}
};

// A merge sort behind a decision on the device (the front door's probe).
// `skip_unless_zero` (null: never skipped): a device word written before the
// sort's first kernel; nonzero, every kernel returns at once. `tiles_taken`
// (null, or one zeroed counter per merge pass) makes the k-way passes
// persistent, on the grids `most` (resident_kway_grids): a skipped pass then
// costs two waves of blocks instead of a block per tile, and a pass that
// merges 2-8% more (docs/tuning/merge_sort.md). K-way passes only.
struct merge_sort_gate {
  const unsigned* skip_unless_zero = nullptr;
  unsigned* tiles_taken = nullptr;
  kway_pass_grids most;
};

// Launch everything. Arguments are checked; `temp` holds layout.total_bytes.
template <typename Key, typename Value, typename Policy, typename Compare>
cudaError_t merge_sort_launch(const merge_sort_setup<Key, Value, Policy>& setup, void* temp, const Key* keys_in,
                              Key* keys_out, const Value* values_in, Value* values_out, Compare comp,
                              cudaStream_t stream, const merge_sort_gate& gate = {}) {
  using policy = Policy;
  constexpr bool pairs = has_values<Value>;
  const auto& plan = setup.plan;
  const std::int64_t n = plan.n;
  if (n == 0) return cudaSuccess;
  if (!merge_sort_setup<Key, Value, Policy>::kway && (gate.skip_unless_zero != nullptr || gate.tiles_taken != nullptr))
    return cudaErrorInvalidValue;
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
  // Grid sizes are 32-bit (n up to 2^41 keys with the policies above).
  if (plan.tiles > INT_MAX) return cudaErrorInvalidValue;
  if constexpr (merge_sort_setup<Key, Value, Policy>::kway) {
    for (int pass = 0; pass < plan.merge_passes; ++pass) {
      const kway_pass_shape shape = plan.pass_shape(pass);
      if (shape.tiles() > INT_MAX ||
          ceil_div(shape.sample_slots() * policy::merge_ways, merge_sort_partition_threads) > INT_MAX)
        return cudaErrorInvalidValue;
    }
  } else {
    if (plan.merge_tiles > INT_MAX ||
        ceil_div(plan.partition_count() * policy::partition_ways, merge_sort_partition_threads) > INT_MAX)
      return cudaErrorInvalidValue;
  }

  // No merge pass (one tile): the layout has no bytes, all buffers are null
  // (temp may be null then).
  const auto buffers = carve_merge_sort_temp<Key, Value>(temp, setup.layout);
  // Step k writes keys_out when plan.writes_output(k), else the temp buffers.
  auto keys_of = [&](int step) { return plan.writes_output(step) ? keys_out : buffers.keys; };
  auto values_of = [&](int step) { return plan.writes_output(step) ? values_out : buffers.values; };

  const auto blocksort = [&](auto shape) {
    using shape_policy = decltype(shape);
    using storage = typename merge_sort_blocksort_parts<Key, Value, shape_policy::block_threads,
                                                        shape_policy::block_items>::storage;
    static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
    auto* kernel = merge_sort_blocksort_kernel<shape_policy, Key, Value, Compare>;
    TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(kernel, sizeof(storage)));
    return launch_kernel(kernel, static_cast<unsigned>(ceil_div(n, shape_policy::tile_items)),
                         shape_policy::block_threads, sizeof(storage), stream, false, keys_in, keys_of(0), values_in,
                         values_of(0), n, gate.skip_unless_zero, comp);
  };
  using small_policy = merge_sort_small_policy<policy>;
  if (n <= small_policy::tile_items) return blocksort(small_policy{});
  TILESORT_RETURN_IF_ERROR(blocksort(policy{}));

  // Every kernel after the blocksort starts as a dependent of the one before
  // (detail/launch.cuh): each pass boundary loses no launch gap.
  bool dependent = false;
  if (plan.merge_passes > 0) TILESORT_RETURN_IF_ERROR(dependent_launch_supported(dependent));
  if constexpr (merge_sort_setup<Key, Value, Policy>::kway) {
    if (gate.tiles_taken != nullptr) {  // persistent passes (their shared memory allowed with `most`)
      for (int pass = 0; pass < plan.merge_passes; ++pass)
        TILESORT_RETURN_IF_ERROR((launch_kway_pass<policy, true>(
            plan.pass_shape(pass), keys_of(pass), keys_of(pass + 1), values_of(pass), values_of(pass + 1),
            buffers.partitions, gate.skip_unless_zero, dependent, comp, stream, gate.tiles_taken + pass, gate.most)));
      return cudaSuccess;
    }
    if (plan.merge_passes > 0)
      TILESORT_RETURN_IF_ERROR((merge_sort_allow_kway_smem<policy, false, Key, Value, Compare>()));
    for (int pass = 0; pass < plan.merge_passes; ++pass)
      TILESORT_RETURN_IF_ERROR((launch_kway_pass<policy, false>(plan.pass_shape(pass), keys_of(pass),
                                                                keys_of(pass + 1), values_of(pass),
                                                                values_of(pass + 1), buffers.partitions,
                                                                gate.skip_unless_zero, dependent, comp, stream)));
  } else {
    using storage = merge_sort_merge_storage<Key, Value, policy::merge_tile_items>;
    static_assert(alignof(storage) <= 16, "dynamic shared memory is 16-byte aligned");
    auto* merge_kernel = merge_sort_merge_kernel<policy, Key, Value, Compare>;
    if (plan.merge_passes > 0) TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(merge_kernel, sizeof(storage)));
    const std::int64_t partitions = plan.partition_count();
    constexpr int ways = policy::partition_ways;
    const auto partition_blocks = static_cast<unsigned>(ceil_div(partitions * ways, merge_sort_partition_threads));
    for (int pass = 0; pass < plan.merge_passes; ++pass) {
      const Key* keys_src = keys_of(pass);
      const std::int64_t run = plan.run_length(pass);
      TILESORT_RETURN_IF_ERROR(launch_kernel(merge_sort_partition_kernel<ways, Key, Compare>, partition_blocks,
                                             merge_sort_partition_threads, 0, stream, dependent, keys_src, n, run,
                                             policy::merge_tile_items, partitions, buffers.partitions, comp));
      TILESORT_RETURN_IF_ERROR(launch_kernel(merge_kernel, static_cast<unsigned>(plan.merge_tiles),
                                             policy::merge_threads, sizeof(storage), stream, dependent, keys_src,
                                             keys_of(pass + 1), values_of(pass), values_of(pass + 1),
                                             buffers.partitions, n, run, comp));
    }
  }
  return cudaSuccess;
}

// Two-phase entry: size query, argument checks, launch.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_two_phase(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                 const Value* values_in, Value* values_out, std::int64_t n, Compare comp,
                                 cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  const merge_sort_setup<Key, Value> setup(n);
  if (d_temp == nullptr) {
    temp_bytes = setup.layout.total_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, setup.layout.total_bytes));
  return merge_sort_launch(setup, d_temp, keys_in, keys_out, values_in, values_out, comp, stream);
}

// Convenience entry: stream-ordered temp storage, allocated only when a merge
// pass needs it, freed on the same stream whatever happens after the allocation.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_sort_allocating(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                  std::int64_t n, Compare comp, cudaStream_t stream) {
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, n));
  const merge_sort_setup<Key, Value> setup(n);
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
/// Number of times merge_sort_keys / merge_sort_pairs read and write every
/// item in DRAM for n keys (blocksort + merge passes; 1 for n == 1, 0 for
/// n == 0). Bytes moved per key are 2 x passes x (sizeof(Key) + sizeof(Value)).
///
/// @tparam Key   key type
/// @tparam Value value type, or void for keys only
/// @param n      number of keys
///
/// @code
/// const int passes = tilesort::merge_sort_passes<std::uint32_t>(std::int64_t(1) << 24);  // 7
/// @endcode
template <typename Key, typename Value = void>
constexpr int merge_sort_passes(std::int64_t n) {
  using payload = detail::value_or_none<Value>;
  return detail::merge_sort_passes(detail::merge_sort_setup<Key, payload>::make_plan(n));
}

/// Stable sort of n keys: keys_out[0, n) = keys_in[0, n) ordered by comp.
/// Call with d_temp == nullptr to get temp_bytes (nothing else happens).
/// keys_out may equal keys_in.
///
/// @param d_temp     device temp storage, or nullptr for the size query
/// @param temp_bytes size of d_temp; set by the size query
/// @param keys_in    device input keys
/// @param keys_out   device output keys
/// @param n          number of keys (64-bit)
/// @param comp       strict weak order (tilesort::less, tilesort::greater or any functor)
/// @param stream     stream the kernels run on
/// @return cudaSuccess, or the first CUDA or argument error (nothing launched then)
///
/// @code
/// std::size_t bytes = 0;
/// tilesort::merge_sort_keys(nullptr, bytes, d_in, d_out, n);   // size query
/// void* d_temp; cudaMalloc(&d_temp, bytes);
/// tilesort::merge_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::greater{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t merge_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n,
                            Compare comp = {}, cudaStream_t stream = 0) {
  return detail::merge_sort_two_phase<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n,
                                                             comp, stream);
}

/// Stable sort of n (key, value) pairs by key; values travel with their keys.
/// keys_out may equal keys_in, values_out values_in. Parameters as
/// merge_sort_keys, plus the device arrays values_in and values_out.
///
/// @code
/// tilesort::merge_sort_pairs(nullptr, bytes, d_keys, d_keys, d_vals, d_vals, n);   // size query
/// tilesort::merge_sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n);    // in place
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t merge_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                             const Value* values_in, Value* values_out, std::int64_t n, Compare comp = {},
                             cudaStream_t stream = 0) {
  return detail::merge_sort_two_phase(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
}

/// merge_sort_keys with stream-ordered temp storage (cudaMallocAsync /
/// cudaFreeAsync on `stream`, only when a merge pass needs it);
/// graph-capturable. A failed allocation returns cudaErrorMemoryAllocation
/// with nothing written.
///
/// @code
/// tilesort::merge_sort_keys(d_keys, d_keys, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t merge_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Compare comp = {},
                            cudaStream_t stream = 0) {
  return detail::merge_sort_allocating<Key, detail::no_value>(keys_in, keys_out, nullptr, nullptr, n, comp, stream);
}

/// merge_sort_pairs with stream-ordered temp storage, as the merge_sort_keys
/// overload without d_temp.
///
/// @code
/// tilesort::merge_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::greater{}, stream);
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t merge_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                             std::int64_t n, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::merge_sort_allocating(keys_in, keys_out, values_in, values_out, n, comp, stream);
}

}  // namespace tilesort
