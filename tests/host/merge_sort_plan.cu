// Host tests for detail/merge_sort_plan.cuh and the host-runnable steps of
// device/merge_sort.cuh: pass counts, buffer parity (the last step writes
// keys_out), merge groups, partitions and tile ranges (also past 2^31), the
// temp layout, and the shared-memory padding (bank model).
// Two whole-algorithm runs on the host check against std::stable_sort, index
// for index: a simulation from the plan alone (std::merge per tile), and an
// emulation that runs the kernels' own load / transpose / merge / store steps
// thread by thread, with std::stable_sort standing in only for block_sort.
// The k-way passes: pass counts and shapes, and a simulation that cuts each
// pass with the kernels' own searches and checks every cut exact, every tile
// within bounds and the result stable.
#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <set>
#include <tilesort/detail/merge_path.cuh>
#include <tilesort/detail/merge_sort_plan.cuh>
#include <tilesort/device/merge_sort.cuh>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort_test::fresh_seed;
using tilesort_test::host_ballot;
using tilesort_test::sorted_random_ints;

// ------------------------------------------------------------------ plan arithmetic
TEST(MergeSortPlan, TilesAndPasses) {
  struct expected {
    std::int64_t n;
    std::int64_t tiles;
    int passes;
  };
  const int tile = 8192;
  const expected cases[] = {
      {0, 0, 0},
      {1, 1, 0},
      {2, 1, 0},
      {tile - 1, 1, 0},
      {tile, 1, 0},
      {tile + 1, 2, 1},
      {2 * tile, 2, 1},
      {2 * tile + 1, 3, 2},
      {4 * tile, 4, 2},
      {4 * tile + 1, 5, 3},
      {std::int64_t(1) << 20, 128, 7},
      {std::int64_t(1) << 24, 2048, 11},
      {std::int64_t(1) << 28, 32768, 15},
      {(std::int64_t(1) << 31) + 1000, 262145, 19},
      {std::int64_t(1) << 40, std::int64_t(1) << 27, 27},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("n=" + std::to_string(c.n));
    const merge_sort_plan plan = make_merge_sort_plan(c.n, tile, 4096);
    EXPECT_EQ(c.tiles, plan.tiles);
    EXPECT_EQ(c.passes, plan.merge_passes);
    EXPECT_EQ(c.n == 0 ? 0 : 1 + c.passes, merge_sort_passes(plan));
    // After the last pass one run covers everything; one pass earlier it did not.
    if (c.n > 0) EXPECT_GE(std::int64_t(tile) << plan.merge_passes, c.n);
    if (plan.merge_passes > 0) EXPECT_LT(std::int64_t(tile) << (plan.merge_passes - 1), c.n);
    EXPECT_EQ(plan.merge_passes > 0 ? ceil_div(c.n, 4096) : 0, plan.merge_tiles);
    EXPECT_EQ(plan.merge_passes > 0 ? plan.merge_tiles + 1 : 0, plan.partition_count());
    for (int pass = 0; pass < plan.merge_passes; ++pass) EXPECT_EQ(std::int64_t(tile) << pass, plan.run_length(pass));
  }
  // CUB's 4352-key tiles, for the comparison the benchmark prints.
  EXPECT_EQ(17, merge_sort_passes(make_merge_sort_plan(std::int64_t(1) << 28, 4352, 4352)));
  EXPECT_EQ(0, make_merge_sort_plan(-5, tile, 4096).tiles);
  static_assert(merge_sort_passes(make_merge_sort_plan(std::int64_t(1) << 24, 8192, 4096)) == 12,
                "usable in constant expressions");
}

TEST(MergeSortPlan, LastStepWritesOutputAndStepsAlternate) {
  for (std::int64_t n : {std::int64_t(1), std::int64_t(100), std::int64_t(8193), std::int64_t(3) << 14,
                         std::int64_t(1) << 20, (std::int64_t(1) << 31) + 1000, std::int64_t(12345678901)}) {
    const merge_sort_plan plan = make_merge_sort_plan(n, 8192, 4096);
    SCOPED_TRACE("n=" + std::to_string(n) + " passes=" + std::to_string(plan.merge_passes));
    EXPECT_TRUE(plan.writes_output(plan.merge_passes)) << "the last step must land in keys_out";
    for (int step = 0; step < plan.merge_passes; ++step)
      EXPECT_NE(plan.writes_output(step), plan.writes_output(step + 1))
          << "a pass must read one buffer and write the other";
    EXPECT_EQ(plan.merge_passes % 2 == 0, plan.writes_output(0));
  }
}

// ------------------------------------------------------------------ groups, partitions, ranges
TEST(MergeSortPlan, GroupsAndPartitionQueries) {
  const std::int64_t run = 8, n = 37;  // groups [0,16) [16,32) [32,37): the last has A = [32,37), B empty
  auto g = merge_sort_group_of(0, run, n);
  EXPECT_EQ(0, g.begin);
  EXPECT_EQ(8, g.a_end);
  EXPECT_EQ(16, g.end);
  g = merge_sort_group_of(31, run, n);
  EXPECT_EQ(16, g.begin);
  EXPECT_EQ(24, g.a_end);
  EXPECT_EQ(32, g.end);
  g = merge_sort_group_of(36, run, n);
  EXPECT_EQ(32, g.begin);
  EXPECT_EQ(37, g.a_end);
  EXPECT_EQ(37, g.end);
  auto q = merge_sort_partition_query(20, run, n);
  EXPECT_EQ(16, q.a_begin);
  EXPECT_EQ(8, q.a_len);
  EXPECT_EQ(24, q.b_begin);
  EXPECT_EQ(8, q.b_len);
  EXPECT_EQ(4, q.diagonal);
  q = merge_sort_partition_query(37, run, n);  // the end of the array
  EXPECT_EQ(32, q.a_begin);
  EXPECT_EQ(5, q.a_len);
  EXPECT_EQ(0, q.b_len);
  EXPECT_EQ(5, q.diagonal);
  q = merge_sort_partition_query(32, run, 32);  // n a multiple of 2·run: an empty group at n
  EXPECT_EQ(32, q.a_begin);
  EXPECT_EQ(0, q.a_len);
  EXPECT_EQ(0, q.b_len);
  EXPECT_EQ(0, q.diagonal);
}

// A sorted sequence that exists only as a formula: A[i] = 2i, B[j] = 2j + 1,
// so merge paths of arrays far past 2^31 can be checked without memory.
struct even_keys {
  TILESORT_HD std::int64_t operator[](std::int64_t i) const { return 2 * i; }
};
struct odd_keys {
  TILESORT_HD std::int64_t operator[](std::int64_t i) const { return 2 * i + 1; }
};
std::int64_t expected_split(std::int64_t a_len, std::int64_t b_len, std::int64_t d) {
  return std::min(a_len, std::max((d + 1) / 2, d - b_len));
}

TEST(MergeSortPlan, RangesPast2To31) {
  const int tile = 8192, merge_tile = 4096;
  for (const std::int64_t n : {(std::int64_t(1) << 31) + 1000, (std::int64_t(1) << 33) + 5, std::int64_t(1) << 32}) {
    const merge_sort_plan plan = make_merge_sort_plan(n, tile, merge_tile);
    for (int pass = 0; pass < plan.merge_passes; ++pass) {
      const std::int64_t run = plan.run_length(pass);
      // Tiles at the start, around 2^31 (and 2^32) outputs, around group ends, and at the end.
      std::set<std::int64_t> tiles = {0, 1, plan.merge_tiles - 2, plan.merge_tiles - 1};
      for (std::int64_t edge : {std::int64_t(1) << 31, std::int64_t(1) << 32, 2 * run, 4 * run, n - run, n / 2}) {
        for (std::int64_t d = -2; d <= 1; ++d) {
          const std::int64_t t = edge / merge_tile + d;
          if (t >= 0 && t < plan.merge_tiles) tiles.insert(t);
        }
      }
      auto partition = [&](std::int64_t boundary_tile) {
        const auto q = merge_sort_partition_query(std::min(boundary_tile * merge_tile, n), run, n);
        // The virtual arrays are indexed relative to the group, as the kernel's are.
        const std::int64_t split =
            merge_path<std::int64_t>(even_keys{}, q.a_len, odd_keys{}, q.b_len, q.diagonal, tilesort::less{});
        EXPECT_EQ(expected_split(q.a_len, q.b_len, q.diagonal), split) << "boundary tile " << boundary_tile;
        return q.a_begin + split;
      };
      for (const std::int64_t t : tiles) {
        SCOPED_TRACE("n=" + std::to_string(n) + " pass=" + std::to_string(pass) + " tile=" + std::to_string(t));
        const merge_tile_slices r = merge_tile_range(t, merge_tile, run, n, partition(t), partition(t + 1));
        const merge_sort_group g = merge_sort_group_of(r.out_begin, run, n);
        EXPECT_EQ(t * merge_tile, r.out_begin);
        EXPECT_EQ(std::min(r.out_begin + merge_tile, n), r.out_end);
        EXPECT_LE(r.out_end, g.end) << "a merge tile straddles two groups";
        EXPECT_TRUE(g.begin <= r.a_begin && r.a_begin <= r.a_end && r.a_end <= g.a_end);
        EXPECT_TRUE(g.a_end <= r.b_begin && r.b_begin <= r.b_end && r.b_end <= g.end);
        EXPECT_EQ(r.out_end - r.out_begin, (r.a_end - r.a_begin) + (r.b_end - r.b_begin));
        EXPECT_EQ(r.count(), r.a_count() + r.b_count());
        EXPECT_LE(r.count(), merge_tile);
        // Outputs before the tile inside its group = inputs before its slices.
        EXPECT_EQ(r.out_begin - g.begin, (r.a_begin - g.begin) + (r.b_begin - g.a_end));
      }
    }
  }
}

// ------------------------------------------------------------------ the whole algorithm on the host
struct item {
  int key;
  int origin;  // index in the input: stability is exact equality with std::stable_sort
};

// Mirrors device/merge_sort.cuh step by step; returns the buffer the last step
// wrote, which must be `out`.
std::vector<item>* simulate(const std::vector<item>& in, std::vector<item>& out, std::vector<item>& temp, bool in_place,
                            int tile, int merge_tile) {
  const std::int64_t n = static_cast<std::int64_t>(in.size());
  const merge_sort_plan plan = make_merge_sort_plan(n, tile, merge_tile);
  auto buffer_of = [&](int step) { return plan.writes_output(step) ? &out : &temp; };
  auto by_key = [](const item& a, const item& b) { return a.key < b.key; };
  if (in_place) out = in;
  const std::vector<item>& source = in_place ? out : in;
  // Step 0: each tile stably sorted from the input into the first buffer.
  std::vector<item>* dst = buffer_of(0);
  for (std::int64_t t = 0; t < plan.tiles; ++t) {
    const std::int64_t b = t * tile, e = std::min(b + tile, n);
    std::vector<item> chunk(source.begin() + b, source.begin() + e);
    std::stable_sort(chunk.begin(), chunk.end(), by_key);
    std::copy(chunk.begin(), chunk.end(), dst->begin() + b);
  }
  for (int pass = 0; pass < plan.merge_passes; ++pass) {
    const std::vector<item>& src = *buffer_of(pass);
    std::vector<item>& to = *buffer_of(pass + 1);
    EXPECT_NE(&src, &to);
    const std::int64_t run = plan.run_length(pass);
    std::vector<std::int64_t> partitions(plan.partition_count());
    for (std::int64_t i = 0; i < plan.partition_count(); ++i)
      partitions[i] = merge_sort_partition(src.data(), n, run, merge_tile, i, by_key);
    // Poison the destination so that an output no tile writes is caught.
    std::fill(to.begin(), to.end(), item{-1, -1});
    std::int64_t covered = 0;
    for (std::int64_t t = 0; t < plan.merge_tiles; ++t) {
      const merge_tile_slices r = merge_tile_range(t, merge_tile, run, n, partitions[t], partitions[t + 1]);
      EXPECT_EQ(covered, r.out_begin);
      covered = r.out_end;
      EXPECT_EQ(r.count(), r.a_count() + r.b_count());
      std::merge(src.begin() + r.a_begin, src.begin() + r.a_end, src.begin() + r.b_begin, src.begin() + r.b_end,
                 to.begin() + r.out_begin, by_key);  // std::merge is stable: ties from the first range
    }
    EXPECT_EQ(n, covered);
  }
  return buffer_of(plan.merge_passes);
}

void check_simulation(std::int64_t n, int tile, int merge_tile, int distinct, std::mt19937_64& rng) {
  SCOPED_TRACE("n=" + std::to_string(n) + " tile=" + std::to_string(tile) +
               " merge_tile=" + std::to_string(merge_tile) + " distinct=" + std::to_string(distinct));
  std::vector<item> in(n);
  for (std::int64_t i = 0; i < n; ++i) in[i] = {static_cast<int>(rng() % distinct), static_cast<int>(i)};
  std::vector<item> ref = in;
  std::stable_sort(ref.begin(), ref.end(), [](const item& a, const item& b) { return a.key < b.key; });
  for (const bool in_place : {false, true}) {
    std::vector<item> out(n, item{-7, -7}), temp(n, item{-9, -9});
    const std::vector<item>* last = simulate(in, out, temp, in_place, tile, merge_tile);
    ASSERT_EQ(&out, last) << "the last step did not write keys_out";
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(ref[i].key, out[i].key) << "index " << i << (in_place ? " (in place)" : "");
      ASSERT_EQ(ref[i].origin, out[i].origin) << "not stable at index " << i << (in_place ? " (in place)" : "");
    }
  }
}

TEST(MergeSortPlan, HostSimulationMatchesStableSort) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // (blocksort tile, merge tile) shapes with merge_tile | 2·tile, small enough for many passes.
  const std::pair<int, int> shapes[] = {{8, 4}, {8, 8}, {8, 16}, {16, 4}, {4, 8}, {12, 8}, {6, 4}, {32, 64}};
  for (const auto& [tile, merge_tile] : shapes) {
    ASSERT_EQ(0, (2 * tile) % merge_tile);
    for (std::int64_t n = 0; n <= 8 * tile + 3; ++n) check_simulation(n, tile, merge_tile, 3, rng);
    for (int trial = 0; trial < 20; ++trial) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 3000);
      check_simulation(n, tile, merge_tile, trial % 2 ? 5 : 1000000, rng);
    }
    // Powers of two and their neighbours (full and ragged last groups).
    for (int k = 1; k <= 12; ++k)
      for (std::int64_t d : {-1, 0, 1}) check_simulation((std::int64_t(1) << k) + d, tile, merge_tile, 7, rng);
  }
}

TEST(MergeSortPlan, HostSimulationPolicyShapes) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // The device policy's shapes (T = 8192 / M = 4096, and the halved ones for bigger items).
  for (const auto& [tile, merge_tile] : {std::pair<int, int>{8192, 4096}, {4096, 2048}, {2048, 1024}}) {
    for (std::int64_t n : {std::int64_t(tile) - 1, std::int64_t(tile), std::int64_t(tile) + 1,
                           std::int64_t(merge_tile) * 3 + 17, std::int64_t(tile) * 5 + 3, std::int64_t(100003)})
      check_simulation(n, tile, merge_tile, 50, rng);
  }
}

// ------------------------------------------------------------------ the partition kernel's group search
TEST(MergeSortPlan, GroupSearchMatchesBinarySearch) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 400; ++trial) {
    // Lengths from 0 to a few rounds of 32-way narrowing (32^2 = 1024 and past).
    const std::int64_t a_len = static_cast<std::int64_t>(rng() % (trial % 4 == 0 ? 40 : 5000));
    const std::int64_t b_len = static_cast<std::int64_t>(rng() % (trial % 5 == 0 ? 40 : 5000));
    const int spread = trial % 3 == 0 ? 4 : 1000000;
    const std::vector<int> a = sorted_random_ints(rng, a_len, spread);
    const std::vector<int> b = sorted_random_ints(rng, b_len, spread);
    const std::int64_t total = a_len + b_len;
    std::vector<std::int64_t> diagonals = {0, total, total / 2, std::min(a_len, b_len), std::max(a_len, b_len)};
    for (int d = 0; d < 20; ++d) diagonals.push_back(static_cast<std::int64_t>(rng() % (total + 1)));
    for (const std::int64_t diagonal : diagonals) {
      const std::int64_t expected =
          merge_path<std::int64_t>(a.data(), a_len, b.data(), b_len, diagonal, tilesort::less{});
      const auto kway = [&](auto ways) {
        return merge_path_kway<decltype(ways)::value, std::int64_t>(
            a.data(), a_len, b.data(), b_len, diagonal, tilesort::less{}, host_ballot<decltype(ways)::value>{});
      };
      ASSERT_EQ(expected, kway(std::integral_constant<int, 32>{}))
          << "32-way, a_len " << a_len << " b_len " << b_len << " diagonal " << diagonal;
      ASSERT_EQ(expected, kway(std::integral_constant<int, 8>{}))
          << "8-way, a_len " << a_len << " b_len " << b_len << " diagonal " << diagonal;
      ASSERT_EQ(expected, kway(std::integral_constant<int, 2>{}))
          << "2-way, a_len " << a_len << " b_len " << b_len << " diagonal " << diagonal;
    }
  }
  // Through the partition query, as the kernel calls it: every boundary of a pass.
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(4095), std::int64_t(3 * 4096 + 17), std::int64_t(40000)}) {
    std::vector<int> keys(n);
    for (auto& k : keys) k = static_cast<int>(rng() % 50);
    const std::int64_t run = 2048;
    for (std::int64_t begin = 0; begin < n; begin += run)
      std::sort(keys.begin() + begin, keys.begin() + std::min(n, begin + run));
    for (std::int64_t tile = 0; tile * 512 <= n + 511; ++tile) {
      const std::int64_t expected = merge_sort_partition(keys.data(), n, run, 512, tile, tilesort::less{});
      ASSERT_EQ(expected, merge_sort_partition(keys.data(), n, run, 512, tile, tilesort::less{}, host_ballot<32>{}))
          << "n " << n << " boundary " << tile;
      ASSERT_EQ(expected, merge_sort_partition<8>(keys.data(), n, run, 512, tile, tilesort::less{}, host_ballot<8>{}))
          << "8-way, n " << n << " boundary " << tile;
    }
  }
}

// ------------------------------------------------------------------ the kernels' steps, thread by thread
// A small stand-in policy (the device code only reads these members).
template <int BlockThreads, int BlockItems, int MergeThreads, int MergeItems>
struct test_policy {
  static constexpr int block_threads = BlockThreads;
  static constexpr int block_items = BlockItems;
  static constexpr int merge_threads = MergeThreads;
  static constexpr int merge_items = MergeItems;
  static constexpr int tile_items = BlockThreads * BlockItems;
  static constexpr int merge_tile_items = MergeThreads * MergeItems;
  static_assert((2 * tile_items) % merge_tile_items == 0, "");
};

struct tagged {
  int key;
  int tag;  // original index for keys-only runs: stability visible in the keys
};
struct tagged_less {
  TILESORT_HD bool operator()(const tagged& a, const tagged& b) const { return a.key < b.key; }
};

constexpr int poison_key = -123456789;

// merge_sort_blocksort_tile, thread by thread: warp transposes in, a stable
// sort of the blocked registers (block_sort's contract), warp transposes out.
template <typename Policy, typename Key, typename Value, typename Compare>
void emulate_blocksort_tile(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int valid,
                            Compare comp) {
  constexpr int threads = Policy::block_threads, items = Policy::block_items, warps = threads / 32;
  constexpr bool pairs = has_values<Value>;
  using transpose = merge_sort_warp_transpose<items>;
  struct registers {
    Key keys[items];
    Value values[items];
  };
  std::vector<registers> regs(threads);
  const bool full = valid == Policy::tile_items;
  for (int warp = 0; warp < warps; ++warp) {
    const int offset = warp * 32 * items, warp_valid = valid - offset;
    std::vector<Key> key_region(transpose_slots<Key>(32 * items), Key{poison_key, poison_key});
    std::vector<Value> value_region(transpose_slots<Value>(32 * items));
    for (int lane = 0; lane < 32; ++lane) {
      if (full) {
        transpose::template load_striped<true>(keys_in + offset, warp_valid, key_region.data(), lane);
        if constexpr (pairs)
          transpose::template load_striped<true>(values_in + offset, warp_valid, value_region.data(), lane);
      } else {
        transpose::template load_striped<false>(keys_in + offset, warp_valid, key_region.data(), lane);
        if constexpr (pairs)
          transpose::template load_striped<false>(values_in + offset, warp_valid, value_region.data(), lane);
      }
    }
    for (int lane = 0; lane < 32; ++lane) {
      registers& r = regs[warp * 32 + lane];
      if (full) {
        transpose::template read_blocked<true>(key_region.data(), warp_valid, lane, r.keys, keys_in);
        if constexpr (pairs)
          transpose::template read_blocked<true>(value_region.data(), warp_valid, lane, r.values, values_in);
      } else {
        transpose::template read_blocked<false>(key_region.data(), warp_valid, lane, r.keys, keys_in);
        if constexpr (pairs)
          transpose::template read_blocked<false>(value_region.data(), warp_valid, lane, r.values, values_in);
      }
      for (int i = 0; i < items; ++i)
        if (lane * items + i >= warp_valid) EXPECT_EQ(keys_in[0].key, r.keys[i].key) << "fill of an invalid slot";
    }
  }
  // block_sort: blocked rank t·items + i; the first `valid` ranks are the
  // valid keys, stably sorted.
  std::vector<std::pair<Key, Value>> tile;
  for (int p = 0; p < valid; ++p) tile.push_back({regs[p / items].keys[p % items], regs[p / items].values[p % items]});
  std::stable_sort(tile.begin(), tile.end(), [&](const auto& a, const auto& b) { return comp(a.first, b.first); });
  for (int p = 0; p < valid; ++p) {
    regs[p / items].keys[p % items] = tile[p].first;
    regs[p / items].values[p % items] = tile[p].second;
  }
  for (int warp = 0; warp < warps; ++warp) {
    const int offset = warp * 32 * items, warp_valid = valid - offset;
    std::vector<Key> key_region(transpose_slots<Key>(32 * items), Key{poison_key, poison_key});
    std::vector<Value> value_region(transpose_slots<Value>(32 * items));
    for (int lane = 0; lane < 32; ++lane) {
      transpose::write_blocked(key_region.data(), lane, regs[warp * 32 + lane].keys);
      if constexpr (pairs) transpose::write_blocked(value_region.data(), lane, regs[warp * 32 + lane].values);
    }
    for (int lane = 0; lane < 32; ++lane) {
      if (full) {
        transpose::template store_striped<true>(key_region.data(), warp_valid, keys_out + offset, lane);
        if constexpr (pairs)
          transpose::template store_striped<true>(value_region.data(), warp_valid, values_out + offset, lane);
      } else {
        transpose::template store_striped<false>(key_region.data(), warp_valid, keys_out + offset, lane);
        if constexpr (pairs)
          transpose::template store_striped<false>(value_region.data(), warp_valid, values_out + offset, lane);
      }
    }
  }
}

// merge_sort_merge_tile, thread by thread, barrier by barrier (values loaded
// into shared memory with the keys, as the merge passes do).
template <typename Policy, bool Full, typename Key, typename Value, typename Compare>
void emulate_merge_tile(const merge_tile_slices& slices, const Key* keys_src, Key* keys_dst, const Value* values_src,
                        Value* values_dst, Compare comp) {
  constexpr int threads = Policy::merge_threads, items = Policy::merge_items;
  constexpr bool pairs = has_values<Value>;
  using steps = merge_sort_merge_steps<threads, items>;
  // Shared memory, poisoned: a read of a slot no step wrote shows in the result.
  std::vector<Key> keys(transpose_slots<Key>(Policy::merge_tile_items), Key{poison_key, poison_key});
  std::vector<int> sources(transpose_slots<int>(Policy::merge_tile_items), poison_key);
  std::vector<Value> values(Policy::merge_tile_items);
  if constexpr (std::is_integral_v<Value>) std::fill(values.begin(), values.end(), Value(poison_key));
  for (int t = 0; t < threads; ++t) steps::template load<Full>(keys.data(), slices, keys_src, t);
  if constexpr (pairs)
    for (int t = 0; t < threads; ++t) steps::template load<Full>(values.data(), slices, values_src, t);
  struct registers {
    Key out[items];
    int source[items];
  };
  std::vector<registers> regs(threads);
  for (int t = 0; t < threads; ++t) steps::merge(keys.data(), slices, t, regs[t].out, regs[t].source, comp);
  for (int t = 0; t < threads; ++t)
    steps::template write_blocked<pairs>(keys.data(), sources.data(), t, regs[t].out, regs[t].source);
  for (int t = 0; t < threads; ++t)
    steps::template store<Full, pairs>(keys.data(), sources.data(), values.data(), slices, t, keys_dst, values_dst);
}

// merge_sort_launch on the host: same plan, same buffers, same steps.
template <typename Policy, typename Key, typename Value, typename Compare>
void emulate_merge_sort(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, std::int64_t n,
                        Compare comp) {
  const merge_sort_plan plan = make_merge_sort_plan(n, Policy::tile_items, Policy::merge_tile_items);
  std::vector<Key> temp_keys(n, Key{poison_key, poison_key});
  std::vector<Value> temp_values(n);
  auto keys_of = [&](int step) { return plan.writes_output(step) ? keys_out : temp_keys.data(); };
  auto values_of = [&](int step) { return plan.writes_output(step) ? values_out : temp_values.data(); };
  constexpr bool pairs = has_values<Value>;
  for (std::int64_t tile = 0; tile < plan.tiles; ++tile) {
    const std::int64_t begin = tile * Policy::tile_items;
    const int valid = static_cast<int>(std::min<std::int64_t>(n - begin, Policy::tile_items));
    emulate_blocksort_tile<Policy>(keys_in + begin, keys_of(0) + begin, pairs ? values_in + begin : values_in,
                                   pairs ? values_of(0) + begin : values_out, valid, comp);
  }
  for (int pass = 0; pass < plan.merge_passes; ++pass) {
    const Key* src = keys_of(pass);
    const std::int64_t run = plan.run_length(pass);
    std::vector<std::int64_t> partitions(plan.partition_count());
    for (std::int64_t i = 0; i < plan.partition_count(); ++i)
      partitions[i] = merge_sort_partition(src, n, run, Policy::merge_tile_items, i, comp);
    for (std::int64_t tile = 0; tile < plan.merge_tiles; ++tile) {
      const merge_tile_slices slices =
          merge_tile_range(tile, Policy::merge_tile_items, run, n, partitions[tile], partitions[tile + 1]);
      if (slices.count() == Policy::merge_tile_items) {
        emulate_merge_tile<Policy, true>(slices, src, keys_of(pass + 1), values_of(pass), values_of(pass + 1), comp);
      } else {
        emulate_merge_tile<Policy, false>(slices, src, keys_of(pass + 1), values_of(pass), values_of(pass + 1), comp);
      }
    }
  }
}

template <typename Policy>
void check_emulation(std::int64_t n, int distinct, bool in_place, std::mt19937_64& rng) {
  SCOPED_TRACE("n=" + std::to_string(n) + " tile=" + std::to_string(Policy::tile_items) +
               " merge tile=" + std::to_string(Policy::merge_tile_items) + (in_place ? " in place" : " copy"));
  std::vector<tagged> in(n);
  for (std::int64_t i = 0; i < n; ++i) in[i] = {static_cast<int>(rng() % distinct), static_cast<int>(i)};
  std::vector<tagged> ref = in;
  std::stable_sort(ref.begin(), ref.end(), tagged_less{});

  // Keys only (the tag is the original index: stability is visible).
  std::vector<tagged> keys = in, out(n, tagged{poison_key, poison_key});
  tagged* dst = in_place ? keys.data() : out.data();
  emulate_merge_sort<Policy>(keys.data(), dst, static_cast<const no_value*>(nullptr), static_cast<no_value*>(nullptr),
                             n, tagged_less{});
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(ref[i].key, dst[i].key) << "keys only, index " << i;
    ASSERT_EQ(ref[i].tag, dst[i].tag) << "keys only, not stable at " << i;
  }
  if (!in_place)
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(in[i].tag, keys[i].tag) << "keys_in written at " << i;

  // Pairs: values are 64-bit original indices; keys lose their tags.
  std::vector<tagged> pair_keys(n), pair_out(n, tagged{poison_key, poison_key});
  std::vector<std::int64_t> values(n), values_out(n, -1);
  for (std::int64_t i = 0; i < n; ++i) {
    pair_keys[i] = {in[i].key, 0};
    values[i] = i;
  }
  tagged* kdst = in_place ? pair_keys.data() : pair_out.data();
  std::int64_t* vdst = in_place ? values.data() : values_out.data();
  emulate_merge_sort<Policy>(pair_keys.data(), kdst, values.data(), vdst, n, tagged_less{});
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(ref[i].key, kdst[i].key) << "pairs, index " << i;
    ASSERT_EQ(ref[i].tag, vdst[i]) << "pairs, value at " << i;
  }
}

template <typename Policy>
void check_emulation_sizes(std::mt19937_64& rng) {
  const std::int64_t t = Policy::tile_items, m = Policy::merge_tile_items;
  std::vector<std::int64_t> sizes = {0,
                                     1,
                                     2,
                                     31,
                                     32,
                                     33,
                                     m - 1,
                                     m,
                                     m + 1,
                                     t - 1,
                                     t,
                                     t + 1,
                                     2 * t - 1,
                                     2 * t,
                                     2 * t + 1,
                                     3 * t + 7,
                                     4 * t + m / 2 + 1,
                                     5 * t + 3,
                                     8 * t,
                                     8 * t + 1,
                                     16 * t + 5,
                                     24 * t - 1};
  for (int trial = 0; trial < 6; ++trial) sizes.push_back(1 + static_cast<std::int64_t>(rng() % (12 * t)));
  int i = 0;
  for (const std::int64_t n : sizes) {
    check_emulation<Policy>(n, (i % 3 == 0) ? 1 : (i % 3 == 1) ? 5 : 1000000, (i % 2) == 1, rng);
    ++i;
  }
}

TEST(MergeSortSteps, EmulatedDeviceSortMatchesStableSort) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  check_emulation_sizes<test_policy<32, 4, 32, 2>>(rng);   // T 128, M 64
  check_emulation_sizes<test_policy<64, 3, 32, 3>>(rng);   // T 192, M 96: odd items per thread
  check_emulation_sizes<test_policy<64, 4, 32, 16>>(rng);  // T 256, M 512 = 2T
  check_emulation_sizes<test_policy<128, 2, 64, 2>>(rng);  // several warps per block
}

TEST(MergeSortSteps, EmulatedDeviceSortPolicyShape) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // The sm_90 policy's shapes: 512 x 16 (u32 keys), 256 x 16 (8-byte items).
  using keys = tilesort::merge_sort_policy<4, 0>;
  using pairs = tilesort::merge_sort_policy<4, 4>;
  static_assert(keys::tile_items == 8192 && pairs::tile_items == 4096 && keys::merge_tile_items == 4096 &&
                    pairs::merge_tile_items == 4096,
                "update the test");
  const auto check = [&](auto shape) {
    using policy = decltype(shape);
    const std::int64_t t = policy::tile_items;
    for (const std::int64_t n : {t - 1, t + 1, 3 * t + 4095, 4 * t + 1})
      for (const bool in_place : {false, true}) check_emulation<policy>(n, 100, in_place, rng);
  };
  check(test_policy<keys::block_threads, keys::block_items, keys::merge_threads, keys::merge_items>{});
  check(test_policy<pairs::block_threads, pairs::block_items, pairs::merge_threads, pairs::merge_items>{});
}

// ------------------------------------------------------------------ temp storage
// ------------------------------------------------------------------ k-way passes
TEST(MergeSortKway, PassesAndShapes) {
  // T = 8192, K = 4, G = 256, Q = 12: the sm_90 policy for u32 keys.
  struct expected {
    std::int64_t n;
    int passes;
  };
  const expected cases[] = {{0, 0},         {1, 0},          {8192, 0},       {8193, 1},
                            {4 * 8192, 1},  {4 * 8192 + 1, 2}, {std::int64_t(1) << 20, 4},
                            {std::int64_t(1) << 24, 6},     {std::int64_t(1) << 28, 8},
                            {(std::int64_t(1) << 31) + 1000, 10}};
  for (const auto& c : cases) {
    SCOPED_TRACE("n=" + std::to_string(c.n));
    const kway_merge_sort_plan plan = make_kway_merge_sort_plan(c.n, 8192, 4, 256, 12);
    EXPECT_EQ(c.passes, plan.merge_passes);
    EXPECT_TRUE(plan.writes_output(plan.merge_passes));
    std::int64_t most_cuts = 0;
    for (int pass = 0; pass < plan.merge_passes; ++pass) {
      const kway_pass_shape shape = plan.pass_shape(pass);
      EXPECT_EQ(std::int64_t(8192) << (2 * pass), shape.run);
      EXPECT_EQ(256, shape.stride());
      EXPECT_EQ(shape.run / 256, shape.run_samples());
      EXPECT_EQ(ceil_div(c.n, 4 * shape.run), shape.groups);
      EXPECT_EQ(ceil_div(4 * shape.run / 256, 12), shape.cuts_per_group);
      EXPECT_LE(shape.last_group_cuts, shape.cuts_per_group);
      EXPECT_GE(shape.last_group_cuts, 1);
      EXPECT_EQ(4096, shape.max_tile_items());
      most_cuts = std::max(most_cuts, shape.tiles() * 4);
    }
    EXPECT_EQ(most_cuts, plan.partition_count());
    // After the last pass one run covers everything; one pass earlier it did not.
    if (c.n > 0) EXPECT_GE(plan.run_length(plan.merge_passes), c.n);
    if (plan.merge_passes > 0) EXPECT_LT(plan.run_length(plan.merge_passes - 1), c.n);
  }
  const kway_pass_shape last = make_kway_pass_shape(5 * 8192 + 1, 8192, 4, 256, 12);
  EXPECT_EQ(2, last.groups);
  EXPECT_EQ(11, last.cuts_per_group);   // 4 x 32 samples / 12, rounded up
  EXPECT_EQ(3, last.last_group_cuts);   // (32 + 1 samples) / 12, rounded up
  EXPECT_EQ(0, last.run_length(1, 2));
  EXPECT_EQ(1, last.run_length(1, 1));
}

// The k-way passes on the host, from the plan alone: each pass cuts its
// groups as merge_sort_cut_kernel does (the same searches), merges each
// tile's slices pairwise as merge_sort_kway_kernel does (std::merge per
// round), and checks that every output is written exactly once and that no
// tile passes max_tile_items.
struct kway_item {
  int key;
  std::int64_t index;
};

void check_kway_simulation(std::int64_t n, int tile, int ways, int stride, int cut_samples, int spread,
                           std::mt19937_64& rng) {
  SCOPED_TRACE("n=" + std::to_string(n) + " tile=" + std::to_string(tile) + " ways=" + std::to_string(ways));
  const auto less = [](const kway_item& x, const kway_item& y) { return x.key < y.key; };
  std::vector<kway_item> keys(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) keys[i] = {static_cast<int>(rng() % spread), i};
  std::vector<kway_item> expected = keys;
  std::stable_sort(expected.begin(), expected.end(), less);
  const kway_merge_sort_plan plan = make_kway_merge_sort_plan(n, tile, ways, stride, cut_samples);
  for (std::int64_t t = 0; t < plan.tiles; ++t)
    std::stable_sort(keys.begin() + t * tile, keys.begin() + std::min<std::int64_t>(n, (t + 1) * tile), less);
  std::vector<std::int64_t> cuts(static_cast<std::size_t>(plan.partition_count()));
  for (int pass = 0; pass < plan.merge_passes; ++pass) {
    SCOPED_TRACE("pass " + std::to_string(pass));
    const kway_pass_shape shape = plan.pass_shape(pass);
    std::fill(cuts.begin(), cuts.end(), -1);
    for (std::int64_t slot = 0; slot < shape.sample_slots(); ++slot) {
      const std::int64_t group = slot / (ways * shape.run_samples());
      const int j = static_cast<int>(slot / shape.run_samples() % ways);
      const std::int64_t position = slot % shape.run_samples() * stride;
      if (position >= shape.run_length(group, j)) continue;
      const kway_item x = keys[shape.run_begin(group, j) + position];
      std::vector<std::int64_t> before(ways);
      std::int64_t rank = 0;
      for (int m = 0; m < ways; ++m) {
        const kway_item* run = keys.data() + shape.run_begin(group, m);
        before[m] = m == j ? position / stride
                           : kway_samples_before(run, shape.run_length(group, m), m, x, j, shape.stride_shift, less);
        rank += before[m];
      }
      if (rank % cut_samples != 0) continue;
      for (int m = 0; m < ways; ++m) {
        const kway_item* run = keys.data() + shape.run_begin(group, m);
        const std::int64_t split =
            m == j ? position
                   : kway_split(run, shape.run_length(group, m), m, x, j, before[m], shape.stride_shift, less);
        // The split is exact: everything before it precedes x, nothing after.
        if (split > 0) ASSERT_TRUE(m == j || kway_precedes(run[split - 1], m, x, j, less));
        if (split < shape.run_length(group, m)) ASSERT_FALSE(m != j && kway_precedes(run[split], m, x, j, less));
        cuts[(group * shape.cuts_per_group + rank / cut_samples) * ways + m] = split;
      }
    }
    std::vector<kway_item> out(static_cast<std::size_t>(n));
    std::vector<int> written(static_cast<std::size_t>(n), 0);
    for (std::int64_t t = 0; t < shape.tiles(); ++t) {
      const std::int64_t group = t / shape.cuts_per_group, cut = t % shape.cuts_per_group;
      const std::int64_t last_cut = shape.group_cuts(group) - 1;
      if (cut > last_cut) continue;
      std::vector<std::vector<kway_item>> lists;
      std::int64_t out_begin = shape.run_begin(group, 0);
      for (int m = 0; m < ways; ++m) {
        const std::int64_t begin = cuts[(group * shape.cuts_per_group + cut) * ways + m];
        const std::int64_t end =
            cut < last_cut ? cuts[(group * shape.cuts_per_group + cut + 1) * ways + m] : shape.run_length(group, m);
        ASSERT_GE(begin, 0) << "cut " << cut << " of group " << group << " never written";
        ASSERT_LE(begin, end);
        out_begin += begin;
        const auto run = keys.begin() + shape.run_begin(group, m);
        lists.emplace_back(run + begin, run + end);
      }
      while (lists.size() > 1) {  // the kernel's rounds: lists 2i and 2i + 1 merge
        std::vector<std::vector<kway_item>> next;
        for (std::size_t i = 0; i < lists.size(); i += 2) {
          std::vector<kway_item> merged;
          std::merge(lists[i].begin(), lists[i].end(), lists[i + 1].begin(), lists[i + 1].end(),
                     std::back_inserter(merged), less);
          next.push_back(std::move(merged));
        }
        lists.swap(next);
      }
      ASSERT_LE(static_cast<int>(lists[0].size()), shape.max_tile_items());
      ASSERT_GE(lists[0].size(), 1u);
      for (std::size_t i = 0; i < lists[0].size(); ++i) {
        out[out_begin + i] = lists[0][i];
        ++written[out_begin + i];
      }
    }
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(1, written[i]) << "output " << i;
    keys.swap(out);
  }
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(expected[i].key, keys[i].key) << "at " << i;
    ASSERT_EQ(expected[i].index, keys[i].index) << "at " << i << " (stability)";
  }
}

TEST(MergeSortKway, HostSimulationMatchesStableSort) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // (tile, ways, stride, cut samples): small tiles for many passes; the policy's proportions (Q = 3K).
  struct shape {
    int tile, ways, stride, cut_samples;
  };
  for (const shape& sh : {shape{64, 4, 8, 12}, shape{64, 2, 16, 6}, shape{64, 8, 4, 24}, shape{32, 4, 4, 5}}) {
    for (std::int64_t n = 0; n <= 5 * sh.tile + 3; ++n)
      check_kway_simulation(n, sh.tile, sh.ways, sh.stride, sh.cut_samples, 3, rng);
    for (int trial = 0; trial < 12; ++trial) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 20000);
      const int spread = trial % 3 == 0 ? 2 : trial % 3 == 1 ? 100 : 1000000;
      check_kway_simulation(n, sh.tile, sh.ways, sh.stride, sh.cut_samples, spread, rng);
    }
  }
  // The sm_90 policy's own shapes (u32 keys: 4-way; u32 pairs: 4-way, 4096-key
  // tiles; u64 keys: 8-way, 4096-key tiles), over a few passes.
  const auto check_policy = [&](auto policy) {
    using p = decltype(policy);
    const std::int64_t t = p::tile_items;
    for (std::int64_t n : {t + 1, p::merge_ways * t + 1, std::int64_t(300007)})
      check_kway_simulation(n, p::tile_items, p::merge_ways, p::cut_stride, p::cut_samples, 1000, rng);
  };
  check_policy(tilesort::merge_sort_policy<4, 0>{});
  check_policy(tilesort::merge_sort_policy<4, 4>{});
  check_policy(tilesort::merge_sort_policy<8, 0>{});
  static_assert(tilesort::merge_sort_policy<8, 0>::merge_ways == 8 && tilesort::merge_sort_policy<4, 4>::merge_ways == 4,
                "update the comment");
}

TEST(MergeSortPlan, TempLayout) {
  // One tile: nothing needed, but never 0 bytes (so allocating temp_bytes gives a real pointer).
  auto layout = make_merge_sort_temp_layout(make_merge_sort_plan(100, 8192, 4096), 4, 4);
  EXPECT_EQ(1u, layout.total_bytes);
  EXPECT_EQ(0u, layout.keys_bytes + layout.values_bytes + layout.partitions_bytes);
  layout = make_merge_sort_temp_layout(make_merge_sort_plan(0, 8192, 4096), 4, 0);
  EXPECT_EQ(1u, layout.total_bytes);

  // Keys only, past 2^31 one-byte keys.
  const std::int64_t big = (std::int64_t(1) << 31) + 1000;
  auto plan = make_merge_sort_plan(big, 8192, 4096);
  layout = make_merge_sort_temp_layout(plan, 1, 0);
  EXPECT_EQ(0u, layout.keys_offset);
  EXPECT_EQ(std::size_t(big), layout.keys_bytes);
  EXPECT_EQ(0u, layout.values_bytes);
  EXPECT_EQ(0u, layout.partitions_offset % 256);
  EXPECT_GE(layout.partitions_offset, layout.keys_bytes);
  EXPECT_LT(layout.partitions_offset, layout.keys_bytes + 256);
  EXPECT_EQ(std::size_t(plan.merge_tiles + 1) * 8, layout.partitions_bytes);
  EXPECT_EQ(layout.partitions_offset + layout.partitions_bytes, layout.total_bytes);

  // Pairs: u64 keys, 12-byte values, a size that is not a multiple of anything.
  plan = make_merge_sort_plan(1000003, 4096, 2048);
  layout = make_merge_sort_temp_layout(plan, 8, 12);
  EXPECT_EQ(8000024u, layout.keys_bytes);
  EXPECT_EQ(0u, layout.values_offset % 256);
  EXPECT_GE(layout.values_offset, layout.keys_offset + layout.keys_bytes);
  EXPECT_EQ(12000036u, layout.values_bytes);
  EXPECT_EQ(0u, layout.partitions_offset % 256);
  EXPECT_GE(layout.partitions_offset, layout.values_offset + layout.values_bytes);
  EXPECT_EQ(std::size_t(ceil_div(1000003, 2048) + 1) * 8, layout.partitions_bytes);
  EXPECT_EQ(layout.partitions_offset + layout.partitions_bytes, layout.total_bytes);

  // Carving: typed pointers at the offsets; null where a buffer has no bytes.
  alignas(256) static char storage[1];
  void* base = storage;
  auto buffers = carve_merge_sort_temp<std::uint64_t, float>(base, layout);
  EXPECT_EQ(static_cast<void*>(storage), static_cast<void*>(buffers.keys));
  EXPECT_EQ(static_cast<const void*>(storage + layout.values_offset), static_cast<const void*>(buffers.values));
  EXPECT_EQ(static_cast<const void*>(storage + layout.partitions_offset), static_cast<const void*>(buffers.partitions));
  auto keys_only = carve_merge_sort_temp<std::uint8_t, int>(
      base, make_merge_sort_temp_layout(make_merge_sort_plan(big, 8192, 4096), 1, 0));
  EXPECT_EQ(nullptr, keys_only.values);
  auto one_tile = carve_merge_sort_temp<std::uint32_t, int>(
      base, make_merge_sort_temp_layout(make_merge_sort_plan(5, 8192, 4096), 4, 4));
  EXPECT_EQ(nullptr, one_tile.keys);
  EXPECT_EQ(nullptr, one_tile.partitions);
}

// ------------------------------------------------------------------ shared-memory banks
// Shared-memory wavefronts one warp-wide access needs: 32 banks of 4 bytes;
// accesses of 8 (16) bytes are served per half (quarter) warp. Lanes reading
// the same 4-byte word share it (broadcast).
int wavefronts(const std::vector<std::int64_t>& byte_address, int access_bytes) {
  const int group = access_bytes <= 4 ? 32 : 128 / access_bytes;
  int total = 0;
  for (int first = 0; first < 32; first += group) {
    std::map<int, std::set<std::int64_t>> words_per_bank;
    for (int lane = first; lane < first + group; ++lane)
      for (int w = 0; w < std::max(1, access_bytes / 4); ++w) {
        const std::int64_t word = byte_address[lane] / 4 + w;
        words_per_bank[static_cast<int>(word % 32)].insert(word);
      }
    std::size_t worst = 0;
    for (const auto& [bank, words] : words_per_bank) worst = std::max(worst, words.size());
    total += static_cast<int>(worst);
  }
  return total;
}

// Blocked (lane l, item i -> l·Items + i) and striped (lane l -> l + 32k)
// accesses of one warp through the padded layout, warp `warp` of the block
// (block-wide indices, as the merge kernel uses them).
template <typename T, int Items>
void expect_conflict_free(int warp) {
  SCOPED_TRACE("sizeof=" + std::to_string(sizeof(T)) + " items=" + std::to_string(Items) +
               " warp=" + std::to_string(warp));
  const int ideal = std::max(1, static_cast<int>(32 * sizeof(T) / 128));
  const int base = warp * 32 * Items;
  for (int i = 0; i < Items; ++i) {
    std::vector<std::int64_t> address(32);
    for (int lane = 0; lane < 32; ++lane)
      address[lane] = std::int64_t(transpose_slot<T>(base + lane * Items + i)) * sizeof(T);
    EXPECT_EQ(ideal, wavefronts(address, sizeof(T))) << "blocked access, item " << i;
  }
  for (int k = 0; k < Items; ++k) {
    std::vector<std::int64_t> address(32);
    for (int lane = 0; lane < 32; ++lane)
      address[lane] = std::int64_t(transpose_slot<T>(base + lane + 32 * k)) * sizeof(T);
    EXPECT_EQ(ideal, wavefronts(address, sizeof(T))) << "striped access, row " << k;
  }
  // The padded array holds every padded index.
  EXPECT_LT(transpose_slot<T>(base + 32 * Items - 1), transpose_slots<T>(base + 32 * Items));
}

struct bytes8 {
  std::uint32_t a, b;
};

TEST(MergeSortPlan, TransposePaddingIsConflictFree) {
  for (int warp : {0, 1, 5}) {
    expect_conflict_free<std::uint32_t, 16>(warp);
    expect_conflict_free<std::uint32_t, 8>(warp);
    expect_conflict_free<std::uint32_t, 4>(warp);
    expect_conflict_free<float, 16>(warp);
    expect_conflict_free<std::uint64_t, 16>(warp);
    expect_conflict_free<std::uint64_t, 8>(warp);
    expect_conflict_free<bytes8, 16>(warp);
    expect_conflict_free<std::uint16_t, 16>(warp);
    expect_conflict_free<std::uint16_t, 8>(warp);
    expect_conflict_free<std::uint8_t, 16>(warp);
    expect_conflict_free<std::uint8_t, 4>(warp);
    expect_conflict_free<std::int32_t, 16>(warp);  // the merge kernel's source indices
  }
  // Without padding the blocked side of 16 u32 per thread is a 16-way conflict.
  std::vector<std::int64_t> address(32);
  for (int lane = 0; lane < 32; ++lane) address[lane] = lane * 16 * 4;
  EXPECT_EQ(16, wavefronts(address, 4));
}

}  // namespace
