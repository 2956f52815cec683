// GPU tests for host/host_sort.cuh, keys of 8 and 16 bytes: u64 under
// tilesort::less and greater, and a 16-byte struct ordered by one field
// through a user comparator (not radix-sortable: sampled splitters and the
// front door's comparison sorts; equal keys differ in the other field, so
// stability shows), out of core in 16-64 MiB, pinned, pageable and staged.
#include <tilesort/host/host_sort.cuh>

#include "common/host_sort_cases.cuh"

namespace {

using namespace tilesort_test;

struct wide_key {
  std::uint64_t major;
  std::uint64_t minor;  // not compared: records the input order
};
struct by_major {
  __host__ __device__ bool operator()(const wide_key& a, const wide_key& b) const { return a.major < b.major; }
};

std::vector<wide_key> wide_keys(std::size_t n, distribution d, std::uint64_t seed) {
  const std::vector<std::uint64_t> majors = make_keys<std::uint64_t>(n, d, seed);
  std::vector<wide_key> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = {d == distribution::random ? majors[i] % 100000 : majors[i], i};
  return keys;
}

TEST(HostSortWide, U64KeysBothOrders) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  for (distribution d : {distribution::random, distribution::few_distinct, distribution::reversed}) {
    SCOPED_TRACE(name(d));
    const auto keys = make_keys<std::uint64_t>(out_of_core_items(), d, seed);
    expect_host_sort_keys(keys, small_budget(), host_memory::pageable, tilesort::less{});
    expect_host_sort_keys(keys, small_budget(), host_memory::staged, tilesort::less{});
    expect_host_sort_keys(keys, 2 * small_budget(), host_memory::pinned, tilesort::greater{});
  }
}

TEST(HostSortWide, SixteenByteKeysWithAUserComparator) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  ASSERT_FALSE((host_plan<wide_key, tilesort::detail::no_value, by_major>(std::int64_t(out_of_core_items()),
                                                                         small_budget(), by_major{})
                    .in_core));
  int i = 0;
  for (distribution d : {distribution::random, distribution::few_distinct, distribution::all_equal,
                         distribution::sorted, distribution::nearly_sorted}) {
    SCOPED_TRACE(name(d));
    const host_memory memory = all_memories[i++ % 3];
    expect_host_sort_keys(wide_keys(out_of_core_items(), d, seed), small_budget(), memory, by_major{});
  }
}

// 2^24 16-byte keys (256 MiB) through 64 MiB.
TEST(HostSortWide, SixteenByteKeysManyChunks) {
  REQUIRE_GPU();
  SKIP_HOST_SORT_UNDER_RACECHECK();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t n = small_run() ? std::size_t(1) << 19 : std::size_t(1) << 24;
  const std::size_t budget = small_run() ? std::size_t(4) << 20 : std::size_t(64) << 20;
  expect_host_sort_keys(wide_keys(n, distribution::random, seed), budget, host_memory::pinned, by_major{});
}

}  // namespace
