// Host tests for detail/host_sort_plan.cuh: the in-core decision, the
// out-of-core layout inside the budget (slots, chunks, batches, samples, tree
// depth), budgets too small, the bucket ends and batches, and a simulation of
// the whole out-of-core sort from the plan alone (samples, splitter tree,
// stable partition of each chunk, pieces per chunk, batches sorted, large
// buckets copied or sorted again) checked item for item against
// std::stable_sort.
#include <algorithm>
#include <cstring>
#include <random>
#include <tilesort/comparators.cuh>
#include <tilesort/detail/host_sort_plan.cuh>
#include <tilesort/host/host_sort/policy.cuh>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort_test::fresh_seed;

// Temp storage models: linear in the items, plus a constant (as the device
// sorts' are, roughly).
const auto sort_temp = [](std::int64_t c) { return std::size_t(c) * 12 + 4096; };
const auto sample_temp = [](std::int64_t c) { return std::size_t(c) * 8 + 4096; };
const auto partition_temp = [](std::int64_t c) { return std::size_t(c) * 8 + 65536; };

host_sort_plan plan_for(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes, std::size_t budget,
                        const host_sort_shape& shape = tilesort::host_sort_policy::shape()) {
  return make_host_sort_plan(n, key_bytes, value_bytes, budget, shape, sort_temp, sample_temp, partition_temp);
}

// A shape small enough for simulations of a few hundred thousand items.
host_sort_shape small_shape() {
  host_sort_shape s = tilesort::host_sort_policy::shape();
  s.min_chunk = 256;
  s.min_batch = 256;
  s.oversampling = 16;
  return s;
}

TEST(HostSortPlan, InCoreWhenItemsAndTempFit) {
  const std::size_t budget = std::size_t(64) << 20;
  const host_sort_plan p = plan_for(std::int64_t(1) << 20, 4, 0, budget);
  ASSERT_EQ(cudaSuccess, p.status);
  EXPECT_TRUE(p.in_core);
  EXPECT_LE(p.device_bytes, budget);
  EXPECT_EQ(p.device_bytes, p.core.total);
  EXPECT_GE(p.core.offset[sort_temp_at] - p.core.offset[sort_keys_at], std::size_t(1) << 22);
  EXPECT_EQ(p.link_bytes(), std::size_t(8) << 20);
  // The largest in-core count depends on the budget alone.
  const host_sort_plan q = plan_for(std::int64_t(1) << 30, 4, 0, budget);
  EXPECT_EQ(p.core_items, q.core_items);
  EXPECT_FALSE(q.in_core);
  EXPECT_TRUE(plan_for(p.core_items, 4, 0, budget).in_core);
  EXPECT_FALSE(plan_for(p.core_items + 1, 4, 0, budget).in_core);
}

TEST(HostSortPlan, OutOfCoreLayoutFitsTheBudget) {
  for (std::size_t key : {4, 8, 16}) {
    for (std::size_t value : {0, 4, 8}) {
      for (std::size_t budget : {std::size_t(16) << 20, std::size_t(64) << 20, std::size_t(4) << 30}) {
        for (std::int64_t n : {std::int64_t(1) << 22, std::int64_t(1) << 25, (std::int64_t(1) << 28) + 7}) {
          const host_sort_plan p = plan_for(n, key, value, budget);
          SCOPED_TRACE(testing::Message() << "key " << key << " value " << value << " budget " << budget << " n " << n);
          if (p.in_core) {
            EXPECT_LE(p.device_bytes, budget);
            continue;
          }
          if (p.status != cudaSuccess) {  // only where the budget really is small for n
            EXPECT_LE(budget, std::size_t(64) << 20);
            continue;
          }
          EXPECT_LE(p.tree_bytes + 2 * p.slot_bytes, budget);
          EXPECT_LE(p.device_bytes, budget);
          EXPECT_LE(p.chunk.total, p.slot_bytes);
          EXPECT_LE(p.batch.total, p.slot_bytes);
          EXPECT_LE(p.sample.total, p.slot_bytes);
          EXPECT_LE(p.core.total, p.device_bytes);
          EXPECT_GE(p.chunks * p.chunk_items, n);
          EXPECT_LT((p.chunks - 1) * p.chunk_items, n);
          EXPECT_EQ(n, (p.chunks - 1) * p.chunk_items + p.chunk_size(p.chunks - 1));
          EXPECT_LE(p.chunk_items, std::int64_t(1) << 31);  // positions are 32-bit
          EXPECT_GE((std::int64_t(1) << p.levels) * (p.batch_items / 2), n);
          EXPECT_LE((std::size_t(1) << p.levels) * key, tilesort::host_sort_policy::max_tree_bytes);
          EXPECT_LE(p.tree_bytes, p.slot_offset(0));
          EXPECT_GT(p.samples, p.splitters());
          EXPECT_LE(p.chunks * p.buckets(), tilesort::host_sort_policy::max_table_entries);
          EXPECT_EQ(p.link_bytes(), std::size_t(n) * (key + value) * 4);
        }
      }
    }
  }
}

TEST(HostSortPlan, BadArgumentsAndSmallBudgets) {
  EXPECT_EQ(cudaErrorInvalidValue, plan_for(-1, 4, 0, std::size_t(1) << 30).status);
  // A megabyte cannot hold two slots of min_chunk pairs for 2^30 items.
  EXPECT_EQ(cudaErrorInvalidValue, plan_for(std::int64_t(1) << 30, 16, 8, std::size_t(1) << 20).status);
  // Nothing fits in no memory, not even one item out of core.
  EXPECT_EQ(cudaErrorInvalidValue, plan_for(1000, 4, 0, 0).status);
  // 2^40 keys in 16 MiB: the tree would have to be deeper than max_levels.
  EXPECT_EQ(cudaErrorInvalidValue, plan_for(std::int64_t(1) << 40, 4, 0, std::size_t(16) << 20).status);
  // A few items fit a small budget (host_sort_keys returns before planning for n <= 1).
  EXPECT_TRUE(plan_for(1000, 4, 0, std::size_t(1) << 16).in_core);
}

TEST(HostSortPlan, FillEndsAndPieces) {
  std::uint32_t ends[7] = {0, 3, 0, 0, 10, 0, 12};  // buckets 0, 2, 3, 5 empty
  host_sort_fill_ends(ends, 7);
  const std::uint32_t want[7] = {0, 3, 3, 3, 10, 10, 12};
  for (int b = 0; b < 7; ++b) EXPECT_EQ(want[b], ends[b]) << b;
  EXPECT_EQ(0, host_sort_piece_of(ends, 0, 1).size);
  EXPECT_EQ(3, host_sort_piece_of(ends, 1, 2).size);
  const host_sort_piece middle = host_sort_piece_of(ends, 2, 5);
  EXPECT_EQ(3, middle.begin);
  EXPECT_EQ(7, middle.size);
  EXPECT_EQ(12, host_sort_piece_of(ends, 0, 7).size);
}

TEST(HostSortPlan, BatchesCoverTheBucketsInOrder) {
  // Bucket 3 (equivalent keys) and bucket 6 (between splitters) exceed a batch of 10.
  const std::vector<std::int64_t> sizes = {4, 5, 0, 30, 2, 9, 11, 1, 0, 0, 10};
  const std::vector<host_sort_batch> batches = host_sort_batches(sizes, 10);
  struct want_batch {
    int first, end;
    std::int64_t begin, size;
    host_sort_action action;
  };
  const want_batch want[] = {{0, 3, 0, 9, host_sort_action::sort},    {3, 4, 9, 30, host_sort_action::copy},
                             {4, 5, 39, 2, host_sort_action::sort},   {5, 6, 41, 9, host_sort_action::sort},
                             {6, 7, 50, 11, host_sort_action::resort}, {7, 10, 61, 1, host_sort_action::sort},
                             {10, 11, 62, 10, host_sort_action::sort}};
  ASSERT_EQ(std::size(want), batches.size());
  for (std::size_t i = 0; i < batches.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(want[i].first, batches[i].first_bucket);
    EXPECT_EQ(want[i].end, batches[i].end_bucket);
    EXPECT_EQ(want[i].begin, batches[i].begin);
    EXPECT_EQ(want[i].size, batches[i].size);
    EXPECT_EQ(int(want[i].action), int(batches[i].action));
  }
  EXPECT_TRUE(host_sort_batches({0, 0, 0}, 10).empty());
}

// ------------------------------------------------------------------ simulation
// Items are (key, input position); the comparator sees keys only, so the
// result is checked for stability through the positions.
struct item {
  std::uint32_t key;
  std::uint32_t position;
};
struct by_key {
  __host__ __device__ bool operator()(const item& a, const item& b) const { return a.key < b.key; }
};

struct simulation {
  host_sort_shape shape;
  std::size_t budget;
  int resorts = 0, copies = 0;

  host_sort_plan plan(std::int64_t n) const { return plan_for(n, sizeof(item), 0, budget, shape); }

  // Out of core (or in core) as host_sorter does it, on the host.
  void sort(item* items, std::int64_t n) {
    const host_sort_plan p = plan(n);
    ASSERT_EQ(cudaSuccess, p.status);
    if (p.in_core) {
      std::stable_sort(items, items + n, by_key{});
      return;
    }
    std::vector<item> samples(std::size_t(p.samples));
    for (int i = 0; i < p.samples; ++i) samples[i] = items[sample_position(i, p.samples, n)];
    std::stable_sort(samples.begin(), samples.end(), by_key{});
    std::vector<item> tree(std::size_t(1) << p.levels);
    for (int slot = 1; slot <= p.splitters(); ++slot)
      tree[slot] = samples[splitter_sample_rank(splitter_tree_rank(slot, p.levels), p.samples, p.splitters())];
    // Pass 1.
    const int buckets = p.buckets();
    std::vector<item> scratch(static_cast<std::size_t>(n));
    std::vector<std::uint32_t> table(std::size_t(p.chunks * buckets));
    for (std::int64_t c = 0; c < p.chunks; ++c) {
      const std::int64_t m = p.chunk_size(c), begin = p.chunk_begin(c);
      std::vector<std::pair<std::uint32_t, std::uint32_t>> order(static_cast<std::size_t>(m));
      for (std::int64_t i = 0; i < m; ++i)
        order[i] = {std::uint32_t(classify_key(tree.data(), p.levels, items[begin + i], by_key{})), std::uint32_t(i)};
      std::stable_sort(order.begin(), order.end(), [](auto a, auto b) { return a.first < b.first; });
      std::uint32_t* ends = &table[std::size_t(c * buckets)];
      for (std::int64_t i = 0; i < m; ++i) {
        scratch[begin + i] = items[begin + order[i].second];
        if (i + 1 == m || order[i + 1].first != order[i].first) ends[order[i].first] = std::uint32_t(i + 1);
      }
    }
    // Pass 2.
    std::vector<std::int64_t> sizes(std::size_t(buckets), 0);
    for (std::int64_t c = 0; c < p.chunks; ++c) {
      host_sort_fill_ends(&table[std::size_t(c * buckets)], buckets);
      for (int b = 0; b < buckets; ++b) sizes[b] += host_sort_piece_of(&table[std::size_t(c * buckets)], b, b + 1).size;
    }
    const std::vector<host_sort_batch> batches = host_sort_batches(sizes, p.batch_items);
    for (const host_sort_batch& b : batches) {
      std::int64_t at = b.begin;
      for (std::int64_t c = 0; c < p.chunks; ++c) {
        const host_sort_piece piece = host_sort_piece_of(&table[std::size_t(c * buckets)], b.first_bucket, b.end_bucket);
        std::copy_n(scratch.begin() + p.chunk_begin(c) + piece.begin, piece.size, items + at);
        at += piece.size;
      }
      ASSERT_EQ(b.begin + b.size, at);
      if (b.action == host_sort_action::sort) {
        ASSERT_LE(b.size, p.batch_items);
        std::stable_sort(items + b.begin, items + b.begin + b.size, by_key{});
      }
      copies += b.action == host_sort_action::copy;
    }
    for (const host_sort_batch& b : batches) {
      if (b.action != host_sort_action::resort) continue;
      ++resorts;
      sort(items + b.begin, b.size);
    }
  }
};

void expect_simulated_sort(const std::vector<std::uint32_t>& keys, std::size_t budget, int* copies = nullptr) {
  std::vector<item> items(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) items[i] = {keys[i], std::uint32_t(i)};
  std::vector<item> want = items;
  std::stable_sort(want.begin(), want.end(), by_key{});
  simulation sim{small_shape(), budget};
  ASSERT_FALSE(sim.plan(std::int64_t(keys.size())).in_core);
  sim.sort(items.data(), std::int64_t(items.size()));
  for (std::size_t i = 0; i < items.size(); ++i) {
    ASSERT_EQ(want[i].key, items[i].key) << i;
    ASSERT_EQ(want[i].position, items[i].position) << i;
  }
  if (copies != nullptr) *copies = sim.copies;
}

constexpr std::size_t sim_budget = std::size_t(1) << 20;  // items of 8 bytes: a batch of about 2^15

TEST(HostSortSimulation, RandomKeys) {
  std::mt19937_64 rng(fresh_seed());
  for (std::int64_t n : {300000, 262144, 262145, 500001}) {
    std::vector<std::uint32_t> keys(static_cast<std::size_t>(n));
    for (auto& k : keys) k = std::uint32_t(rng());
    expect_simulated_sort(keys, sim_budget);
  }
}

TEST(HostSortSimulation, FewDistinctSortedReversed) {
  std::mt19937_64 rng(fresh_seed());
  const std::size_t n = 300000;
  std::vector<std::uint32_t> few(n), sorted(n), reversed(n), twenty_bits(n);
  for (std::size_t i = 0; i < n; ++i) {
    few[i] = std::uint32_t(rng() % 16);
    sorted[i] = std::uint32_t(i);
    reversed[i] = std::uint32_t(n - i);
    twenty_bits[i] = std::uint32_t(rng() & 0xfffff);
  }
  expect_simulated_sort(few, sim_budget);
  expect_simulated_sort(sorted, sim_budget);
  expect_simulated_sort(reversed, sim_budget);
  expect_simulated_sort(twenty_bits, sim_budget);
}

TEST(HostSortSimulation, AllEqualKeysAreOneCopiedBucket) {
  int copies = 0;
  expect_simulated_sort(std::vector<std::uint32_t>(300000, 7u), sim_budget, &copies);
  EXPECT_EQ(1, copies);
}

TEST(HostSortSimulation, OneHeavyKeyAmongRandomOnes) {
  std::mt19937_64 rng(fresh_seed());
  std::vector<std::uint32_t> keys(400000);
  for (auto& k : keys) k = rng() % 2 ? 12345u : std::uint32_t(rng());
  int copies = 0;
  expect_simulated_sort(keys, sim_budget, &copies);
  EXPECT_EQ(1, copies);
}

// A bucket between splitters larger than a batch is sorted again: the
// samples (their positions are fixed) are spread over all keys, every other
// key crowds between two of them.
TEST(HostSortSimulation, OversizedBucketIsSortedAgain) {
  std::mt19937_64 rng(fresh_seed());
  simulation sim{small_shape(), sim_budget};
  sim.shape.oversampling = 1;
  const std::int64_t n = 400000;
  const host_sort_plan p = sim.plan(n);
  ASSERT_EQ(cudaSuccess, p.status);
  ASSERT_LE(p.samples, 1 << 11);
  std::vector<item> items(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    items[i] = {(1u << 31) + 1u + std::uint32_t(rng() % (1u << 20)), std::uint32_t(i)};
  for (int j = 0; j < p.samples; ++j)
    items[sample_position(j, p.samples, n)].key = std::uint32_t((std::uint64_t(j) << 32) / std::uint64_t(p.samples));
  std::vector<item> want = items;
  std::stable_sort(want.begin(), want.end(), by_key{});
  sim.sort(items.data(), n);
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(want[i].key, items[i].key) << i;
    ASSERT_EQ(want[i].position, items[i].position) << i;
  }
  EXPECT_GE(sim.resorts, 1);
}

}  // namespace
