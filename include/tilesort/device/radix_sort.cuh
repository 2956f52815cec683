// device/radix_sort.cuh — stable device-wide LSD radix sort of keys or
// key-value pairs: bool, 8/16/32/64-bit integers, float, double, __half,
// __nv_bfloat16 under tilesort::less or tilesort::greater, or any key under
// a tilesort::bits_order (a functor from the key to order-preserving
// unsigned bits); any trivially copyable value; 64-bit sizes.
//
// The result is bit for bit the merge sort's under the same comparator:
// stable, NaN last in both orders, -0.0 and +0.0 equivalent, every key's
// bits kept. Keys are sorted by their image (detail/radix_order.cuh), 8 bits
// per pass, least significant digit first:
//   1. histogram (radix_sort/histogram.cuh): one read of the keys counts
//      every digit; the last block makes each digit's starts and the
//      schedule. A digit the same in every key is skipped (small integers in
//      wide types, index payloads, keys of few high bits cost fewer passes).
//   2. one onesweep pass per remaining digit (radix_sort/onesweep.cuh): one
//      read and one write of every key and value, offsets by decoupled
//      look-back; the last pass writes the output.
// Cost: a zeroing of the control block (a memset), 1 + 8 x sizeof(image) / 8
// launches (skipped passes return at once), in place one more; DRAM traffic
// (1 + 2P) key reads and writes and 2P value reads and writes for P passes
// that run. No host synchronisation: the schedule stays on the device, so
// the call can be captured in a CUDA graph.
// Temp storage: n keys and n values (the alternate buffer), a 17 KB control
// block and the look-back ring (a slot per tile, at most 16384 tiles x 256
// digits x 8 bytes = 32 MB). In place (keys_out == keys_in, values likewise)
// works. n above detail::radix_max_keys (2^40) is refused.
//
//   std::size_t temp_bytes = 0;
//   tilesort::radix_sort_keys(nullptr, temp_bytes, d_in, d_out, n);          // size query
//   cudaMallocAsync(&d_temp, temp_bytes, stream);
//   tilesort::radix_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::greater{}, stream);
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/launch.cuh"
#include "../detail/radix_order.cuh"
#include "../detail/radix_sort_plan.cuh"
#include "../detail/temp_storage.cuh"
#include "../detail/values.cuh"
#include "radix_sort/histogram.cuh"
#include "radix_sort/onesweep.cuh"
#include "radix_sort/policy.cuh"

namespace tilesort {
namespace detail {

template <typename Key, typename Value>
using radix_policy_for = radix_sort_policy<sizeof(Key), value_bytes_of<Value>>;

template <typename Key, typename Order>
constexpr int radix_passes_for() {
  using bits_type = typename radix_image_of<Key, Order>::type::bits_type;
  return static_cast<int>(sizeof(bits_type));  // 8-bit digits
}

template <typename Policy, typename Key, typename Value, typename Order>
radix_sort_plan make_radix_sort_plan_for(std::int64_t n) {
  const radix_sort_shape shape{Policy::tile_items, Policy::ring_tiles, Policy::window, radix_passes_for<Key, Order>()};
  return make_radix_sort_plan(n, sizeof(Key), value_bytes_of<Value>, shape);
}

// Launches the whole sort. Arguments are checked; `temp` holds the plan's
// bytes; n >= 2. `skip_unless_zero` (null: never skipped): a device word
// set before this call's first kernel; nonzero, nothing runs (the front
// door's probe chose another sort).
template <typename Policy, typename Key, typename Value, typename OutValue, typename Order>
cudaError_t radix_sort_launch(const radix_sort_plan& plan, void* temp, const Key* keys_in, Key* keys_out,
                              const Value* values_in, OutValue* values_out, Order order, cudaStream_t stream,
                              const unsigned* skip_unless_zero = nullptr) {
  using policy = Policy;
  using image_of = radix_image_of<Key, Order>;
  using image_type = typename image_of::type;
  constexpr int passes = radix_passes_for<Key, Order>();
  constexpr bool pairs = has_values<Value>;
  const image_type image = image_of::make(order);
  char* base = static_cast<char*>(temp);
  radix_buffers<Key, Value, OutValue> buffers{keys_in,
                                              keys_out,
                                              reinterpret_cast<Key*>(base + plan.keys_offset),
                                              values_in,
                                              values_out,
                                              pairs ? reinterpret_cast<Value*>(base + plan.values_offset) : nullptr,
                                              plan.n};
  auto* control = reinterpret_cast<radix_control*>(base + plan.control_offset);
  auto* ring = reinterpret_cast<unsigned long long*>(base + plan.ring_offset);
  auto* done = reinterpret_cast<unsigned*>(base + plan.done_offset);
  const bool in_place = keys_in == keys_out ||
                        (pairs && static_cast<const void*>(values_in) == static_cast<const void*>(values_out));

  using wide_counts = radix_histogram_storage<policy, passes>;
  using narrow_counts = radix_histogram_storage<policy, passes, radix_histogram_narrow>;
  constexpr auto histogram_wide = radix_histogram_kernel<policy, passes, wide_counts::copies, Key, image_type>;
  constexpr auto histogram_narrow = radix_histogram_kernel<policy, passes, narrow_counts::copies, Key, image_type>;
  constexpr auto onesweep = radix_onesweep_kernel<policy, Key, Value, OutValue, image_type>;
  constexpr std::size_t onesweep_shared = sizeof(radix_onesweep_storage<policy, Key, Value>);
  static_assert(alignof(radix_onesweep_storage<policy, Key, Value>) <= 16, "dynamic shared memory is 16-byte aligned");
  static_assert(onesweep_shared <= 99 * 1024, "the policy's tile fits the shared memory of a block on every GPU from sm_80");
  unsigned histogram_resident = 0, onesweep_resident = 0;
  // The lane-private counters where the GPU allows a block their 128 KB.
  int device = 0, block_shared_limit = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  TILESORT_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&block_shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const bool wide = wide_counts::bytes + 1024 <= std::size_t(block_shared_limit);  // + the kernel's own
  const auto histogram = wide ? histogram_wide : histogram_narrow;
  const std::size_t histogram_shared = wide ? wide_counts::bytes : narrow_counts::bytes;
  TILESORT_RETURN_IF_ERROR(
      wide ? remembered_grid<histogram_wide>(policy::histogram_threads, histogram_shared, histogram_resident)
           : remembered_grid<histogram_narrow>(policy::histogram_threads, histogram_shared, histogram_resident));
  TILESORT_RETURN_IF_ERROR(remembered_grid<onesweep>(policy::threads, onesweep_shared, onesweep_resident));
  const std::int64_t histogram_step = std::int64_t(policy::histogram_threads) * policy::histogram_items;
  int sms = 0;
  TILESORT_RETURN_IF_ERROR(device_sm_count(sms));
  const std::int64_t histogram_grid =
      std::min<std::int64_t>({ceil_div(plan.n, histogram_step), std::int64_t(sms) * policy::histogram_blocks_per_sm,
                              std::int64_t(histogram_resident)});
  // At most a window of tiles in flight, so look-back rarely waits at its end.
  const std::int64_t onesweep_grid =
      std::min<std::int64_t>({plan.tiles, std::int64_t(onesweep_resident), std::int64_t(policy::window)});

  TILESORT_RETURN_IF_ERROR(cudaMemsetAsync(base + plan.zero_offset, 0, plan.zero_bytes, stream));
  TILESORT_RETURN_IF_ERROR(launch_kernel(histogram, static_cast<unsigned>(histogram_grid), policy::histogram_threads,
                                         histogram_shared, stream, false, keys_in, plan.n, image, control, in_place,
                                         skip_unless_zero));
  for (int pass = 0; pass < passes; ++pass)
    TILESORT_RETURN_IF_ERROR(launch_kernel(onesweep, static_cast<unsigned>(onesweep_grid), policy::threads,
                                           onesweep_shared, stream, true, buffers, image, control, ring, done, pass,
                                           plan.ring, static_cast<unsigned>(plan.tiles), pass == passes - 1));
  if (!in_place) return cudaSuccess;
  return launch_kernel(radix_finish_kernel<Key, Value, OutValue>, static_cast<unsigned>(onesweep_grid),
                       policy::threads, 0, stream, true, buffers, static_cast<const radix_control*>(control));
}

// Size query, argument checks, then n <= 1 by copies and the rest by
// radix_sort_launch. `generated_values`: values_in is ignored and the
// values are the keys' input positions (Value an integer type able to hold
// n - 1), stored as OutValue. Policy: radix_policy_for, except in tests.
template <typename Policy, typename Key, typename Value, typename OutValue, typename Order>
cudaError_t radix_sort_two_phase(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                 const Value* values_in, OutValue* values_out, std::int64_t n, Order order,
                                 cudaStream_t stream, bool generated_values = false) {
  static_assert(radix_sortable<Key, Order>,
                "radix sorts take bool, integer and floating keys under tilesort::less / tilesort::greater, "
                "or any key under a tilesort::bits_order");
  constexpr bool pairs = has_values<Value>;
  if (n < 0 || n > radix_max_keys) return cudaErrorInvalidValue;
  const radix_sort_plan plan = make_radix_sort_plan_for<Policy, Key, Value, Order>(n);
  if (d_temp == nullptr) {
    temp_bytes = plan.total_bytes > 0 ? plan.total_bytes : min_temp_bytes;
    return cudaSuccess;
  }
  const void* values_checked = generated_values ? static_cast<const void*>(values_out) : values_in;
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_checked, values_out, pairs, n));
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, plan.total_bytes));
  if (n == 0) return cudaSuccess;
  if (n == 1) {
    if (keys_in != keys_out)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (pairs) {
      if (generated_values) {  // position 0
        TILESORT_RETURN_IF_ERROR(cudaMemsetAsync(values_out, 0, sizeof(OutValue), stream));
      } else if (static_cast<const void*>(values_in) != static_cast<const void*>(values_out)) {
        static_assert(!pairs || sizeof(OutValue) >= sizeof(Value), "");
        TILESORT_RETURN_IF_ERROR(
            cudaMemcpyAsync(values_out, values_in, sizeof(Value), cudaMemcpyDeviceToDevice, stream));
      }
    }
    return cudaSuccess;
  }
  return radix_sort_launch<Policy>(plan, d_temp, keys_in, keys_out, generated_values ? nullptr : values_in, values_out,
                                   order, stream);
}

}  // namespace detail

// ------------------------------------------------------------------ public API
/// Stable radix sort of n keys: keys_out[0, n) = keys_in[0, n) ordered by
/// `order` (tilesort::less, tilesort::greater, or a tilesort::bits_order for
/// a user key), exactly as merge_sort_keys orders them under the same
/// comparator. Call with d_temp == nullptr to get temp_bytes (nothing else
/// happens). keys_out may equal keys_in.
///
/// @param d_temp     device temp storage, or nullptr for the size query
/// @param temp_bytes size of d_temp; set by the size query
/// @param keys_in    device input keys
/// @param keys_out   device output keys
/// @param n          number of keys (64-bit, at most 2^40)
/// @param order      tilesort::less, tilesort::greater or a tilesort::bits_order
/// @param stream     stream the kernels run on
/// @return cudaSuccess, or the first CUDA or argument error (nothing launched then)
///
/// @code
/// std::size_t bytes = 0;
/// tilesort::radix_sort_keys(nullptr, bytes, d_in, d_out, n);   // size query
/// void* d_temp; cudaMalloc(&d_temp, bytes);
/// tilesort::radix_sort_keys(d_temp, bytes, d_in, d_out, n, tilesort::greater{}, stream);
/// @endcode
template <typename Key, typename Order = less>
cudaError_t radix_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n,
                            Order order = {}, cudaStream_t stream = 0) {
  using policy = detail::radix_policy_for<Key, detail::no_value>;
  return detail::radix_sort_two_phase<policy, Key, detail::no_value, detail::no_value>(
      d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n, order, stream);
}

/// Stable radix sort of n (key, value) pairs by key; values (any trivially
/// copyable type) travel with their keys. keys_out may equal keys_in,
/// values_out values_in. Parameters as radix_sort_keys, plus the device
/// arrays values_in and values_out.
///
/// @code
/// tilesort::radix_sort_pairs(nullptr, bytes, d_keys, d_keys, d_vals, d_vals, n);   // size query
/// tilesort::radix_sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n);    // in place
/// @endcode
template <typename Key, typename Value, typename Order = less>
cudaError_t radix_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                             const Value* values_in, Value* values_out, std::int64_t n, Order order = {},
                             cudaStream_t stream = 0) {
  return detail::radix_sort_two_phase<detail::radix_policy_for<Key, Value>>(
      d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, order, stream);
}

/// radix_sort_keys with stream-ordered temp storage (cudaMallocAsync /
/// cudaFreeAsync on `stream`); graph-capturable. A failed allocation returns
/// cudaErrorMemoryAllocation with nothing written.
///
/// @code
/// tilesort::radix_sort_keys(d_keys, d_keys, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Order = less>
cudaError_t radix_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Order order = {},
                            cudaStream_t stream = 0) {
  TILESORT_RETURN_IF_ERROR(detail::check_sort_args(keys_in, keys_out, nullptr, nullptr, false, n));
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return radix_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, order, stream);
  });
}

/// radix_sort_pairs with stream-ordered temp storage, as the radix_sort_keys
/// overload without d_temp.
///
/// @code
/// tilesort::radix_sort_pairs(d_keys, d_keys, d_vals, d_vals, n, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Value, typename Order = less>
cudaError_t radix_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                             std::int64_t n, Order order = {}, cudaStream_t stream = 0) {
  TILESORT_RETURN_IF_ERROR(detail::check_sort_args(keys_in, keys_out, values_in, values_out, true, n));
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return radix_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, order, stream);
  });
}

}  // namespace tilesort
