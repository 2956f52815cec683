// detail/sort_choice.cuh — the front door's choice table: which of our
// stable sorts sort_keys / sort_pairs (device/sort.cuh) run for n keys of a
// given key and value size. Pure host arithmetic, tested on the host.
//
// The table is read top to bottom; the first row whose key and value sizes
// cover the call decides: keys alone whose order cannot show stability
// (equivalent keys are bitwise equal: integers under less / greater) take
// the bitonic sort up to `bitonic_up_to` keys; keys with a radix image
// (tilesort::less / greater on integers and floats, or a bits_order) the
// radix sort from `radix_from` on; otherwise the merge sort below
// `sample_from` keys and the sample sort from there on (never, for
// `sample_never`). From `probe_from` keys on (`radix_probe_from` for the
// radix sort's keys), a probe on the device looks at the keys first and
// sends input that looks sorted or nearly sorted to the locality sort
// instead (sort_probe_policy below). The last row is a
// catch-all, so every call matches. A row leaves the merge sort only where a
// measurement showed the other algorithm faster.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.cuh"
#include "sort_algorithm.cuh"

namespace tilesort::detail {

// A row's sample_from when the sample sort is slower at every measured n.
inline constexpr std::int64_t sample_never = INT64_MAX;
// A row's probe_from when no probe runs at any n.
inline constexpr std::int64_t probe_never = INT64_MAX;

// A row's radix_from when the radix sort is never chosen.
inline constexpr std::int64_t radix_never = INT64_MAX;

struct sort_choice_row {
  std::size_t max_key_bytes;    // keys of at most this size
  std::size_t max_value_bytes;  // values of at most this size (0: keys only)
  std::int64_t sample_from;     // n >= this: the sample sort; below it: the merge sort
  std::int64_t bitonic_up_to;   // n <= this, keys alone, stability unobservable: the bitonic sort
  std::int64_t probe_from;      // n >= this: keys that look sorted take the locality sort
  std::int64_t radix_from;      // radix-sortable keys, n >= this (past the bitonic range): the radix sort
  std::int64_t radix_probe_from;  // radix-sortable keys, n >= this: the probe, in front of the radix sort
};

// The probe: one block reads `samples` pairs of keys `distance` apart
// (distance: the locality sort's blocksort tile), spread evenly over the
// input, and counts the pairs out of order. The keys look sorted when at
// most `max_descents` are: sorted input and keys displaced by less than the
// distance have none, random keys about half. Its verdict decides on the
// device which sort's kernels run; the other's return at once.
struct sort_probe_policy {
  static constexpr int threads = 256;
  static constexpr int items = 8;
  static constexpr int samples = threads * items;
  static constexpr int max_descents = samples / 512;
  // From this n on, the merge sort behind the probe runs persistent k-way
  // passes (about a wave of blocks each), so that skipping them costs sorted
  // input little; merging, they are 2-8% slower than a block per tile, which
  // random keys pay only from here (docs/tuning/front_door.md).
  static constexpr std::int64_t persistent_merge_from = std::int64_t(1) << 25;
};

// The first key of probe pair k (0 <= k < samples) among n > distance keys:
// floor((n - distance) * k / samples), without overflow.
TILESORT_HD constexpr std::int64_t probe_pair_first(std::int64_t n, std::int64_t distance, int k) {
  constexpr int samples = sort_probe_policy::samples;
  const std::int64_t span = n - distance;
  return span / samples * k + span % samples * k / samples;
}

// The probe's verdict from its count of pairs out of order.
TILESORT_HD constexpr bool probe_looks_sorted(int descents) { return descents <= sort_probe_policy::max_descents; }

// The rows mirror the benchmark's cases (u32 / u64 keys, u32 / u64 pairs,
// wider items), so that a measured crossover can be entered per row. Each
// number is where the measurement put the crossover; the measurements are in
// docs/tuning/front_door.md. The radix columns apply to keys with a radix
// image (tilesort::less / greater on integers and floats, or a bits_order).
// detail::sort_positions (keys with the int64 positions the sort makes: the
// Python package's one-array sorts) takes the radix sort from
// positions_radix_from(key bytes) whatever the row says: it carries 4-byte
// positions where the others would carry 8-byte ones; 1- and 2-byte keys
// (one or two digit passes) from 2^16, as their row.
constexpr std::int64_t positions_radix_from(std::size_t key_bytes) {
  return key_bytes <= 2 ? std::int64_t(1) << 16 : std::int64_t(1) << 20;
}
inline constexpr sort_choice_row sort_choice_table[] = {
    // 1- and 2-byte keys: the merge sort, the radix sort (one or two passes) from 2^16.
    {2, 0, sample_never, 0, probe_never, std::int64_t(1) << 16, probe_never},
    // 4-byte keys: the bitonic sort wins up to 2^16; the sample sort's 1-4% from 2^26 is
    // too close to move; the probe costs random keys at most 5% from 2^23; the radix sort
    // wins from 2^20 (the merge sort below), probed from 2^24 (at most 3% for random keys).
    {4, 0, sample_never, std::int64_t(1) << 16, std::int64_t(1) << 23, std::int64_t(1) << 20, std::int64_t(1) << 24},
    // 4-byte keys with 4-byte values: the sample sort wins from 2^25; probe from 2^23; the
    // radix sort wins from 2^20, probed from 2^24.
    {4, 4, std::int64_t(1) << 25, 0, std::int64_t(1) << 23, std::int64_t(1) << 20, std::int64_t(1) << 24},
    // 4-byte keys with 8-byte values: the merge sort, the radix sort from 2^20 (it wins from
    // there: docs/tuning/front_door.md), probed from 2^24 as above.
    {4, 8, sample_never, 0, std::int64_t(1) << 22, std::int64_t(1) << 20, std::int64_t(1) << 24},
    // 8-byte keys: the bitonic sort wins up to 2^13, the sample sort from 2^25; probe from
    // 2^23; the radix sort (hybrid from 2^22: 1.2-1.4x the merge sort on random keys, 2-5x
    // where digits repeat) from 2^22, probed from 2^23 (sorted keys at 2^22 ran the radix
    // sort at 0.07x the locality sort).
    {8, 0, std::int64_t(1) << 25, std::int64_t(1) << 13, std::int64_t(1) << 23, std::int64_t(1) << 22,
     std::int64_t(1) << 23},
    // 8-byte keys with 8-byte values: the merge sort; the probe pays from 2^22; the radix
    // sort (hybrid) from 2^22, probed from 2^23.
    {8, 8, sample_never, 0, std::int64_t(1) << 22, std::int64_t(1) << 22, std::int64_t(1) << 23},
    // Anything wider: the merge sort (catch-all).
    {SIZE_MAX, SIZE_MAX, sample_never, 0, probe_never, radix_never, probe_never},
};

constexpr const sort_choice_row& sort_choice_for(std::size_t key_bytes, std::size_t value_bytes) {
  for (const sort_choice_row& row : sort_choice_table)
    if (key_bytes <= row.max_key_bytes && value_bytes <= row.max_value_bytes) return row;
  return sort_choice_table[sizeof(sort_choice_table) / sizeof(sort_choice_table[0]) - 1];
}

// The algorithm sort_keys (value_bytes = 0) or sort_pairs runs for n keys;
// `stability_unobservable`: equivalent keys are bitwise equal (see
// equivalence_is_identity in comparators.cuh), so an unstable sort of keys
// alone gives the stable result.
// `radix_sortable`: the keys have a radix image under the comparator
// (tilesort::less / greater on native keys, or a bits_order).
constexpr sort_algorithm choose_sort_algorithm(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes,
                                               bool stability_unobservable = false, bool radix_sortable = false) {
  const sort_choice_row& row = sort_choice_for(key_bytes, value_bytes);
  if (stability_unobservable && value_bytes == 0 && n <= row.bitonic_up_to) return sort_algorithm::bitonic;
  if (radix_sortable && row.radix_from != radix_never && n >= row.radix_from) return sort_algorithm::radix;
  return row.sample_from != sample_never && n >= row.sample_from ? sort_algorithm::sample : sort_algorithm::merge;
}

// Whether sort_keys / sort_pairs of n keys probe them first: then input that
// looks sorted takes the locality sort, other input choose_sort_algorithm's.
constexpr bool front_door_probes(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes,
                                 bool radix_sortable = false) {
  const sort_choice_row& row = sort_choice_for(key_bytes, value_bytes);
  if (radix_sortable && row.radix_from != radix_never && n >= row.radix_from)
    return row.radix_probe_from != probe_never && n >= row.radix_probe_from;
  return row.probe_from != probe_never && n >= row.probe_from;
}

}  // namespace tilesort::detail
