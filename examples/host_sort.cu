// examples/host_sort.cu — an array in host memory sorted on the GPU in a
// device memory budget smaller than the array (host_sort_keys), with a
// progress line, and checked against std::stable_sort.
//
// 2^26 floats (256 MiB) in 64 MiB of device memory: two passes through the
// GPU (the items cross the link twice each way). The array is ordinary
// pageable memory (std::vector), staged through pinned buffers.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <tilesort/host/host_sort.cuh>
#include <vector>

#include "common/example_util.cuh"

int main() {
  if (!example::require_device("host_sort")) return 0;
  const std::int64_t n = std::int64_t(1) << 26;
  std::vector<float> keys(static_cast<std::size_t>(n));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (auto& k : keys) k = normal(rng);
  std::vector<float> reference = keys;

  tilesort::host_sort_options options;
  options.device_memory_budget = std::size_t(64) << 20;
  options.progress = [](std::size_t done, std::size_t total) {
    std::fprintf(stderr, "\rhost_sort_keys: %5.1f%% of %.2f GB across the link", 100.0 * double(done) / double(total),
                 double(total) * 1e-9);
  };
  tilesort::host_sort_stats stats;
  options.stats = &stats;
  const auto start = std::chrono::steady_clock::now();
  CHECK(tilesort::host_sort_keys(keys.data(), n, tilesort::less{}, options));
  const double gpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "\n");

  const auto cpu_start = std::chrono::steady_clock::now();
  std::stable_sort(reference.begin(), reference.end());
  const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cpu_start).count();
  std::printf("2^26 floats in a 64 MiB budget: host_sort_keys %.1f ms (%s: %lld chunks, %lld batches), "
              "std::stable_sort %.1f ms: %s\n",
              gpu_ms, stats.in_core ? "in core" : "out of core", (long long)stats.chunks, (long long)stats.batches,
              cpu_ms, keys == reference ? "same result" : "DIFFERENT");
  return keys == reference ? 0 : 1;
}
