// examples/merge_sort.cu — the device merge sort, two ways.
//
// 1. The blog's case (reference/merge-sort-with-cuda-blog.txt): 10^7 random
//    uint8_t keys, sorted on the GPU and checked against std::sort.
// 2. Key-value pairs, stable: records sorted by a user comparator (descending
//    score); records with equal scores keep their input order.
//
// Two-phase temp storage (ask for the size, allocate, sort) for the first,
// the overload that allocates stream-ordered temp storage for the second.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <tilesort/device/merge_sort.cuh>
#include <vector>

#include "common/example_util.cuh"

struct by_score_descending {
  __host__ __device__ bool operator()(float a, float b) const { return a > b; }
};

int main() {
  if (!example::require_device("merge_sort")) return 0;

  // ---- 1. 10^7 uint8_t keys (the blog's case)
  const std::int64_t n = 10'000'000;
  std::vector<std::uint8_t> keys(n);
  std::mt19937 rng(1);
  for (auto& k : keys) k = static_cast<std::uint8_t>(rng());

  std::uint8_t* d_keys = nullptr;
  CHECK(cudaMalloc(&d_keys, n));
  CHECK(cudaMemcpy(d_keys, keys.data(), n, cudaMemcpyHostToDevice));

  std::size_t temp_bytes = 0;
  CHECK(tilesort::merge_sort_keys(nullptr, temp_bytes, d_keys, d_keys, n));  // size query only
  void* d_temp = nullptr;
  CHECK(cudaMalloc(&d_temp, temp_bytes));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  CHECK(tilesort::merge_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n));  // in place, ascending
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float gpu_ms = 0;
  CHECK(cudaEventElapsedTime(&gpu_ms, start, stop));

  std::vector<std::uint8_t> sorted(n);
  CHECK(cudaMemcpy(sorted.data(), d_keys, n, cudaMemcpyDeviceToHost));
  const auto cpu_start = std::chrono::steady_clock::now();
  std::sort(keys.begin(), keys.end());
  const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cpu_start).count();
  const bool keys_ok = keys == sorted;
  std::printf(
      "10^7 uint8_t keys: GPU merge sort %.3f ms (%d passes over the keys, %zu temp bytes), "
      "std::sort %.1f ms: %s\n",
      gpu_ms, tilesort::merge_sort_passes<std::uint8_t>(n), temp_bytes, cpu_ms, keys_ok ? "identical" : "MISMATCH");

  // ---- 2. stable pairs with a user comparator
  const std::int64_t records = 12;
  std::vector<float> scores = {3.5f, 9.0f, 3.5f, 7.25f, 9.0f, 1.0f, 7.25f, 3.5f, 9.0f, 0.5f, 7.25f, 1.0f};
  std::vector<int> ids(records);
  for (int i = 0; i < records; ++i) ids[i] = 100 + i;
  float* d_scores = nullptr;
  int* d_ids = nullptr;
  CHECK(cudaMalloc(&d_scores, records * sizeof(float)));
  CHECK(cudaMalloc(&d_ids, records * sizeof(int)));
  CHECK(cudaMemcpy(d_scores, scores.data(), records * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_ids, ids.data(), records * sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(tilesort::merge_sort_pairs(d_scores, d_scores, d_ids, d_ids, records, by_score_descending{}, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<float> sorted_scores(records);
  std::vector<int> sorted_ids(records);
  CHECK(cudaMemcpy(sorted_scores.data(), d_scores, records * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sorted_ids.data(), d_ids, records * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("records by descending score (equal scores keep their input order):\n");
  for (int i = 0; i < records; ++i) std::printf("  score %5.2f  id %d\n", sorted_scores[i], sorted_ids[i]);

  std::vector<int> order(records);
  for (int i = 0; i < records; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  bool pairs_ok = true;
  for (int i = 0; i < records; ++i) pairs_ok = pairs_ok && sorted_ids[i] == ids[order[i]];
  std::printf("pairs: %s\n", pairs_ok ? "stable and correct" : "MISMATCH");

  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_temp));
  CHECK(cudaFree(d_keys));
  CHECK(cudaFree(d_scores));
  CHECK(cudaFree(d_ids));
  return keys_ok && pairs_ok ? 0 : 1;
}
