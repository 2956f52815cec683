// Host tests for detail/sort_choice.cuh: every call finds a row, the table
// is ordered so that no row hides a later one, each row's choice switches
// at most once (merge below its crossover, sample from it on), a row marked
// sample_never never takes the sample sort, the bitonic sort only sorts keys
// alone whose stability cannot be observed, up to its row's bound, and the
// choice does not depend on anything but n, the sizes and that property.
// The probe (sort_probe_policy): its pairs stay inside the input, spread
// evenly, and its verdict, run here on the host over the inputs it must
// tell apart, sends sorted and nearly sorted keys to the locality sort and
// random, reversed and few-distinct keys to the table's sort.
#include <tilesort/comparators.cuh>
#include <tilesort/detail/sort_choice.cuh>

#include <algorithm>
#include <random>
#include <vector>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort::sort_algorithm;

constexpr std::size_t rows = sizeof(sort_choice_table) / sizeof(sort_choice_table[0]);

TEST(SortChoice, LastRowCatchesEverything) {
  EXPECT_EQ(SIZE_MAX, sort_choice_table[rows - 1].max_key_bytes);
  EXPECT_EQ(SIZE_MAX, sort_choice_table[rows - 1].max_value_bytes);
  EXPECT_EQ(&sort_choice_table[rows - 1], &sort_choice_for(1000, 1000));
}

TEST(SortChoice, EveryRowIsReachable) {
  for (std::size_t r = 0; r < rows; ++r) {
    const sort_choice_row& row = sort_choice_table[r];
    const std::size_t key = row.max_key_bytes == SIZE_MAX ? 64 : row.max_key_bytes;
    const std::size_t value = row.max_value_bytes == SIZE_MAX ? 64 : row.max_value_bytes;
    EXPECT_EQ(&row, &sort_choice_for(key, value)) << "row " << r << " is hidden by an earlier one";
    EXPECT_GT(row.sample_from, 1) << "row " << r;
  }
}

TEST(SortChoice, SizesMapToTheirRows) {
  EXPECT_EQ(&sort_choice_table[0], &sort_choice_for(1, 0));  // u8 and u16 keys: their own row
  EXPECT_EQ(&sort_choice_table[0], &sort_choice_for(2, 0));
  EXPECT_EQ(&sort_choice_table[1], &sort_choice_for(4, 0));
  EXPECT_EQ(&sort_choice_table[2], &sort_choice_for(4, 4));
  EXPECT_EQ(&sort_choice_table[2], &sort_choice_for(1, 4));
  EXPECT_EQ(&sort_choice_table[3], &sort_choice_for(4, 8));  // u32 keys with 8-byte values
  EXPECT_EQ(&sort_choice_table[3], &sort_choice_for(2, 8));
  EXPECT_EQ(&sort_choice_table[4], &sort_choice_for(8, 0));
  EXPECT_EQ(&sort_choice_table[5], &sort_choice_for(8, 8));
  EXPECT_EQ(&sort_choice_table[5], &sort_choice_for(8, 4));
  EXPECT_EQ(&sort_choice_table[rows - 1], &sort_choice_for(16, 0));
}

TEST(SortChoice, AtMostOneCrossoverPerRow) {
  for (std::size_t key : {1, 2, 4, 8, 16, 32})
    for (std::size_t value : {0, 4, 8, 16}) {
      SCOPED_TRACE("key " + std::to_string(key) + " value " + std::to_string(value));
      const std::int64_t from = sort_choice_for(key, value).sample_from;
      EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(0, key, value));
      EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(1, key, value));
      if (from != sample_never) {
        EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(from - 1, key, value));
        EXPECT_EQ(sort_algorithm::sample, choose_sort_algorithm(from, key, value));
      }
      sort_algorithm last = sort_algorithm::merge;
      for (std::int64_t n = 1; n < (std::int64_t(1) << 40); n = n * 3 / 2 + 1) {
        const sort_algorithm a = choose_sort_algorithm(n, key, value);
        if (from == sample_never) EXPECT_EQ(sort_algorithm::merge, a) << "n=" << n;
        if (last == sort_algorithm::sample) EXPECT_EQ(sort_algorithm::sample, a) << "n=" << n;
        last = a;
      }
    }
}

// The bench (H100, 2026-11-27) has the sample sort faster than the merge
// sort from 2^25 for 8-byte keys alone and for u32 keys with u32 values:
// those rows take it from there, every other row keeps the merge sort. A row
// changes with its measured crossover.
TEST(SortChoice, SampleSortOnlyWhereMeasuredFaster) {
  for (std::size_t r = 0; r < rows; ++r) {
    const sort_choice_row& row = sort_choice_table[r];
    if ((row.max_key_bytes == 8 && row.max_value_bytes == 0) || (row.max_key_bytes == 4 && row.max_value_bytes == 4)) {
      EXPECT_EQ(std::int64_t(1) << 25, row.sample_from) << "row " << r;
    } else {
      EXPECT_EQ(sample_never, row.sample_from) << "row " << r;
    }
  }
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(INT64_MAX, 4, 0));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(INT64_MAX, 8, 8));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm((std::int64_t(1) << 25) - 1, 8, 0));
  EXPECT_EQ(sort_algorithm::sample, choose_sort_algorithm(std::int64_t(1) << 25, 8, 0));
  EXPECT_EQ(sort_algorithm::sample, choose_sort_algorithm(std::int64_t(1) << 25, 8, 0, true));
  EXPECT_EQ(sort_algorithm::sample, choose_sort_algorithm(std::int64_t(1) << 25, 4, 4));
  EXPECT_EQ(sort_algorithm::sample, choose_sort_algorithm(std::int64_t(1) << 25, 2, 4));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(std::int64_t(1) << 25, 4, 8));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(std::int64_t(1) << 26, 16, 0));
}

// The bitonic sort: keys alone, stability unobservable, n up to the row's
// bound (measured: 2^16 u32 keys, 2^13 u64 keys); never for pairs, never
// where equivalent keys may differ in their bits (floats, user comparators).
TEST(SortChoice, BitonicOnlyWhereStabilityCannotShow) {
  EXPECT_EQ(std::int64_t(1) << 16, sort_choice_for(4, 0).bitonic_up_to);
  EXPECT_EQ(std::int64_t(1) << 13, sort_choice_for(8, 0).bitonic_up_to);
  for (std::size_t key : {1, 2, 4, 8, 16, 32})
    for (std::size_t value : {0, 4, 8, 16}) {
      SCOPED_TRACE("key " + std::to_string(key) + " value " + std::to_string(value));
      const std::int64_t up_to = sort_choice_for(key, value).bitonic_up_to;
      if (value != 0) EXPECT_EQ(0, up_to);
      for (std::int64_t n = 0; n < (std::int64_t(1) << 40); n = n * 3 / 2 + 1) {
        EXPECT_NE(sort_algorithm::bitonic, choose_sort_algorithm(n, key, value, false)) << "n=" << n;
        const bool bitonic = value == 0 && n <= up_to;
        EXPECT_EQ(bitonic, choose_sort_algorithm(n, key, value, true) == sort_algorithm::bitonic) << "n=" << n;
        if (!bitonic)
          EXPECT_EQ(choose_sort_algorithm(n, key, value, false), choose_sort_algorithm(n, key, value, true));
      }
    }
  EXPECT_EQ(sort_algorithm::bitonic, choose_sort_algorithm(std::int64_t(1) << 16, 4, 0, true));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm((std::int64_t(1) << 16) + 1, 4, 0, true));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(1000, 4, 4, true));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm(1000, 2, 0, true));
  static_assert(tilesort::detail::equivalence_is_identity<std::uint32_t, tilesort::less>);
  static_assert(!tilesort::detail::equivalence_is_identity<float, tilesort::less>);
}

TEST(SortChoice, ChoiceIsAConstantExpression) {
  static_assert(choose_sort_algorithm(1, 4, 0) == sort_algorithm::merge, "small n, stable: merge sort");
  static_assert(choose_sort_algorithm(1, 4, 0, true) == sort_algorithm::bitonic, "small n, u32: bitonic sort");
  static_assert(choose_sort_algorithm(std::int64_t(1) << 28, 4, 0) == sort_algorithm::merge,
                "large n, 4-byte keys: merge sort (the sample sort is not faster)");
  static_assert(choose_sort_algorithm(std::int64_t(1) << 28, 8, 0) == sort_algorithm::sample,
                "large n, 8-byte keys alone: the sample sort");
  EXPECT_STREQ("sample", tilesort::sort_algorithm_name(sort_algorithm::sample));
  EXPECT_STREQ("merge", tilesort::sort_algorithm_name(sort_algorithm::merge));
  EXPECT_STREQ("unspecified", tilesort::sort_algorithm_name(sort_algorithm::unspecified));
}

// The probe's pairs: pair k starts at floor((n - distance) * k / samples),
// so every pair lies inside the input and the pairs spread over all of it,
// up to n = 2^62 without overflow.
TEST(SortProbe, PairsSpreadOverTheInput) {
  constexpr int samples = sort_probe_policy::samples;
  const std::int64_t distance = 8192;
  for (const std::int64_t n : {distance + 1, distance + 5000, std::int64_t(1) << 17, (std::int64_t(1) << 20) + 7,
                               std::int64_t(1) << 40, (std::int64_t(1) << 62) + 12345}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::int64_t last = -1;
    for (int k = 0; k < samples; ++k) {
      const std::int64_t first = probe_pair_first(n, distance, k);
      const __int128 exact = static_cast<__int128>(n - distance) * k / samples;
      ASSERT_EQ(exact, static_cast<__int128>(first)) << "k=" << k;
      ASSERT_GE(first, last) << "k=" << k;
      ASSERT_GE(first, 0);
      ASSERT_LT(first + distance, n);
      last = first;
    }
    EXPECT_GE(last + distance + (n - distance) / samples + 1, n);  // the last pair ends within a stride of the end
  }
}

TEST(SortProbe, VerdictThreshold) {
  EXPECT_TRUE(probe_looks_sorted(0));
  EXPECT_TRUE(probe_looks_sorted(sort_probe_policy::max_descents));
  EXPECT_FALSE(probe_looks_sorted(sort_probe_policy::max_descents + 1));
  EXPECT_FALSE(probe_looks_sorted(sort_probe_policy::samples / 2));
  static_assert(sort_probe_policy::max_descents < sort_probe_policy::samples / 64, "a few pairs in a thousand");
}

// The probe's verdict on the host, as the kernel counts it.
template <typename Key>
bool probe_on_host(const std::vector<Key>& keys, std::int64_t distance) {
  const auto n = static_cast<std::int64_t>(keys.size());
  int descents = 0;
  for (int k = 0; k < sort_probe_policy::samples; ++k) {
    const std::int64_t first = probe_pair_first(n, distance, k);
    descents += keys[first + distance] < keys[first];
  }
  return probe_looks_sorted(descents);
}

TEST(SortProbe, TellsSortedFromUnsortedInput) {
  const std::uint64_t seed = tilesort_test::fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::int64_t distance = 8192;
  for (const std::int64_t n : {std::int64_t(1) << 17, (std::int64_t(1) << 20) + 3}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::vector<std::uint32_t> sorted(n), nearly(n), equal(n, 7), steps(n), random(n), reversed(n), few(n);
    for (std::int64_t i = 0; i < n; ++i) {
      sorted[i] = static_cast<std::uint32_t>(i);
      nearly[i] = static_cast<std::uint32_t>(i + rng() % 64);  // the bench's "nearly": at most 64 places from home
      steps[i] = static_cast<std::uint32_t>(i / 1000);        // sorted, with long runs of equal keys
      random[i] = static_cast<std::uint32_t>(rng());
      reversed[i] = static_cast<std::uint32_t>(n - i);
      few[i] = static_cast<std::uint32_t>(rng() % 4);
    }
    EXPECT_TRUE(probe_on_host(sorted, distance));
    EXPECT_TRUE(probe_on_host(nearly, distance));
    EXPECT_TRUE(probe_on_host(equal, distance));
    EXPECT_TRUE(probe_on_host(steps, distance));
    EXPECT_FALSE(probe_on_host(random, distance));
    EXPECT_FALSE(probe_on_host(reversed, distance));
    EXPECT_FALSE(probe_on_host(few, distance));
    // Sorted keys with one in a hundred replaced by a random key: about 2% of
    // the pairs descend, too many for the locality sort to gain.
    std::vector<std::uint32_t> outliers = sorted;
    for (std::int64_t i = 0; i < n; ++i)
      if (rng() % 100 == 0) outliers[i] = static_cast<std::uint32_t>(rng() % n);
    EXPECT_FALSE(probe_on_host(outliers, distance));
  }
}

// Keys with a radix image take the radix sort from their row's radix_from,
// past the bitonic sort's range, and are probed from radix_probe_from (past
// radix_from); the catch-all row never takes it; keys without one never do.
TEST(SortChoice, RadixFromItsRowsBound) {
  for (std::size_t r = 0; r < rows; ++r) {
    const sort_choice_row& row = sort_choice_table[r];
    SCOPED_TRACE("row " + std::to_string(r));
    const std::size_t key = row.max_key_bytes == SIZE_MAX ? 64 : row.max_key_bytes;
    const std::size_t value = row.max_value_bytes == SIZE_MAX ? 64 : row.max_value_bytes;
    if (row.max_key_bytes == SIZE_MAX) EXPECT_EQ(radix_never, row.radix_from);
    if (row.radix_from == radix_never) {
      EXPECT_EQ(probe_never, row.radix_probe_from);
      EXPECT_NE(sort_algorithm::radix, choose_sort_algorithm(INT64_MAX, key, value, false, true));
      EXPECT_EQ(front_door_probes(INT64_MAX, key, value, false), front_door_probes(INT64_MAX, key, value, true));
      continue;
    }
    EXPECT_GT(row.radix_from, row.bitonic_up_to);
    EXPECT_NE(sort_algorithm::radix, choose_sort_algorithm(row.radix_from - 1, key, value, false, true));
    EXPECT_EQ(sort_algorithm::radix, choose_sort_algorithm(row.radix_from, key, value, false, true));
    EXPECT_EQ(sort_algorithm::radix, choose_sort_algorithm(INT64_MAX, key, value, true, true));
    EXPECT_NE(sort_algorithm::radix, choose_sort_algorithm(INT64_MAX, key, value, false, false));
    if (row.radix_probe_from == probe_never) continue;
    EXPECT_GT(row.radix_probe_from, row.radix_from);
    EXPECT_FALSE(front_door_probes(row.radix_probe_from - 1, key, value, true));
    EXPECT_TRUE(front_door_probes(row.radix_probe_from, key, value, true));
  }
  // Bitonic keys stay bitonic up to their bound even when radix-sortable.
  EXPECT_EQ(sort_algorithm::bitonic, choose_sort_algorithm(1000, 4, 0, true, true));
  EXPECT_EQ(sort_algorithm::radix, choose_sort_algorithm(std::int64_t(1) << 20, 2, 0, false, true));
  // Where measured (docs/tuning/front_door.md, docs/performance.md): 4-byte
  // keys alone and with 4- or 8-byte values from 2^20, probed from 2^24;
  // 8-byte keys (the hybrid sort), alone and with 8-byte values, from 2^22.
  EXPECT_EQ(std::int64_t(1) << 20, sort_choice_for(4, 0).radix_from);
  EXPECT_EQ(std::int64_t(1) << 20, sort_choice_for(4, 4).radix_from);
  EXPECT_EQ(std::int64_t(1) << 24, sort_choice_for(4, 4).radix_probe_from);
  EXPECT_EQ(std::int64_t(1) << 20, sort_choice_for(4, 8).radix_from);
  EXPECT_EQ(std::int64_t(1) << 24, sort_choice_for(4, 8).radix_probe_from);
  EXPECT_EQ(sort_algorithm::radix, choose_sort_algorithm(std::int64_t(1) << 24, 4, 8, false, true));
  EXPECT_EQ(sort_algorithm::radix, choose_sort_algorithm(std::int64_t(1) << 24, 8, 8, false, true));
  EXPECT_EQ(sort_algorithm::radix, choose_sort_algorithm(std::int64_t(1) << 26, 8, 0, false, true));
  EXPECT_EQ(sort_algorithm::merge, choose_sort_algorithm((std::int64_t(1) << 22) - 1, 8, 8, false, true));
  EXPECT_EQ(sort_algorithm::sample, choose_sort_algorithm(std::int64_t(1) << 26, 8, 0, false, false));
}

// The probe runs from the row's probe_from on, above the bitonic sort's
// range; rows of 1- and 2-byte keys and the catch-all row never probe.
TEST(SortProbe, OnlyFromItsRowsBound) {
  for (std::size_t r = 0; r < rows; ++r) {
    const sort_choice_row& row = sort_choice_table[r];
    SCOPED_TRACE("row " + std::to_string(r));
    EXPECT_GT(row.probe_from, row.bitonic_up_to);
    if (row.max_key_bytes <= 2 || row.max_key_bytes == SIZE_MAX) EXPECT_EQ(probe_never, row.probe_from);
    if (row.probe_from == probe_never) continue;
    const std::size_t key = row.max_key_bytes, value = row.max_value_bytes;
    EXPECT_FALSE(front_door_probes(row.probe_from - 1, key, value));
    EXPECT_TRUE(front_door_probes(row.probe_from, key, value));
    EXPECT_TRUE(front_door_probes(INT64_MAX, key, value));
  }
  EXPECT_FALSE(front_door_probes(std::int64_t(1) << 30, 2, 0));
  EXPECT_FALSE(front_door_probes(std::int64_t(1) << 30, 16, 0));
}

// The bench (H100, 2026-11-27): random keys lose at most 5% to the probe
// from 2^23 (2^22 for 8-byte keys with 8-byte values).
TEST(SortProbe, FromWhereMeasured) {
  EXPECT_EQ(std::int64_t(1) << 23, sort_choice_for(4, 0).probe_from);
  EXPECT_EQ(std::int64_t(1) << 23, sort_choice_for(4, 4).probe_from);
  EXPECT_EQ(std::int64_t(1) << 23, sort_choice_for(8, 0).probe_from);
  EXPECT_EQ(std::int64_t(1) << 22, sort_choice_for(8, 8).probe_from);
  EXPECT_EQ(std::int64_t(1) << 22, sort_choice_for(4, 8).probe_from);  // as before it had its own row
  EXPECT_FALSE(front_door_probes((std::int64_t(1) << 23) - 1, 4, 0));
  EXPECT_TRUE(front_door_probes(std::int64_t(1) << 22, 8, 4));
}

// sort_positions (the Python package's one-array sorts with positions) takes
// the radix sort from its own bound: where the row of 1- and 2-byte keys does
// (2^16), and from 2^20 for wider keys whatever their rows say.
TEST(SortChoice, PositionsRadixFrom) {
  EXPECT_EQ(sort_choice_for(1, 0).radix_from, positions_radix_from(1));
  EXPECT_EQ(sort_choice_for(2, 0).radix_from, positions_radix_from(2));
  EXPECT_EQ(std::int64_t(1) << 20, positions_radix_from(4));
  EXPECT_EQ(std::int64_t(1) << 20, positions_radix_from(8));
  EXPECT_LT(positions_radix_from(2), positions_radix_from(4));
}

}  // namespace
