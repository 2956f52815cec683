// Host tests for detail/sort_choice.cuh: every call finds a row, the table
// is ordered so that no row hides a later one, each row's choice switches
// at most once (merge below its crossover, sample from it on), a row marked
// sample_never never takes the sample sort, the bitonic sort only sorts keys
// alone whose stability cannot be observed, up to its row's bound, and the
// choice does not depend on anything but n, the sizes and that property.
#include <tilesort/comparators.cuh>
#include <tilesort/detail/sort_choice.cuh>

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
  EXPECT_EQ(&sort_choice_table[3], &sort_choice_for(8, 0));
  EXPECT_EQ(&sort_choice_table[4], &sort_choice_for(8, 8));
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

}  // namespace
