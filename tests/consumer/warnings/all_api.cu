// all_api.cu — one translation unit that instantiates tilesort's public API as
// a user would: the tile levels (warp_sort, block_sort, block_bitonic_sort) in
// kernels, and every device sort (merge, bitonic, locality, segmented; keys and
// pairs; two-phase and allocating forms) with tilesort::less, tilesort::greater
// and a user comparator, and the host sort once.
// scripts/check-warnings.sh compiles it with the flag sets users commonly pass
// and fails on any warning from tilesort's headers. It is compiled, never run.
#include <tilesort/tilesort.cuh>

#include <cstddef>
#include <cstdint>

namespace {

// A user comparator: descending by absolute value.
struct by_magnitude {
  __host__ __device__ bool operator()(int a, int b) const { return (a < 0 ? -a : a) > (b < 0 ? -b : b); }
};

template <typename Compare>
__global__ void tile_kernels(int* data, float* values, Compare comp) {
  int keys[4];
  float vals[4];
  for (int i = 0; i < 4; ++i) {
    keys[i] = data[threadIdx.x * 4 + i];
    vals[i] = values[threadIdx.x * 4 + i];
  }
  tilesort::warp_sort(keys, comp);
  tilesort::warp_sort<16>(keys, 37, comp);
  tilesort::warp_sort_pairs(keys, vals, comp);

  using sorter = tilesort::block_sort<int, 128, 4>;
  using pair_sorter = tilesort::block_sort<int, 128, 4, float>;
  using bitonic = tilesort::block_bitonic_sort<int, 128>;
  using bitonic_pairs = tilesort::block_bitonic_sort<int, 128, float>;
  __shared__ union {
    typename sorter::temp_storage keys;
    typename pair_sorter::temp_storage pairs;
    typename bitonic::temp_storage bitonic_keys;
    typename bitonic_pairs::temp_storage bitonic_pairs;
  } storage;
  sorter(storage.keys).sort(keys, comp);
  __syncthreads();
  sorter(storage.keys).sort(keys, 300, comp);
  __syncthreads();
  pair_sorter(storage.pairs).sort_pairs(keys, vals, comp);
  __syncthreads();
  int one = keys[0];
  float one_value = vals[0];
  bitonic(storage.bitonic_keys).sort(one, comp);
  __syncthreads();
  bitonic(storage.bitonic_keys).sort(one, 100, comp);
  __syncthreads();
  bitonic_pairs(storage.bitonic_pairs).sort_pairs(one, one_value, comp);
  keys[0] = one;
  vals[0] = one_value;
  for (int i = 0; i < 4; ++i) {
    data[threadIdx.x * 4 + i] = keys[i];
    values[threadIdx.x * 4 + i] = vals[i];
  }
}

// Each family once, the three comparators spread over them (a warning depends
// on the code path, not on which comparator runs it; one instantiation of
// everything per comparator would triple the compile time).
cudaError_t device_sorts(int* keys, float* values, std::int64_t n, cudaStream_t stream) {
  std::size_t bytes = 0;
  void* temp = nullptr;
  const tilesort::less less;
  const tilesort::greater greater;
  const by_magnitude user;
  const auto rows = tilesort::segments::uniform(1000);
  TILESORT_RETURN_IF_ERROR(tilesort::merge_sort_keys(temp, bytes, keys, keys, n, less, stream));
  TILESORT_RETURN_IF_ERROR(tilesort::merge_sort_pairs(keys, keys, values, values, n, user, stream));
  TILESORT_RETURN_IF_ERROR(tilesort::bitonic_sort_keys(temp, bytes, keys, keys, n, greater, stream));
  TILESORT_RETURN_IF_ERROR(tilesort::bitonic_sort_pairs(keys, keys, values, values, n, user, stream));
  TILESORT_RETURN_IF_ERROR(tilesort::locality_sort_keys(keys, keys, n, user, stream));
  TILESORT_RETURN_IF_ERROR(tilesort::locality_sort_pairs(temp, bytes, keys, keys, values, values, n, less, stream));
  TILESORT_RETURN_IF_ERROR(tilesort::segmented_sort_keys(keys, keys, n, rows, greater, stream));
  TILESORT_RETURN_IF_ERROR(
      tilesort::segmented_sort_pairs(temp, bytes, keys, keys, values, values, n, rows, user, stream));
  tile_kernels<<<1, 128, 0, stream>>>(keys, values, less);
  tile_kernels<<<1, 128, 0, stream>>>(keys, values, user);
  return cudaGetLastError();
}

// The host level once: pairs (the values' path) under the user comparator
// (sampled splitters, the front door's comparison sorts).
cudaError_t host_sorts(int* h_keys, float* h_values, std::int64_t n) {
  return tilesort::host_sort_pairs(h_keys, h_values, n, by_magnitude{});
}

}  // namespace

cudaError_t instantiate_all(int* keys, float* values, std::int64_t n, cudaStream_t stream) {
  TILESORT_RETURN_IF_ERROR(device_sorts(keys, values, n, stream));
  return host_sorts(keys, values, n);
}
