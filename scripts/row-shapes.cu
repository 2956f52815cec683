// scripts/row-shapes.cu — times single row sorter shapes on packed rows (2^24 u32 or u16 keys with
// their positions), to choose packed_rows_policy's shapes. Build and run on the GPU machine:
//   nvcc -std=c++17 -O3 -arch=sm_90 --extended-lambda --expt-relaxed-constexpr -Iinclude scripts/row-shapes.cu -o row-shapes && ./row-shapes
#include <cstdio>
#include <random>
#include <vector>
#include <tilesort/device/segmented_sort.cuh>
using namespace tilesort;
using namespace tilesort::detail;
template <int Threads, int Items, bool Warp>
struct one_shape {
  struct shape { int threads; int items; };
  static constexpr int warp_block_threads = 128;
  static constexpr int warp_shape_count = Warp ? 1 : 0;
  static constexpr int block_shape_count = Warp ? 0 : 1;
  static constexpr shape warp_shape(int) { return {Threads, Items}; }
  static constexpr shape block_shape(int) { return {Threads, Items}; }
};
template <typename Key, typename Policy>
void time_shape(const char* name, const Key* in, Key* out, std::int64_t* pos, std::int64_t n, std::int64_t length) {
  using image = radix_native_image<Key, false>;
  const packed_row_keys<Key, image> packed{in, out, pos, image{}};
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaError_t e = cudaSuccess;
  for (int w = 0; w < 3; ++w) e = launch_uniform_rows<Policy, 0>(uniform_rows{n, length}, packed, packed, static_cast<const no_value*>(nullptr), static_cast<no_value*>(nullptr), length, less{}, cudaStream_t(0));
  cudaEventRecord(a);
  const int reps = 20;
  for (int r = 0; r < reps; ++r) launch_uniform_rows<Policy, 0>(uniform_rows{n, length}, packed, packed, static_cast<const no_value*>(nullptr), static_cast<no_value*>(nullptr), length, less{}, cudaStream_t(0));
  cudaEventRecord(b); cudaEventSynchronize(b);
  float ms = 0; cudaEventElapsedTime(&ms, a, b);
  printf("%-10s L=%-6lld %-14s %8.1f us %7.1f GKeys/s  %s\n", sizeof(Key) == 4 ? "u32" : "u16", (long long)length, name,
         ms * 1e3 / reps, n / (ms * 1e-3 / reps) / 1e9, cudaGetErrorString(e == cudaSuccess ? cudaGetLastError() : e));
}
#define W(T, I) time_shape<Key, one_shape<T, I, true>>("warp " #T "x" #I, in, out, pos, n, L)
#define B(T, I) time_shape<Key, one_shape<T, I, false>>("block " #T "x" #I, in, out, pos, n, L)
template <typename Key>
void run() {
  const std::int64_t total = std::int64_t(1) << 24;
  std::vector<Key> h(total); std::mt19937_64 rng(1); for (auto& k : h) k = Key(rng());
  Key *in, *out; std::int64_t* pos;
  cudaMalloc(&in, total * sizeof(Key)); cudaMalloc(&out, total * sizeof(Key)); cudaMalloc(&pos, total * 8);
  cudaMemcpy(in, h.data(), total * sizeof(Key), cudaMemcpyHostToDevice);
  std::int64_t L, n;
  L = 300; n = total / L * L;
  W(32, 16); B(64, 8); B(128, 4); B(32, 16);
  L = 1024; n = total;
  B(128, 8); B(64, 16); B(256, 4);
  L = 4096; n = total;
  B(256, 16); B(512, 8); B(128, 32);
  L = 10000; n = total / L * L;
  B(1024, 16); B(512, 32);
  cudaFree(in); cudaFree(out); cudaFree(pos);
}
int main() { run<std::uint32_t>(); run<std::uint16_t>(); }
