// GPU tests for host/host_sort.cuh, keys of 4 bytes: u32 and f32 (NaN and
// ±0.0) under tilesort::less, in core and out of core (a 16 MiB budget),
// every distribution of the device tests, pinned, pageable and staged arrays, sizes
// around the in-core limit and the chunk boundaries, a larger array with
// several batches per slot; each result bit for bit std::stable_sort's.
#include <tilesort/host/host_sort.cuh>

#include "common/host_sort_cases.cuh"

namespace {

using namespace tilesort_test;

TEST(HostSortKeys, InCoreWithTheDefaultBudget) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  for (host_memory memory : all_memories) {
    SCOPED_TRACE(name(memory));
    for (std::size_t n : {2, 3, 1000, 100003, 1 << 20}) {
      if (small_run() && n > 100003) continue;
      SCOPED_TRACE(n);
      expect_host_sort_keys(make_keys<std::uint32_t>(n, distribution::random, seed), 0, memory, tilesort::less{});
    }
  }
}

TEST(HostSortKeys, OutOfCoreEveryDistribution) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t n = out_of_core_items();
  ASSERT_FALSE((host_plan<std::uint32_t>(std::int64_t(n), small_budget()).in_core));
  int i = 0;
  for (distribution d : all_distributions) {
    SCOPED_TRACE(name(d));
    const host_memory memory = all_memories[i++ % 3];
    expect_host_sort_keys(make_keys<std::uint32_t>(n, d, seed), small_budget(), memory, tilesort::less{});
  }
}

TEST(HostSortKeys, FloatsWithNaNAndSignedZeros) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  for (host_memory memory : all_memories) {
    SCOPED_TRACE(name(memory));
    for (distribution d : {distribution::nan_and_zero, distribution::random, distribution::few_distinct}) {
      SCOPED_TRACE(name(d));
      expect_host_sort_keys(make_keys<float>(out_of_core_items(), d, seed), small_budget(), memory, tilesort::less{});
    }
  }
}

// Sizes either side of the in-core limit and of multiples of the chunk (out of core).
TEST(HostSortKeys, SizesAroundTheLimits) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t budget = small_budget();
  const auto probe = host_plan<std::uint32_t>(std::int64_t(out_of_core_items()), budget);
  ASSERT_EQ(cudaSuccess, probe.status);
  const std::int64_t core = probe.core_items, chunk = probe.chunk_items;
  const std::int64_t k = core / chunk + 2;  // k chunks are out of core
  for (std::int64_t n : {core, core + 1, k * chunk - 1, k * chunk, k * chunk + 1, (k + 1) * chunk + chunk / 2}) {
    SCOPED_TRACE(n);
    const auto plan = host_plan<std::uint32_t>(n, budget);
    ASSERT_EQ(cudaSuccess, plan.status);
    EXPECT_EQ(n <= core, plan.in_core);
    expect_host_sort_keys(make_keys<std::uint32_t>(std::size_t(n), distribution::random, seed), budget,
                          host_memory::pageable, tilesort::less{});
  }
}

// 2^25 keys (2^20 in the sanitizer run) in 32 MiB: tens of chunks and batches.
TEST(HostSortKeys, ManyChunksAndBatches) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t n = small_run() ? std::size_t(1) << 20 : std::size_t(1) << 25;
  const std::size_t budget = small_run() ? std::size_t(4) << 20 : std::size_t(32) << 20;
  const auto plan = host_plan<std::uint32_t>(std::int64_t(n), budget);
  ASSERT_EQ(cudaSuccess, plan.status);
  EXPECT_GE(plan.chunks, 8);
  expect_host_sort_keys(make_keys<std::uint32_t>(n, distribution::random, seed), budget, host_memory::pinned,
                        tilesort::less{});
}

}  // namespace
