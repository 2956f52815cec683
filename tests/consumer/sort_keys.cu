// sort_keys.cu — the program both consumer projects build (find_package and
// add_subdirectory): it sorts 100,000 int keys with tilesort::merge_sort_keys
// and checks the result. Exit 0 when sorted, or when there is no GPU (the
// build was the check); 1 on any error or a wrong result.
#include <tilesort/device/merge_sort.cuh>

#include <cstdio>
#include <cstdint>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("tilesort consumer: built; no CUDA device here, so the sort was not run\n");
    return 0;
  }
  const std::int64_t n = 100000;
  std::vector<int> keys(n);
  for (std::int64_t i = 0; i < n; ++i) keys[i] = static_cast<int>((i * 7919) % n);
  int* d_keys = nullptr;
  void* d_temp = nullptr;
  std::size_t temp_bytes = 0;
  cudaError_t error = cudaMalloc(&d_keys, n * sizeof(int));
  if (error == cudaSuccess) error = cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  if (error == cudaSuccess) error = tilesort::merge_sort_keys(nullptr, temp_bytes, d_keys, d_keys, n);
  if (error == cudaSuccess) error = cudaMalloc(&d_temp, temp_bytes);
  if (error == cudaSuccess) error = tilesort::merge_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n);
  if (error == cudaSuccess) error = cudaMemcpy(keys.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d_temp);
  cudaFree(d_keys);
  if (error != cudaSuccess) {
    std::printf("tilesort consumer: CUDA error: %s\n", cudaGetErrorString(error));
    return 1;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    if (keys[i] != i) {
      std::printf("tilesort consumer: wrong key at %lld\n", static_cast<long long>(i));
      return 1;
    }
  }
  std::printf("tilesort consumer: sorted %lld keys on the GPU\n", static_cast<long long>(n));
  return 0;
}
