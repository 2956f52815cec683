// Host tests for thread/thread_sort.cuh: the in-register networks and the
// serial merge, against std::stable_sort / std::merge on fresh random input.
#include <tilesort/detail/merge_path.cuh>
#include <tilesort/thread/thread_sort.cuh>

#include "common/test_util.cuh"

namespace {

using tilesort_test::fresh_seed;

template <int N, typename Compare>
void check_networks(std::uint64_t seed, Compare comp) {
  SCOPED_TRACE("N=" + std::to_string(N) + " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    int keys[N], bitonic[N], values[N];
    std::vector<std::pair<int, int>> ref;
    for (int i = 0; i < N; ++i) {
      keys[i] = static_cast<int>(rng() % (trial % 2 ? 4 : 1000));  // odd trials: many ties
      bitonic[i] = keys[i];
      values[i] = i;
      ref.push_back({keys[i], i});
    }
    std::stable_sort(ref.begin(), ref.end(), [&](auto a, auto b) { return comp(a.first, b.first); });
    tilesort::odd_even_transposition_sort(keys, values, comp);
    for (int i = 0; i < N; ++i) {
      ASSERT_EQ(ref[i].first, keys[i]) << "odd-even transposition, index " << i;
      ASSERT_EQ(ref[i].second, values[i]) << "odd-even transposition is not stable at " << i;
    }
    tilesort::bitonic_network_sort(bitonic, comp);
    // Not stable: the key at each rank need only be equivalent to the reference's.
    for (int i = 0; i < N; ++i)
      ASSERT_TRUE(!comp(ref[i].first, bitonic[i]) && !comp(bitonic[i], ref[i].first)) << "bitonic network, index " << i;
  }
}

TEST(ThreadSort, NetworksAnySizeLess) {
  const auto seed = fresh_seed();
  check_networks<1>(seed, tilesort::less{});
  check_networks<2>(seed, tilesort::less{});
  check_networks<3>(seed, tilesort::less{});
  check_networks<5>(seed, tilesort::less{});
  check_networks<7>(seed, tilesort::less{});
  check_networks<8>(seed, tilesort::less{});
  check_networks<13>(seed, tilesort::less{});
  check_networks<16>(seed, tilesort::less{});
  check_networks<17>(seed, tilesort::less{});
}

TEST(ThreadSort, NetworksGreaterAndUser) {
  const auto seed = fresh_seed();
  check_networks<6>(seed, tilesort::greater{});
  check_networks<11>(seed, [](int a, int b) { return (a % 7) < (b % 7); });
}

TEST(ThreadSort, SerialMergeIsStable) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 500; ++trial) {
    const int a_len = static_cast<int>(rng() % 20), b_len = static_cast<int>(rng() % 20);
    std::vector<int> keys(a_len + b_len);
    for (auto& k : keys) k = static_cast<int>(rng() % 10);
    std::sort(keys.begin(), keys.begin() + a_len);
    std::sort(keys.begin() + a_len, keys.end());
    std::vector<int> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return keys[x] < keys[y]; });
    // Merge in chunks of 4 outputs, each chunk starting where merge_path says.
    for (int diagonal = 0; diagonal < a_len + b_len; diagonal += 4) {
      const int split = tilesort::detail::merge_path(keys.data(), a_len, keys.data() + a_len, b_len, diagonal,
                                                     tilesort::less{});
      int out[4], index[4];
      tilesort::serial_merge(keys.data(), split, a_len, a_len + diagonal - split, a_len + b_len, out, index,
                             tilesort::less{});
      for (int i = 0; i < 4 && diagonal + i < a_len + b_len; ++i) {
        ASSERT_EQ(order[diagonal + i], index[i]) << "output " << diagonal + i;
        ASSERT_EQ(keys[order[diagonal + i]], out[i]);
      }
    }
  }
}

}  // namespace
