// examples/segmented_demo.cu — the segmented-sort demonstration (ModernGPU's,
// reference/moderngpu-segmented-and-locality-sort.txt): 100 random keys in
// 0..99, segment heads {4, 19, 22, 56, 61, 78, 81, 84, 94, 97} (11 segments,
// the head at 0 omitted), each segment sorted on its own, printed in rows of
// 10 with the heads marked by '*'. Keys alone, then pairs whose values are the
// original indices (the sort is stable: equal keys keep their input order).
//
// The same segments are then given the two other ways the library accepts
// for ragged segments (offsets and a head-flag bitfield), to show that the
// descriptions agree.
#include <cstdint>
#include <cstdio>
#include <random>
#include <tilesort/device/segmented_sort.cuh>
#include <vector>

#include "common/example_util.cuh"

namespace {

constexpr int n = 100;
constexpr int num_heads = 10;
const int heads[num_heads] = {4, 19, 22, 56, 61, 78, 81, 84, 94, 97};

bool is_head(int i) {
  for (int h : heads)
    if (h == i) return true;
  return false;
}

// Rows of 10, "index:" then the values; a segment head is marked by '*'.
void print(const char* title, const std::vector<int>& values, bool mark_heads) {
  example::print_rows(title, values.size(), [&](std::size_t i) {
    std::printf(mark_heads && is_head(static_cast<int>(i)) ? "  *%2d" : "   %2d", values[i]);
  });
}

}  // namespace

int main() {
  if (!example::require_device("segmented_demo")) return 0;

  std::mt19937 rng(2024);
  std::vector<int> keys(n), indices(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = static_cast<int>(rng() % 100);
    indices[i] = i;
  }

  int *d_keys = nullptr, *d_values = nullptr, *d_heads = nullptr;
  CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
  CHECK(cudaMalloc(&d_values, n * sizeof(int)));
  CHECK(cudaMalloc(&d_heads, num_heads * sizeof(int)));
  CHECK(cudaMemcpy(d_heads, heads, sizeof heads, cudaMemcpyHostToDevice));
  const auto segments = tilesort::segments::heads(static_cast<const int*>(d_heads), num_heads);

  std::printf("SEG-SORT KEYS DEMONSTRATION\n\n");
  print("Input keys:", keys, false);
  std::printf("Segment heads:\n       ");
  for (int h : heads) std::printf("   %2d", h);
  std::printf("\n\n");

  // Keys, two-phase: ask for the temp size, allocate, sort in place.
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::size_t temp_bytes = 0;
  CHECK(tilesort::segmented_sort_keys(nullptr, temp_bytes, d_keys, d_keys, n, segments));
  void* d_temp = nullptr;
  CHECK(cudaMalloc(&d_temp, temp_bytes));
  CHECK(tilesort::segmented_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n, segments));
  std::vector<int> sorted(n);
  CHECK(cudaMemcpy(sorted.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
  print("Sorted keys (segment heads are marked by *):", sorted, true);

  // Pairs, with the overload that allocates stream-ordered temp storage.
  std::printf("SEG-SORT PAIRS DEMONSTRATION\n\n");
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_values, indices.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(tilesort::segmented_sort_pairs(d_keys, d_keys, d_values, d_values, n, segments));
  std::vector<int> pair_keys(n), pair_values(n);
  CHECK(cudaMemcpy(pair_keys.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(pair_values.data(), d_values, n * sizeof(int), cudaMemcpyDeviceToHost));
  print("Sorted keys (segment heads are marked by *):", pair_keys, true);
  print("Sorted indices (segment heads are marked by *):", pair_values, true);

  // The same segments as offsets and as head flags give the same result.
  std::vector<int> offsets = {0};
  for (int h : heads) offsets.push_back(h);
  offsets.push_back(n);
  std::vector<std::uint32_t> flags((n + 31) / 32, 0);
  for (int h : heads) flags[h / 32] |= 1u << (h % 32);
  int* d_offsets = nullptr;
  std::uint32_t* d_flags = nullptr;
  CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_flags, flags.size() * sizeof(std::uint32_t)));
  CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_flags, flags.data(), flags.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  bool agree = true;
  for (int form = 0; form < 2; ++form) {
    CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    if (form == 0) {
      const int* begin = d_offsets;
      CHECK(tilesort::segmented_sort_keys(d_keys, d_keys, n, tilesort::segments::offsets(begin, begin + 1, num_heads + 1)));
    } else {
      CHECK(tilesort::segmented_sort_keys(d_keys, d_keys, n, tilesort::segments::flags(d_flags)));
    }
    std::vector<int> again(n);
    CHECK(cudaMemcpy(again.data(), d_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
    agree = agree && again == sorted;
  }
  std::printf("offsets and head flags give the same result as heads: %s\n", agree ? "yes" : "NO");

  // Each segment sorted, and stably (equal keys in input order).
  bool ok = true;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
    for (int i = offsets[s] + 1; i < offsets[s + 1]; ++i)
      ok = ok && sorted[i - 1] <= sorted[i] && pair_keys[i] == sorted[i] &&
           (pair_keys[i - 1] < pair_keys[i] || pair_values[i - 1] < pair_values[i]);
  std::printf("every segment sorted, equal keys in input order: %s\n", ok ? "yes" : "NO");

  cudaFree(d_temp);
  cudaFree(d_keys);
  cudaFree(d_values);
  cudaFree(d_heads);
  cudaFree(d_offsets);
  cudaFree(d_flags);
  return ok && agree ? 0 : 1;
}
