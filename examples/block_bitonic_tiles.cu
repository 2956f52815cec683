// block_bitonic_tiles: the classic "a block sorts a tile" demo, generalised.
//
// launch_block_sort sorts every tile of 256 keys of a larger array on its own
// (one block per tile, one key per thread, tilesort::block_bitonic_sort), for
// any n: the last tile may be partial and needs no sentinel. The program
// sorts 10,000 keys ascending and then descending, checks every tile on the
// host, and prints the first tiles.
#include <tilesort/block/block_bitonic_sort.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "common/example_util.cuh"

namespace {

template <int Tile, typename Key, typename Compare>
__global__ void sort_tiles(Key* data, int n, Compare comp) {
  using sorter = tilesort::block_bitonic_sort<Key, Tile>;
  __shared__ typename sorter::temp_storage storage;
  const int base = blockIdx.x * Tile;
  const int valid = min(Tile, n - base);  // the last tile may be partial
  const int t = threadIdx.x;
  Key key = t < valid ? data[base + t] : Key{};
  sorter(storage).sort(key, valid, comp);
  if (t < valid) data[base + t] = key;
}

// The seed's launch_block_sort, for any key type, comparator and stream.
template <int Tile = 256, typename Key, typename Compare = tilesort::less>
cudaError_t launch_block_sort(Key* d_data, int n, Compare comp = {}, cudaStream_t stream = 0) {
  if (n <= 0) return n == 0 ? cudaSuccess : cudaErrorInvalidValue;
  const int tiles = (n + Tile - 1) / Tile;
  sort_tiles<Tile><<<tiles, Tile, 0, stream>>>(d_data, n, comp);
  return cudaGetLastError();
}

template <typename Compare>
bool tiles_sorted(const std::vector<int>& in, const std::vector<int>& out, int tile, Compare comp) {
  for (std::size_t begin = 0; begin < in.size(); begin += tile) {
    const std::size_t end = std::min(in.size(), begin + tile);
    std::vector<int> ref(in.begin() + begin, in.begin() + end);
    std::sort(ref.begin(), ref.end(), comp);
    if (!std::equal(ref.begin(), ref.end(), out.begin() + begin)) {
      std::printf("tile at %zu is wrong\n", begin);
      return false;
    }
  }
  return true;
}

void print_tile(const char* label, const std::vector<int>& keys, std::size_t begin, int count) {
  std::printf("%s", label);
  for (int i = 0; i < count; ++i) std::printf(" %d", keys[begin + i]);
  std::printf(" ...\n");
}

}  // namespace

int main() {
  constexpr int tile = 256;
  const int n = 10000;  // 39 full tiles and one of 16 keys
  std::printf("block_bitonic_tiles: %d keys, tiles of %d keys, one block per tile\n", n, tile);
  if (!example::require_device("block_bitonic_tiles")) return 0;
  std::mt19937 rng(2026);
  std::vector<int> keys(n);
  for (int& k : keys) k = static_cast<int>(rng() % 1000);

  int* d_keys = nullptr;
  CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
  std::vector<int> out(n);
  bool ok = true;

  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(launch_block_sort<tile>(d_keys, n));
  CHECK(cudaMemcpy(out.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
  ok = tiles_sorted(keys, out, tile, tilesort::less{}) && ok;
  print_tile("ascending, tile 0: ", out, 0, 12);
  print_tile("ascending, last tile (16 keys):", out, std::size_t(n / tile) * tile, 16);

  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(launch_block_sort<tile>(d_keys, n, tilesort::greater{}));
  CHECK(cudaMemcpy(out.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
  ok = tiles_sorted(keys, out, tile, tilesort::greater{}) && ok;
  print_tile("descending, tile 1:", out, tile, 12);

  CHECK(cudaFree(d_keys));
  std::printf("%s: every tile of %d keys %s\n", ok ? "OK" : "FAILED", tile, ok ? "matches std::sort" : "checked");
  return ok ? 0 : 1;
}
