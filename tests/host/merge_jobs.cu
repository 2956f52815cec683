// Host tests for detail/merge_jobs.cuh, the decisions of the early-exit merge
// passes (locality sort, long segments of segmented sort):
//   * merge_partition (with its O(1) shortcuts) against a brute-force count
//     of a stable merge, at every boundary of every group, searched by one
//     thread and by groups of 2, 8 and 32 lanes;
//   * plan_group: in-order groups, windows (every key that moves lies inside,
//     and the smallest width is chosen), tiles;
//   * tile_sources / stays;
//   * the whole engine emulated on the host — blocksort with its buffer
//     choice, per-tile buffer records, boundary windows, job decisions,
//     merge and window jobs, final copy — over random, sorted, nearly sorted, reversed and
//     few-distinct keys, one or many segments: checked index for index
//     against std::stable_sort of each segment, and checked for races (no
//     job writes a (buffer, position) that another job of the pass reads or
//     writes).
#include <tilesort/detail/merge_jobs.cuh>
#include <tilesort/detail/segment_ranges.cuh>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort_test::fresh_seed;
using tilesort_test::host_ballot;

struct item {
  int key;
  int index;  // original position: stability is observable
};
struct by_key {
  __host__ __device__ bool operator()(const item& a, const item& b) const { return a.key < b.key; }
};

// The detail functions are __host__ __device__, so their key accessors are
// too. Reads outside [0, size) are recorded (the test fails on them).
struct array_keys {
  const item* data;
  std::int64_t size;
  bool* out_of_range;
  int* reads;
  __host__ __device__ item operator()(std::int64_t p) const {
    if (reads) ++*reads;
    if (p < 0 || p >= size) {
      *out_of_range = true;
      return data[0];
    }
    return data[p];
  }
};

// Outputs [g.begin, x) of a stable merge of A and B: how many come from A.
std::int64_t brute_partition(const std::vector<item>& keys, const run_group& g, std::int64_t x) {
  std::int64_t a = g.begin, b = g.a_end, taken = g.begin;
  while (taken < x) {
    const bool take_b = b < g.end && (a >= g.a_end || keys[b].key < keys[a].key);
    if (take_b) {
      ++b;
    } else {
      ++a;
    }
    ++taken;
  }
  return a;
}

std::vector<item> sorted_runs(std::mt19937_64& rng, std::int64_t a_len, std::int64_t b_len, int kind) {
  std::vector<item> keys(a_len + b_len);
  for (std::int64_t i = 0; i < a_len + b_len; ++i) {
    int key = 0;
    switch (kind) {
      case 0: key = static_cast<int>(rng() % 1000); break;                      // random
      case 1: key = static_cast<int>(i); break;                                 // in order
      case 2: key = static_cast<int>(i + rng() % 8); break;                     // nearly
      case 3: key = static_cast<int>(rng() % 4); break;                         // few distinct
      default: key = i < a_len ? static_cast<int>(1000 + i) : static_cast<int>(i); break;  // B before A
    }
    keys[i] = {key, static_cast<int>(i)};
  }
  std::stable_sort(keys.begin(), keys.begin() + a_len, by_key{});
  std::stable_sort(keys.begin() + a_len, keys.end(), by_key{});
  return keys;
}

TEST(MergeJobs, PartitionMatchesStableMergeAtEveryBoundary) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t a_len = 1 + rng() % 40;
    const std::int64_t b_len = rng() % 40;
    const int kind = static_cast<int>(trial % 5);
    const auto keys = sorted_runs(rng, a_len, b_len, kind);
    const run_group g{0, a_len, a_len + b_len};
    bool out_of_range = false;
    const array_keys key_at{keys.data(), static_cast<std::int64_t>(keys.size()), &out_of_range, nullptr};
    for (std::int64_t x = 0; x <= g.end; ++x) {
      const std::int64_t expected = brute_partition(keys, g, x);
      ASSERT_EQ(expected, merge_partition(g, x, key_at, by_key{}))
          << "a_len " << a_len << " b_len " << b_len << " kind " << kind << " x " << x;
      ASSERT_EQ(expected, merge_partition<2>(g, x, key_at, by_key{}, host_ballot<2>{})) << "2 lanes, x " << x;
      ASSERT_EQ(expected, merge_partition<8>(g, x, key_at, by_key{}, host_ballot<8>{})) << "8 lanes, x " << x;
      ASSERT_EQ(expected, merge_partition<32>(g, x, key_at, by_key{}, host_ballot<32>{})) << "32 lanes, x " << x;
    }
    ASSERT_FALSE(out_of_range);
  }
}

TEST(MergeJobs, PartitionShortcutsTouchFewKeys) {
  // Groups whose disorder sits at the interface: boundaries away from it read
  // at most three keys (the shortcut), never the whole search.
  const std::int64_t r = 1 << 12;
  std::vector<item> keys(2 * r);
  for (std::int64_t i = 0; i < 2 * r; ++i) keys[i] = {static_cast<int>(i), static_cast<int>(i)};
  std::swap(keys[r - 1], keys[r]);  // A = [.., r-2, r], B = [r-1, r+1, ..]
  std::stable_sort(keys.begin(), keys.begin() + r, by_key{});
  std::stable_sort(keys.begin() + r, keys.end(), by_key{});
  const run_group g{0, r, 2 * r};
  int reads = 0;
  bool out_of_range = false;
  const array_keys key_at{keys.data(), static_cast<std::int64_t>(keys.size()), &out_of_range, &reads};
  for (std::int64_t x : {std::int64_t(1), r / 2, r - 100, r + 100, 2 * r - 1}) {
    reads = 0;
    EXPECT_EQ(brute_partition(keys, g, x), merge_partition(g, x, key_at, by_key{}));
    EXPECT_LE(reads, 3) << "x " << x;
  }
  EXPECT_FALSE(out_of_range);
}

TEST(MergeJobs, TileSourcesAndStays) {
  const run_group g{100, 200, 300};
  // Tile [100, 150) all from A at its own positions: stays.
  EXPECT_TRUE(tile_sources_of(g, 100, 150, 100, 150).stays());
  // Tile [250, 300) all from B at its own positions (A used up): stays.
  const tile_sources b_only = tile_sources_of(g, 250, 300, 200, 200);
  EXPECT_EQ(250, b_only.b_begin);
  EXPECT_EQ(300, b_only.b_end);
  EXPECT_TRUE(b_only.stays());
  // A tile taking only B keys that belong elsewhere (B before A): merge.
  const tile_sources shifted = tile_sources_of(g, 100, 150, 100, 100);
  EXPECT_EQ(200, shifted.b_begin);
  EXPECT_FALSE(shifted.stays());
  // A mixed tile: merge.
  const tile_sources mixed = tile_sources_of(g, 150, 200, 140, 180);
  EXPECT_EQ(140, mixed.a_begin);
  EXPECT_EQ(180, mixed.a_end);
  EXPECT_EQ(210, mixed.b_begin);
  EXPECT_EQ(220, mixed.b_end);
  EXPECT_EQ(50, (mixed.a_end - mixed.a_begin) + (mixed.b_end - mixed.b_begin));
  EXPECT_FALSE(mixed.stays());
}

TEST(MergeJobs, GroupsOfASegment) {
  const merge_segment s{1000, 1000 + 5 * 64 + 7, 3};
  EXPECT_EQ(1000, run_group_of(s, 1000, 64).begin);
  EXPECT_EQ(1064, run_group_of(s, 1000, 64).a_end);
  EXPECT_EQ(1128, run_group_of(s, 1127, 64).end);
  // The last group: a full A and a short B (6 runs: 5 full and 7 keys).
  const run_group last = run_group_of(s, 1000 + 4 * 64, 64);
  EXPECT_EQ(1256, last.begin);
  EXPECT_EQ(1320, last.a_end);
  EXPECT_EQ(s.end, last.end);
  // 5 runs: the last group is a short A alone.
  const merge_segment odd{1000, 1000 + 4 * 64 + 7, 0};
  const run_group alone = run_group_of(odd, 1000 + 4 * 64 + 3, 64);
  EXPECT_EQ(1256, alone.begin);
  EXPECT_EQ(odd.end, alone.a_end);
  EXPECT_EQ(odd.end, alone.end);
  using tiling = merge_tiling<64, 16>;
  EXPECT_EQ(4 * 3 + 2, tiling::entry_of(s, 1000 + 2 * 16 + 5));
  EXPECT_EQ(1000 + 16, tiling::tile_begin(s, 4 * 3 + 1));
  EXPECT_EQ(s.end, tiling::tile_end(s, 4 * 3 + 20));
  EXPECT_EQ(1000 + 64, tiling::block_begin(s, 4));
  EXPECT_EQ(6, tiling::blocks_of(5 * 64 + 7));
  EXPECT_EQ(0, tiling::blocks_of(0));
}

TEST(MergeJobs, PlanInOrderWindowOrTiles) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int widths[] = {2, 4, 8, 16};
  for (int trial = 0; trial < 2000; ++trial) {
    const std::int64_t a_len = 1 + rng() % 48;
    const std::int64_t b_len = rng() % 48;
    const auto keys = sorted_runs(rng, a_len, b_len, static_cast<int>(trial % 5));
    const run_group g{0, a_len, a_len + b_len};
    bool out_of_range = false;
    const array_keys key_at{keys.data(), static_cast<std::int64_t>(keys.size()), &out_of_range, nullptr};
    // Which positions change in the merged group?
    std::vector<item> merged(keys.begin(), keys.end());
    std::stable_sort(merged.begin(), merged.end(), by_key{});
    std::int64_t first_moved = -1, last_moved = -1;
    for (std::int64_t i = 0; i < g.end; ++i)
      if (merged[i].index != keys[i].index) {
        if (first_moved < 0) first_moved = i;
        last_moved = i;
      }
    const bool allowed = trial % 7 != 0;
    const group_decision d = plan_group(g, key_at, widths, allowed, by_key{});
    if (first_moved < 0) {
      EXPECT_EQ(group_plan::in_order, d.plan) << "nothing moves";
      continue;
    }
    ASSERT_NE(group_plan::in_order, d.plan);
    // The smallest width whose window holds every key that moves.
    int expected = -1;
    for (int h : widths) {
      const std::int64_t lo = std::max<std::int64_t>(0, a_len - h);
      const std::int64_t hi = std::min<std::int64_t>(g.end, a_len + h);
      // The merge of A[lo, a_len) and B[a_len, hi) in place must give the full result.
      std::vector<item> trial_keys(keys.begin(), keys.end());
      std::stable_sort(trial_keys.begin() + lo, trial_keys.begin() + hi, by_key{});
      bool ok = true;
      for (std::int64_t i = 0; i < g.end; ++i) ok = ok && trial_keys[i].index == merged[i].index;
      if (ok) {
        expected = h;
        break;
      }
    }
    if (!allowed || expected < 0) {
      EXPECT_EQ(group_plan::tiles, d.plan);
    } else {
      ASSERT_EQ(group_plan::window, d.plan);
      EXPECT_EQ(std::max<std::int64_t>(0, a_len - expected), d.window_begin);
      EXPECT_EQ(std::min<std::int64_t>(g.end, a_len + expected), d.window_end);
      EXPECT_LE(d.window_begin, first_moved);
      EXPECT_GT(d.window_end, last_moved);
    }
    ASSERT_FALSE(out_of_range);
  }
}

TEST(MergeJobs, BlocksortBufferChoice) {
  // Passes flip a merged tile each time: non-local tiles start where an even
  // number of flips... ends in keys_out.
  EXPECT_FALSE(blocksort_to_temp(true, 3));
  EXPECT_FALSE(blocksort_to_temp(false, 0));
  EXPECT_FALSE(blocksort_to_temp(false, 4));
  EXPECT_TRUE(blocksort_to_temp(false, 5));
  EXPECT_TRUE(looks_local(15, 16, 15, 16, 16));
  EXPECT_FALSE(looks_local(14, 16, 15, 16, 16));
  EXPECT_TRUE(looks_local(240, 256, 15, 16, 16));
  EXPECT_FALSE(looks_local(239, 256, 15, 16, 16));
  EXPECT_FALSE(looks_local(3, 3, 15, 16, 16));  // a short tile's few samples, all in order
  EXPECT_FALSE(looks_local(0, 0, 15, 16, 16));  // nothing sampled
  EXPECT_EQ(in_output, uniform_location(1u << in_output));
  EXPECT_EQ(in_temp, uniform_location(1u << in_temp));
  EXPECT_EQ(-1, uniform_location(3u));
  EXPECT_EQ(-1, uniform_location(0u));
}

// ------------------------------------------------------------------ the engine on the host
// Mirrors device/locality_sort/merge.cuh kernel by kernel with T = Threads x
// Items and M = T / K; every decision goes through the detail functions.
template <int Threads, int Items, int MergeTile>
struct engine {
  static constexpr int tile = Threads * Items;
  using tiling = merge_tiling<tile, MergeTile>;
  static constexpr int k = tiling::merge_tiles_per_block;
  static constexpr int widths[4] = {MergeTile / 8 > 0 ? MergeTile / 8 : 1, MergeTile / 4, MergeTile / 2,
                                    MergeTile / 2};

  std::vector<item> buffer[2];  // [in_output], [in_temp]
  std::vector<merge_segment> segments;
  std::vector<int> block_segment;
  // The device's two location arrays: pass p reads [p & 1] and writes the
  // other; a pass that does not run writes nothing.
  std::vector<std::uint8_t> arrays[2];
  int passes = 0;           // the most any segment needs (the blocksort's needed_passes)
  int launched_passes = 0;  // what the host launches: its bound is larger (longest possible segment)
  std::int64_t merge_jobs = 0, window_jobs = 0, final_copies = 0, presorted = 0;
  std::int64_t boundary_windows = 0, unfixable = 0;  // the boundary phase's windows and `tiles` boundaries
  unsigned location_mix = 0;  // as the device tracks it: OR of 1 << location over the tiles that hold keys
  int uniform_passes = 0;     // passes whose tiles all lay in one buffer (by location_mix)

  struct job {
    bool window;
    std::int64_t first, second, entry;
  };

  engine(const std::vector<item>& input, const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
    buffer[in_output] = std::vector<item>(input.size(), item{-1, -1});
    buffer[in_temp] = buffer[in_output];
    std::int64_t blocks = 0;
    for (auto [b, e] : ranges) {
      segments.push_back({b, e, blocks});
      const std::int64_t count = tiling::blocks_of(e - b);
      for (std::int64_t j = 0; j < count; ++j) block_segment.push_back(static_cast<int>(segments.size() - 1));
      blocks += count;
      passes = std::max(passes, merge_passes_for(e - b, tile));
    }
    arrays[0].assign(blocks * k, 0xEE);
    arrays[1].assign(blocks * k, 0xDD);
    launched_passes = passes + 1;  // one more (of the other parity) than any segment needs
    // Positions outside every segment: keys_out gets them as they are (the
    // segmented sort's gap copy), so the comparison below covers them too.
    std::vector<bool> covered(input.size(), false);
    for (auto [b, e] : ranges)
      for (std::int64_t p = b; p < e; ++p) covered[p] = true;
    for (std::size_t p = 0; p < input.size(); ++p)
      if (!covered[p]) buffer[in_output][p] = input[p];
    blocksort(input);
  }

  std::int64_t tiles() const { return static_cast<std::int64_t>(arrays[0].size()); }
  merge_segment segment_of_entry(std::int64_t e) const { return segments[block_segment[e / k]]; }
  // The key at position p of segment s, from the buffer its merge tile is in.
  struct located {
    const item* out;
    const item* temp;
    const std::uint8_t* locations;
    std::int64_t tiles;
    std::int64_t size;
    merge_segment segment;
    bool* out_of_range;
    __host__ __device__ item operator()(std::int64_t p) const {
      const std::int64_t e = tiling::entry_of(segment, p);
      if (p < segment.begin || p >= segment.end || e < 0 || e >= tiles || p >= size) {
        *out_of_range = true;
        return out[0];
      }
      return (locations[e] == in_temp ? temp : out)[p];
    }
  };
  bool out_of_range = false;

  void blocksort(const std::vector<item>& input) {
    for (std::size_t b = 0; b < block_segment.size(); ++b) {
      const merge_segment s = segments[block_segment[b]];
      const std::int64_t begin = tiling::block_begin(s, b);
      const int valid = static_cast<int>(std::min<std::int64_t>(s.end - begin, tile));
      std::vector<item> keys(input.begin() + begin, input.begin() + begin + valid);
      const bool ordered = std::is_sorted(keys.begin(), keys.end(), by_key{});
      int in_order = 0, sampled = 0;
      for (int t = 0; t < Threads; ++t)
        if (t % 32 < 16 && (t + 16) * Items < valid) {
          ++sampled;
          if (!(keys[(t + 16) * Items].key < keys[t * Items].key)) ++in_order;
        }
      const bool local = looks_local(in_order, sampled, 15, 16, 16);
      const std::uint8_t location = blocksort_to_temp(local, merge_passes_for(s.end - s.begin, tile)) ? in_temp : in_output;
      if (ordered) ++presorted;
      std::stable_sort(keys.begin(), keys.end(), by_key{});
      std::copy(keys.begin(), keys.end(), buffer[location].begin() + begin);
      for (int i = 0; i < k; ++i) arrays[0][b * k + i] = location;
      location_mix |= 1u << location;
    }
  }

  // The boundary phase (one decision per blocksort-tile boundary), then its
  // windows merged in place in a random order, checking that no two windows
  // share a position and that each lies in one buffer.
  void boundaries(std::mt19937_64& rng) {
    const auto& locations = arrays[0];
    arrays[1] = arrays[0];  // the boundary phase copies them (its windows merge in place)
    std::vector<job> jobs;
    for (std::size_t b = 0; b < block_segment.size(); ++b) {
      const merge_segment s = segments[block_segment[b]];
      const std::int64_t boundary = tiling::block_begin(s, b);
      if (boundary == s.begin) continue;
      const located at{buffer[in_output].data(), buffer[in_temp].data(), locations.data(), tiles(),
                       static_cast<std::int64_t>(buffer[in_output].size()), s, &out_of_range};
      const std::int64_t entry = tiling::entry_of(s, boundary);
      const group_decision d =
          plan_group(boundary_group(s, boundary, tile), at, widths, locations[entry - 1] == locations[entry], by_key{});
      if (d.plan == group_plan::window) jobs.push_back({true, d.window_begin, d.window_end, entry});
      if (d.plan == group_plan::tiles) ++unfixable;
    }
    std::set<std::int64_t> taken;
    for (const job& jb : jobs) {
      const merge_segment s = segment_of_entry(jb.entry);
      for (std::int64_t q = jb.first; q < jb.second; ++q) {
        ASSERT_EQ(locations[jb.entry], locations[tiling::entry_of(s, q)]) << "window across buffers";
        ASSERT_TRUE(taken.insert(q).second) << "two boundary windows share position " << q;
      }
    }
    std::shuffle(jobs.begin(), jobs.end(), rng);
    for (const job& jb : jobs) {
      auto& keys = buffer[locations[jb.entry]];
      std::stable_sort(keys.begin() + jb.first, keys.begin() + jb.second, by_key{});  // A ++ B: the stable merge
      ++boundary_windows;
    }
    ASSERT_FALSE(out_of_range) << "a boundary decision read outside its segment";
  }

  // One pass: decide every tile (as the job phase), then run the jobs (as the
  // merge phase) in a random order, checking that no job writes a
  // (buffer, position) any other job reads or writes. Like the passes
  // kernel, it does not run when the boundary windows left every segment
  // sorted, nor past the passes any segment needs.
  void pass(int p, std::mt19937_64& rng) {
    if (unfixable == 0 || p >= passes) return;
    const auto& locations = arrays[p & 1];
    auto& next_locations = arrays[(p + 1) & 1];
    const std::int64_t run = std::int64_t(tile) << p;
    // The device reads keys straight from one buffer when the mix names only
    // that one: then every tile that holds keys must be there.
    const int uniform = uniform_location(location_mix);
    if (uniform >= 0) {
      ++uniform_passes;
      for (std::int64_t e = 0; e < tiles(); ++e) {
        const merge_segment s = segment_of_entry(e);
        if (tiling::tile_begin(s, e) < s.end) ASSERT_EQ(uniform, locations[e]) << "entry " << e;
      }
    }
    unsigned next_mix = 0;
    std::vector<job> jobs;
    next_locations = locations;
    std::vector<std::int64_t> partition(tiles() + 1, 0);
    std::vector<group_decision> decision(tiles(), group_decision{group_plan::in_order, 0, 0});
    std::vector<run_group> groups(tiles(), run_group{0, 0, 0});
    for (std::int64_t e = 0; e < tiles(); ++e) {
      const merge_segment s = segment_of_entry(e);
      const std::int64_t out_begin = tiling::tile_begin(s, e);
      if (out_begin >= s.end || run >= s.end - s.begin) continue;
      const run_group g = run_group_of(s, out_begin, run);
      groups[e] = g;
      if (g.a_end == g.end) continue;
      const located at{buffer[in_output].data(), buffer[in_temp].data(), locations.data(), tiles(),
                       static_cast<std::int64_t>(buffer[in_output].size()), s, &out_of_range};
      const bool one_buffer = locations[tiling::entry_of(s, g.a_end - 1)] == locations[tiling::entry_of(s, g.a_end)];
      decision[e] = plan_group(g, at, widths, one_buffer, by_key{});
      if (decision[e].plan == group_plan::tiles) partition[e] = merge_partition(g, out_begin, at, by_key{});
    }
    for (std::int64_t e = 0; e < tiles(); ++e) {
      const merge_segment s = segment_of_entry(e);
      const std::int64_t out_begin = tiling::tile_begin(s, e);
      const std::int64_t out_end = tiling::tile_end(s, e);
      if (out_begin >= s.end) continue;
      const run_group& g = groups[e];
      bool merge = false;
      if (decision[e].plan == group_plan::tiles) {
        const std::int64_t p_end = out_end == g.end ? g.a_end : partition[e + 1];
        merge = !tile_sources_of(g, out_begin, out_end, partition[e], p_end).stays();
        if (merge) jobs.push_back({false, partition[e], p_end, e});
      } else if (decision[e].plan == group_plan::window && out_begin == g.a_end) {
        jobs.push_back({true, decision[e].window_begin, decision[e].window_end, e});
      }
      next_locations[e] = merge ? static_cast<std::uint8_t>(locations[e] ^ 1) : locations[e];
      next_mix |= 1u << next_locations[e];
    }
    location_mix = next_mix;
    // Reads and writes of every job, as (buffer, position).
    std::map<std::pair<int, std::int64_t>, std::int64_t> writer;
    std::vector<std::vector<std::pair<int, std::int64_t>>> reads(jobs.size()), writes(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const job& jb = jobs[j];
      const merge_segment s = segment_of_entry(jb.entry);
      if (jb.window) {
        const int location = locations[jb.entry];
        for (std::int64_t q = jb.first; q < jb.second; ++q) {
          ASSERT_EQ(location, locations[tiling::entry_of(s, q)]) << "window across buffers";
          reads[j].push_back({location, q});
          writes[j].push_back({location, q});
        }
      } else {
        const std::int64_t out_begin = tiling::tile_begin(s, jb.entry);
        const std::int64_t out_end = tiling::tile_end(s, jb.entry);
        const tile_sources src = tile_sources_of(run_group_of(s, out_begin, run), out_begin, out_end, jb.first, jb.second);
        for (std::int64_t q = src.a_begin; q < src.a_end; ++q) reads[j].push_back({locations[tiling::entry_of(s, q)], q});
        for (std::int64_t q = src.b_begin; q < src.b_end; ++q) reads[j].push_back({locations[tiling::entry_of(s, q)], q});
        for (std::int64_t q = out_begin; q < out_end; ++q) writes[j].push_back({locations[jb.entry] ^ 1, q});
      }
      for (auto w : writes[j]) {
        ASSERT_EQ(0u, writer.count(w)) << "two jobs write one place";
        writer[w] = static_cast<std::int64_t>(j);
      }
    }
    for (std::size_t j = 0; j < jobs.size(); ++j)
      for (auto r : reads[j]) {
        auto it = writer.find(r);
        ASSERT_TRUE(it == writer.end() || it->second == static_cast<std::int64_t>(j)) << "a job reads what another writes";
      }
    // Run the jobs in a random order.
    std::vector<std::size_t> order(jobs.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t j : order) {
      std::vector<item> merged;
      for (auto r : reads[j]) merged.push_back(buffer[r.first][r.second]);
      // A ++ B: stable_sort of the concatenation is the stable merge.
      std::stable_sort(merged.begin(), merged.end(), by_key{});
      ASSERT_EQ(merged.size(), writes[j].size());
      for (std::size_t i = 0; i < merged.size(); ++i) buffer[writes[j][i].first][writes[j][i].second] = merged[i];
      if (jobs[j].window) {
        ++window_jobs;
      } else {
        ++merge_jobs;
      }
    }
    ASSERT_FALSE(out_of_range) << "a decision read outside its segment";
  }

  // The final copy reads the array of the last pass that ran: none when the
  // boundary windows left nothing out of order (then both arrays are alike).
  void finish() {
    const int ran = unfixable == 0 ? 0 : std::min(launched_passes, passes);
    const auto& locations = arrays[ran & 1];
    for (std::int64_t e = 0; e < tiles(); ++e) {
      const merge_segment s = segment_of_entry(e);
      if (locations[e] != in_temp || tiling::tile_begin(s, e) >= s.end) continue;
      ++final_copies;
      for (std::int64_t q = tiling::tile_begin(s, e); q < tiling::tile_end(s, e); ++q)
        buffer[in_output][q] = buffer[in_temp][q];
    }
  }
};

template <typename Engine>
void run_engine(const std::vector<item>& input, const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges,
                std::mt19937_64& rng, const char* what, Engine** keep = nullptr) {
  SCOPED_TRACE(what);
  Engine e(input, ranges);
  e.boundaries(rng);
  if (::testing::Test::HasFatalFailure()) return;
  for (int p = 0; p < e.launched_passes; ++p) {
    e.pass(p, rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
  e.finish();
  std::vector<item> expected = input;
  for (auto [b, end] : ranges) std::stable_sort(expected.begin() + b, expected.begin() + end, by_key{});
  for (std::size_t i = 0; i < input.size(); ++i) {
    ASSERT_EQ(expected[i].index, e.buffer[in_output][i].index) << "position " << i;
    ASSERT_EQ(expected[i].key, e.buffer[in_output][i].key) << "position " << i;
  }
  if (keep) *keep = new Engine(e);
}

std::vector<item> make_input(std::mt19937_64& rng, std::int64_t n, int kind) {
  std::vector<item> v(n);
  for (std::int64_t i = 0; i < n; ++i) {
    int key = 0;
    switch (kind) {
      case 0: key = static_cast<int>(rng() % 100000); break;           // random
      case 1: key = static_cast<int>(i); break;                        // sorted
      case 2: key = static_cast<int>(i + rng() % 20); break;           // nearly sorted
      case 3: key = static_cast<int>(n - i); break;                    // reversed
      case 4: key = static_cast<int>(rng() % 5); break;                // few distinct
      default: key = static_cast<int>(i / 50 % 2 ? i : n - i); break;  // runs
    }
    v[i] = {key, static_cast<int>(i)};
  }
  return v;
}

const char* kind_name(int kind) {
  static const char* names[] = {"random", "sorted", "nearly sorted", "reversed", "few distinct", "runs"};
  return names[kind];
}

TEST(MergeJobs, EngineWholeArrayEveryDistribution) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  using small = engine<32, 2, 16>;  // T = 64, M = 16: four merge tiles per blocksort tile
  using wide = engine<32, 4, 64>;   // T = 128, M = 64
  for (std::int64_t n : {1, 2, 63, 64, 65, 128, 129, 500, 1000, 1023, 1024, 1025, 3000}) {
    for (int kind = 0; kind < 6; ++kind) {
      SCOPED_TRACE("n=" + std::to_string(n));
      const auto input = make_input(rng, n, kind);
      run_engine<small>(input, {{0, n}}, rng, kind_name(kind));
      if (::testing::Test::HasFatalFailure()) return;
      run_engine<wide>(input, {{0, n}}, rng, kind_name(kind));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(MergeJobs, EngineManySegmentsWithGaps) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  using small = engine<32, 2, 16>;
  for (int trial = 0; trial < 60; ++trial) {
    const std::int64_t n = 200 + rng() % 3000;
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    std::int64_t p = rng() % 30;
    while (p < n) {
      const std::int64_t length = 1 + rng() % (trial % 3 == 0 ? 1200 : 300);
      const std::int64_t end = std::min(n, p + length);
      ranges.push_back({p, end});
      p = end + (trial % 2 ? std::int64_t(rng() % 20) : 0);
    }
    const auto input = make_input(rng, n, static_cast<int>(trial % 6));
    run_engine<small>(input, ranges, rng, kind_name(static_cast<int>(trial % 6)));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(MergeJobs, EngineEarlyExitCounts) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  using small = engine<32, 2, 16>;
  const std::int64_t n = 64 * 64;
  small* e = nullptr;
  // Sorted: every tile in order, nothing merged, nothing copied.
  run_engine<small>(make_input(rng, n, 1), {{0, n}}, rng, "sorted", &e);
  ASSERT_NE(nullptr, e);
  EXPECT_EQ(64, e->presorted);
  EXPECT_EQ(0, e->merge_jobs);
  EXPECT_EQ(0, e->window_jobs);
  EXPECT_EQ(0, e->final_copies);
  EXPECT_EQ(0, e->boundary_windows);
  EXPECT_EQ(0, e->unfixable);
  delete e;
  // Nearly sorted (displacement < 4, below the smallest window): the boundary
  // windows sort it, in place; the passes find nothing to do.
  std::vector<item> nearly(n);
  for (std::int64_t i = 0; i < n; ++i) nearly[i] = {static_cast<int>(i + rng() % 4), static_cast<int>(i)};
  run_engine<small>(nearly, {{0, n}}, rng, "nearly", &e);
  ASSERT_NE(nullptr, e);
  EXPECT_GT(e->boundary_windows, 0);
  EXPECT_EQ(0, e->unfixable);
  EXPECT_EQ(0, e->merge_jobs);
  EXPECT_EQ(0, e->window_jobs);
  EXPECT_EQ(0, e->final_copies);
  delete e;
  // Two long sorted runs swapped: one boundary no window fixes, so the passes
  // run and their window merges finish the job (groups interface only).
  std::vector<item> shifted(n);
  for (std::int64_t i = 0; i < n; ++i)
    shifted[i] = {static_cast<int>(i < n / 2 ? i + rng() % 4 : i - n / 2 + rng() % 4), static_cast<int>(i)};
  run_engine<small>(shifted, {{0, n}}, rng, "two runs", &e);
  ASSERT_NE(nullptr, e);
  EXPECT_GT(e->unfixable, 0);
  EXPECT_GT(e->merge_jobs + e->window_jobs, 0);
  delete e;
  // Random: (almost) every tile merges every pass and ends in keys_out by parity.
  run_engine<small>(make_input(rng, n, 0), {{0, n}}, rng, "random", &e);
  ASSERT_NE(nullptr, e);
  EXPECT_GE(e->unfixable, 60);  // of 63 boundaries: random tiles need the passes
  EXPECT_GE(e->uniform_passes, 4);  // nearly every tile merges every pass: one buffer
  EXPECT_GE(e->merge_jobs, 6 * n / 16 * 98 / 100);  // 6 passes x 256 merge tiles
  EXPECT_LE(e->final_copies, n / 16 / 50);
  delete e;
}

}  // namespace
