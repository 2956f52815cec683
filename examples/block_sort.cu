// examples/block_sort.cu — a block sorts a tile: 128 threads x 8 keys.
//
// A random array of 2^20 keys is cut into tiles of 1024 keys; one block sorts
// each tile in registers with tilesort::block_sort (stable, ascending) and
// writes it back. The host then checks every tile against std::sort and
// prints a short report. Without a GPU it says so and exits cleanly.
#include <tilesort/block/block_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "common/example_util.cuh"

namespace {

constexpr int block_threads = 128;
constexpr int items_per_thread = 8;
constexpr int tile_items = block_threads * items_per_thread;

using tile_sorter = tilesort::block_sort<std::uint32_t, block_threads, items_per_thread>;

__global__ void __launch_bounds__(block_threads) sort_tiles(std::uint32_t* keys, std::int64_t n) {
  __shared__ tile_sorter::temp_storage storage;
  const std::int64_t tile_begin = static_cast<std::int64_t>(blockIdx.x) * tile_items;
  const int valid = static_cast<int>(n - tile_begin < tile_items ? n - tile_begin : tile_items);

  // Blocked load: thread t takes positions [t*8, t*8 + 8) of the tile.
  std::uint32_t tile[items_per_thread];
  for (int i = 0; i < items_per_thread; ++i) {
    const int p = threadIdx.x * items_per_thread + i;
    tile[i] = p < valid ? keys[tile_begin + p] : 0;
  }
  tile_sorter(storage).sort(tile, valid);  // the last tile may be partial
  for (int i = 0; i < items_per_thread; ++i) {
    const int p = threadIdx.x * items_per_thread + i;
    if (p < valid) keys[tile_begin + p] = tile[i];
  }
}

}  // namespace

int main() {
  if (!example::require_device("block_sort")) return 0;

  const std::int64_t n = (std::int64_t(1) << 20) + 300;  // a partial last tile
  std::vector<std::uint32_t> keys(n);
  std::mt19937 rng(2024);
  for (auto& k : keys) k = rng();

  std::uint32_t* d_keys = nullptr;
  CHECK(cudaMalloc(&d_keys, n * sizeof(std::uint32_t)));
  const int tiles = static_cast<int>((n + tile_items - 1) / tile_items);
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  sort_tiles<<<tiles, block_threads>>>(d_keys, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<std::uint32_t> sorted(n);
  CHECK(cudaMemcpy(sorted.data(), d_keys, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d_keys));

  int bad_tiles = 0;
  for (int t = 0; t < tiles; ++t) {
    const std::int64_t begin = std::int64_t(t) * tile_items, end = std::min(n, begin + tile_items);
    std::vector<std::uint32_t> expected(keys.begin() + begin, keys.begin() + end);
    std::sort(expected.begin(), expected.end());
    if (!std::equal(expected.begin(), expected.end(), sorted.begin() + begin)) ++bad_tiles;
  }
  std::printf("block_sort example: %d tiles of %d x %d keys (%lld keys), %d sorted correctly, %d wrong\n", tiles,
              block_threads, items_per_thread, static_cast<long long>(n), tiles - bad_tiles, bad_tiles);
  std::printf("first tile starts: %u %u %u ... ends %u\n", sorted[0], sorted[1], sorted[2], sorted[tile_items - 1]);
  return bad_tiles == 0 ? 0 : 1;
}
