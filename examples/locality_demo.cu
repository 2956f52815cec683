// examples/locality_demo.cu — the locality-sort demonstration (ModernGPU's,
// reference/moderngpu-segmented-and-locality-sort.txt): keys that start near
// their sorted place (keys[i] = i + rand(0, 25)) sorted with
// tilesort::locality_sort_keys / _pairs, printed in rows of 10. Then a larger
// nearly sorted array with the sort's statistics: how many merge tiles each
// pass merged (compared with a full merge sort, which merges every tile of
// every pass), read from pinned memory after the stream is synchronised.
#include <cstdint>
#include <cstdio>
#include <random>
#include <tilesort/device/locality_sort.cuh>
#include <vector>

#include "common/example_util.cuh"

namespace {

void print(const char* title, const std::vector<int>& values) {
  example::print_rows(title, values.size(), [&](std::size_t i) { std::printf(" %4d", values[i]); });
}

}  // namespace

int main() {
  if (!example::require_device("locality_demo")) return 0;

  // ---- the demonstration: 100 keys, i + rand(0, 25)
  const int n = 100;
  std::mt19937 rng(7);
  std::vector<int> keys(n), indices(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = i + static_cast<int>(rng() % 26);
    indices[i] = i;
  }
  int *d_keys = nullptr, *d_values = nullptr;
  CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
  CHECK(cudaMalloc(&d_values, n * sizeof(int)));

  std::printf("LOCALITY SORT KEYS DEMONSTRATION\n\n");
  print("Input keys:", keys);
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(tilesort::locality_sort_keys(d_keys, d_keys, n));  // allocates its temp storage on the stream
  std::vector<int> sorted(n);
  CHECK(cudaMemcpy(sorted.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
  print("Sorted keys:", sorted);

  std::printf("LOCALITY SORT PAIRS DEMONSTRATION\n\n");
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_values, indices.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(tilesort::locality_sort_pairs(d_keys, d_keys, d_values, d_values, n));
  std::vector<int> pair_keys(n), pair_values(n);
  CHECK(cudaMemcpy(pair_keys.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(pair_values.data(), d_values, n * sizeof(int), cudaMemcpyDeviceToHost));
  print("Sorted keys:", pair_keys);
  print("Sorted indices (equal keys keep their input order):", pair_values);
  bool ok = true;
  for (int i = 1; i < n; ++i)
    ok = ok && sorted[i - 1] <= sorted[i] && pair_keys[i] == sorted[i] &&
         (pair_keys[i - 1] < pair_keys[i] || pair_values[i - 1] < pair_values[i]);

  // ---- a larger case with statistics: 2^24 keys, i + rand() % 64
  const std::int64_t big = std::int64_t(1) << 24;
  std::vector<std::uint32_t> near(big);
  for (std::int64_t i = 0; i < big; ++i) near[i] = static_cast<std::uint32_t>(i + rng() % 64);
  std::uint32_t *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, big * sizeof(std::uint32_t)));
  CHECK(cudaMalloc(&d_out, big * sizeof(std::uint32_t)));
  CHECK(cudaMemcpy(d_in, near.data(), big * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  tilesort::sort_stats* stats = nullptr;
  CHECK(cudaMallocHost(&stats, sizeof *stats));  // pinned: the sort's kernels write it
  tilesort::sort_options options;
  options.stats = stats;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  std::size_t temp_bytes = 0;
  CHECK(tilesort::locality_sort_keys(nullptr, temp_bytes, d_in, d_out, big));
  void* d_temp = nullptr;
  CHECK(cudaMalloc(&d_temp, temp_bytes));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  CHECK(tilesort::locality_sort_keys(d_temp, temp_bytes, d_in, d_out, big, tilesort::less{}, stream, options));
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaStreamSynchronize(stream));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::vector<std::uint32_t> out(big);
  CHECK(cudaMemcpy(out.data(), d_out, big * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  for (std::int64_t i = 1; i < big; ++i) ok = ok && out[i - 1] <= out[i];
  std::printf("2^24 keys, i + rand() %% 64: %.3f ms (%.1f GKeys/s, first call: includes warm-up)\n%s", ms,
              big / (ms * 1e6), tilesort::format_sort_stats(*stats).c_str());
  std::printf("all sorted: %s\n", ok ? "yes" : "NO");

  cudaFree(d_temp);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_keys);
  cudaFree(d_values);
  cudaFreeHost(stats);
  cudaStreamDestroy(stream);
  return ok ? 0 : 1;
}
