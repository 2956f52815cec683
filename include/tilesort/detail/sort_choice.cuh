// detail/sort_choice.cuh — the front door's choice table: which of our
// stable sorts sort_keys / sort_pairs (device/sort.cuh) run for n keys of a
// given key and value size. Pure host arithmetic, tested on the host.
//
// The table is read top to bottom; the first row whose key and value sizes
// cover the call decides: merge sort below `sample_from` keys, the sample
// sort from there on (never, for `sample_never`). The last row is a
// catch-all, so every call matches. A row switches to the sample sort only
// from a measured crossover: the front door is never slower than the merge
// sort.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../device/sort_stats.cuh"

namespace tilesort::detail {

// A row's sample_from when the sample sort is slower at every measured n.
inline constexpr std::int64_t sample_never = INT64_MAX;

struct sort_choice_row {
  std::size_t max_key_bytes;    // keys of at most this size
  std::size_t max_value_bytes;  // values of at most this size (0: keys only)
  std::int64_t sample_from;     // n >= this: the sample sort; below it: the merge sort
};

// Measured on an H100 (bench family `sample`, 2^20-2^28, random keys): the
// sample sort is slower than the merge sort for every row, so every row
// takes the merge sort (docs/tuning/sample_sort.md). The rows mirror the benchmark's cases (u32 / u64
// keys, u32 / u64 pairs, wider items) so that a measured crossover can be
// entered per row.
inline constexpr sort_choice_row sort_choice_table[] = {
    {4, 0, sample_never},
    {4, 4, sample_never},
    {8, 0, sample_never},
    {8, 8, sample_never},
    {SIZE_MAX, SIZE_MAX, sample_never},
};

constexpr const sort_choice_row& sort_choice_for(std::size_t key_bytes, std::size_t value_bytes) {
  for (const sort_choice_row& row : sort_choice_table)
    if (key_bytes <= row.max_key_bytes && value_bytes <= row.max_value_bytes) return row;
  return sort_choice_table[sizeof(sort_choice_table) / sizeof(sort_choice_table[0]) - 1];
}

// The algorithm sort_keys (value_bytes = 0) or sort_pairs runs for n keys.
constexpr sort_algorithm choose_sort_algorithm(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes) {
  const std::int64_t from = sort_choice_for(key_bytes, value_bytes).sample_from;
  return from != sample_never && n >= from ? sort_algorithm::sample : sort_algorithm::merge;
}

}  // namespace tilesort::detail
