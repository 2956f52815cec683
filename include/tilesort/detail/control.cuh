// detail/control.cuh — the control words of the sorts that decide on the
// device: counters and verdicts that one kernel writes and later kernels on
// the same stream read to decide whether, and how much, to run. Plain data;
// nothing here launches or reads anything.
//
//   * merge_control: the counters of one early-exit merge (the locality
//     sort, and the long segments of the segmented sort), zeroed before its
//     first kernel; sort_stats is read from them.
//   * probe_verdict: the front door's probe (device/sort.cuh) on whether the
//     keys look sorted. It lives inside the locality sort's merge_control,
//     which the probe zeroes in place of the locality sort's memset: the
//     locality sort's kernels and the table's sort's kernels (whose skip
//     word is `looks_sorted`, detail/launch.cuh's skip_requested) read it.
#pragma once

namespace tilesort::detail {

// The most merge passes a sort records (max_merge_passes): 2^40
// blocksort tiles with pairwise passes.
inline constexpr int max_merge_passes = 40;

// The probe's verdict, written by the probe kernel alone: exactly one of
// the two words is set.
struct probe_verdict {
  unsigned looks_sorted;    // the locality sort runs; the table's sort returns at once
  unsigned looks_unsorted;  // the locality sort's blocksort returns at once
};

struct merge_pass_control {
  unsigned long long merge_tiles;
  unsigned long long window_merges;
  unsigned long long merged_keys;
  unsigned job_count;  // jobs queued by the job (or boundary) phase
  // Bit l set: some tile of this pass's input lies in buffer l (written by
  // the blocksort for pass 0, by the job phase of the pass before for the
  // others). One bit alone: every key is in that buffer (uniform_location).
  unsigned location_mix;
};

// Counters of one early-exit merge; zeroed (cudaMemsetAsync, or by the
// probe) before the first kernel.
struct merge_control {
  merge_pass_control boundary;  // the window merges at blocksort-tile boundaries, before pass 0
  merge_pass_control pass[max_merge_passes];
  // Blocksort-tile boundaries inside a segment whose keys are out of order
  // after the blocksort and that no boundary window fixes (the boundary
  // phase counts them). None: every segment is sorted after the boundary
  // windows, and no pass runs.
  unsigned out_of_order_boundaries;
  // The most merge passes any segment needs (the blocksort records it):
  // later passes do not run.
  unsigned needed_passes;
  // Blocksort tiles that looked local. None (random keys) in a locality
  // sort: the dense passes (locality_dense_passes) sort them.
  unsigned local_tiles;
  // The tiles each k-way dense pass has handed out (launch_locality_dense_kway).
  unsigned kway_tiles_taken[max_merge_passes];
  // Blocksort tiles that are not final after the blocksort: out of order in
  // the input, written to the temp buffer, or out of order with the tile
  // before them in their segment. None (sorted input): the passes kernel
  // returns at once.
  unsigned unfinished_tiles;
  unsigned long long blocksort_tiles;
  unsigned long long presorted_tiles;
  unsigned long long blocksort_keys;
  unsigned long long final_copy_tiles;
  unsigned long long final_copy_keys;
  unsigned barrier_arrivals;  // the passes kernel's grid_barrier
  // Where the front door probed the keys: its verdict. Not probed: zero.
  // Unsorted, the probe also sets local_tiles = 1 and unfinished_tiles = 0,
  // which stop every kernel after the blocksort.
  probe_verdict probe;
};

}  // namespace tilesort::detail
