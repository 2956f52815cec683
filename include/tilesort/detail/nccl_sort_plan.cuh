// detail/nccl_sort_plan.cuh — the arithmetic of the distributed sort
// (distributed/nccl_sort.cuh), kept free of NCCL and of kernels so that the
// host tests check all of it: the shard header every rank shares first, the
// exact splitter search (probes per round, rounds, probe positions, interval
// updates), the exchange plan read off the cut matrix, the merge passes over
// the received runs (which runs each pass merges, from which buffer into
// which, their tiles) and the temp-storage layout.
//
// Names used throughout. p ranks; rank t holds n_t keys, sorted stably on
// its GPU first, so that its run is in (key, index) order. The global order
// is (key, rank, index). Boundary d (1 <= d < p) is the global position
// P_d = n_0 + ... + n_{d-1} where rank d's output starts. The cut c_t(d) is
// how many of rank t's keys come before P_d in the global order: rank t
// sends keys [c_t(d), c_t(d+1)) of its run to rank d. The cut matrix holds
// one row per rank: c_t(0) = 0, c_t(1), ..., c_t(p-1), c_t(p) = n_t.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "config.cuh"
#include "error.cuh"

namespace tilesort::detail {

// ------------------------------------------------------------------ shard header
// What each rank tells the others before anything else (one all-gather of a
// fixed size, so that a rank with bad arguments or another key type cannot
// make a later, size-dependent collective hang).
inline constexpr std::uint32_t shard_header_magic = 0x74736e31u;  // "tsn1": this sort, layout version 1
// Shards past 2^40 keys are refused: the splitter search's round count is
// planned for at most that many (and no GPU holds them).
inline constexpr std::int64_t max_shard_keys = std::int64_t(1) << 40;

struct shard_header {
  std::uint32_t magic;
  std::int32_t status;  // cudaSuccess, or this rank's argument error
  std::int32_t rank;
  std::int32_t ranks;
  std::int64_t n_local;
  std::int64_t key_bytes;    // sizeof(Key)
  std::int64_t value_bytes;  // sizeof(Value); 0 for keys alone
};

// What every rank concludes from the gathered headers; the same headers give
// the same verdict on every rank, so they all return the same error.
struct shard_census {
  cudaError_t error = cudaSuccess;
  std::int64_t n_total = 0;
  std::int64_t n_max = 0;
};

inline shard_census take_census(const shard_header* headers, int ranks) {
  shard_census census;
  for (int t = 0; t < ranks; ++t) {
    const shard_header& h = headers[t];
    if (h.status != cudaSuccess) {  // the first rank's own error wins, the same on every rank
      census.error = static_cast<cudaError_t>(h.status);
      return census;
    }
    const bool consistent = h.magic == shard_header_magic && h.rank == t && h.ranks == ranks &&
                            h.key_bytes == headers[0].key_bytes && h.value_bytes == headers[0].value_bytes &&
                            h.n_local >= 0 && h.n_local <= max_shard_keys;
    if (!consistent) census.error = cudaErrorInvalidValue;
    census.n_total += h.n_local;
    census.n_max = h.n_local > census.n_max ? h.n_local : census.n_max;
  }
  return census;
}

// Global position of rank `rank`'s first key: P_rank.
TILESORT_HD std::int64_t shard_offset(const shard_header* headers, int rank) {
  std::int64_t offset = 0;
  for (int t = 0; t < rank; ++t) offset += headers[t].n_local;
  return offset;
}

// ------------------------------------------------------------------ splitter search
// Every round, each rank probes each of its p - 1 intervals (one per
// boundary) at `probes` evenly spaced positions; all ranks count every probe
// against their own runs (binary searches), a reduce-scatter sums the counts
// into each probe's global position, and each rank narrows its intervals to
// the gap between the last probe before the boundary and the first after.
// A round shrinks an interval of L + 1 candidate cuts to at most
// ceil((L + 1) / (probes + 1)), so the round count is planned from the
// largest shard alone, on the host, without looking at the keys.
inline constexpr std::int64_t selection_probe_budget = std::int64_t(1) << 18;  // per round, all ranks and boundaries

// The most probes per boundary a round may take for `ranks` ranks (what the
// temp storage is sized for).
TILESORT_HD constexpr std::int64_t max_selection_probes(int ranks) {
  const std::int64_t per_rank_boundary = std::int64_t(ranks) * (ranks > 1 ? ranks - 1 : 1);
  const std::int64_t probes = selection_probe_budget / per_rank_boundary;
  return probes > 0 ? probes : 1;
}

// Rounds until every interval over a shard of at most n_max keys is one cut.
TILESORT_HD constexpr int selection_rounds(std::int64_t n_max, std::int64_t probes) {
  std::int64_t candidates = n_max + 1;
  int rounds = 0;
  while (candidates > 1) {
    candidates = ceil_div(candidates, probes + 1);
    ++rounds;
  }
  return rounds;
}

struct selection_plan {
  std::int64_t probes = 1;  // per boundary, per rank, per round
  int rounds = 0;
};

// The fewest rounds the budget allows, then the fewest probes that still
// finish in that many rounds (less to gather and count).
inline selection_plan make_selection_plan(int ranks, std::int64_t n_max) {
  selection_plan plan;
  const std::int64_t most = max_selection_probes(ranks);
  plan.rounds = selection_rounds(n_max, most);
  std::int64_t lo = 1, hi = most;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (selection_rounds(n_max, mid) <= plan.rounds) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  plan.probes = lo;
  return plan;
}

// Rank t's first interval for the cut at global position `target`: at most
// all of its keys and at most `target`; at least what the other ranks cannot hold.
struct cut_interval {
  std::int64_t lo;  // the cut is in [lo, hi]
  std::int64_t hi;
};

TILESORT_HD cut_interval first_cut_interval(std::int64_t target, std::int64_t n_own, std::int64_t n_total) {
  const std::int64_t others = n_total - n_own;
  cut_interval c;
  c.lo = target > others ? target - others : 0;
  c.hi = target < n_own ? target : n_own;
  return c;
}

// Position of probe i (0 <= i < probes) in the interval, or -1 where the
// interval needs fewer probes. Probes split the L + 1 candidate cuts lo..hi
// into groups of at most m = ceil((L + 1) / (probes + 1)): probe i asks
// whether key lo + (i + 1) m - 1 comes before the target.
TILESORT_HD std::int64_t probe_position(cut_interval c, std::int64_t probes, std::int64_t i) {
  const std::int64_t group = ceil_div(c.hi - c.lo + 1, probes + 1);
  const std::int64_t position = c.lo + (i + 1) * group - 1;
  return position < c.hi ? position : -1;
}

// How many of the probes are real: a prefix, since positions grow with i.
TILESORT_HD std::int64_t probes_used(cut_interval c, std::int64_t probes) {
  const std::int64_t group = ceil_div(c.hi - c.lo + 1, probes + 1);
  const std::int64_t used = (c.hi - c.lo) / group;
  return used < probes ? used : probes;
}

// The interval after a round that probed `c`. A probe's global position
// grows with its position (the run is sorted, ties break by index), so the
// probes before the target form a prefix: `first_at_target` is the first
// probe (0 <= it <= probes_used) whose global position is at or past the
// target. The cut lies past the probe before it and at or before it.
TILESORT_HD cut_interval narrowed_cut(cut_interval c, std::int64_t probes, std::int64_t first_at_target) {
  cut_interval n = c;
  if (first_at_target > 0) n.lo = probe_position(c, probes, first_at_target - 1) + 1;
  if (first_at_target < probes_used(c, probes)) n.hi = probe_position(c, probes, first_at_target);
  return n;
}

// One rank's probes of a round travel as one byte slot: the positions
// (int64, -1 for none), then the keys, each part 256-byte aligned, packed
// for the round's probe count (the temp storage holds the largest slot).
struct probe_slot {
  std::size_t keys_offset;
  std::size_t bytes;
};

inline probe_slot make_probe_slot(int ranks, std::int64_t probes, std::size_t key_bytes) {
  const std::size_t count = std::size_t(ranks > 1 ? ranks - 1 : 0) * std::size_t(probes);
  const std::size_t keys_offset = align_temp(sizeof(std::int64_t) * count);
  return {keys_offset, keys_offset + align_temp(key_bytes * count)};
}

// ------------------------------------------------------------------ exchange plan
// Read off the gathered cut matrix (ranks rows of ranks + 1 cuts), after
// checking that it describes a stable partition: rows start at 0, end at the
// shard size, never decrease, and the cuts of every boundary sum to its
// position. A comparator that is not a strict weak order (or differs between
// ranks) is what breaks it; every rank sees the same matrix and so the same verdict.
struct exchange_plan {
  std::vector<std::int64_t> send_count, send_offset;  // per destination rank: keys of the sorted run
  std::vector<std::int64_t> recv_count, recv_offset;  // per source rank: into the received buffer
};

inline cudaError_t make_exchange_plan(const std::int64_t* cuts, const shard_header* headers, int ranks, int me,
                                      exchange_plan& plan) {
  const int width = ranks + 1;
  std::int64_t target = 0;
  for (int d = 0; d <= ranks; ++d) {
    std::int64_t sum = 0;
    for (int t = 0; t < ranks; ++t) {
      const std::int64_t cut = cuts[t * width + d];
      const std::int64_t previous = d == 0 ? 0 : cuts[t * width + d - 1];
      if (cut < previous || (d == 0 && cut != 0) || (d == ranks && cut != headers[t].n_local))
        return cudaErrorInvalidValue;
      sum += cut;
    }
    if (sum != target) return cudaErrorInvalidValue;
    if (d < ranks) target += headers[d].n_local;
  }
  plan.send_count.assign(ranks, 0);
  plan.send_offset.assign(ranks, 0);
  plan.recv_count.assign(ranks, 0);
  plan.recv_offset.assign(ranks + 1, 0);
  for (int d = 0; d < ranks; ++d) {
    plan.send_offset[d] = cuts[me * width + d];
    plan.send_count[d] = cuts[me * width + d + 1] - cuts[me * width + d];
  }
  for (int s = 0; s < ranks; ++s) {
    plan.recv_count[s] = cuts[s * width + me + 1] - cuts[s * width + me];
    plan.recv_offset[s + 1] = plan.recv_offset[s] + plan.recv_count[s];
  }
  return cudaSuccess;
}

// ------------------------------------------------------------------ merge passes
// Rank d receives p sorted runs, laid out in source-rank order (run s at
// recv_offset[s]). Pass k merges neighbouring groups of 2^k runs pairwise
// (the lower ranks' group is A, so ties keep rank order: stable), until one
// run is left: ceil(log2 p) passes, ping-ponging between the buffers below,
// the last into the output. With an odd pass count, rank d's own run is not
// copied: pass 0 reads it straight from the sorted buffer (it is never
// written there); with an even count it is copied into the received buffer
// and pass 0 writes the sorted buffer.
enum class merge_buffer : int { received = 0, sorted = 1, output = 2 };

TILESORT_HD constexpr int merge_passes(int ranks) {
  int passes = 0;
  while ((1 << passes) < ranks) ++passes;
  return passes;
}
TILESORT_HD constexpr bool own_run_in_place(int ranks) { return merge_passes(ranks) % 2 == 1; }

TILESORT_HD constexpr merge_buffer merge_destination(int ranks, int pass) {
  const bool last_is_even = own_run_in_place(ranks);  // passes - 1 even
  if (last_is_even) return pass % 2 == 0 ? merge_buffer::output : merge_buffer::received;
  return pass % 2 == 0 ? merge_buffer::sorted : merge_buffer::output;
}
TILESORT_HD constexpr merge_buffer merge_source(int ranks, int pass) {
  return pass == 0 ? merge_buffer::received : merge_destination(ranks, pass - 1);
}

TILESORT_HD constexpr int merge_pairs(int ranks, int pass) {
  const int span = 2 << pass;  // runs per pair
  return (ranks + span - 1) / span;
}

// Pair `pair` of pass `pass`: A is [a_begin, a_end) and B is [a_end, b_end)
// in received-buffer positions (run_offsets: ranks + 1 prefix sums); the
// merged pair lands at [a_begin, b_end) of the destination. a_run and b_run
// name their first runs (b_run == ranks: no B, the pair is a copy).
struct merge_pair_span {
  std::int64_t a_begin, a_end, b_end;
  int a_run, b_run;
};

TILESORT_HD merge_pair_span merge_pair(const std::int64_t* run_offsets, int ranks, int pass, int pair) {
  const int group = 1 << pass;
  const int first = 2 * pair * group;
  const int middle = first + group < ranks ? first + group : ranks;
  const int last = first + 2 * group < ranks ? first + 2 * group : ranks;
  return {run_offsets[first], run_offsets[middle], run_offsets[last], first, middle};
}

// Tiles of `tile_items` outputs: pair by pair, so that no tile straddles two pairs.
TILESORT_HD std::int64_t merge_pair_tiles(const merge_pair_span& span, std::int64_t tile_items) {
  return ceil_div(span.b_end - span.a_begin, tile_items);
}
inline std::int64_t merge_pass_tiles(const std::int64_t* run_offsets, int ranks, int pass, std::int64_t tile_items) {
  std::int64_t tiles = 0;
  for (int pair = 0; pair < merge_pairs(ranks, pass); ++pair)
    tiles += merge_pair_tiles(merge_pair(run_offsets, ranks, pass, pair), tile_items);
  return tiles;
}
// A pass's kernels find their pair from its first tile (`first_tile(i)`,
// ascending in i): merge tile t belongs to the last pair whose first tile is
// at or before t (an empty pair owns no tile, and the pair after it starts
// at the same tile); pair i owns tiles + 1 splits (merge-path cuts at
// 0, T, 2T, ..., its end), numbered from first_tile(i) + i.
template <typename FirstTile>
TILESORT_HD int pair_of_tile(FirstTile first_tile, int pairs, std::int64_t tile) {
  int lo = 0, hi = pairs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (first_tile(mid) <= tile) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}
template <typename FirstTile>
TILESORT_HD int pair_of_split(FirstTile first_tile, int pairs, std::int64_t split) {
  return pair_of_tile([&](int i) { return first_tile(i) + i; }, pairs, split);
}
// The output position (merge-path diagonal) of a pair's split k: k tiles in, at most its end.
TILESORT_HD std::int64_t split_diagonal(std::int64_t k, std::int64_t total, std::int64_t tile_items) {
  const std::int64_t diagonal = k * tile_items;
  return diagonal < total ? diagonal : total;
}

// An upper bound on any pass's tiles for n outputs, and the pair entries of all passes.
TILESORT_HD constexpr std::int64_t max_merge_tiles(std::int64_t n, int ranks, std::int64_t tile_items) {
  return ceil_div(n, tile_items) + ranks;
}
TILESORT_HD constexpr int total_merge_pairs(int ranks) {
  int pairs = 0;
  for (int pass = 0; pass < merge_passes(ranks); ++pass) pairs += merge_pairs(ranks, pass);
  return pairs;
}

// ------------------------------------------------------------------ temp storage
// [control: headers, cut matrix, own cuts, received runs' offsets,
//  intervals (two sets: a round reads one, writes the other), probe results]
// [sorted keys][sorted values]
// [scratch, used three times over: the local sort's temp storage; then the
//  splitter search's probe buffers; then the received keys and values and
//  the merge passes' pair table and tile splits].
// Every region starts on a 256-byte boundary (align_temp).
struct nccl_sort_layout {
  std::size_t headers = 0, cuts = 0, own_cuts = 0, run_offsets = 0, intervals = 0, probe_globals = 0;
  std::size_t sorted_keys = 0, sorted_values = 0, scratch = 0;
  // inside scratch (offsets from d_temp):
  std::size_t probes_out = 0, probes_in = 0, probe_counts = 0;
  std::size_t received_keys = 0, received_values = 0, merge_pairs = 0, merge_splits = 0;
  std::size_t probe_slot_bytes = 0;  // the largest probe_slot: one rank's share of probes_out / probes_in
  std::size_t total = 0;
};

// The layout for `ranks` ranks and a shard of n_local items; local_sort_bytes
// is the single-GPU sort's temp storage for n_local items, pair_bytes the size
// of one merge-pair entry, tile_items the merge tile.
inline nccl_sort_layout make_nccl_sort_layout(int ranks, std::int64_t n_local, std::size_t key_bytes,
                                              std::size_t value_bytes, std::size_t local_sort_bytes,
                                              std::size_t pair_bytes, std::int64_t tile_items) {
  nccl_sort_layout l;
  const std::size_t boundaries = ranks > 1 ? std::size_t(ranks - 1) : 0;
  const std::size_t probes = boundaries * std::size_t(max_selection_probes(ranks));
  const std::size_t word = sizeof(std::int64_t);
  const std::size_t n = static_cast<std::size_t>(n_local);
  std::size_t at = 0;
  auto take = [&at](std::size_t bytes) {
    const std::size_t start = at;
    at += align_temp(bytes);
    return start;
  };
  l.headers = take(sizeof(shard_header) * std::size_t(ranks));
  l.cuts = take(word * std::size_t(ranks) * std::size_t(ranks + 1));
  l.own_cuts = take(word * std::size_t(ranks + 1));
  l.run_offsets = take(word * std::size_t(ranks + 1));
  l.intervals = take(sizeof(cut_interval) * boundaries * 2);
  l.probe_globals = take(word * probes);
  l.sorted_keys = take(key_bytes * n);
  l.sorted_values = take(value_bytes * n);
  l.scratch = at;
  // The local sort's use of scratch.
  const std::size_t local_end = l.scratch + align_temp(local_sort_bytes);
  // The splitter search's: positions and keys out, every rank's in, counts.
  l.probe_slot_bytes = make_probe_slot(ranks, max_selection_probes(ranks), key_bytes).bytes;
  l.probes_out = take(l.probe_slot_bytes);
  l.probes_in = take(l.probe_slot_bytes * std::size_t(ranks));
  l.probe_counts = take(word * probes * std::size_t(ranks));
  const std::size_t search_end = at;
  // The merge's: received items, pair table, tile splits.
  at = l.scratch;
  l.received_keys = take(key_bytes * n);
  l.received_values = take(value_bytes * n);
  l.merge_pairs = take(pair_bytes * std::size_t(total_merge_pairs(ranks)));
  l.merge_splits = take(word * std::size_t(max_merge_tiles(n_local, ranks, tile_items) + ranks + 1));
  const std::size_t merge_end = at;
  std::size_t end = local_end > search_end ? local_end : search_end;
  l.total = merge_end > end ? merge_end : end;
  return l;
}

}  // namespace tilesort::detail
