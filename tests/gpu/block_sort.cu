// GPU tests for block/block_sort.cuh: a kernel loads tiles (blocked), sorts
// them with block_sort and stores them; every tile is checked on the CPU.
// Keys must equal std::stable_sort bitwise (user_key makes stability visible
// for keys alone), pairs with value = source index must equal the stable
// reference exactly, and partial tiles must hold the stably sorted valid keys
// first and exactly the invalid inputs after them; padded tiles (the order's
// last key from some position on) must equal a stable sort of the whole
// tile. Blocks sort several tiles with one temp_storage, so reuse after a
// __syncthreads() is covered too.
#include <tilesort/block/block_sort.cuh>

#include "common/test_util.cuh"

namespace {

using tilesort_test::device_buffer;
using tilesort_test::distribution;
using tilesort_test::fresh_seed;
using tilesort_test::user_key;
using tilesort_test::user_key_less;

template <typename Value>
using value_array_t = std::conditional_t<std::is_void_v<Value>, int, Value>;

// valid_items < 0: the full-tile overloads (sort_nearly and sort_pairs_nearly
// for nearly_mode); otherwise the partial ones.
constexpr int nearly_mode = -2;
template <typename Key, typename Value, int BT, int IPT, typename Compare>
__global__ void __launch_bounds__(BT) sort_tiles(Key* keys, value_array_t<Value>* values, int tiles, int valid_items,
                                                 Compare comp) {
  using sorter = tilesort::block_sort<Key, BT, IPT, Value>;
  __shared__ typename sorter::temp_storage storage;
  constexpr int tile_items = BT * IPT;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t first = static_cast<std::size_t>(tile) * tile_items + threadIdx.x * IPT;
    Key k[IPT];
#pragma unroll
    for (int i = 0; i < IPT; ++i) k[i] = keys[first + i];
    if constexpr (std::is_void_v<Value>) {
      if (valid_items == nearly_mode) {
        sorter(storage).sort_nearly(k, comp);
      } else if (valid_items < 0) {
        sorter(storage).sort(k, comp);
      } else {
        sorter(storage).sort(k, valid_items, comp);
      }
    } else {
      Value v[IPT];
#pragma unroll
      for (int i = 0; i < IPT; ++i) v[i] = values[first + i];
      if (valid_items == nearly_mode) {
        sorter(storage).sort_pairs_nearly(k, v, comp);
      } else if (valid_items < 0) {
        sorter(storage).sort_pairs(k, v, comp);
      } else {
        sorter(storage).sort_pairs(k, v, valid_items, comp);
      }
#pragma unroll
      for (int i = 0; i < IPT; ++i) values[first + i] = v[i];
    }
#pragma unroll
    for (int i = 0; i < IPT; ++i) keys[first + i] = k[i];
    __syncthreads();  // the next tile reuses storage
  }
}

int tile_count(int tile_items) {
  if (tilesort_test::small_run()) return 3;  // one block sorts all three
  const int tiles = (1 << 17) / tile_items;
  return tiles < 5 ? 5 : tiles;
}

// Sort tiles of keys (Value = void) or pairs (value = source position) on
// the GPU and check every tile. valid_items < 0 means full tiles.
template <typename Key, typename Value, int BT, int IPT, typename Compare>
void run_keys(const std::vector<Key>& keys_in, int valid_items, Compare comp) {
  constexpr int tile_items = BT * IPT;
  constexpr bool pairs = !std::is_void_v<Value>;
  using value_t = value_array_t<Value>;
  const std::size_t n = keys_in.size();
  const int tiles = static_cast<int>(n / tile_items);
  ASSERT_EQ(n, static_cast<std::size_t>(tiles) * tile_items);
  std::vector<value_t> values_in(pairs ? n : 1);  // keys alone: one unused element
  for (std::size_t i = 0; i < values_in.size(); ++i) values_in[i] = static_cast<value_t>(i);

  device_buffer<Key> d_keys(keys_in);
  device_buffer<value_t> d_values(values_in);
  const int grid = tiles / 2 > 0 ? tiles / 2 : 1;  // some blocks sort two or three tiles
  sort_tiles<Key, Value, BT, IPT><<<grid, BT>>>(d_keys.data(), d_values.data(), tiles, valid_items, comp);
  CUDA_ASSERT_LAUNCH();
  const std::vector<Key> keys_out = d_keys.download();
  const std::vector<value_t> values_out = d_values.download();

  const int valid = valid_items < 0 ? tile_items : std::min(std::max(valid_items, 0), tile_items);
  for (int t = 0; t < tiles; ++t) {
    const std::size_t base = static_cast<std::size_t>(t) * tile_items;
    const auto at = [&](const auto& v, std::size_t from, std::size_t to) {
      using element = typename std::decay_t<decltype(v)>::value_type;
      return std::vector<element>(v.begin() + base + from, v.begin() + base + to);
    };
    const std::vector<Key> in_valid = at(keys_in, 0, valid), out_valid = at(keys_out, 0, valid);
    if constexpr (pairs) {
      std::vector<std::uint32_t> index_out(valid);
      for (int i = 0; i < valid; ++i) index_out[i] = static_cast<std::uint32_t>(values_out[base + i] - base);
      tilesort_test::expect_stable_pairs(in_valid, out_valid, index_out, comp);
      tilesort_test::expect_same_items(at(keys_in, valid, tile_items), at(values_in, valid, tile_items),
                                       at(keys_out, valid, tile_items), at(values_out, valid, tile_items));
    } else {
      tilesort_test::expect_stable_sorted(in_valid, out_valid, comp);
      tilesort_test::expect_same_items(at(keys_in, valid, tile_items), at(keys_out, valid, tile_items));
    }
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "first failing tile: " << t << " of " << tiles;
      return;
    }
  }
}

template <typename Key, typename Value, int BT, int IPT, typename Compare>
void run_case(distribution d, int valid_items, Compare comp, std::uint64_t seed) {
  SCOPED_TRACE(std::string(std::is_void_v<Value> ? "keys" : "pairs") + " " + std::to_string(BT) + "x" +
               std::to_string(IPT) + " " + tilesort_test::name(d) + " valid_items=" + std::to_string(valid_items) +
               " seed=" + std::to_string(seed));
  const std::size_t n = static_cast<std::size_t>(tile_count(BT * IPT)) * BT * IPT;
  run_keys<Key, Value, BT, IPT>(tilesort_test::make_keys<Key>(n, d, seed, comp), valid_items, comp);
}

template <typename Key, int BT, int IPT, typename Compare = tilesort::less>
struct config {
  using key = Key;
  using compare = Compare;
  static constexpr int threads = BT;
  static constexpr int items = IPT;
};

// A partial count drawn from [2, tile - 1].
template <typename Config>
int random_valid(std::uint64_t seed) {
  const int tile = Config::threads * Config::items;
  return static_cast<int>(2 + seed % static_cast<std::uint64_t>(tile - 2));
}

template <typename Config, typename Value>
void run_all_distributions(bool with_partial) {
  for (distribution d : tilesort_test::all_distributions) {
    const auto seed = fresh_seed();
    run_case<typename Config::key, Value, Config::threads, Config::items>(d, -1, typename Config::compare{}, seed);
    if (with_partial)
      run_case<typename Config::key, Value, Config::threads, Config::items>(d, random_valid<Config>(seed >> 7),
                                                                            typename Config::compare{}, seed);
  }
}

// ---------------------------------------------------------------- key types
template <typename Config>
class BlockSortKeyTypes : public ::testing::Test {};
using key_type_configs =
    ::testing::Types<config<std::int8_t, 64, 3>, config<std::uint16_t, 128, 7>, config<std::int32_t, 128, 16>,
                     config<std::uint32_t, 256, 8>, config<std::int64_t, 128, 4>, config<std::uint64_t, 32, 9>,
                     config<float, 256, 16>, config<double, 64, 5>, config<__half, 96, 7>,
                     config<__nv_bfloat16, 128, 3>, config<user_key, 128, 7, user_key_less>>;
TYPED_TEST_SUITE(BlockSortKeyTypes, key_type_configs);

TYPED_TEST(BlockSortKeyTypes, Keys) {
  REQUIRE_GPU();
  run_all_distributions<TypeParam, void>(true);
}

TYPED_TEST(BlockSortKeyTypes, Pairs) {
  REQUIRE_GPU();
  run_all_distributions<TypeParam, std::uint32_t>(true);
}

// ---------------------------------------------------------------- shapes
template <typename Config>
class BlockSortShapes : public ::testing::Test {};
using shape_configs =
    ::testing::Types<config<std::uint32_t, 32, 1>, config<std::uint32_t, 64, 3>, config<std::uint32_t, 128, 4>,
                     config<std::uint32_t, 128, 7>, config<std::uint32_t, 128, 16>, config<std::uint32_t, 256, 16>,
                     config<std::uint32_t, 512, 5>, config<std::uint32_t, 160, 15>, config<std::uint32_t, 1024, 2>,
                     config<std::uint32_t, 32, 17>>;
TYPED_TEST_SUITE(BlockSortShapes, shape_configs);

TYPED_TEST(BlockSortShapes, KeysAndPairs) {
  REQUIRE_GPU();
  for (distribution d : {distribution::random, distribution::few_distinct, distribution::reversed}) {
    const auto seed = fresh_seed();
    using key = typename TypeParam::key;
    run_case<key, void, TypeParam::threads, TypeParam::items>(d, -1, tilesort::less{}, seed);
    run_case<key, std::uint32_t, TypeParam::threads, TypeParam::items>(d, -1, tilesort::less{}, seed);
    run_case<key, std::uint32_t, TypeParam::threads, TypeParam::items>(d, random_valid<TypeParam>(seed >> 7),
                                                                       tilesort::less{}, seed);
  }
}

// ---------------------------------------------------------------- comparators
template <typename Config>
class BlockSortGreater : public ::testing::Test {};
using greater_configs = ::testing::Types<config<std::uint32_t, 256, 8, tilesort::greater>,
                                         config<float, 128, 16, tilesort::greater>,
                                         config<std::int64_t, 64, 3, tilesort::greater>>;
TYPED_TEST_SUITE(BlockSortGreater, greater_configs);

TYPED_TEST(BlockSortGreater, KeysAndPairs) {
  REQUIRE_GPU();
  run_all_distributions<TypeParam, void>(true);
  run_all_distributions<TypeParam, std::uint32_t>(false);
}

// ---------------------------------------------------------------- valid_items
// 0, 1, small, random, tile - 1, tile, and more than a tile.
template <typename Key, typename Value, int BT, int IPT, typename Compare>
void run_valid_counts(distribution d, Compare comp) {
  constexpr int tile = BT * IPT;
  const auto seed = fresh_seed();
  const int counts[] = {0, 1, 2, IPT + 1, tile / 2, static_cast<int>(2 + seed % (tile - 2)), tile - 1, tile, tile + 1,
                        3 * tile};
  for (int valid : counts) run_case<Key, Value, BT, IPT>(d, valid, comp, seed + valid);
}

// sort_nearly: keys i + rand() % d, from displacements the boundary windows
// take to ones that need the block rounds, and random keys; checked like
// sort() (stable, a permutation).
template <typename Key, int BT, int IPT, typename Compare = tilesort::less>
void run_nearly(std::uint64_t seed) {
  const std::size_t n = static_cast<std::size_t>(tile_count(BT * IPT)) * BT * IPT;
  std::mt19937_64 rng(seed);
  for (int d : {1, 4, 64, 16 * IPT, 64 * IPT, BT * IPT}) {
    SCOPED_TRACE(std::to_string(BT) + "x" + std::to_string(IPT) + " displacement " + std::to_string(d) +
                 " seed=" + std::to_string(seed));
    std::vector<Key> keys(n);
    for (std::size_t i = 0; i < n; ++i) keys[i] = static_cast<Key>(i / 2 + rng() % d);  // ties: stability shows
    run_keys<Key, void, BT, IPT>(keys, nearly_mode, Compare{});
    run_keys<Key, std::uint32_t, BT, IPT>(keys, nearly_mode, Compare{});
    if (::testing::Test::HasFailure()) return;
  }
  SCOPED_TRACE("random");
  run_keys<Key, void, BT, IPT>(tilesort_test::make_keys<Key>(n, distribution::random, seed, Compare{}), nearly_mode,
                               Compare{});
  run_keys<Key, std::uint32_t, BT, IPT>(tilesort_test::make_keys<Key>(n, distribution::random, seed, Compare{}),
                                        nearly_mode, Compare{});
}

TEST(BlockSortNearly, KeysAndPairs) {
  REQUIRE_GPU();
  const auto seed = fresh_seed();
  run_nearly<std::uint32_t, 256, 16>(seed);  // 8 warps: 7 boundary windows
  run_nearly<std::uint32_t, 128, 8>(seed);
  run_nearly<std::uint64_t, 256, 8>(seed);
  run_nearly<float, 64, 5>(seed);
  run_nearly<std::int32_t, 32, 4>(seed);     // one warp: no windows, sort()
}

TEST(BlockSortValidItems, Keys) {
  REQUIRE_GPU();
  run_valid_counts<std::uint32_t, void, 128, 16>(distribution::random, tilesort::less{});
  run_valid_counts<user_key, void, 128, 7>(distribution::few_distinct, user_key_less{});
  run_valid_counts<float, void, 256, 16>(distribution::nan_and_zero, tilesort::less{});
}

TEST(BlockSortValidItems, Pairs) {
  REQUIRE_GPU();
  run_valid_counts<std::uint32_t, std::uint32_t, 128, 16>(distribution::few_distinct, tilesort::less{});
  run_valid_counts<std::uint32_t, std::uint32_t, 256, 8>(distribution::random, tilesort::greater{});
  run_valid_counts<user_key, std::uint32_t, 128, 7>(distribution::random, user_key_less{});
}

// Integer keys under less/greater sort partial tiles as full ones, with the
// largest key of the order at the invalid positions: valid keys equal to it
// must still come first, and the invalid keys come back unchanged.
template <typename Key, typename Value, int BT, int IPT, typename Compare>
void run_largest_key_case(Key largest, Compare comp) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("largest key inside the tile, seed=" + std::to_string(seed));
  const std::size_t n = static_cast<std::size_t>(tile_count(BT * IPT)) * BT * IPT;
  std::vector<Key> keys = tilesort_test::make_keys<Key>(n, distribution::random, seed, comp);
  for (std::size_t i = 0; i < n; i += 1 + seed % 3) keys[i] = largest;
  for (int valid : {2, BT * IPT / 3, BT * IPT - 1}) run_keys<Key, Value, BT, IPT>(keys, valid, comp);
}

TEST(BlockSortValidItems, LargestKeyInsideTheTile) {
  REQUIRE_GPU();
  run_largest_key_case<std::uint32_t, void, 128, 16>(std::numeric_limits<std::uint32_t>::max(), tilesort::less{});
  run_largest_key_case<std::int32_t, void, 64, 3>(std::numeric_limits<std::int32_t>::lowest(), tilesort::greater{});
  run_largest_key_case<std::uint32_t, std::uint32_t, 256, 8>(std::numeric_limits<std::uint32_t>::max(),
                                                             tilesort::less{});
  run_largest_key_case<std::int8_t, std::uint32_t, 32, 4>(std::numeric_limits<std::int8_t>::lowest(),
                                                          tilesort::greater{});
}

// ---------------------------------------------------------------- padded tiles
// sort_padded / sort_pairs_padded: every tile's keys from position `live` on
// are the order's last key (the warps that hold only those skip the merging);
// the tile must come out exactly as a stable sort of all of it, the padding
// in place, values (= source index) included.
template <typename Key, typename Value, int BT, int IPT, typename Compare>
__global__ void __launch_bounds__(BT) sort_padded_tiles(Key* keys, Value* values, int tiles, int live, Compare comp) {
  using sorter = tilesort::block_sort<Key, BT, IPT, Value>;
  __shared__ typename sorter::temp_storage storage;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t first = static_cast<std::size_t>(tile) * BT * IPT + threadIdx.x * IPT;
    Key k[IPT];
    Value v[IPT];
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      k[i] = keys[first + i];
      v[i] = values[first + i];
    }
    if (tile % 2 == 0) {
      sorter(storage).sort_pairs_padded(k, v, live, comp);
    } else {  // keys alone; the values stay as they are
      sorter(storage).sort_padded(k, live, comp);
    }
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      keys[first + i] = k[i];
      values[first + i] = v[i];
    }
    __syncthreads();  // the next tile reuses storage
  }
}

template <typename Key, typename Value, int BT, int IPT, typename Compare>
void run_padded(distribution d, int live, std::uint64_t seed) {
  constexpr int tile = BT * IPT;
  SCOPED_TRACE(std::to_string(BT) + "x" + std::to_string(IPT) + " " + tilesort_test::name(d) +
               " live=" + std::to_string(live) + " seed=" + std::to_string(seed));
  const int tiles = 4;
  const std::size_t n = static_cast<std::size_t>(tiles) * tile;
  std::vector<Key> keys = tilesort_test::make_keys<Key>(n, d, seed, Compare{});
  const Key last = tilesort::detail::last_key<Key, Compare>();
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<int>(i % tile) >= live) keys[i] = last;
  std::vector<Value> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<Value>(i);
  device_buffer<Key> d_keys(keys);
  device_buffer<Value> d_values(values);
  sort_padded_tiles<Key, Value, BT, IPT><<<2, BT>>>(d_keys.data(), d_values.data(), tiles, live, Compare{});
  CUDA_ASSERT_LAUNCH();
  const std::vector<Key> keys_out = d_keys.download();
  const std::vector<Value> values_out = d_values.download();
  for (int t = 0; t < tiles; ++t) {
    const std::size_t base = static_cast<std::size_t>(t) * tile;
    std::vector<std::size_t> order(tile);
    for (int i = 0; i < tile; ++i) order[i] = base + i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return Compare{}(keys[a], keys[b]); });
    for (int i = 0; i < tile; ++i) {
      ASSERT_EQ(keys_out[base + i], keys[order[i]]) << "tile " << t << ", position " << i;
      ASSERT_EQ(values_out[base + i], t % 2 == 0 ? values[order[i]] : values[base + i]) << "tile " << t << ", position " << i;
    }
  }
}

TEST(BlockSortPadded, KeysAndPairs) {
  REQUIRE_GPU();
  for (distribution d : {distribution::random, distribution::few_distinct, distribution::sorted}) {
    const auto seed = fresh_seed();
    for (int live : {0, 1, 17, 16 * 32 - 1, 16 * 32, 16 * 32 * 3 + 5, static_cast<int>(seed % 4096), 4095, 4096})
      run_padded<std::uint32_t, std::uint32_t, 256, 16, tilesort::less>(d, live, seed + live);
    for (int live : {0, 2, 7 * 32, 7 * 32 + 1, static_cast<int>(seed % 896), 896})
      run_padded<std::int16_t, std::uint64_t, 128, 7, tilesort::greater>(d, live, seed + live);  // values by index
    for (int live : {1, 100, static_cast<int>(seed % 2048), 2048})
      run_padded<std::uint64_t, std::uint32_t, 512, 4, tilesort::less>(d, live, seed + live);
  }
}

// ---------------------------------------------------------------- small keys, pairs
// Pairs whose keys are narrower than their values, signed, descending.
TEST(BlockSortSmallKeyPairs, AllDistributions) {
  REQUIRE_GPU();
  for (distribution d : tilesort_test::all_distributions) {
    const auto seed = fresh_seed();
    run_case<std::int8_t, std::uint32_t, 32, 4>(d, -1, tilesort::less{}, seed);
    run_case<std::int16_t, std::uint32_t, 64, 8>(d, -1, tilesort::greater{}, seed);
    run_case<std::uint16_t, std::uint32_t, 128, 16>(d, -1, tilesort::less{}, seed);
    run_case<std::int32_t, std::uint32_t, 256, 2>(d, -1, tilesort::greater{}, seed);
  }
}

// ---------------------------------------------------------------- wide values
// Values wider than a 32-bit index travel as that index and are permuted once
// at the end (block_sort_payload::by_index).
TEST(BlockSortWideValues, PermutedAtTheEnd) {
  REQUIRE_GPU();
  static_assert(tilesort::detail::block_sort_payload<std::uint32_t, std::uint64_t>::by_index);
  static_assert(tilesort::detail::block_sort_payload<__half, double>::by_index);
  for (distribution d : {distribution::random, distribution::few_distinct}) {
    const auto seed = fresh_seed();
    run_case<std::uint32_t, std::uint64_t, 128, 16>(d, -1, tilesort::less{}, seed);
    run_case<std::uint32_t, std::uint64_t, 128, 16>(d, static_cast<int>(seed % 2048), tilesort::less{}, seed);
    run_case<__half, double, 32, 9>(d, -1, tilesort::less{}, seed);
    run_case<__half, double, 32, 9>(d, static_cast<int>(seed % 288), tilesort::less{}, seed);
  }
}

}  // namespace
