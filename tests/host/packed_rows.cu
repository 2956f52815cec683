// Host tests for the packed rows of device/segmented_sort/row_sorters.cuh
// (packed_row_keys): a key's word is its order's image above its position in
// the row, 32-bit words for images of 1 or 2 bytes and 64-bit ones for 4
// bytes; sorting a row's words under plain less, unstably, gives the stable
// sort of its keys (every float16 pattern, NaNs and signed zeros included;
// u32 keys descending; a bits_order that maps many keys to one image), and
// each sorted word's low bits are the position of the key it came from.
#include <tilesort/device/segmented_sort/row_sorters.cuh>
#include <tilesort/detail/radix_order.cuh>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "common/test_util.cuh"

namespace {

using tilesort::detail::packed_row_keys;
using tilesort::detail::radix_image_of;

struct high_bits {  // u32 keys by their top 20 bits: many keys share an image
  __host__ __device__ std::uint32_t operator()(std::uint32_t x) const { return x >> 12; }
};

template <typename Key, typename Compare>
using packed_for = packed_row_keys<Key, typename radix_image_of<Key, Compare>::type>;

static_assert(std::is_same_v<packed_for<__half, tilesort::less>::word, std::uint32_t>);
static_assert(std::is_same_v<packed_for<std::int8_t, tilesort::greater>::word, std::uint32_t>);
static_assert(std::is_same_v<packed_for<float, tilesort::less>::word, std::uint64_t>);
static_assert(std::is_same_v<packed_for<std::uint32_t, tilesort::bits_order<high_bits>>::word, std::uint64_t>);
static_assert(packed_for<__half, tilesort::less>::position_bits == 16);
static_assert(packed_for<float, tilesort::less>::position_bits == 32);

// The row's words sorted unstably give the positions of the stable sort by comp.
template <typename Key, typename Compare>
void check_row(const std::vector<Key>& row, Compare comp) {
  using packed = packed_for<Key, Compare>;
  const packed p{nullptr, nullptr, nullptr, radix_image_of<Key, Compare>::make(comp)};
  std::vector<typename packed::word> words(row.size());
  for (std::size_t i = 0; i < row.size(); ++i) words[i] = p.pack(row[i], static_cast<int>(i));
  std::sort(words.begin(), words.end());
  std::vector<std::size_t> expected(row.size());
  std::iota(expected.begin(), expected.end(), std::size_t(0));
  std::stable_sort(expected.begin(), expected.end(), [&](std::size_t a, std::size_t b) { return comp(row[a], row[b]); });
  for (std::size_t i = 0; i < row.size(); ++i)
    ASSERT_EQ(expected[i], static_cast<std::size_t>(words[i] & packed::position_mask)) << "sorted position " << i;
}

TEST(PackedRows, EveryHalfPatternBothOrders) {
  // Rows of 16384 keys (the longest row a sorter takes): all 65536 patterns in four shuffled rows.
  std::vector<__half> all(65536);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    std::memcpy(&all[b], &bits, sizeof bits);
  }
  std::shuffle(all.begin(), all.end(), std::mt19937_64(tilesort_test::fresh_seed()));
  for (std::size_t begin = 0; begin < all.size(); begin += 16384) {
    const std::vector<__half> row(all.begin() + begin, all.begin() + begin + 16384);
    check_row(row, tilesort::less{});
    check_row(row, tilesort::greater{});
  }
}

TEST(PackedRows, WideKeysAndTies) {
  std::mt19937_64 rng(tilesort_test::fresh_seed());
  std::vector<std::uint32_t> row(5000);
  for (auto& k : row) k = static_cast<std::uint32_t>(rng()) % 64 * 0x01010101u;  // few distinct
  check_row(row, tilesort::greater{});
  for (auto& k : row) k = static_cast<std::uint32_t>(rng());
  check_row(row, tilesort::order_by_bits(high_bits{}));
  std::vector<float> floats(3000);
  for (auto& f : floats) f = static_cast<float>(static_cast<int>(rng() % 200) - 100) * 0.5f;  // ties, -0.0
  floats[7] = -0.0f;
  floats[9] = 0.0f;
  check_row(floats, tilesort::less{});
  std::vector<std::int8_t> bytes(300);
  for (auto& b : bytes) b = static_cast<std::int8_t>(rng());
  check_row(bytes, tilesort::greater{});
}

}  // namespace
