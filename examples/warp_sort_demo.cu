// examples/warp_sort_demo.cu — the classic warp sort: one warp of 32 threads,
// one int per thread, sorted in registers with shuffles (tilesort::warp_sort),
// no shared memory. Prints the keys before and after.
#include <tilesort/warp/warp_sort.cuh>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "common/example_util.cuh"

// Lane i loads key i, the warp sorts, lane i stores rank i.
__global__ void sort_one_warp(int* keys) {
  int key[1] = {keys[threadIdx.x]};
  tilesort::warp_sort(key);
  keys[threadIdx.x] = key[0];
}

static void print_keys(const char* label, const std::vector<int>& keys) {
  std::printf("%-7s", label);
  for (int k : keys) std::printf(" %d", k);
  std::printf("\n");
}

int main() {
  if (!example::require_device("warp_sort_demo")) return 0;

  constexpr int warp_threads = 32;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> draw(0, 999);
  std::vector<int> keys(warp_threads);
  for (int& k : keys) k = draw(rng);
  print_keys("before:", keys);

  int* d_keys = nullptr;
  CHECK(cudaMalloc(&d_keys, warp_threads * sizeof(int)));
  CHECK(cudaMemcpy(d_keys, keys.data(), warp_threads * sizeof(int), cudaMemcpyHostToDevice));
  sort_one_warp<<<1, warp_threads>>>(d_keys);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(keys.data(), d_keys, warp_threads * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d_keys));
  print_keys("after:", keys);

  const bool sorted = std::is_sorted(keys.begin(), keys.end());
  std::printf("%s\n", sorted ? "sorted" : "NOT SORTED");
  return sorted ? 0 : 1;
}
