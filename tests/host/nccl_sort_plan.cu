// Host tests for detail/nccl_sort_plan.cuh, the arithmetic of the
// distributed sort: the header census, the splitter search simulated rank by
// rank on the host (every probe counted against every rank's run, exactly as
// the kernels do) and checked against the cuts of a global stable sort, the
// planned round count as a worst-case bound (tiny probe counts, all-equal
// keys, empty and lopsided shards), the exchange plan and its rejection of
// broken cut matrices, the merge passes simulated buffer by buffer (which
// buffer each pass reads and writes, the own run read in place) against the
// global stable order, the merge tiles, and the temp layout.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include <tilesort/detail/nccl_sort_plan.cuh>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;

// ------------------------------------------------------------------ census
std::vector<shard_header> headers_for(const std::vector<std::int64_t>& sizes, std::int64_t key_bytes = 4,
                                      std::int64_t value_bytes = 0) {
  std::vector<shard_header> h;
  for (std::size_t t = 0; t < sizes.size(); ++t)
    h.push_back({shard_header_magic, 0, static_cast<std::int32_t>(t), static_cast<std::int32_t>(sizes.size()),
                 sizes[t], key_bytes, value_bytes});
  return h;
}

TEST(NcclSortCensus, SumsAndLargestShard) {
  const auto h = headers_for({5, 0, 12, 3});
  const shard_census c = take_census(h.data(), 4);
  EXPECT_EQ(cudaSuccess, c.error);
  EXPECT_EQ(20, c.n_total);
  EXPECT_EQ(12, c.n_max);
  EXPECT_EQ(0, shard_offset(h.data(), 0));
  EXPECT_EQ(5, shard_offset(h.data(), 2));
  EXPECT_EQ(17, shard_offset(h.data(), 3));
}

TEST(NcclSortCensus, EveryMismatchIsAnErrorOnEveryRank) {
  auto h = headers_for({5, 6, 7});
  h[1].key_bytes = 8;  // another key type on rank 1
  EXPECT_EQ(cudaErrorInvalidValue, take_census(h.data(), 3).error);
  h = headers_for({5, 6, 7}, 4, 4);
  h[2].value_bytes = 0;  // keys alone on one rank, pairs on the others
  EXPECT_EQ(cudaErrorInvalidValue, take_census(h.data(), 3).error);
  h = headers_for({5, 6, 7});
  h[2].magic = 0;
  EXPECT_EQ(cudaErrorInvalidValue, take_census(h.data(), 3).error);
  h = headers_for({5, 6, 7});
  h[0].ranks = 2;
  EXPECT_EQ(cudaErrorInvalidValue, take_census(h.data(), 3).error);
  h = headers_for({5, 6, max_shard_keys + 1});
  EXPECT_EQ(cudaErrorInvalidValue, take_census(h.data(), 3).error);
  // A rank's own argument error is what everyone returns (the first by rank).
  h = headers_for({5, 6, 7});
  h[2].status = cudaErrorMemoryAllocation;
  h[1].status = cudaErrorInvalidValue;
  EXPECT_EQ(cudaErrorInvalidValue, take_census(h.data(), 3).error);
}

// ------------------------------------------------------------------ search plan
TEST(NcclSortSearchPlan, RoundsShrinkTheCandidatesToOne) {
  EXPECT_EQ(0, selection_rounds(0, 1));
  EXPECT_EQ(1, selection_rounds(1, 1));
  EXPECT_EQ(2, selection_rounds(3, 1));  // 4 candidates -> 2 -> 1
  EXPECT_EQ(1, selection_rounds(7, 7));
  EXPECT_EQ(2, selection_rounds(8, 7));
  for (std::int64_t probes : {1, 2, 3, 100, 65536}) {
    for (std::int64_t n : {0LL, 1LL, 2LL, 1000LL, 1LL << 31, 1LL << 40}) {
      const int rounds = selection_rounds(n, probes);
      // (probes + 1)^rounds >= n + 1 > (probes + 1)^(rounds - 1)
      long double reach = 1;
      for (int r = 0; r < rounds; ++r) reach *= (probes + 1);
      EXPECT_GE(reach, (long double)(n + 1)) << n << " " << probes;
      if (rounds > 0) EXPECT_LT(reach / (probes + 1), (long double)(n + 1)) << n << " " << probes;
    }
  }
}

TEST(NcclSortSearchPlan, FewestRoundsThenFewestProbes) {
  for (int ranks : {2, 3, 4, 8, 16, 64, 1024}) {
    const std::int64_t most = max_selection_probes(ranks);
    EXPECT_GE(most, 1);
    EXPECT_LE(most * ranks * (ranks - 1), std::max<std::int64_t>(selection_probe_budget, ranks * (ranks - 1)));
    for (std::int64_t n : {std::int64_t(1), std::int64_t(100), std::int64_t(1) << 20, std::int64_t(1) << 28, std::int64_t(1) << 31, max_shard_keys}) {
      const selection_plan plan = make_selection_plan(ranks, n);
      EXPECT_EQ(selection_rounds(n, most), plan.rounds);
      EXPECT_EQ(plan.rounds, selection_rounds(n, plan.probes));
      if (plan.probes > 1) EXPECT_GT(selection_rounds(n, plan.probes - 1), plan.rounds);
      EXPECT_LE(plan.probes, most);
    }
  }
  // The numbers the docs quote: 2^28 keys per GPU.
  EXPECT_EQ(2, make_selection_plan(2, 1LL << 28).rounds);
  EXPECT_EQ(2, make_selection_plan(4, 1LL << 28).rounds);
  EXPECT_EQ(3, make_selection_plan(8, 1LL << 28).rounds);
  EXPECT_EQ(3, make_selection_plan(16, 1LL << 28).rounds);
}

TEST(NcclSortSearchPlan, ProbesSplitTheCandidatesEvenly) {
  for (std::int64_t lo : {0, 5}) {
    for (std::int64_t length : {0, 1, 2, 7, 8, 100, 1001}) {
      for (std::int64_t probes : {1, 2, 3, 7, 50, 2000}) {
        const cut_interval c{lo, lo + length};
        const std::int64_t group = (length + 1 + probes) / (probes + 1);
        std::int64_t previous = lo - 1;
        bool ended = false;
        for (std::int64_t i = 0; i < probes; ++i) {
          const std::int64_t p = probe_position(c, probes, i);
          if (p < 0) {
            ended = true;
            continue;
          }
          ASSERT_FALSE(ended) << "a probe after the end";
          ASSERT_GE(p, lo);
          ASSERT_LT(p, c.hi);
          ASSERT_LE(p - previous, group);  // each group of candidates at most `group`
          previous = p;
        }
        ASSERT_LE(c.hi - previous, group);
      }
    }
  }
}

TEST(NcclSortSearchPlan, UsedProbesAreThePrefixWithPositions) {
  for (std::int64_t length : {0, 1, 2, 5, 64, 1000}) {
    for (std::int64_t probes : {1, 2, 3, 63, 64, 65, 5000}) {
      const cut_interval c{7, 7 + length};
      const std::int64_t used = probes_used(c, probes);
      for (std::int64_t i = 0; i < probes; ++i)
        ASSERT_EQ(i < used, probe_position(c, probes, i) >= 0) << length << " " << probes << " " << i;
      // Narrowing keeps the cut's candidates: each outcome leaves a sub-interval.
      for (std::int64_t first = 0; first <= used; ++first) {
        const cut_interval n = narrowed_cut(c, probes, first);
        ASSERT_LE(c.lo, n.lo);
        ASSERT_LE(n.lo, n.hi);
        ASSERT_LE(n.hi, c.hi);
        ASSERT_LE(n.hi - n.lo + 1, (length + 1 + probes) / (probes + 1));
      }
    }
  }
}

TEST(NcclSortSearchPlan, FirstIntervalsHoldEveryPossibleCut) {
  EXPECT_EQ(0, first_cut_interval(0, 10, 30).hi);
  EXPECT_EQ(10, first_cut_interval(30, 10, 30).lo);
  const cut_interval c = first_cut_interval(25, 10, 30);  // the other ranks hold 20: at least 5 from here
  EXPECT_EQ(5, c.lo);
  EXPECT_EQ(10, c.hi);
  const cut_interval empty = first_cut_interval(7, 0, 30);
  EXPECT_EQ(0, empty.lo);
  EXPECT_EQ(0, empty.hi);
}

// ------------------------------------------------------------------ search, simulated
struct item {
  int key;
  int rank;
  std::int64_t index;
};

// Each rank's run after its stable local sort, by key (ties keep index order).
std::vector<std::vector<item>> runs_of(const std::vector<std::vector<int>>& shards) {
  std::vector<std::vector<item>> runs(shards.size());
  for (std::size_t t = 0; t < shards.size(); ++t) {
    for (std::size_t i = 0; i < shards[t].size(); ++i) runs[t].push_back({shards[t][i], int(t), std::int64_t(i)});
    std::stable_sort(runs[t].begin(), runs[t].end(), [](const item& a, const item& b) { return a.key < b.key; });
  }
  return runs;
}

// The cut matrix of the global stable order (by key, then rank, then index).
std::vector<std::int64_t> reference_cuts(const std::vector<std::vector<item>>& runs) {
  const int ranks = int(runs.size());
  std::vector<item> all;
  for (const auto& r : runs) all.insert(all.end(), r.begin(), r.end());
  std::stable_sort(all.begin(), all.end(), [](const item& a, const item& b) { return a.key < b.key; });
  std::vector<std::int64_t> cuts(std::size_t(ranks) * (ranks + 1), 0);
  std::int64_t target = 0;
  for (int d = 0; d <= ranks; ++d) {
    std::vector<std::int64_t> count(ranks, 0);
    for (std::int64_t g = 0; g < target; ++g) ++count[all[g].rank];
    for (int t = 0; t < ranks; ++t) cuts[t * (ranks + 1) + d] = count[t];
    if (d < ranks) target += std::int64_t(runs[d].size());
  }
  return cuts;
}

// The search as the kernels run it: every rank probes its intervals, every
// rank counts every probe (upper bound against a higher-ranked probe's key,
// lower bound against a lower-ranked one's, the position for its own), the
// counts are summed, every rank narrows. Returns the cut matrix (-1 where a
// cut was not exact after `rounds`).
std::vector<std::int64_t> simulate_search(const std::vector<std::vector<item>>& runs, std::int64_t probes, int rounds) {
  const int ranks = int(runs.size());
  std::vector<shard_header> h;
  for (int t = 0; t < ranks; ++t) h.push_back({shard_header_magic, 0, t, ranks, std::int64_t(runs[t].size()), 4, 0});
  const shard_census census = take_census(h.data(), ranks);
  std::vector<std::vector<cut_interval>> intervals(ranks);
  for (int t = 0; t < ranks; ++t)
    for (int d = 1; d < ranks; ++d)
      intervals[t].push_back(first_cut_interval(shard_offset(h.data(), d), h[t].n_local, census.n_total));
  for (int round = 0; round < rounds; ++round) {
    for (int t = 0; t < ranks; ++t) {
      for (int d = 1; d < ranks; ++d) {
        const std::int64_t target = shard_offset(h.data(), d);
        const cut_interval probed = intervals[t][d - 1];
        std::vector<std::int64_t> globals;
        for (std::int64_t i = 0; i < probes_used(probed, probes); ++i) {
          const std::int64_t position = probe_position(probed, probes, i);
          const int key = runs[t][position].key;
          std::int64_t global = 0;
          for (int u = 0; u < ranks; ++u) {
            const auto& run = runs[u];
            if (u == t) {
              global += position;
            } else if (u < t) {  // ties of a lower rank come first: upper bound
              global += std::upper_bound(run.begin(), run.end(), key, [](int k, const item& x) { return k < x.key; }) -
                        run.begin();
            } else {
              global += std::lower_bound(run.begin(), run.end(), key, [](const item& x, int k) { return x.key < k; }) -
                        run.begin();
            }
          }
          EXPECT_TRUE(globals.empty() || global > globals.back()) << "global positions must grow with the probe";
          globals.push_back(global);
        }
        // The kernel's search: the first probe at or past the target.
        const std::int64_t first =
            std::partition_point(globals.begin(), globals.end(), [&](std::int64_t g) { return g < target; }) -
            globals.begin();
        intervals[t][d - 1] = narrowed_cut(probed, probes, first);
      }
    }
  }
  std::vector<std::int64_t> cuts(std::size_t(ranks) * (ranks + 1), 0);
  for (int t = 0; t < ranks; ++t) {
    cuts[t * (ranks + 1) + ranks] = h[t].n_local;
    for (int d = 1; d < ranks; ++d) {
      const cut_interval c = intervals[t][d - 1];
      cuts[t * (ranks + 1) + d] = c.lo == c.hi ? c.lo : -1;
    }
  }
  return cuts;
}

std::vector<std::vector<int>> make_shards(std::mt19937_64& rng, const std::vector<std::int64_t>& sizes, int distinct) {
  std::vector<std::vector<int>> shards(sizes.size());
  std::uniform_int_distribution<int> key(0, distinct - 1);
  for (std::size_t t = 0; t < sizes.size(); ++t)
    for (std::int64_t i = 0; i < sizes[t]; ++i) shards[t].push_back(key(rng));
  return shards;
}

TEST(NcclSortSearch, SimulatedSearchFindsTheStableCutsInThePlannedRounds) {
  std::mt19937_64 rng(tilesort_test::fresh_seed());
  const std::vector<std::vector<std::int64_t>> layouts = {
      {100, 100},       {1, 0},          {0, 37},         {1000, 3, 0, 500},  {64, 64, 64, 64, 64, 64, 64, 64},
      {0, 0, 0, 9},     {9, 0, 0, 0},    {13, 200, 7},    {5, 5, 5, 5, 5},    {300, 1, 300, 1, 300, 1, 300}};
  for (const auto& sizes : layouts) {
    for (int distinct : {1, 3, 1000000}) {
      const auto runs = runs_of(make_shards(rng, sizes, distinct));
      const auto expected = reference_cuts(runs);
      const int ranks = int(sizes.size());
      std::int64_t n_max = 0;
      for (std::int64_t s : sizes) n_max = std::max(n_max, s);
      for (std::int64_t probes : {std::int64_t(1), std::int64_t(2), std::int64_t(5), max_selection_probes(ranks)}) {
        const int rounds = selection_rounds(n_max, probes);
        ASSERT_EQ(expected, simulate_search(runs, probes, rounds))
            << "ranks " << ranks << " distinct " << distinct << " probes " << probes << " rounds " << rounds;
      }
    }
  }
}

TEST(NcclSortSearch, OneRoundFewerLeavesACutOpen) {
  // All keys equal: rank 0's cut for boundary 1 can be anywhere in [0, 100]
  // until the last round (the bound is tight, not loose).
  const auto runs = runs_of({std::vector<int>(100, 5), std::vector<int>(100, 5)});
  for (std::int64_t probes : {1, 3, 9}) {
    const int rounds = selection_rounds(100, probes);
    const auto cuts = simulate_search(runs, probes, rounds - 1);
    EXPECT_NE(cuts.end(), std::find(cuts.begin(), cuts.end(), -1)) << probes;
    EXPECT_EQ(reference_cuts(runs), simulate_search(runs, probes, rounds));
  }
}

TEST(NcclSortSearch, SkewedKeysAllBelongToOneRank) {
  // Every key of rank 0 is larger than every key elsewhere, and rank 2's
  // keys all equal one key of rank 1: the cuts move whole shards around.
  std::vector<std::vector<int>> shards = {std::vector<int>(50, 1000), std::vector<int>(30), std::vector<int>(20, 7)};
  for (int i = 0; i < 30; ++i) shards[1][i] = i % 2 == 0 ? 7 : 3;
  const auto runs = runs_of(shards);
  ASSERT_EQ(reference_cuts(runs), simulate_search(runs, 3, selection_rounds(50, 3)));
}

// ------------------------------------------------------------------ exchange plan
TEST(NcclSortExchange, PlanFromCutsReceivesExactlyTheShard) {
  std::mt19937_64 rng(tilesort_test::fresh_seed());
  const std::vector<std::int64_t> sizes = {40, 0, 25, 35};
  const auto runs = runs_of(make_shards(rng, sizes, 10));
  const auto cuts = reference_cuts(runs);
  const auto h = headers_for(sizes);
  for (int me = 0; me < 4; ++me) {
    exchange_plan x;
    ASSERT_EQ(cudaSuccess, make_exchange_plan(cuts.data(), h.data(), 4, me, x));
    EXPECT_EQ(sizes[me], x.recv_offset[4]);
    EXPECT_EQ(sizes[me], std::accumulate(x.send_count.begin(), x.send_count.end(), std::int64_t(0)));
    for (int d = 0; d < 4; ++d) {
      exchange_plan there;
      ASSERT_EQ(cudaSuccess, make_exchange_plan(cuts.data(), h.data(), 4, d, there));
      EXPECT_EQ(x.send_count[d], there.recv_count[me]) << me << " -> " << d;
    }
  }
}

TEST(NcclSortExchange, BrokenCutMatricesAreRejected) {
  const std::vector<std::int64_t> sizes = {4, 4};
  const auto h = headers_for(sizes);
  exchange_plan x;
  // rows: 0, c(1), n_t
  std::vector<std::int64_t> good = {0, 2, 4, 0, 2, 4};
  EXPECT_EQ(cudaSuccess, make_exchange_plan(good.data(), h.data(), 2, 0, x));
  std::vector<std::int64_t> sum_off = {0, 3, 4, 0, 2, 4};  // column 1 sums to 5, not 4
  EXPECT_EQ(cudaErrorInvalidValue, make_exchange_plan(sum_off.data(), h.data(), 2, 0, x));
  std::vector<std::int64_t> inexact = {0, -1, 4, 0, 5, 4};  // a cut the search left open
  EXPECT_EQ(cudaErrorInvalidValue, make_exchange_plan(inexact.data(), h.data(), 2, 0, x));
  std::vector<std::int64_t> wrong_end = {0, 2, 3, 0, 2, 5};
  EXPECT_EQ(cudaErrorInvalidValue, make_exchange_plan(wrong_end.data(), h.data(), 2, 0, x));
}

// ------------------------------------------------------------------ merge passes
TEST(NcclSortMerge, PassCountsAndBuffers) {
  const int passes_for[] = {0, 0, 1, 2, 2, 3, 3, 3, 3, 4};  // ranks 1..9: ceil(log2 ranks)
  for (int ranks = 1; ranks <= 9; ++ranks) EXPECT_EQ(passes_for[ranks], merge_passes(ranks)) << ranks;
  for (int ranks = 2; ranks <= 70; ++ranks) {
    const int passes = merge_passes(ranks);
    EXPECT_EQ(merge_buffer::output, merge_destination(ranks, passes - 1)) << ranks;
    EXPECT_EQ(1, merge_pairs(ranks, passes - 1)) << ranks;
    for (int pass = 0; pass < passes; ++pass) {
      EXPECT_NE(merge_source(ranks, pass), merge_destination(ranks, pass));
      // With the own run in place, pass 0 reads the sorted buffer too, and no pass may write it.
      if (own_run_in_place(ranks)) EXPECT_NE(merge_buffer::sorted, merge_destination(ranks, pass));
    }
  }
}

// The merge passes on the host: buffers of items, pairs merged stably by key,
// the own run read from the sorted buffer where it stays in place.
TEST(NcclSortMerge, SimulatedPassesGiveTheStableOrder) {
  std::mt19937_64 rng(tilesort_test::fresh_seed());
  std::uniform_int_distribution<int> length(0, 40);
  for (int ranks = 2; ranks <= 19; ++ranks) {
    for (int me : {0, ranks / 2, ranks - 1}) {
      // Run s: sorted items from rank s (what rank `me` receives from s).
      std::vector<std::vector<item>> runs(ranks);
      std::vector<std::int64_t> offsets(ranks + 1, 0);
      for (int s = 0; s < ranks; ++s) {
        const int count = length(rng);
        for (int i = 0; i < count; ++i) runs[s].push_back({int(rng() % 7), s, i});
        std::stable_sort(runs[s].begin(), runs[s].end(), [](const item& a, const item& b) { return a.key < b.key; });
        offsets[s + 1] = offsets[s] + count;
      }
      const std::int64_t n = offsets[ranks];
      std::vector<item> buffers[3];
      for (auto& b : buffers) b.assign(n, item{-1, -1, -1});
      std::vector<item> sorted_buffer(5);  // the own run lives at offset 5 of the sorted buffer
      for (const item& x : runs[me]) sorted_buffer.push_back(x);
      for (int s = 0; s < ranks; ++s) {
        if (s == me && own_run_in_place(ranks)) continue;  // not copied: read in place
        std::copy(runs[s].begin(), runs[s].end(), buffers[int(merge_buffer::received)].begin() + offsets[s]);
      }
      buffers[int(merge_buffer::sorted)] = sorted_buffer;  // (only its own run matters in pass 0)
      buffers[int(merge_buffer::sorted)].resize(std::max<std::size_t>(sorted_buffer.size(), n));
      for (int pass = 0; pass < merge_passes(ranks); ++pass) {
        std::vector<item>& from = buffers[int(merge_source(ranks, pass))];
        std::vector<item> to = buffers[int(merge_destination(ranks, pass))];
        std::int64_t tiles = 0;
        for (int pair = 0; pair < merge_pairs(ranks, pass); ++pair) {
          const merge_pair_span span = merge_pair(offsets.data(), ranks, pass, pair);
          std::vector<item> a(from.begin() + span.a_begin, from.begin() + span.a_end);
          std::vector<item> b(from.begin() + span.a_end, from.begin() + span.b_end);
          if (pass == 0 && own_run_in_place(ranks)) {
            const std::vector<item> own(sorted_buffer.begin() + 5, sorted_buffer.end());
            if (span.a_run == me) a = own;
            if (span.b_run == me && span.b_run < ranks) b = own;
          }
          std::vector<item> merged;
          std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(merged),
                     [](const item& x, const item& y) { return x.key < y.key; });  // ties from a: stable
          std::copy(merged.begin(), merged.end(), to.begin() + span.a_begin);
          tiles += merge_pair_tiles(span, 16);
        }
        EXPECT_EQ(tiles, merge_pass_tiles(offsets.data(), ranks, pass, 16));
        EXPECT_LE(tiles, max_merge_tiles(n, ranks, 16));
        buffers[int(merge_destination(ranks, pass))] = to;
      }
      std::vector<item> expected;
      for (const auto& r : runs) expected.insert(expected.end(), r.begin(), r.end());
      std::stable_sort(expected.begin(), expected.end(), [](const item& a, const item& b) { return a.key < b.key; });
      const std::vector<item>& out = buffers[int(merge_buffer::output)];
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(std::make_tuple(expected[i].key, expected[i].rank, expected[i].index),
                  std::make_tuple(out[i].key, out[i].rank, out[i].index))
            << "ranks " << ranks << " me " << me << " at " << i;
    }
  }
}

// The kernels' view of a pass: every split from the split kernel's lookup,
// every tile from the tile kernel's; together they must cover each pair's
// outputs exactly once, tile by tile, with the tile's A and B ranges.
TEST(NcclSortMerge, TilesAndSplitsCoverEveryPairOnce) {
  std::mt19937_64 rng(tilesort_test::fresh_seed());
  const std::int64_t tile_items = 8;
  for (int trial = 0; trial < 300; ++trial) {
    const int ranks = 2 + int(rng() % 15);
    std::vector<std::int64_t> offsets(ranks + 1, 0);
    for (int s = 0; s < ranks; ++s) offsets[s + 1] = offsets[s] + (rng() % 3 == 0 ? 0 : std::int64_t(rng() % 40));
    for (int pass = 0; pass < merge_passes(ranks); ++pass) {
      const int pairs = merge_pairs(ranks, pass);
      std::vector<std::int64_t> first(pairs, 0), totals(pairs, 0);
      std::int64_t tiles = 0;
      for (int i = 0; i < pairs; ++i) {
        const merge_pair_span span = merge_pair(offsets.data(), ranks, pass, i);
        first[i] = tiles;
        totals[i] = span.b_end - span.a_begin;
        tiles += merge_pair_tiles(span, tile_items);
      }
      ASSERT_EQ(tiles, merge_pass_tiles(offsets.data(), ranks, pass, tile_items));
      auto first_tile = [&](int i) { return first[i]; };
      // Splits: pair i's k-th split sits at first_tile(i) + i + k, its diagonal k * T (at most the end).
      std::vector<std::int64_t> diagonal(tiles + pairs, -1);
      for (std::int64_t index = 0; index < tiles + pairs; ++index) {
        const int pair = pair_of_split(first_tile, pairs, index);
        const std::int64_t k = index - first[pair] - pair;
        ASSERT_GE(k, 0);
        ASSERT_LE(k, merge_pair_tiles({0, 0, totals[pair], 0, 0}, tile_items));
        diagonal[index] = split_diagonal(k, totals[pair], tile_items);
      }
      // Tiles: tile t covers [split, split + 1) of its pair; together every output of every pair once.
      std::vector<std::int64_t> covered(pairs, 0);
      for (std::int64_t tile = 0; tile < tiles; ++tile) {
        const int pair = pair_of_tile(first_tile, pairs, tile);
        const std::int64_t local = tile - first[pair];
        const std::int64_t split = first[pair] + pair + local;
        ASSERT_GT(totals[pair], 0) << "an empty pair owns no tile";
        ASSERT_EQ(local * tile_items, diagonal[split]);
        ASSERT_EQ(std::min(totals[pair], (local + 1) * tile_items), diagonal[split + 1]);
        covered[pair] += diagonal[split + 1] - diagonal[split];
      }
      EXPECT_EQ(totals, covered) << "ranks " << ranks << " pass " << pass;
    }
  }
}

// ------------------------------------------------------------------ temp layout
TEST(NcclSortLayout, RegionsAreAlignedAndDisjointWhereTheyLiveTogether) {
  for (int ranks : {2, 3, 8, 100}) {
    for (std::int64_t n : {0LL, 1LL, 1000LL, 1LL << 33}) {
      for (std::size_t value_bytes : {std::size_t(0), std::size_t(8)}) {
        const std::size_t local = 12345;
        const nccl_sort_layout l = make_nccl_sort_layout(ranks, n, 4, value_bytes, local, 72, 4096);
        const std::size_t offsets[] = {l.headers, l.cuts, l.own_cuts, l.run_offsets, l.intervals, l.probe_globals,
                                       l.sorted_keys, l.sorted_values, l.scratch, l.probes_out,
                                       l.probes_in, l.probe_counts, l.received_keys, l.received_values,
                                       l.merge_pairs, l.merge_splits};
        for (std::size_t o : offsets) EXPECT_EQ(0u, o % 256);
        // Control, sorted items, then scratch, in order and apart.
        EXPECT_GE(l.cuts, l.headers + sizeof(shard_header) * ranks);
        EXPECT_GE(l.sorted_values, l.sorted_keys + 4 * std::size_t(n));
        EXPECT_GE(l.scratch, l.sorted_values + value_bytes * std::size_t(n));
        // Each use of scratch fits the total.
        EXPECT_GE(l.total, l.scratch + local);
        EXPECT_GE(l.total, l.probe_counts + 8 * std::size_t(ranks - 1) * max_selection_probes(ranks) * ranks);
        EXPECT_GE(l.received_values, l.received_keys + 4 * std::size_t(n));
        EXPECT_GE(l.merge_pairs, l.received_values + value_bytes * std::size_t(n));
        EXPECT_GE(l.merge_splits, l.merge_pairs + 72 * std::size_t(total_merge_pairs(ranks)));
        EXPECT_GE(l.total, l.merge_splits + 8 * std::size_t(max_merge_tiles(n, ranks, 4096) + ranks));
        EXPECT_EQ(l.probes_in - l.probes_out, l.probe_slot_bytes);
        // Every round's packed slot fits the largest, and its keys follow its positions, aligned.
        for (std::int64_t probes : {std::int64_t(1), max_selection_probes(ranks) / 2 + 1, max_selection_probes(ranks)}) {
          const probe_slot slot = make_probe_slot(ranks, probes, 4);
          EXPECT_LE(slot.bytes, l.probe_slot_bytes);
          EXPECT_EQ(0u, slot.keys_offset % 256);
          EXPECT_GE(slot.keys_offset, 8 * std::size_t(ranks - 1) * std::size_t(probes));
          EXPECT_GE(slot.bytes, slot.keys_offset + 4 * std::size_t(ranks - 1) * std::size_t(probes));
        }
      }
    }
  }
}

}  // namespace
