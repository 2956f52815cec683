// Host tests for detail/block_merge_plan.cuh (merge rounds, ranges, padded
// shared-memory layout) and for block_sort's per-thread core: the whole block
// sort is run here thread by thread, round by round (a barrier is the end of a
// loop over threads), against std::stable_sort, with every shared-memory read
// checked to stay where the barriers make it safe.
#include <tilesort/block/block_sort.cuh>
#include <tilesort/detail/block_merge_plan.cuh>

#include <map>
#include <set>

#include "common/test_util.cuh"

namespace {

using tilesort::detail::block_merge_range;
using tilesort::detail::boundary_window_fits;
using tilesort::detail::boundary_window_moves;
using tilesort::detail::boundary_window_range;
using tilesort::detail::block_merge_rounds;
using tilesort::detail::merge_range;
using tilesort::detail::warp_merge_rounds;
using tilesort_test::distribution;
using tilesort_test::fresh_seed;
using tilesort_test::sorted_random_ints;

TEST(BlockMergePlan, Rounds) {
  EXPECT_EQ(5, block_merge_rounds(32));
  EXPECT_EQ(6, block_merge_rounds(64));
  EXPECT_EQ(7, block_merge_rounds(96));
  EXPECT_EQ(7, block_merge_rounds(128));
  EXPECT_EQ(8, block_merge_rounds(160));
  EXPECT_EQ(10, block_merge_rounds(1024));
  EXPECT_EQ(5, warp_merge_rounds(32));
  EXPECT_EQ(5, warp_merge_rounds(1024));
}

// Every round: the threads of one run pair share its ranges, own consecutive
// diagonals 0, IPT, 2*IPT, ... covering the pair, the runs are adjacent and at
// most IPT*2^r long, warp rounds stay inside the warp, and after the last
// round one pair covers the tile.
TEST(BlockMergePlan, RangesCoverTheTile) {
  const int shapes[][2] = {{32, 1}, {32, 16}, {64, 3}, {96, 5}, {128, 7}, {160, 4}, {256, 8}, {1024, 2}};
  for (const auto& shape : shapes) {
    const int threads = shape[0], ipt = shape[1], tile = threads * ipt;
    SCOPED_TRACE("threads=" + std::to_string(threads) + " ipt=" + std::to_string(ipt));
    const int rounds = block_merge_rounds(threads);
    for (int round = 0; round < rounds; ++round) {
      std::vector<int> written(tile, 0);
      for (int t = 0; t < threads; ++t) {
        const merge_range r = block_merge_range(t, round, ipt, tile);
        ASSERT_EQ(r.a_end, r.b_begin);
        ASSERT_LE(r.a_begin, r.a_end);
        ASSERT_LE(r.b_begin, r.b_end);
        ASSERT_LE(r.b_end, tile);
        ASSERT_LE(r.a_end - r.a_begin, ipt << round);
        ASSERT_LE(r.b_end - r.b_begin, ipt << round);
        ASSERT_EQ(0, r.diagonal % ipt);
        ASSERT_LT(r.diagonal, r.b_end - r.a_begin);
        ASSERT_EQ(t * ipt, r.a_begin + r.diagonal);  // blocked outputs
        if (round < warp_merge_rounds(threads)) {
          const int warp_begin = t / 32 * 32 * ipt;
          ASSERT_GE(r.a_begin, warp_begin);
          ASSERT_LE(r.b_end, warp_begin + 32 * ipt);
        }
        // The previous round produced runs of ipt << round: A and B are two of them.
        ASSERT_EQ(0, r.a_begin % (ipt << (round + 1)));
        for (int i = 0; i < ipt; ++i) ++written[t * ipt + i];
      }
      for (int p = 0; p < tile; ++p) ASSERT_EQ(1, written[p]);
    }
    const merge_range last = block_merge_range(0, rounds - 1, ipt, tile);
    EXPECT_EQ(0, last.a_begin);
    EXPECT_EQ(tile, last.b_end);
  }
}

TEST(BlockMergePlan, ValidCounts) {
  // A run pair [64, 96) + [96, 128).
  const merge_range r{64, 96, 96, 128, 0};
  EXPECT_EQ(0, tilesort::detail::valid_b_items(r, 10));
  EXPECT_EQ(0, tilesort::detail::valid_b_items(r, 96));
  EXPECT_EQ(5, tilesort::detail::valid_b_items(r, 101));
  EXPECT_EQ(32, tilesort::detail::valid_b_items(r, 128));
  EXPECT_EQ(32, tilesort::detail::valid_b_items(r, 1000));
  EXPECT_EQ(0, tilesort::detail::valid_thread_items(3, 8, 20));
  EXPECT_EQ(4, tilesort::detail::valid_thread_items(2, 8, 20));
  EXPECT_EQ(8, tilesort::detail::valid_thread_items(1, 8, 20));
}

// The bounded (binary lifting) search returns exactly merge_path's split.
TEST(BlockMergePlan, BoundedSearchMatchesMergePath) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 3000; ++trial) {
    const int max_range = 1 + static_cast<int>(rng() % 70);
    const int a_len = static_cast<int>(rng() % (max_range + 1));
    const int b_len = static_cast<int>(rng() % (max_range + 1));
    const int spread = trial % 3 == 0 ? 3 : 1000;
    const std::vector<int> a = sorted_random_ints(rng, a_len, spread);
    const std::vector<int> b = sorted_random_ints(rng, b_len, spread);
    for (int diagonal = 0; diagonal <= a_len + b_len; ++diagonal) {
      const int expected = tilesort::detail::merge_path(a.data(), a_len, b.data(), b_len, diagonal, tilesort::less{});
      ASSERT_EQ(expected, tilesort::detail::merge_path_bounded<false>(a.data(), a_len, b.data(), b_len, diagonal,
                                                                      max_range, tilesort::less{}))
          << "a_len " << a_len << " b_len " << b_len << " diagonal " << diagonal << " max_range " << max_range;
      // Unguarded probes: A is max_range long, B follows; reads must stay in the pair's window.
      if (a_len == max_range) {
        std::vector<int> window(2 * max_range, 0);
        std::copy(a.begin(), a.end(), window.begin());
        std::copy(b.begin(), b.end(), window.begin() + a_len);
        int reads[64], read_count = 0;
        struct probe_view {  // records every position read (at most 2 per step, <= 7 steps)
          const int* data;
          int size;
          int* reads;
          int* read_count;
          int offset;
          __host__ __device__ int operator[](int i) const {
            const int p = offset + i;
            reads[(*read_count)++] = p;
            return p >= 0 && p < size ? data[p] : 0;
          }
        };
        const int size = static_cast<int>(window.size());
        const int unguarded = tilesort::detail::merge_path_bounded<true>(
            probe_view{window.data(), size, reads, &read_count, 0}, a_len,
            probe_view{window.data(), size, reads, &read_count, a_len}, b_len, diagonal, max_range, tilesort::less{});
        ASSERT_EQ(expected, unguarded);
        for (int r = 0; r < read_count; ++r)
          ASSERT_TRUE(reads[r] >= 0 && reads[r] < 2 * max_range) << "probe outside the run pair: " << reads[r];
      }
    }
  }
}

// ---------------------------------------------------------------- layout
// Wavefronts a warp needs to store item i of every lane at blocked positions,
// in the bank model of block_merge_plan.cuh: `group` lanes per wavefront, each
// bank `unit` bytes wide.
template <typename Layout>
int blocked_store_conflicts(int ipt, int item_bytes) {
  const int unit = item_bytes < 4 ? 4 : item_bytes;
  const int group = 128 / unit;
  int worst = 0;
  for (int i = 0; i < ipt; ++i) {
    for (int first = 0; first < 32; first += group) {
      std::map<int, std::set<int>> banks;
      for (int lane = first; lane < first + group; ++lane) {
        const int slot = Layout::index(lane * ipt + i);
        banks[slot % group].insert(slot);
      }
      for (const auto& bank : banks) worst = std::max(worst, static_cast<int>(bank.second.size()));
    }
  }
  return worst;
}

template <int IPT, int Bytes>
void check_layout() {
  using layout = tilesort::detail::padded_layout<IPT, Bytes>;
  SCOPED_TRACE("ipt=" + std::to_string(IPT) + " item bytes=" + std::to_string(Bytes));
  EXPECT_EQ(1, blocked_store_conflicts<layout>(IPT, Bytes)) << "blocked stores have bank conflicts";
  const int tile = 1024 * IPT;
  for (int p = 1; p <= tile; ++p) ASSERT_LT(layout::index(p - 1), layout::index(p));
  EXPECT_EQ(layout::index(tile) + 1, layout::slots(tile));
  // At most one padding slot per 2 items (IPT = 2 mod 4), usually one per 16 or more.
  EXPECT_LE(layout::slots(tile), tile + tile / 2 + 1);
  for (int t = 0; t < 1024; ++t)
    for (int i = 0; i < IPT; ++i)
      ASSERT_EQ(layout::index(t * IPT) + layout::thread_offset(i), layout::index(t * IPT + i));
}

template <int Bytes, int... IPTs>
void check_layouts(std::integer_sequence<int, IPTs...>) {
  (check_layout<IPTs + 1, Bytes>(), ...);
}

TEST(BlockMergePlan, PaddedLayoutStoresAreConflictFree) {
  check_layouts<4>(std::make_integer_sequence<int, 32>{});
  check_layouts<8>(std::make_integer_sequence<int, 32>{});
  check_layouts<16>(std::make_integer_sequence<int, 32>{});
  // The layouts the issue names: 4-byte keys, IPT 16 -> one pad per 32 items.
  EXPECT_EQ(32, (tilesort::detail::padded_layout<16, 4>::period));
  EXPECT_EQ(0, (tilesort::detail::padded_layout<7, 4>::period));
  EXPECT_EQ(16, (tilesort::detail::padded_layout<16, 8>::period));
}

// ---------------------------------------------------------------- simulation
// Shared memory as the merge sees it: every read is checked against the slots
// the barriers make safe to read.
template <typename Item>
struct checked_slots {
  const Item* data;
  int lowest;   // smallest readable slot
  int highest;  // largest readable slot
  mutable bool ok = true;
  __host__ __device__ const Item& operator[](int slot) const {
    if (slot < lowest || slot > highest) ok = false;
    return data[slot < lowest || slot > highest ? lowest : slot];
  }
};

template <typename Key, typename Payload, int IPT>
struct thread_registers {
  Key keys[IPT];
  Payload payload[IPT];
};

// Run the block sort's core on one tile: keys in blocked order, payload =
// source position. Returns false on an unsafe shared-memory read. `nearly`:
// sort_nearly's boundary windows after the warp rounds (full tiles);
// *windows tells whether they replaced the block rounds.
template <typename Key, int BT, int IPT, bool Partial, typename Compare>
bool simulate_block_sort(std::vector<Key>& keys, std::vector<int>& origin, int valid, Compare comp,
                         bool nearly = false, bool* windows = nullptr) {
  using core = tilesort::detail::block_merge_core<Key, int, BT, IPT>;
  using item = typename core::item;
  using layout = typename core::layout;
  std::vector<thread_registers<Key, int, IPT>> threads(BT);
  for (int t = 0; t < BT; ++t) {
    for (int i = 0; i < IPT; ++i) {
      threads[t].keys[i] = keys[t * IPT + i];
      threads[t].payload[i] = t * IPT + i;
    }
    core::template sort_thread<Partial>(t, valid, threads[t].keys, threads[t].payload, comp);
  }
  std::vector<item> slots(core::buffer_slots);
  bool ok = true;
  if (windows) *windows = false;
  for (int round = 0; round < core::rounds; ++round) {
    std::memset(static_cast<void*>(slots.data()), 0xA5, slots.size() * sizeof(item));  // stale data is visible
    item* raw = slots.data();
    if (nearly && round == core::warp_rounds) {
      for (int t = 0; t < BT; ++t) core::store(raw, t, threads[t].keys, threads[t].payload);
      bool fits = true;
      const auto key = [&](int p) { return slots[layout::index(p)].key; };
      for (int w = 1; w < BT / 32; ++w) fits = fits && boundary_window_fits(w * 32 * IPT, IPT, key, comp);
      if (fits) {
        for (int t = 0; t < BT; ++t) {
          if (!boundary_window_moves(t, IPT, BT * IPT)) continue;
          const merge_range window = boundary_window_range(t, IPT);
          checked_slots<item> view{slots.data(), layout::index(window.a_begin), layout::index(window.b_end)};
          core::template merge_runs<false, false>(view, window, 16 * IPT, valid, threads[t].keys, threads[t].payload,
                                                  comp);
          ok = ok && view.ok;
        }
        if (windows) *windows = true;
        break;
      }
    }
    for (int t = 0; t < BT; ++t) core::store(raw, t, threads[t].keys, threads[t].payload);
    const bool warp_round = round < core::warp_rounds;
    for (int t = 0; t < BT; ++t) {
      // A merge reads only its run pair; block rounds may touch one slot past
      // it (written before the barrier, or the spare slot after the tile),
      // warp rounds may not (the next warp may be writing it).
      const merge_range pair = block_merge_range(t, round, IPT, BT * IPT);
      checked_slots<item> view{slots.data(), layout::index(pair.a_begin),
                               layout::index(warp_round ? pair.b_end - 1 : pair.b_end)};
      if (warp_round) {
        core::template merge<true, Partial>(view, t, round, valid, threads[t].keys, threads[t].payload, comp);
      } else {
        core::template merge<false, Partial>(view, t, round, valid, threads[t].keys, threads[t].payload, comp);
      }
      ok = ok && view.ok;
    }
  }
  for (int t = 0; t < BT; ++t) {
    for (int i = 0; i < IPT; ++i) {
      keys[t * IPT + i] = threads[t].keys[i];
      origin[t * IPT + i] = threads[t].payload[i];
    }
  }
  return ok;
}

// Reference: the valid prefix stably sorted, then the invalid keys in input
// order (what block_sort produces, though it promises only "unspecified").
template <typename Key, typename Compare>
std::vector<int> reference_order(const std::vector<Key>& keys, int valid, Compare comp) {
  std::vector<int> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.begin() + valid, [&](int a, int b) { return comp(keys[a], keys[b]); });
  return order;
}

template <typename Key, int BT, int IPT, typename Compare>
void check_simulation(std::uint64_t seed, Compare comp, bool partial) {
  constexpr int tile = BT * IPT;
  SCOPED_TRACE("BT=" + std::to_string(BT) + " IPT=" + std::to_string(IPT) + " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (distribution d : tilesort_test::all_distributions) {
    SCOPED_TRACE(tilesort_test::name(d));
    const std::vector<Key> input = tilesort_test::make_keys<Key>(tile, d, rng(), comp);
    std::vector<int> valids = {tile};
    if (partial) valids = {2, 3, IPT, IPT + 1, tile / 2 + 1, tile - 1, static_cast<int>(2 + rng() % (tile - 2))};
    for (int valid : valids) {
      if (valid < 2 || valid > tile) continue;  // block_sort returns early below 2
      SCOPED_TRACE("valid=" + std::to_string(valid));
      std::vector<Key> keys = input;
      std::vector<int> origin(tile);
      const bool safe = valid == tile ? simulate_block_sort<Key, BT, IPT, false>(keys, origin, valid, comp)
                                      : simulate_block_sort<Key, BT, IPT, true>(keys, origin, valid, comp);
      EXPECT_TRUE(safe) << "a merge read shared memory outside the slots its barrier covers";
      const std::vector<int> expected = reference_order(input, valid, comp);
      for (int p = 0; p < tile; ++p) {
        ASSERT_EQ(expected[p], origin[p]) << "position " << p;
        ASSERT_TRUE(tilesort_test::bytes_equal(input[expected[p]], keys[p])) << "key at position " << p;
      }
    }
  }
}

TEST(BlockSortSimulation, FullTilesLess) {
  const auto seed = fresh_seed();
  check_simulation<std::uint32_t, 32, 1>(seed, tilesort::less{}, false);
  check_simulation<std::uint32_t, 32, 16>(seed, tilesort::less{}, false);
  check_simulation<std::int32_t, 64, 3>(seed, tilesort::less{}, false);
  check_simulation<std::uint32_t, 128, 16>(seed, tilesort::less{}, false);
  check_simulation<std::uint32_t, 256, 8>(seed, tilesort::less{}, false);
  check_simulation<std::uint64_t, 128, 7>(seed, tilesort::less{}, false);
  check_simulation<float, 128, 4>(seed, tilesort::less{}, false);
  check_simulation<std::uint16_t, 96, 5>(seed, tilesort::less{}, false);  // not a power of two
  check_simulation<std::int8_t, 160, 2>(seed, tilesort::less{}, false);
}

TEST(BlockSortSimulation, FullTilesGreaterAndUser) {
  const auto seed = fresh_seed();
  check_simulation<double, 64, 6>(seed, tilesort::greater{}, false);
  check_simulation<std::int64_t, 256, 9>(seed, tilesort::greater{}, false);
  check_simulation<tilesort_test::user_key, 128, 7>(seed, tilesort_test::user_key_less{}, false);
  check_simulation<tilesort_test::user_key, 224, 3>(seed, tilesort_test::user_key_less{}, false);
  check_simulation<tilesort_test::user_key, 32, 17>(seed, tilesort_test::user_key_less{}, false);
}

// sort_nearly: keys within d of their sorted place take the boundary windows
// when d fits them (and the block rounds otherwise); the result is the stable
// sort either way.
template <typename Key, int BT, int IPT>
void check_nearly(std::uint64_t seed) {
  constexpr int tile = BT * IPT;
  SCOPED_TRACE("BT=" + std::to_string(BT) + " IPT=" + std::to_string(IPT) + " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int d : {1, 2, 8, 16 * IPT / 2, 16 * IPT, 16 * IPT + 1, 64 * IPT, tile}) {
    SCOPED_TRACE("displacement " + std::to_string(d));
    std::vector<Key> input(tile);
    for (int i = 0; i < tile; ++i) input[i] = static_cast<Key>(i / 3 + rng() % d);  // ties: stability shows
    std::vector<Key> keys = input;
    std::vector<int> origin(tile);
    bool windows = false;
    const bool safe = simulate_block_sort<Key, BT, IPT, false>(keys, origin, tile, tilesort::less{}, true, &windows);
    EXPECT_TRUE(safe) << "a window merge read outside its window";
    const std::vector<int> expected = reference_order(input, tile, tilesort::less{});
    for (int p = 0; p < tile; ++p) ASSERT_EQ(expected[p], origin[p]) << "position " << p;
    // Key i / 3 + r (r < d) ends within about 3d positions of i: for d <= 8
    // that is inside every window (half a warp's run, 16 x IPT >= 48 keys).
    if (d <= 8) EXPECT_TRUE(windows);
    if (d == tile) EXPECT_FALSE(windows);
  }
}

TEST(BlockSortSimulation, NearlySortedBoundaryWindows) {
  const auto seed = fresh_seed();
  check_nearly<std::uint32_t, 128, 16>(seed);
  check_nearly<std::uint32_t, 512, 16>(seed);
  check_nearly<std::uint64_t, 256, 8>(seed);
  check_nearly<std::int32_t, 64, 3>(seed);
}

TEST(BlockSortSimulation, PartialTiles) {
  const auto seed = fresh_seed();
  check_simulation<std::uint32_t, 32, 1>(seed, tilesort::less{}, true);
  check_simulation<std::uint32_t, 128, 16>(seed, tilesort::less{}, true);
  check_simulation<std::int32_t, 64, 3>(seed, tilesort::greater{}, true);
  check_simulation<float, 256, 8>(seed, tilesort::less{}, true);
  check_simulation<tilesort_test::user_key, 96, 7>(seed, tilesort_test::user_key_less{}, true);
  check_simulation<tilesort_test::user_key, 64, 16>(seed, tilesort_test::user_key_less{}, true);
}

// Keys alone with an order where equivalent keys are identical take the
// bitonic network in the thread step; the result is still the stable one.
TEST(BlockSortSimulation, KeysOnlyIdentityOrder) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  using core = tilesort::detail::block_merge_core<std::uint32_t, tilesort::detail::no_value, 64, 11>;
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::uint32_t> input(64 * 11);
    for (auto& k : input) k = static_cast<std::uint32_t>(rng() % (trial % 2 ? 5 : 100000));
    std::uint32_t regs[64][11];
    tilesort::detail::no_value none[64][11];
    for (int t = 0; t < 64; ++t) {
      for (int i = 0; i < 11; ++i) regs[t][i] = input[t * 11 + i];
      core::sort_thread<false>(t, 64 * 11, regs[t], none[t], tilesort::less{});
    }
    std::vector<core::item> slots(core::buffer_slots);
    for (int round = 0; round < core::rounds; ++round) {
      core::item* raw = slots.data();
      for (int t = 0; t < 64; ++t) core::store(raw, t, regs[t], none[t]);
      for (int t = 0; t < 64; ++t) core::merge<true, false>(raw, t, round, 64 * 11, regs[t], none[t], tilesort::less{});
    }
    std::sort(input.begin(), input.end());
    for (int p = 0; p < 64 * 11; ++p) ASSERT_EQ(input[p], regs[p / 11][p % 11]) << "position " << p;
  }
}

// The warp rounds in registers (keys alone, identical equivalent keys): the
// lane-level steps of warp_merge_rounds_in_registers, with __shfl_xor_sync
// emulated on a snapshot of all 32 lanes.
template <typename Key, int IPT, typename Compare>
void check_register_warp_merge(std::uint64_t seed, Compare comp) {
  SCOPED_TRACE("IPT=" + std::to_string(IPT) + " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    Key lanes[32][IPT];
    std::vector<Key> all;
    for (int l = 0; l < 32; ++l) {
      for (int e = 0; e < IPT; ++e) {
        lanes[l][e] = static_cast<Key>(rng() % (trial % 2 ? 6 : 1000000));
        all.push_back(lanes[l][e]);
      }
      tilesort::bitonic_network_sort(lanes[l], comp);
    }
    for (int group = 2; group <= 32; group <<= 1) {
      auto exchange = [&](int mask, bool mirror) {
        Key snapshot[32][IPT];
        std::memcpy(snapshot, lanes, sizeof(lanes));
        for (int l = 0; l < 32; ++l) {
          Key partner[IPT];
          for (int e = 0; e < IPT; ++e) partner[e] = snapshot[l ^ mask][mirror ? IPT - 1 - e : e];
          const int half = mirror ? group >> 1 : mask;
          tilesort::detail::exchange_with_partner(lanes[l], partner, (l & half) == 0, comp);
        }
      };
      exchange(group - 1, true);
      for (int mask = group >> 2; mask > 0; mask >>= 1) exchange(mask, false);
      for (int l = 0; l < 32; ++l) tilesort::detail::clean_bitonic_registers(lanes[l], comp);
    }
    std::stable_sort(all.begin(), all.end(), comp);
    for (int p = 0; p < 32 * IPT; ++p) ASSERT_EQ(all[p], lanes[p / IPT][p % IPT]) << "position " << p;
  }
}

TEST(BlockSortSimulation, RegisterWarpMerge) {
  const auto seed = fresh_seed();
  check_register_warp_merge<std::uint32_t, 1>(seed, tilesort::less{});
  check_register_warp_merge<std::uint32_t, 2>(seed, tilesort::less{});
  check_register_warp_merge<std::uint32_t, 4>(seed, tilesort::less{});
  check_register_warp_merge<std::uint32_t, 8>(seed, tilesort::less{});
  check_register_warp_merge<std::uint32_t, 16>(seed, tilesort::less{});
  check_register_warp_merge<std::int64_t, 8>(seed, tilesort::greater{});
  check_register_warp_merge<std::int8_t, 4>(seed, tilesort::greater{});
}

TEST(BlockSortSimulation, PrefixNetwork) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    int keys[9], values[9];
    const int count = static_cast<int>(rng() % 11);  // 0..10: also past the end
    for (int i = 0; i < 9; ++i) {
      keys[i] = static_cast<int>(rng() % 4);
      values[i] = i;
    }
    std::vector<int> order(9);
    for (int i = 0; i < 9; ++i) order[i] = i;
    const int n = std::min(count, 9);
    std::stable_sort(order.begin(), order.begin() + n, [&](int a, int b) { return keys[a] < keys[b]; });
    int expect_keys[9];
    for (int i = 0; i < 9; ++i) expect_keys[i] = keys[order[i]];
    tilesort::detail::odd_even_transposition_sort_prefix(keys, values, count, tilesort::less{});
    for (int i = 0; i < 9; ++i) {
      ASSERT_EQ(order[i], values[i]) << "count " << count << " index " << i;
      ASSERT_EQ(expect_keys[i], keys[i]);
    }
  }
}

// The payload rule: values ride beside the key unless a 32-bit index is smaller.
TEST(BlockSortSimulation, PayloadRule) {
  using tilesort::detail::block_sort_payload;
  EXPECT_FALSE((block_sort_payload<std::uint32_t, std::uint32_t>::by_index));
  EXPECT_FALSE((block_sort_payload<std::uint64_t, std::uint64_t>::by_index));
  EXPECT_FALSE((block_sort_payload<std::uint64_t, std::uint32_t>::by_index));
  EXPECT_TRUE((block_sort_payload<std::uint32_t, std::uint64_t>::by_index));
  EXPECT_TRUE((block_sort_payload<std::uint32_t, double>::by_index));
  EXPECT_EQ(8u, (sizeof(tilesort::detail::sort_item<std::uint32_t, std::uint32_t>)));
  EXPECT_EQ(8u, (alignof(tilesort::detail::sort_item<std::uint32_t, std::uint32_t>)));
  EXPECT_EQ(4u, (sizeof(tilesort::detail::sort_item<std::uint32_t, tilesort::detail::no_value>)));
  EXPECT_EQ(8u, (alignof(tilesort::detail::sort_item<tilesort_test::user_key, tilesort::detail::no_value>)));
}

}  // namespace
