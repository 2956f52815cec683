// GPU tests for host/host_sort.cuh, pairs: u32 keys with their input
// positions as values (stability: the positions of equal keys must stay in
// order), in core and out of core, pinned, pageable and staged, many equal keys
// (one bucket of equivalent keys larger than a batch is only copied).
#include <tilesort/host/host_sort.cuh>

#include "common/host_sort_cases.cuh"

namespace {

using namespace tilesort_test;

TEST(HostSortPairs, InCoreAndOutOfCore) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  for (host_memory memory : all_memories) {
    SCOPED_TRACE(name(memory));
    expect_host_sort_pairs(make_keys<std::uint32_t>(100003, distribution::random, seed), 0, memory, tilesort::less{});
    for (distribution d : {distribution::random, distribution::few_distinct, distribution::sorted,
                           distribution::reversed, distribution::nearly_sorted}) {
      SCOPED_TRACE(name(d));
      expect_host_sort_pairs(make_keys<std::uint32_t>(out_of_core_items(), d, seed), small_budget(), memory,
                             tilesort::less{});
    }
  }
}

// Every key in one bucket: the equal bucket is far larger than a batch.
TEST(HostSortPairs, AllKeysInOneBucket) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  const std::size_t n = 2 * out_of_core_items();
  const auto plan = host_plan<std::uint32_t, std::uint32_t>(std::int64_t(n), small_budget());
  ASSERT_EQ(cudaSuccess, plan.status);
  ASSERT_GT(std::int64_t(n), plan.batch_items);
  tilesort::host_sort_stats stats;
  expect_host_sort_pairs(make_keys<std::uint32_t>(n, distribution::all_equal, seed), small_budget(),
                         host_memory::pinned, tilesort::less{}, &stats);
  EXPECT_FALSE(stats.in_core);
  EXPECT_EQ(1, stats.copied_buckets);
  EXPECT_EQ(0, stats.batches);
  // Half the keys equal, the rest random: one large copied bucket among sorted batches.
  std::vector<std::uint32_t> keys = make_keys<std::uint32_t>(n, distribution::random, seed);
  for (std::size_t i = 0; i < n; i += 2) keys[i] = 0x80000000u;
  expect_host_sort_pairs(keys, small_budget(), host_memory::pageable, tilesort::less{}, &stats);
  EXPECT_EQ(1, stats.copied_buckets);
  EXPECT_GE(stats.batches, 2);
}

// 2^24 pairs (2^20 in the sanitizer run) in 32 MiB.
TEST(HostSortPairs, ManyChunks) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t n = small_run() ? std::size_t(1) << 20 : std::size_t(1) << 24;
  const std::size_t budget = small_run() ? std::size_t(4) << 20 : std::size_t(32) << 20;
  expect_host_sort_pairs(make_keys<std::uint32_t>(n, distribution::few_distinct, seed), budget, host_memory::pinned,
                         tilesort::less{});
}

}  // namespace
