// Host tests for detail/bitonic_plan.cuh and the bitonic_tile engine of
// block/bitonic_tile.cuh:
//  * the pass schedule runs every stage (m, p) of the network exactly once, in
//    order, for any n; pass counts; the documented counts for u32 keys;
//  * block maps: blocks partition [0, n), the valid counts, monotone maps,
//    and every comparison of a pass stays inside one block at the right local
//    bit;
//  * register layouts are bijections and pair the right keys;
//  * the whole device algorithm, run on the host: the same sort_tile /
//    merge_tile programs with an executor that loops over the threads of a
//    block between barriers, for small and real tile shapes, against std::sort;
//  * the cluster sort's steps (sort, cross_exchange, merge_registers) on
//    2 .. 16 host blocks in the order device/bitonic_sort.cuh's cluster kernel
//    runs them, its cluster barriers between the blocks' loops.
#include <tilesort/block/bitonic_tile.cuh>
#include <tilesort/block/block_bitonic_sort.cuh>
#include <tilesort/detail/bitonic_plan.cuh>
#include <tilesort/device/bitonic_sort.cuh>

#include <memory>
#include <set>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort_test::fresh_seed;

// ---------------------------------------------------------------- schedule
std::vector<std::pair<int, int>> network_stages(int padded_log) {
  std::vector<std::pair<int, int>> stages;
  for (int m = 1; m <= padded_log; ++m)
    for (int p = m - 1; p >= 0; --p) stages.push_back({m, p});
  return stages;
}

// The (m, p) stages a plan's passes run, in order.
std::vector<std::pair<int, int>> scheduled_stages(const bitonic_plan& plan) {
  std::vector<std::pair<int, int>> stages;
  for (int i = 0; i < plan.pass_count(); ++i) {
    const bitonic_pass pass = plan.pass(i);
    switch (pass.kind) {
      case bitonic_pass_kind::sort_tiles:
        EXPECT_EQ(0, i);
        EXPECT_EQ(bitonic_stage_count(pass.merge_log), pass.stages);
        for (int m = 1; m <= pass.merge_log; ++m)
          for (int p = m - 1; p >= 0; --p) stages.push_back({m, p});
        break;
      case bitonic_pass_kind::merge_global:
        EXPECT_GE(pass.stages, 1);
        EXPECT_LE(pass.stages, plan.global_span());
        EXPECT_EQ(pass.flip, pass.top_bit == pass.merge_log - 1);
        EXPECT_GE(pass.top_bit, plan.tile_log) << "bits a tile pass could run";
        EXPECT_GE(pass.top_bit - pass.stages + 1, plan.run_log) << "stage bits above the run";
        for (int s = 0; s < pass.stages; ++s) stages.push_back({pass.merge_log, pass.top_bit - s});
        break;
      case bitonic_pass_kind::merge_tiles:
        EXPECT_LT(pass.top_bit, plan.tile_log);
        EXPECT_EQ(pass.top_bit + 1, pass.stages);
        for (int p = pass.top_bit; p >= 0; --p) stages.push_back({pass.merge_log, p});
        break;
      case bitonic_pass_kind::merge_fused:
        EXPECT_NE(0u, (plan.fused_runs >> pass.run) & 1u);
        EXPECT_GT(pass.run, plan.run_log);
        EXPECT_LT(pass.run, plan.tile_log);
        EXPECT_TRUE(pass.flip);
        EXPECT_EQ(pass.merge_log - 1, pass.top_bit);
        EXPECT_EQ(plan.tile_log - pass.run, pass.stages) << "the head fills the group";
        for (int p = pass.run - 1; p >= 0; --p) stages.push_back({pass.merge_log - 1, p});
        for (int s = 0; s < pass.stages; ++s) stages.push_back({pass.merge_log, pass.top_bit - s});
        break;
    }
  }
  return stages;
}

int closed_form_passes(std::int64_t n, int G, int H) {
  if (n <= 1) return 0;
  const int K = ceil_log2(n);
  int passes = 1;
  for (int m = G + 1; m <= K; ++m) passes += (m - G + H - 1) / H + 1;
  return passes;
}

std::vector<std::int64_t> schedule_sizes(std::uint64_t seed) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (int k = 9; k <= 42; ++k)
    for (int d = -1; d <= 1; ++d) sizes.push_back((std::int64_t(1) << k) + d);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200; ++i) sizes.push_back(std::int64_t(rng() % (std::uint64_t(1) << (10 + i % 35))));
  return sizes;
}

TEST(BitonicPlan, NetworkStageEnumeration) {
  int index = 0;
  for (int m = 1; m <= 40; ++m)
    for (int p = m - 1; p >= 0; --p, ++index) {
      const bitonic_stage s = bitonic_network_stage(index);
      ASSERT_EQ(m, s.merge_log);
      ASSERT_EQ(p, s.bit);
    }
  EXPECT_EQ(0, ceil_log2(1));
  EXPECT_EQ(1, ceil_log2(2));
  EXPECT_EQ(2, ceil_log2(3));
  EXPECT_EQ(31, ceil_log2((std::int64_t(1) << 31) - 5));
  EXPECT_EQ(33, ceil_log2((std::int64_t(1) << 32) + 1));
  EXPECT_EQ(7, bitonic_partner(0, {3, 2}));
  EXPECT_EQ(4, bitonic_partner(3, {3, 2}));
  EXPECT_EQ(13, bitonic_partner(9, {4, 2}));
}

TEST(BitonicPlan, EveryStageOnceInOrder) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  // No fused runs (the closed form of the plan without them), the policies'
  // runs, and every run.
  for (unsigned runs : {0u, bitonic_fused_runs, ~0u}) {
    for (int G : {7, 8, 10, 12, 13, 14}) {
      for (int L : {3, 4, 5}) {
        for (std::int64_t n : schedule_sizes(seed)) {
          const bitonic_plan plan = bitonic_plan::make(n, G, L, runs);
          SCOPED_TRACE("G=" + std::to_string(G) + " L=" + std::to_string(L) + " n=" + std::to_string(n) +
                       " runs=" + std::to_string(runs));
          if (runs == 0) ASSERT_EQ(closed_form_passes(n, G, G - L), plan.pass_count());
          if (runs != 0) ASSERT_LE(plan.pass_count(), closed_form_passes(n, G, G - L));
          if (n <= 1) continue;
          ASSERT_EQ(network_stages(plan.padded_log), scheduled_stages(plan));
          if (n <= (std::int64_t(1) << G)) EXPECT_EQ(1, plan.pass_count()) << "one launch up to the tile";
        }
      }
    }
  }
}

TEST(BitonicPlan, DocumentedPassCounts) {
  // u32 keys: G = 14, L = 5, H = 9 (device/bitonic_sort.cuh, detail/bitonic_plan.cuh).
  using u32_policy = bitonic_sort_policy_for<std::uint32_t, no_value>::type;
  ASSERT_EQ(14, u32_policy::tile::tile_log);
  ASSERT_EQ(5, u32_policy::run_log);
  ASSERT_EQ(4, (bitonic_sort_policy_for<std::uint64_t, no_value>::type::run_log));
  ASSERT_EQ(bitonic_fused_runs, u32_policy::fused_runs);
  // Without fused passes: one global pass per 9 stage bits >= G and a tile pass per merge.
  const int plain[] = {1, 1, 1, 1, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 22, 25, 28, 31, 34};
  // With them (the device plan), 2^k and 2^k + 1 keys: one merge more, never a doubled array.
  const int fused[] = {1, 1, 1, 1, 1, 3, 4, 5, 7, 8, 10, 12, 13, 15, 18, 20, 22, 25, 27, 30};
  for (int k = 10; k <= 28; ++k) {
    EXPECT_EQ(plain[k - 10], bitonic_plan::make(std::int64_t(1) << k, 14, 5).pass_count()) << k;
    EXPECT_EQ(fused[k - 10], bitonic_plan::make(std::int64_t(1) << k, 14, 5, bitonic_fused_runs).pass_count()) << k;
    EXPECT_EQ(fused[k - 9],
              bitonic_plan::make((std::int64_t(1) << k) + 1, 14, 5, bitonic_fused_runs).pass_count()) << k;
  }
}

// ---------------------------------------------------------------- block maps
// Check every block of every pass of n: valid count, monotone map, the blocks
// partition [0, n), and each stage of the pass pairs keys of the same block at
// the local bit the engine uses.
void check_maps(std::int64_t n, int G, int L = 5, unsigned runs = 0) {
  SCOPED_TRACE("G=" + std::to_string(G) + " L=" + std::to_string(L) + " n=" + std::to_string(n) +
               " runs=" + std::to_string(runs));
  const bitonic_plan plan = bitonic_plan::make(n, G, L, runs);
  const int tile = 1 << G;
  for (int i = 0; i < plan.pass_count(); ++i) {
    const bitonic_pass pass = plan.pass(i);
    SCOPED_TRACE("pass " + std::to_string(i));
    std::vector<char> seen(n, 0);
    const std::int64_t blocks = plan.blocks(pass);
    const std::int64_t all_blocks = std::int64_t(1) << (plan.padded_log > G ? plan.padded_log - G : 0);
    const bool strided = pass.kind == bitonic_pass_kind::merge_global || pass.kind == bitonic_pass_kind::merge_fused;
    ASSERT_LE(blocks, strided ? all_blocks : plan.tiles());
    for (std::int64_t b = 0; b < blocks; ++b) {
      const bitonic_block_map map = plan.block_map(pass, b);
      ASSERT_GE(map.valid, 1) << "block " << b << " has no key";
      int count = 0;
      for (int e = 0; e < tile; ++e) {
        const std::int64_t index = map.index(e);
        if (e > 0) ASSERT_LT(map.index(e - 1), index) << "map not increasing";
        if (index < n) {
          ++count;
          ASSERT_EQ(0, seen[index]) << "key " << index << " in two blocks";
          seen[index] = 1;
        }
      }
      ASSERT_EQ(count, map.valid);
      if (!strided) continue;
      const int run = plan.run_bits(pass);
      ASSERT_EQ(run, map.run_log);
      if (pass.kind == bitonic_pass_kind::merge_fused) {
        // The tail: bits run-1 .. 0 of the previous merge, the same local bits.
        for (int p = run - 1; p >= 0; --p)
          for (int e = 0; e < tile; ++e) ASSERT_EQ(map.index(e) ^ (std::int64_t(1) << p), map.index(e ^ (1 << p)));
      }
      for (int s = 0; s < pass.stages; ++s) {
        const int p = pass.top_bit - s;
        for (int e = 0; e < tile; ++e) {
          if (pass.flip && s == 0) {
            ASSERT_EQ(map.index(e) ^ ((std::int64_t(1) << pass.merge_log) - 1), map.index(e ^ (tile - 1)));
          } else {
            const int local = run + p - map.shift;
            ASSERT_EQ(G - 1 - s, local) << "stage " << s << " runs at the wrong local bit";
            ASSERT_EQ(map.index(e) ^ (std::int64_t(1) << p), map.index(e ^ (1 << local)));
          }
        }
      }
    }
    // Blocks past the launched ones hold no key (the map's order is the block order).
    if (strided && blocks < all_blocks)
      ASSERT_GE(plan.block_map(pass, blocks).base, n);
    for (std::int64_t j = 0; j < n; ++j) ASSERT_EQ(1, seen[j]) << "key " << j << " in no block";
  }
}

TEST(BitonicPlan, BlockMapsPartitionAndPair) {
  for (int G : {7, 8, 9}) {
    for (std::int64_t n : {2, 3, 100, 127, 128, 129, 200, 255, 256, 257, 1000, 1023, 1025, 4097, 9999, 16385, 65537})
      check_maps(n, G);
  }
  for (std::int64_t n : {100, 1025, 9999, 65537}) check_maps(n, 8, 4);
  check_maps((1 << 16) + 3, 10, 3);
  check_maps((1 << 18) + 1, 13, 4);
  // Fused passes: every run, and the policies' runs with a real tile.
  for (int G : {7, 8, 9})
    for (std::int64_t n : {129, 257, 1000, 1025, 4097, 9999, 16385, 65537}) check_maps(n, G, 3, ~0u);
  for (std::int64_t n : {(1 << 16) + 3, (1 << 17) - 5}) check_maps(n, 10, 4, ~0u);
  check_maps((1 << 19) + 1, 12, 5, bitonic_fused_runs);
  check_maps((1 << 21) + 7, 14, 5, bitonic_fused_runs);
}

TEST(BitonicPlan, BlockMapsOfLargeArrays) {
  // Spot checks past 2^31 keys: the first and last launched blocks.
  for (std::int64_t n : {(std::int64_t(1) << 33) + 12345, (std::int64_t(1) << 31) - 1, (std::int64_t(1) << 35) + 1}) {
    const bitonic_plan plan = bitonic_plan::make(n, 14, 4, bitonic_fused_runs);
    for (int i = 0; i < plan.pass_count(); ++i) {
      const bitonic_pass pass = plan.pass(i);
      const std::int64_t blocks = plan.blocks(pass);
      ASSERT_GT(blocks, 0);
      for (std::int64_t b : {std::int64_t(0), blocks / 2, blocks - 1}) {
        const bitonic_block_map map = plan.block_map(pass, b);
        ASSERT_GE(map.valid, 1);
        ASSERT_LT(map.index(0), n);
        if (map.valid < (1 << 14)) {
          ASSERT_GE(map.index(map.valid), n);
          ASSERT_LT(map.index(map.valid - 1), n);
        }
      }
      const bool strided = pass.kind == bitonic_pass_kind::merge_global || pass.kind == bitonic_pass_kind::merge_fused;
      if (strided && blocks < (std::int64_t(1) << (plan.padded_log - 14)))
        ASSERT_GE(plan.block_map(pass, blocks).index(0), n);
    }
  }
}

// ---------------------------------------------------------------- layouts
TEST(BitonicPlan, LayoutsAreBijectionsAndPairKeys) {
  for (int item_log : {1, 2, 3, 4, 5}) {
    for (int tile_log = item_log + 5; tile_log <= item_log + 7; ++tile_log) {
      const int threads = 1 << (tile_log - item_log), items = 1 << item_log;
      for (int window = 0; window + item_log <= tile_log; ++window) {
        for (int reflect = 0; reflect <= tile_log; ++reflect) {
          if (reflect > 0 && (reflect - 1 < window || reflect - 1 >= window + item_log)) continue;
          const bitonic_layout lay{window, reflect};
          std::vector<int> owner(1 << tile_log, -1);
          for (int t = 0; t < threads; ++t)
            for (int k = 0; k < items; ++k) {
              const int e = bitonic_layout_index(lay, item_log, t, k);
              ASSERT_EQ(-1, owner[e]);
              owner[e] = k;
              const int plain = bitonic_thread_part(t, window, item_log);
              const int tp = bitonic_mirrored(lay, k) ? bitonic_mirrored_thread_part(plain, window) : plain;
              ASSERT_EQ(0, tp & bitonic_register_part(lay, k)) << "parts overlap";
              ASSERT_EQ(e, tp + bitonic_register_part(lay, k));
              ASSERT_EQ(bitonic_padded(e, 5), bitonic_padded(tp, 5) + bitonic_padded(bitonic_register_part(lay, k), 5));
              // Windows <= 5 keep warp w on the slots with index >> (R + 5) == w
              // (what makes bitonic_tile's warp-local exchanges safe).
              if (window <= 5) ASSERT_EQ(t >> 5, e >> (item_log + 5)) << "window " << window;
              if (reflect == 0) continue;
              // The flip partner of e is a register of the same thread.
              const int j = reflect - 1 - window;
              const int k2 = k ^ (1 << j);
              ASSERT_EQ(e ^ ((1 << reflect) - 1), bitonic_layout_index(lay, item_log, t, k2));
            }
        }
      }
    }
  }
}

TEST(BitonicPlan, SharedMemoryBanks) {
  // 4-byte keys: for each register, the 32 lanes of a warp hit 32 distinct banks
  // in the blocked layout and in every window >= 5.
  for (int item_log : {2, 3, 4, 5}) {
    const int tile_log = item_log + 9;
    for (int window : {0, 5, 6, 9}) {
      if (window + item_log > tile_log) continue;
      for (int reflect : {0, window + item_log}) {
        const bitonic_layout lay{window, reflect};
        for (int k = 0; k < (1 << item_log); ++k) {
          std::set<int> banks;
          for (int lane = 0; lane < 32; ++lane)
            banks.insert(bitonic_padded(bitonic_layout_index(lay, item_log, lane, k), 5) % 32);
          EXPECT_EQ(32u, banks.size()) << "R=" << item_log << " window=" << window << " k=" << k;
        }
      }
    }
  }
  // 8-byte keys: each half warp hits 16 distinct bank pairs.
  for (int item_log : {3, 4}) {
    for (int window : {0, 5, 8}) {
      for (int k = 0; k < (1 << item_log); ++k)
        for (int half = 0; half < 2; ++half) {
          std::set<int> pairs;
          for (int lane = 16 * half; lane < 16 * half + 16; ++lane)
            pairs.insert(bitonic_padded(bitonic_layout_index({window, 0}, item_log, lane, k), 4) % 16);
          EXPECT_EQ(16u, pairs.size()) << "R=" << item_log << " window=" << window;
        }
    }
  }
}

// ---------------------------------------------------------------- engine on the host
template <typename Registers>
struct host_threads {
  std::vector<Registers>* registers;
  void barrier() const {}
  void warp_barrier() const {}
  template <typename Step>
  void each(const Step& step) const {
    for (int t = 0; t < static_cast<int>(registers->size()); ++t) step((*registers)[t], t);
  }
};

// Every fused run a tile can take: max(L, R) < A < G.
template <typename Tile>
constexpr unsigned all_fused_runs() {
  return bitonic_fused_runs_for(Tile::tile_log, Tile::item_log, Tile::run_log);
}

// The device sort's passes, each block run by host_threads: Tile for
// sort_tiles, merge_tiles and merge_fused, Strided (the same tile, another
// block shape) for merge_global, as device/bitonic_sort.cuh does. `out` gets
// `slack` poisoned keys past n that must stay untouched.
template <typename Tile, typename Strided, typename Key, typename Value, typename Compare>
void host_bitonic_sort(const std::vector<Key>& in, std::vector<Key>& out, const std::vector<Value>& values_in,
                       std::vector<Value>& values_out, Compare comp, unsigned runs) {
  static_assert(Tile::tile_log == Strided::tile_log);
  const std::int64_t n = static_cast<std::int64_t>(in.size());
  constexpr std::size_t slack = 64;
  Key poison;
  std::memset(&poison, 0xA5, sizeof(Key));
  out.assign(in.size() + slack, poison);
  values_out.assign(values_in.size(), Value{});
  std::vector<typename Tile::registers> registers(Tile::threads);
  std::vector<typename Strided::registers> strided_registers(Strided::threads);
  const host_threads<typename Tile::registers> ex{&registers};
  const host_threads<typename Strided::registers> strided_ex{&strided_registers};
  auto storage = std::make_unique<typename Tile::temp_storage>();
  auto strided_storage = std::make_unique<typename Strided::temp_storage>();
  static_assert(Tile::run_log == Strided::run_log);
  ASSERT_EQ(0u, runs & ~all_fused_runs<Tile>());
  const bitonic_plan plan = bitonic_plan::make(n, Tile::tile_log, Tile::run_log, runs);
  if (n == 1) {
    out[0] = in[0];
    values_out = values_in;
  }
  Value* vout = Tile::has_values ? values_out.data() : nullptr;
  const Value* vin = Tile::has_values ? values_in.data() : nullptr;
  for (int i = 0; i < plan.pass_count(); ++i) {
    const bitonic_pass pass = plan.pass(i);
    for (std::int64_t b = 0; b < plan.blocks(pass); ++b) {
      const bitonic_block_map map = plan.block_map(pass, b);
      switch (pass.kind) {
        case bitonic_pass_kind::sort_tiles:
          Tile::sort_tile(ex, *storage, in.data(), out.data(), vin, vout, map, comp);
          break;
        case bitonic_pass_kind::merge_tiles:
          Tile::template merge_tile<false, false>(ex, *storage, out.data(), vout, map, pass.stages, comp);
          break;
        case bitonic_pass_kind::merge_global:
          if (pass.flip) {
            Strided::template merge_tile<true, true>(strided_ex, *strided_storage, out.data(), vout, map, pass.stages, comp);
          } else {
            Strided::template merge_tile<false, true>(strided_ex, *strided_storage, out.data(), vout, map, pass.stages, comp);
          }
          break;
        case bitonic_pass_kind::merge_fused: {
          bool ran = false;
          static_for<1, Tile::tile_log - 1, 1>([&](auto a) {
            constexpr int A = decltype(a)::value;
            if constexpr (A > Tile::item_log) {
              if (pass.run == A) {
                Tile::template fused_tile<A>(ex, *storage, out.data(), vout, map, comp);
                ran = true;
              }
            }
          });
          ASSERT_TRUE(ran) << "no fused program for runs of 2^" << pass.run;
          break;
        }
      }
    }
  }
  for (std::size_t i = in.size(); i < out.size(); ++i)
    ASSERT_TRUE(tilesort_test::bytes_equal(poison, out[i])) << "wrote past n at " << i;
  out.resize(in.size());
}

// Keys: equivalent per rank to std::sort and a permutation; pairs: pairs a permutation.
// runs: the plan's fused runs (default: every run the tile can take).
template <typename Tile, typename Strided, typename Key, typename Compare>
void check_host_sort(std::size_t n, tilesort_test::distribution d, std::uint64_t seed, Compare comp,
                     unsigned runs = all_fused_runs<Tile>()) {
  SCOPED_TRACE("n=" + std::to_string(n) + " " + tilesort_test::name(d) + " seed=" + std::to_string(seed) +
               " tile=" + std::to_string(Tile::threads) + "x" + std::to_string(Tile::items) +
               " runs=" + std::to_string(runs));
  const std::vector<Key> keys = tilesort_test::make_keys<Key>(n, d, seed, comp);
  if constexpr (Tile::has_values) {
    using Value = typename Tile::value_type;
    std::vector<Value> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<Value>(i);
    std::vector<Key> out;
    std::vector<Value> values_out;
    host_bitonic_sort<Tile, Strided>(keys, out, values, values_out, comp, runs);
    tilesort_test::expect_sorted_pairs(keys, values, out, values_out, comp);
  } else {
    std::vector<no_value> none, none_out;
    std::vector<Key> out;
    host_bitonic_sort<Tile, Strided>(keys, out, none, none_out, comp, runs);
    tilesort_test::expect_sorted_permutation(keys, out, comp);
    std::vector<Key> ref = keys;
    std::sort(ref.begin(), ref.end(), comp);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_TRUE(!comp(ref[i], out[i]) && !comp(out[i], ref[i])) << "rank " << i << " differs from std::sort";
  }
}

using tilesort_test::distribution;

TEST(BitonicEngineOnHost, SmallTilesManySizes) {
  const auto seed = fresh_seed();
  // G = 7 (H = 2: up to 4 global passes per merge), G = 8 with R = 2 (two
  // register rounds in a global pass), R = 3 and R = 4 shapes.
  using t32x4 = bitonic_tile<std::uint32_t, no_value, 32, 4>;
  using t64x4 = bitonic_tile<std::uint32_t, no_value, 64, 4>;
  using t32x8 = bitonic_tile<std::uint32_t, no_value, 32, 8>;
  using t64x8 = bitonic_tile<std::uint32_t, no_value, 64, 8>;
  using t64x16 = bitonic_tile<std::uint32_t, no_value, 64, 16>;
  using t128x8 = bitonic_tile<std::uint32_t, no_value, 128, 8>;
  using t64x4_l4 = bitonic_tile<std::uint32_t, no_value, 64, 4, 4>;
  using t128x2_l4 = bitonic_tile<std::uint32_t, no_value, 128, 2, 4>;
  using t64x16_l3 = bitonic_tile<std::uint32_t, no_value, 64, 16, 3>;
  using t128x8_l3 = bitonic_tile<std::uint32_t, no_value, 128, 8, 3>;
  std::vector<std::size_t> sizes = {1, 2, 3, 5, 31, 32, 33, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1000, 1023, 1024,
                                    1025, 2047, 2049, 4096, 4099, 8191, 8193, 10007, 16385, 65537};
  for (std::size_t n : sizes) {
    check_host_sort<t32x4, t32x4, std::uint32_t>(n, distribution::random, seed + n, tilesort::less{});
    check_host_sort<t64x4, t64x4, std::uint32_t>(n, distribution::few_distinct, seed + n, tilesort::less{});
    check_host_sort<t32x8, t64x4, std::uint32_t>(n, distribution::reversed, seed + n, tilesort::greater{});
    check_host_sort<t64x16, t128x8, std::uint32_t>(n, distribution::random, seed + n, tilesort::less{});
    check_host_sort<t64x4_l4, t128x2_l4, std::uint32_t>(n, distribution::random, seed + n, tilesort::less{});
    check_host_sort<t64x16_l3, t128x8_l3, std::uint32_t>(n, distribution::nearly_sorted, seed + n, tilesort::less{});
    // Without fused passes: chains of merge_global passes.
    check_host_sort<t64x16, t128x8, std::uint32_t>(n, distribution::random, seed + n, tilesort::less{}, 0u);
  }
  for (std::size_t n = 1; n <= 600; n += 7) check_host_sort<t32x4, t32x4, std::uint32_t>(n, distribution::random, seed + n, tilesort::less{});
}

TEST(BitonicEngineOnHost, PairsFloatsAndComparators) {
  const auto seed = fresh_seed();
  using pairs = bitonic_tile<std::uint32_t, std::uint32_t, 64, 4>;
  using pairs_strided = bitonic_tile<std::uint32_t, std::uint32_t, 128, 2>;
  using floats = bitonic_tile<float, no_value, 32, 8>;
  using floats_strided = bitonic_tile<float, no_value, 64, 4>;
  using doubles = bitonic_tile<double, std::uint8_t, 64, 8>;
  using doubles_strided = bitonic_tile<double, std::uint8_t, 128, 4>;
  using users = bitonic_tile<tilesort_test::user_key, no_value, 32, 4>;
  for (std::size_t n : {1, 7, 256, 300, 1024, 1500, 5000, 20000}) {
    for (auto d : tilesort_test::all_distributions) {
      check_host_sort<pairs, pairs_strided, std::uint32_t>(n, d, seed + n, tilesort::less{});
      check_host_sort<floats, floats_strided, float>(n, d, seed + n, tilesort::less{});
      check_host_sort<doubles, doubles_strided, double>(n, d, seed + n, tilesort::greater{});
      check_host_sort<users, users, tilesort_test::user_key>(n, d, seed + n, tilesort_test::user_key_less{});
    }
  }
}

TEST(BitonicEngineOnHost, RealTileShapes) {
  const auto seed = fresh_seed();
  // The policies of device/bitonic_sort.cuh: u32 keys 512x32, 8-byte keys and u32 pairs 512x16.
  using u32_keys = bitonic_policy<std::uint32_t, no_value, 512, 32, 5>;
  using u64_keys = bitonic_policy<std::uint64_t, no_value, 512, 16, 4>;
  using u32_pairs = bitonic_policy<std::uint32_t, std::uint32_t, 512, 16, 5>;
  static_assert(std::is_same_v<u32_keys, bitonic_sort_policy_for<std::uint32_t, no_value>::type>);
  static_assert(std::is_same_v<u64_keys, bitonic_sort_policy_for<std::uint64_t, no_value>::type>);
  static_assert(std::is_same_v<u32_pairs, bitonic_sort_policy_for<std::uint32_t, std::uint32_t>::type>);
  for (std::size_t n : {2, 1000, 16383, 16384, 16385, 50000, 70000})
    check_host_sort<u32_keys::tile, u32_keys::strided_tile, std::uint32_t>(n, distribution::random, seed + n,
                                                                           tilesort::less{}, u32_keys::fused_runs);
  // The single-block shapes for n <= 1024 and n <= 4096.
  for (std::size_t n : {2, 77, 1000, 1024})
    check_host_sort<u32_keys::tile_1k, u32_keys::tile_1k, std::uint32_t>(n, distribution::random, seed + n, tilesort::less{});
  for (std::size_t n : {1025, 3000, 4096})
    check_host_sort<u32_keys::tile_4k, u32_keys::tile_4k, std::uint32_t>(n, distribution::few_distinct, seed + n, tilesort::greater{});
  for (std::size_t n : {4097, 8000, 8192})
    check_host_sort<u32_keys::tile_8k, u32_keys::tile_8k, std::uint32_t>(n, distribution::random, seed + n, tilesort::less{});
  for (std::size_t n : {8191, 8192, 8193, 30000})
    check_host_sort<u64_keys::tile, u64_keys::strided_tile, std::uint64_t>(n, distribution::few_distinct, seed + n,
                                                                           tilesort::less{}, u64_keys::fused_runs);
  for (std::size_t n : {8192, 20000, 40000})
    check_host_sort<u32_pairs::tile, u32_pairs::strided_tile, std::uint32_t>(n, distribution::random, seed + n,
                                                                             tilesort::less{}, u32_pairs::fused_runs);
  if (!tilesort_test::small_run()) {
    // 2^20 + 1 keys: merges 15..21 in global, fused and tile passes.
    check_host_sort<u32_keys::tile, u32_keys::strided_tile, std::uint32_t>((1 << 20) + 1, distribution::random, seed,
                                                                           tilesort::less{}, u32_keys::fused_runs);
  }
}

// ---------------------------------------------------------------- clusters on the host
// bitonic_cluster_sort_kernel's sequence with `blocks` host blocks: every
// cluster.sync() there is the end of a loop over the blocks here.
template <typename Tile, typename Key, typename Compare>
void check_host_cluster_sort(std::size_t n, int blocks, tilesort_test::distribution d, std::uint64_t seed,
                             Compare comp) {
  SCOPED_TRACE("cluster n=" + std::to_string(n) + " blocks=" + std::to_string(blocks) + " " +
               tilesort_test::name(d) + " seed=" + std::to_string(seed));
  using Value = typename Tile::value_type;
  constexpr int tile = Tile::tile_items;
  ASSERT_LE(n, std::size_t(blocks) * tile);
  const std::vector<Key> keys = tilesort_test::make_keys<Key>(n, d, seed, comp);
  std::vector<Value> values(n);
  if constexpr (Tile::has_values)
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<Value>(i);
  std::vector<Key> out(n);
  std::vector<Value> values_out(n);
  std::vector<std::vector<typename Tile::registers>> registers(blocks,
                                                               std::vector<typename Tile::registers>(Tile::threads));
  std::vector<std::unique_ptr<typename Tile::temp_storage>> local(blocks), published(2 * blocks);
  for (auto& p : local) p = std::make_unique<typename Tile::temp_storage>();
  for (auto& p : published) p = std::make_unique<typename Tile::temp_storage>();
  auto valid_of = [&](int b) {
    const std::int64_t left = std::int64_t(n) - std::int64_t(b) * tile;
    return static_cast<int>(left <= 0 ? 0 : left < tile ? left : tile);
  };
  // Load, and the cluster's largest key into every block's padding.
  for (int b = 0; b < blocks; ++b) {
    const host_threads<typename Tile::registers> ex{&registers[b]};
    if (valid_of(b) == 0) continue;
    ex.each(typename Tile::load_striped{keys.data() + std::size_t(b) * tile,
                                        Tile::has_values ? values.data() + std::size_t(b) * tile : nullptr,
                                        local[b].get(), valid_of(b)});
    ex.each(typename Tile::template load_shared<0, 0>{local[b].get()});
    Tile::template max_to_slot0<0, 0>(ex, *local[b], valid_of(b), comp);
  }
  Key largest = local[0]->keys[0];
  for (int b = 1; b < blocks; ++b)
    if (valid_of(b) > 0 && comp(largest, local[b]->keys[0])) largest = local[b]->keys[0];
  for (int b = 0; b < blocks; ++b) {
    const host_threads<typename Tile::registers> ex{&registers[b]};
    local[b]->keys[0] = largest;
    ex.each(typename Tile::template fill_padding<0, 0>{local[b].get(), valid_of(b)});
    Tile::sort(ex, *local[b], valid_of(b), valid_of(b) > 1 ? ceil_log2(valid_of(b)) : 0, comp);
  }
  int stage = 0;
  for (int m = Tile::tile_log + 1; m <= Tile::tile_log + log2_floor(blocks); ++m) {
    for (int b = 0; b < blocks; ++b)
      Tile::template exchange<0, 0, Tile::striped_window, 0>(host_threads<typename Tile::registers>{&registers[b]},
                                                              *local[b]);
    for (int p = m - 1; p >= Tile::tile_log; --p, ++stage) {
      for (int b = 0; b < blocks; ++b)
        host_threads<typename Tile::registers>{&registers[b]}.each(
            typename Tile::template store_shared<Tile::striped_window, 0>{published[2 * b + (stage & 1)].get()});
      for (int b = 0; b < blocks; ++b) {
        const bool flip = p == m - 1;
        const int partner = flip ? b ^ ((1 << (m - Tile::tile_log)) - 1) : b ^ (1 << (p - Tile::tile_log));
        host_threads<typename Tile::registers>{&registers[b]}.each(typename Tile::template cross_exchange<Compare>{
            published[2 * partner + (stage & 1)].get(), flip, b < partner, comp});
      }
    }
    for (int b = 0; b < blocks; ++b)
      Tile::merge_registers(host_threads<typename Tile::registers>{&registers[b]}, *local[b], valid_of(b), comp);
  }
  for (int b = 0; b < blocks; ++b) {
    if (valid_of(b) == 0) continue;
    const host_threads<typename Tile::registers> ex{&registers[b]};
    ex.each(typename Tile::template store_shared<0, 0>{local[b].get()});
    ex.each(typename Tile::store_striped{out.data() + std::size_t(b) * tile,
                                         Tile::has_values ? values_out.data() + std::size_t(b) * tile : nullptr,
                                         local[b].get(), valid_of(b)});
  }
  if constexpr (Tile::has_values) {
    tilesort_test::expect_sorted_pairs(keys, values, out, values_out, comp);
  } else {
    std::vector<Key> ref = keys;
    std::sort(ref.begin(), ref.end(), comp);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_TRUE(!comp(ref[i], out[i]) && !comp(out[i], ref[i])) << "rank " << i << " differs from std::sort";
    tilesort_test::expect_sorted_permutation(keys, out, comp);
  }
}

TEST(BitonicEngineOnHost, ClusterSort) {
  const auto seed = fresh_seed();
  using keys_32x4 = bitonic_tile<std::uint32_t, no_value, 32, 4>;
  using pairs_32x8 = bitonic_tile<std::uint32_t, std::uint32_t, 32, 8>;
  using floats_64x4 = bitonic_tile<float, no_value, 64, 4>;
  for (int blocks : {2, 4, 8, 16}) {
    for (std::size_t n : {std::size_t(blocks) * 128, std::size_t(blocks) * 128 - 1, std::size_t(blocks) * 64 + 3,
                          std::size_t(blocks) * 128 - 200, std::size_t(129)}) {
      if (n <= 128 * std::size_t(blocks) / 2 && blocks > 2) continue;  // the dispatch picks the smallest cluster
      check_host_cluster_sort<keys_32x4, std::uint32_t>(n, blocks, distribution::random, seed + n, tilesort::less{});
      check_host_cluster_sort<keys_32x4, std::uint32_t>(n, blocks, distribution::few_distinct, seed + n,
                                                        tilesort::greater{});
    }
    check_host_cluster_sort<pairs_32x8, std::uint32_t>(std::size_t(blocks) * 256 - 5, blocks, distribution::few_distinct,
                                                       seed, tilesort::less{});
    check_host_cluster_sort<floats_64x4, float>(std::size_t(blocks) * 256 - 17, blocks, distribution::nan_and_zero, seed,
                                                tilesort::less{});
  }
  // The shape the device dispatch uses for u32 keys: up to 16 x 4096.
  using u32_policy = bitonic_sort_policy_for<std::uint32_t, no_value>::type;
  check_host_cluster_sort<u32_policy::tile_4k, std::uint32_t>(5000, 2, distribution::random, seed, tilesort::less{});
  check_host_cluster_sort<u32_policy::tile_4k, std::uint32_t>(40000, 16, distribution::random, seed, tilesort::less{});
}

}  // namespace
