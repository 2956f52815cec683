// Batched rows: sort every row of a rows x length matrix at once with the
// uniform segmented sort (one launch, no scratch memory), keys and a payload.
#include <tilesort/tilesort.cuh>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "common/example_util.cuh"

int main() {
  if (!example::require_device("batched_rows")) return 0;
  const int rows = 10000, length = 300;
  const std::int64_t n = std::int64_t(rows) * length;
  std::vector<float> scores(n);
  std::vector<int> ids(n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> score(0.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    scores[i] = score(rng);
    ids[i] = static_cast<int>(i % length);  // column index: which item had this score
  }

  float* d_scores;
  int* d_ids;
  CHECK(cudaMalloc(&d_scores, n * sizeof(float)));
  CHECK(cudaMalloc(&d_ids, n * sizeof(int)));
  CHECK(cudaMemcpy(d_scores, scores.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_ids, ids.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  // Rank each row's items by descending score, in place.
  CHECK(tilesort::segmented_sort_pairs(d_scores, d_scores, d_ids, d_ids, n, tilesort::segments::uniform(length),
                                       tilesort::greater{}));
  CHECK(cudaDeviceSynchronize());

  std::vector<float> sorted(n);
  std::vector<int> sorted_ids(n);
  CHECK(cudaMemcpy(sorted.data(), d_scores, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sorted_ids.data(), d_ids, n * sizeof(int), cudaMemcpyDeviceToHost));
  std::int64_t bad = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < length; ++c) {
      const std::int64_t i = std::int64_t(r) * length + c;
      if (c > 0 && sorted[i - 1] < sorted[i]) ++bad;
      if (scores[std::int64_t(r) * length + sorted_ids[i]] != sorted[i]) ++bad;  // id still names its score
    }
  std::printf("sorted %d rows of %d (score, id) pairs by descending score: %s\n", rows, length,
              bad == 0 ? "verified" : "WRONG");
  std::printf("row 0, top 5: ");
  for (int c = 0; c < 5; ++c) std::printf("(%.3f, item %d) ", sorted[c], sorted_ids[c]);
  std::printf("\n");
  CHECK(cudaFree(d_scores));
  CHECK(cudaFree(d_ids));
  return bad == 0 ? 0 : 1;
}
