// device/radix_sort.cuh — stable device-wide radix sort of keys or
// key-value pairs: bool, 8/16/32/64-bit integers, float, double, __half,
// __nv_bfloat16 under tilesort::less or tilesort::greater, or any key under
// a tilesort::bits_order (a functor from the key to order-preserving
// unsigned bits); any trivially copyable value; 64-bit sizes.
//
// The result is bit for bit the merge sort's under the same comparator:
// stable, NaN last in both orders, -0.0 and +0.0 equivalent, every key's
// bits kept. Keys are sorted by their image (detail/radix_order.cuh), 8 bits
// per digit:
//   1. histogram (radix_sort/histogram.cuh): one read of the keys counts
//      every digit; the last block makes each digit's starts and the
//      schedule. A digit the same in every key is skipped (small integers in
//      wide types, index payloads, keys of few high bits cost fewer passes).
//      From the policy's hybrid_min_keys to hybrid_max_keys keys of 4 bytes
//      or more, it also chooses between two sorts (radix_choose_buckets in
//      detail/radix_sort_plan.cuh): where the keys spread over the top
//      varying digits, the hybrid sort, else LSD.
//   2. one onesweep pass per digit that runs (radix_sort/onesweep.cuh): one
//      read and one write of every key and value, offsets by decoupled
//      look-back, least significant digit first. LSD: every varying digit,
//      the last pass writes the output. Hybrid: the top one or two varying
//      digits alone, which groups the keys into buckets that share them.
//   3. hybrid only (radix_sort/buckets.cuh): a read of the keys finds each
//      bucket's start; for integer keys alone a block per bucket sorts it in
//      shared memory where it fits the plan's tile and its keys spread; the
//      segmented sort sorts every other bucket on chip, all its bits (a warp
//      or a block per bucket). Either way one more read and write.
// Cost: a zeroing of the control block (a memset), 1 + 8 x sizeof(image) / 8
// launches (skipped passes return at once), in place one more, hybrid plans
// the segmented sort's launches more; DRAM traffic, LSD: (1 + 2P) key reads
// and writes and 2P value reads and writes for P passes that run; hybrid
// with B bucket digits: (4 + 2B) key and (2 + 2B) value reads and writes.
// No host synchronisation: the schedule stays on the device, so the call
// can be captured in a CUDA graph.
// Temp storage: n keys and n values (the alternate buffer, also the bucket
// sort's scratch), a 17 KB control block and the look-back ring (a slot per
// tile, at most 16384 tiles x 256 digits x 8 bytes = 32 MB); hybrid plans add
// the bucket starts (8 x 256^B bytes, with bucket tiles as much again for
// their ends) and the segmented sort's lists (about 80 bytes per bucket). In
// place (keys_out == keys_in, values likewise) works. n above
// detail::radix_max_keys (2^40) is refused.
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
#include "radix_sort/buckets.cuh"
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

// The values the hybrid sort's buckets carry: the output's.
template <typename Value, typename OutValue>
using radix_bucket_value = std::conditional_t<has_values<Value>, OutValue, no_value>;

// The segmented sort that sorts the hybrid sort's buckets: 256^digits
// offsets-described buckets, in place, the alternate buffers its scratch.
template <typename Key, typename Value, typename OutValue>
segmented_setup<Key, radix_bucket_value<Value, OutValue>> radix_bucket_setup(std::int64_t n, std::int64_t buckets) {
  return segmented_setup<Key, radix_bucket_value<Value, OutValue>>(n, buckets, n, true, false, true, true);
}

// The hybrid sort's limits for n keys (bucket_digits 0: LSD only).
template <typename Policy, typename Key, typename Order>
radix_hybrid_limits radix_hybrid_for(std::int64_t n) {
  radix_hybrid_limits hybrid;
  if (Policy::hybrid_min_keys > 0 && n >= Policy::hybrid_min_keys && n <= Policy::hybrid_max_keys &&
      radix_passes_for<Key, Order>() > radix_bucket_digits) {
    hybrid.bucket_digits = n <= std::int64_t(radix_bins) * Policy::one_digit_bucket_keys ? 1 : 2;
    hybrid.largest_bucket = Policy::largest_bucket;
    hybrid.min_passes_saved = Policy::hybrid_min_passes_saved;
  }
  return hybrid;
}

// Whether the hybrid sort's buckets may go to the bucket tiles
// (radix_sort/buckets.cuh): keys alone whose equivalent keys are identical.
template <typename Key, typename Value, typename Order>
inline constexpr bool radix_bucket_tiles = !has_values<Value> && equivalence_is_identity<Key, Order>;

// The bucket tiles' shape for n keys in `buckets` buckets (-1: none).
template <typename Policy, typename Key, typename Value, typename Order>
int radix_bucket_tile_plan(std::int64_t n, std::int64_t buckets) {
  if constexpr (radix_bucket_tiles<Key, Value, Order>) {
    int capacity[Policy::bucket_tile_shapes];
    for (int k = 0; k < Policy::bucket_tile_shapes; ++k) capacity[k] = Policy::bucket_tile_capacity(k);
    return radix_bucket_tile_for(n, buckets, capacity, Policy::bucket_tile_shapes, Policy::bucket_tile_min_mean);
  } else {
    return -1;
  }
}

template <typename Policy, typename Key, typename Value, typename Order, typename OutValue = Value>
radix_sort_plan make_radix_sort_plan_for(std::int64_t n) {
  const radix_hybrid_limits hybrid = radix_hybrid_for<Policy, Key, Order>(n);
  const radix_sort_shape shape{Policy::tile_items, Policy::ring_tiles, Policy::window, radix_passes_for<Key, Order>(),
                               hybrid};
  if (hybrid.bucket_digits == 0) return make_radix_sort_plan(n, sizeof(Key), value_bytes_of<Value>, shape);
  // The alternate values also serve as the buckets' scratch of output values.
  const std::size_t value_bytes = std::max(value_bytes_of<Value>, value_bytes_of<radix_bucket_value<Value, OutValue>>);
  const std::int64_t buckets = std::int64_t(1) << (8 * hybrid.bucket_digits);
  return make_radix_sort_plan(n, sizeof(Key), value_bytes, shape,
                              radix_bucket_setup<Key, Value, OutValue>(n, buckets).total_bytes,
                              radix_bucket_tile_plan<Policy, Key, Value, Order>(n, buckets));
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
                                         plan.hybrid, skip_unless_zero));
  for (int pass = 0; pass < passes; ++pass)
    TILESORT_RETURN_IF_ERROR(launch_kernel(onesweep, static_cast<unsigned>(onesweep_grid), policy::threads,
                                           onesweep_shared, stream, true, buffers, image, control, ring, done, pass,
                                           plan.ring, static_cast<unsigned>(plan.tiles), pass == passes - 1));
  if (in_place)
    TILESORT_RETURN_IF_ERROR(launch_kernel(radix_finish_kernel<Key, Value, OutValue>,
                                           static_cast<unsigned>(onesweep_grid), policy::threads, 0, stream, true,
                                           buffers, static_cast<const radix_control*>(control)));
  if (plan.hybrid.bucket_digits == 0) return cudaSuccess;
  if constexpr (policy::hybrid_min_keys > 0) {  // the buckets (radix_sort/buckets.cuh)
    using bucket_value = radix_bucket_value<Value, OutValue>;
    auto* starts = reinterpret_cast<std::int64_t*>(base + plan.offsets_offset);
    constexpr auto find_starts = radix_bucket_starts_kernel<policy::bucket_start_items, Key, image_type>;
    unsigned starts_grid = 0;
    TILESORT_RETURN_IF_ERROR(remembered_grid<find_starts>(policy::bucket_start_threads, 0, starts_grid));
    starts_grid = static_cast<unsigned>(std::min<std::int64_t>(
        starts_grid,
        ceil_div(plan.n + 1, std::int64_t(policy::bucket_start_threads) * policy::bucket_start_items)));
    TILESORT_RETURN_IF_ERROR(launch_kernel(find_starts, starts_grid, policy::bucket_start_threads, 0, stream, true,
                                           static_cast<const Key*>(keys_out), plan.n, image,
                                           static_cast<const radix_control*>(control), plan.hybrid.bucket_digits,
                                           starts));
    const std::int64_t* ends = starts + 1;
    if constexpr (radix_bucket_tiles<Key, Value, Order>) {
      if (plan.bucket_tile >= 0) {
        auto* tile_ends = reinterpret_cast<std::int64_t*>(base + plan.ends_offset);
        TILESORT_RETURN_IF_ERROR(launch_radix_bucket_tiles<policy>(plan.bucket_tile, keys_out, starts, tile_ends,
                                                                   plan.buckets, image, stream));
        ends = tile_ends;
      }
    }
    const auto setup = radix_bucket_setup<Key, Value, OutValue>(plan.n, plan.buckets);
    bucket_value* values = nullptr;
    bucket_value* values_scratch = nullptr;
    if constexpr (pairs) {
      values = values_out;
      values_scratch = reinterpret_cast<bucket_value*>(base + plan.values_offset);
    }
    return segmented_sort_general<true>(setup, base + plan.buckets_offset, static_cast<const Key*>(keys_out), keys_out,
                                        static_cast<const bucket_value*>(values), values,
                                        offsets_source<std::int64_t>{starts, ends, plan.buckets, plan.n},
                                        nullptr, order, stream, sort_options{},
                                        reinterpret_cast<Key*>(base + plan.keys_offset), values_scratch);
  } else {
    return cudaErrorInvalidValue;  // (no policy without hybrid sizes plans with buckets)
  }
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
  const radix_sort_plan plan = make_radix_sort_plan_for<Policy, Key, Value, Order, OutValue>(n);
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
  return detail::sort_with_stream_temp(keys_in, keys_out, n, stream, [&](void* d_temp, std::size_t& temp_bytes) {
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
  return detail::sort_with_stream_temp(keys_in, keys_out, values_in, values_out, n, stream,
                                       [&](void* d_temp, std::size_t& temp_bytes) {
    return radix_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, order, stream);
  });
}

}  // namespace tilesort
