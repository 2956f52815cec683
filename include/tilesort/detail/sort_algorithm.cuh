// detail/sort_algorithm.cuh — the names of the device sorts the front door
// chooses between: the enum that detail/sort_choice.cuh's table returns and
// that sort_stats (device/sort_stats.cuh) reports. Public as
// tilesort::sort_algorithm; it lives at the lowest level so that the choice
// table, which is host arithmetic, needs nothing above detail/.
//
//   tilesort::sort_algorithm a = stats->algorithm;
//   std::printf("%s\n", tilesort::sort_algorithm_name(a));   // "merge", "sample", ...
#pragma once

namespace tilesort {

/// Which algorithm a sort ran (sort_keys / sort_pairs choose one; the
/// specific entry points leave `unspecified`).
enum class sort_algorithm : int { unspecified = 0, merge, sample, locality, bitonic, radix };

/// The algorithm's name ("merge", "sample", ...), e.g. for a log line.
///
/// @code
/// std::puts(tilesort::sort_algorithm_name(tilesort::sort_algorithm::merge));   // merge
/// @endcode
inline const char* sort_algorithm_name(sort_algorithm a) {
  switch (a) {
    case sort_algorithm::merge: return "merge";
    case sort_algorithm::sample: return "sample";
    case sort_algorithm::locality: return "locality";
    case sort_algorithm::bitonic: return "bitonic";
    case sort_algorithm::radix: return "radix";
    default: return "unspecified";
  }
}

}  // namespace tilesort
