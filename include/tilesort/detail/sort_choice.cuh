// detail/sort_choice.cuh — the front door's choice table: which of our
// stable sorts sort_keys / sort_pairs (device/sort.cuh) run for n keys of a
// given key and value size. Pure host arithmetic, tested on the host.
//
// The table is read top to bottom; the first row whose key and value sizes
// cover the call decides: merge sort below `sample_from` keys, the sample
// sort from there on. Every row ends in a catch-all, so every call matches.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../device/sort_stats.cuh"

namespace tilesort::detail {

struct sort_choice_row {
  std::size_t max_key_bytes;    // keys of at most this size
  std::size_t max_value_bytes;  // values of at most this size (0: keys only)
  std::int64_t sample_from;     // n >= this: the sample sort; below it: the merge sort
};

// Not yet measured: merge sort for small n, the sample sort for large n.
// The rows mirror the benchmark's cases (u32 / u64 keys, u32 / u64 pairs,
// wider items) so that measured crossovers can be entered per row.
inline constexpr sort_choice_row sort_choice_table[] = {
    {4, 0, std::int64_t(1) << 20},
    {4, 4, std::int64_t(1) << 20},
    {8, 0, std::int64_t(1) << 20},
    {8, 8, std::int64_t(1) << 20},
    {SIZE_MAX, SIZE_MAX, std::int64_t(1) << 21},
};

constexpr const sort_choice_row& sort_choice_for(std::size_t key_bytes, std::size_t value_bytes) {
  for (const sort_choice_row& row : sort_choice_table)
    if (key_bytes <= row.max_key_bytes && value_bytes <= row.max_value_bytes) return row;
  return sort_choice_table[sizeof(sort_choice_table) / sizeof(sort_choice_table[0]) - 1];
}

// The algorithm sort_keys (value_bytes = 0) or sort_pairs runs for n keys.
constexpr sort_algorithm choose_sort_algorithm(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes) {
  return n >= sort_choice_for(key_bytes, value_bytes).sample_from ? sort_algorithm::sample : sort_algorithm::merge;
}

}  // namespace tilesort::detail
