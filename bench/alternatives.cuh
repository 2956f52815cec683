// bench/alternatives.cuh — the device-wide sorts tilesort is compared with,
// called the way their users call them:
//   cub::DeviceMergeSort::SortKeys/SortPairs   in place, caller-owned temp storage
//   cub::DeviceRadixSort::SortKeys/SortPairs   out of place, caller-owned temp storage
//   thrust::sort / stable_sort[_by_key]        in place, thrust::cuda::par.on(stream),
//                                              temp storage allocated inside every call
// Declared here, defined in alternatives_impl.cuh and explicitly instantiated
// for the benchmark's (key, value, comparator) combinations in
// alternatives_keys.cu and alternatives_pairs.cu, so the case files that use
// them (merge, bitonic) compile in parallel and instantiate nothing twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "bench.cuh"

namespace bench::alt {

// Temp query when temp == nullptr (as CUB does); V = void sorts keys only.
template <typename K, typename V, typename Compare>
cudaError_t cub_merge_sort(void* temp, std::size_t& temp_bytes, K* keys, value_t<V>* values, std::int64_t n,
                           Compare comp, cudaStream_t stream);

template <typename K, typename V>
cudaError_t cub_radix_sort(void* temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                           const value_t<V>* values_in, value_t<V>* values_out, std::int64_t n, cudaStream_t stream);

// Exceptions (thrust::system_error, std::bad_alloc) become the CUDA error they carry.
template <typename K, typename V, typename Compare>
cudaError_t thrust_sort(K* keys, value_t<V>* values, std::int64_t n, Compare comp, bool stable, cudaStream_t stream);

}  // namespace bench::alt

namespace bench {

// A row of a device-resident case: restores the input before every
// repetition and verifies the working copy (in_place) or the output after
// it; its call is set by the caller (or by measure_two_phase).
template <typename K, typename V, typename Compare>
harness::timed_call data_row(harness& h, device_data<K, V>& data, Compare comp, const std::string& impl,
                             const char* role, bool in_place) {
  return timed_call_for(impl, role, data.restore(h),
                        in_place ? verifier<K, V>(h, data.keys.get(), data.values.get(), data.n, 0, comp,
                                                  data.fingerprint)
                                 : verifier<K, V>(h, data.out_keys.get(), data.out_values.get(), data.n, 0, comp,
                                                  data.fingerprint),
                        true);
}

// cub::DeviceMergeSort on a case's data: in place, the same comparator.
template <typename K, typename V, typename Compare>
void measure_cub_merge(harness& h, device_data<K, V>& data, Compare comp) {
  const std::string impl = std::string("cub::DeviceMergeSort::Sort") + (std::is_void_v<V> ? "Keys" : "Pairs");
  measure_two_phase(h, data_row(h, data, comp, impl, "alt", true), [&](void* temp, std::size_t& bytes, cudaStream_t s) {
    return alt::cub_merge_sort<K, V>(temp, bytes, data.keys.get(), data.values.get(), data.n, comp, s);
  });
}

// cub::DeviceRadixSort on a case's data, out of place: the non-comparison
// reference (primitive keys only; nothing for the struct key).
template <typename K, typename V, typename Compare>
void measure_cub_radix(harness& h, device_data<K, V>& data, Compare comp) {
  if constexpr (!std::is_same_v<K, pair_key>) {
    harness::timed_call c = data_row(h, data, comp,
                                     std::string("cub::DeviceRadixSort::Sort") + (std::is_void_v<V> ? "Keys" : "Pairs"),
                                     "ref", false);
    c.note = "radix (reference)";
    measure_two_phase(h, c, [&](void* temp, std::size_t& bytes, cudaStream_t s) {
      return alt::cub_radix_sort<K, V>(temp, bytes, data.keys.get(), data.out_keys.get(), data.values.get(),
                                       data.out_values.get(), data.n, s);
    });
  }
}

}  // namespace bench
