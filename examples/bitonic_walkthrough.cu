// bitonic_walkthrough: the bitonic network step by step.
//
// 1. The article's 8 keys [3,7,4,8,6,2,1,5] through the network that tilesort
//    runs (detail/bitonic_plan.cuh, the "flip" form: the first stage of each
//    merge compares i with its mirror i ^ (2m-1), later stages i with i ^ s;
//    the lower slot always gets the smaller key), printed stage by stage by a
//    host reference that uses the same schedule as the device sort.
// 2. 5 keys: slots 5..7 are virtual +infinity and are never touched.
// 3. How many global passes the device sort makes for n = 2^10 .. 2^28.
// 4. On a GPU: the same 8 keys through tilesort::bitonic_sort_keys, and 512
//    keys sorted by one block with tilesort::block_bitonic_sort, verified.
#include <tilesort/block/block_bitonic_sort.cuh>
#include <tilesort/detail/bitonic_plan.cuh>
#include <tilesort/device/bitonic_sort.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "common/example_util.cuh"

namespace {

using tilesort::detail::bitonic_network_stage;
using tilesort::detail::bitonic_partner;
using tilesort::detail::bitonic_stage;
using tilesort::detail::bitonic_stage_count;
using tilesort::detail::ceil_log2;

void print_keys(const std::vector<int>& keys, int n) {
  std::printf("[");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (static_cast<int>(i) < n) {
      std::printf("%s%d", i ? "," : "", keys[i]);
    } else {
      std::printf("%s+inf", i ? "," : "");
    }
  }
  std::printf("]");
}

// The host reference: every stage of the network on n keys (virtual padding
// to the next power of two), printing the pairs it compares.
std::vector<int> walk(std::vector<int> keys) {
  const int n = static_cast<int>(keys.size());
  const int padded_log = ceil_log2(n);
  keys.resize(std::size_t(1) << padded_log, 0);  // shown as +inf, never read
  std::printf("  start                      ");
  print_keys(keys, n);
  std::printf("\n");
  for (int s = 0; s < bitonic_stage_count(padded_log); ++s) {
    const bitonic_stage stage = bitonic_network_stage(s);
    int swaps = 0;
    std::printf("  merge %d, %s i^%-6d", 1 << stage.merge_log, stage.flip() ? "flip   " : "stride ",
                stage.flip() ? (1 << stage.merge_log) - 1 : 1 << stage.bit);
    for (int i = 0; i < static_cast<int>(keys.size()); ++i) {
      const int j = static_cast<int>(bitonic_partner(i, stage));
      if (j <= i || j >= n) continue;  // j >= n: +inf stays where it is
      if (keys[j] < keys[i]) {
        std::swap(keys[i], keys[j]);
        ++swaps;
      }
    }
    print_keys(keys, n);
    std::printf("  %d swap%s\n", swaps, swaps == 1 ? "" : "s");
  }
  keys.resize(n);
  return keys;
}

__global__ void sort_one_block(int* data) {
  using sorter = tilesort::block_bitonic_sort<int, 512>;
  __shared__ sorter::temp_storage storage;
  int key = data[threadIdx.x];
  sorter(storage).sort(key);
  data[threadIdx.x] = key;
}

}  // namespace

int main() {
  const std::vector<int> article = {3, 7, 4, 8, 6, 2, 1, 5};
  std::printf("1. The article's 8 keys, stage by stage (flip form; i ^ (2m-1) = mirror in the block of m)\n");
  const std::vector<int> host_sorted = walk(article);
  const bool host_ok = std::is_sorted(host_sorted.begin(), host_sorted.end());
  std::printf("  host reference: %s\n\n", host_ok ? "sorted" : "NOT SORTED");

  std::printf("2. 5 keys: slots 5..7 are virtual +inf, comparisons with them are skipped\n");
  const std::vector<int> five = walk({9, 1, 8, 2, 7});
  std::printf("  host reference: %s\n\n", std::is_sorted(five.begin(), five.end()) ? "sorted" : "NOT SORTED");

  using u32_policy = tilesort::detail::bitonic_sort_policy_for<unsigned, tilesort::detail::no_value>::type;
  const auto u32_plan = [](std::int64_t n) {
    return tilesort::detail::bitonic_plan::make(n, u32_policy::tile::tile_log, u32_policy::run_log,
                                                u32_policy::fused_runs);
  };
  std::printf("3. Global passes of the device sort (u32 keys: tiles of 2^%d, up to %d stages per global pass;\n"
              "   on sm_90 n <= 65536 is one cluster launch instead)\n  ",
              u32_policy::tile::tile_log, u32_plan(2).global_span());
  for (int k = 10; k <= 28; k += 2) std::printf("2^%d: %d   ", k, u32_plan(std::int64_t(1) << k).pass_count());
  std::printf("\n\n4. On the GPU\n");

  if (!example::cuda_device_present()) {
    std::printf("  no CUDA device: the GPU part needs one (host part above is complete)\n");
    return host_ok ? 0 : 1;
  }
  int* d_keys = nullptr;
  CHECK(cudaMalloc(&d_keys, 512 * sizeof(int)));
  CHECK(cudaMemcpy(d_keys, article.data(), article.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(tilesort::bitonic_sort_keys(d_keys, d_keys, static_cast<std::int64_t>(article.size())));
  std::vector<int> gpu8(article.size());
  CHECK(cudaMemcpy(gpu8.data(), d_keys, gpu8.size() * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("  bitonic_sort_keys on the 8 keys: ");
  print_keys(gpu8, 8);
  const bool gpu8_ok = gpu8 == host_sorted;
  std::printf("  %s\n", gpu8_ok ? "same as the host" : "DIFFERS FROM THE HOST");

  std::vector<int> keys512(512);
  std::mt19937 rng(512);
  for (int& k : keys512) k = static_cast<int>(rng() % 100000);
  CHECK(cudaMemcpy(d_keys, keys512.data(), 512 * sizeof(int), cudaMemcpyHostToDevice));
  sort_one_block<<<1, 512>>>(d_keys);
  CHECK(cudaGetLastError());
  std::vector<int> out512(512);
  CHECK(cudaMemcpy(out512.data(), d_keys, 512 * sizeof(int), cudaMemcpyDeviceToHost));
  std::sort(keys512.begin(), keys512.end());
  const bool block_ok = out512 == keys512;
  std::printf("  block_bitonic_sort<int, 512>, one block: %s (first %d, last %d)\n",
              block_ok ? "sorted, same as std::sort" : "WRONG", out512.front(), out512.back());
  CHECK(cudaFree(d_keys));
  return host_ok && gpu8_ok && block_ok ? 0 : 1;
}
