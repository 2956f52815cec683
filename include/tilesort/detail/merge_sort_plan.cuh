// detail/merge_sort_plan.cuh — everything the device merge sort computes
// without touching the GPU: how many passes, which buffer each pass reads and
// writes, which input slices a merge tile consumes, how the k-way passes cut
// their tiles (the searches at the samples), the temp-storage layout and
// the shared-memory padding of the blocked <-> striped transposes. All of it is
// integer arithmetic or searches, __host__ __device__, and host-tested
// (tests/host/merge_sort_plan.cu).
//
// Vocabulary (n keys, T = blocksort tile, M = merge tile, pass p = 0, 1, ...):
//
//   step 0         blocksort: tiles of T keys sorted on chip   -> runs of T
//   step p + 1     merge pass p: runs of R = T << p merge in pairs -> runs of 2R
//
//   merge group (pass p): [g·2R, (g+1)·2R) ∩ [0, n) = A ++ B, A the first run,
//                         B the second (empty or shorter at the end of the array)
//   merge tile m:         outputs [m·M, (m+1)·M) ∩ [0, n) of the pass. M divides
//                         2T, hence 2R: a merge tile never straddles two groups.
//   partition m:          absolute index into A of the first A key merge tile m
//                         takes (one merge-path search per tile boundary).
//
// Buffers: the last step must write keys_out, so step k writes keys_out when
// (merge_passes - k) is even and the temp buffer otherwise; step k reads what
// step k - 1 wrote (step 0 reads keys_in). No final copy is ever needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "config.cuh"
#include "error.cuh"
#include "merge_path.cuh"

namespace tilesort::detail {

TILESORT_HD constexpr std::int64_t merge_sort_min(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// ------------------------------------------------------------------ passes
struct merge_sort_plan {
  std::int64_t n = 0;
  int tile_items = 1;            // T: keys per blocksort tile
  int merge_tile_items = 1;      // M: outputs per merge tile
  std::int64_t tiles = 0;        // blocksort tiles: ceil(n / T)
  int merge_passes = 0;          // ceil(log2(tiles)); 0 when everything fits one tile
  std::int64_t merge_tiles = 0;  // merge tiles per pass: ceil(n / M) (0 without merge passes)

  // Sorted run length that merge pass `pass` reads (it writes runs twice as long).
  TILESORT_HD constexpr std::int64_t run_length(int pass) const { return std::int64_t(tile_items) << pass; }

  // Step 0 is the blocksort, step k >= 1 is merge pass k - 1. True when step k
  // writes keys_out (and values_out), false when it writes the temp buffers.
  TILESORT_HD constexpr bool writes_output(int step) const { return ((merge_passes - step) & 1) == 0; }

  // Merge-path partitions per pass: one per merge-tile boundary, both ends included.
  TILESORT_HD constexpr std::int64_t partition_count() const { return merge_passes > 0 ? merge_tiles + 1 : 0; }
};

// `merge_tile_items` must divide 2 * `tile_items` (both > 0) so that merge
// tiles never straddle merge groups; the device code static_asserts this for
// its policy.
TILESORT_HD constexpr merge_sort_plan make_merge_sort_plan(std::int64_t n, int tile_items, int merge_tile_items) {
  merge_sort_plan plan;
  plan.n = n < 0 ? 0 : n;
  plan.tile_items = tile_items;
  plan.merge_tile_items = merge_tile_items;
  plan.tiles = ceil_div(plan.n, tile_items);
  int passes = 0;
  while ((std::int64_t(1) << passes) < plan.tiles) ++passes;
  plan.merge_passes = passes;
  plan.merge_tiles = passes > 0 ? ceil_div(plan.n, merge_tile_items) : 0;
  return plan;
}

// Times the sort reads and writes every key: the blocksort plus each merge pass
// (1 for n == 1: a copy; 0 for n == 0). Bytes moved per key ~ 2 * passes * key size
// (pairs: plus the values, which every pass also moves once). Plan:
// merge_sort_plan or kway_merge_sort_plan.
template <typename Plan>
TILESORT_HD constexpr int merge_sort_passes(const Plan& plan) {
  return plan.n <= 0 ? 0 : 1 + plan.merge_passes;
}

// ------------------------------------------------------------------ merge ranges
// The two sorted runs merged into the group that holds output index `index`.
struct merge_sort_group {
  std::int64_t begin;  // first index of A
  std::int64_t a_end;  // end of A = begin of B
  std::int64_t end;    // end of B
};

TILESORT_HD constexpr merge_sort_group merge_sort_group_of(std::int64_t index, std::int64_t run, std::int64_t n) {
  const std::int64_t begin = index / (2 * run) * (2 * run);
  return {begin, merge_sort_min(begin + run, n), merge_sort_min(begin + 2 * run, n)};
}

// Where the merge-path search for the output boundary `boundary` (0 <= boundary
// <= n) looks: among the group's outputs, the first `diagonal` take
// merge_path(A, a_len, B, b_len, diagonal) keys from A; the partition is
// a_begin + that count.
struct merge_partition_query {
  std::int64_t a_begin, a_len;
  std::int64_t b_begin, b_len;
  std::int64_t diagonal;
};

TILESORT_HD constexpr merge_partition_query merge_sort_partition_query(std::int64_t boundary, std::int64_t run,
                                                                       std::int64_t n) {
  const merge_sort_group g = merge_sort_group_of(boundary, run, n);
  return {g.begin, g.a_end - g.begin, g.a_end, g.end - g.a_end, boundary - g.begin};
}

// Partition `boundary_tile` of a pass (0 <= boundary_tile <= merge tiles):
// the absolute index into A of the first A key that merge tile
// `boundary_tile` takes. One 64-bit merge-path search over the pass's input:
// binary, or Ways-way when a group of lanes searches together (`ballot`, see
// merge_path_kway; every member gets the answer).
template <int Ways = 32, typename KeyIter, typename Compare, typename Ballot = binary_search_tag>
TILESORT_HD std::int64_t merge_sort_partition(KeyIter keys, std::int64_t n, std::int64_t run, int merge_tile_items,
                                              std::int64_t boundary_tile, Compare comp, Ballot ballot = {}) {
  const merge_partition_query q =
      merge_sort_partition_query(merge_sort_min(boundary_tile * merge_tile_items, n), run, n);
  if constexpr (std::is_same_v<Ballot, binary_search_tag>) {
    return q.a_begin + merge_path<std::int64_t>(keys + q.a_begin, q.a_len, keys + q.b_begin, q.b_len, q.diagonal, comp);
  } else {
    return q.a_begin + merge_path_kway<Ways, std::int64_t>(keys + q.a_begin, q.a_len, keys + q.b_begin, q.b_len,
                                                           q.diagonal, comp, ballot);
  }
}

// One merge tile's work: merge A[a_begin, a_end) with B[b_begin, b_end) into
// outputs [out_begin, out_end). The slices hold exactly out_end - out_begin
// keys together, so 32-bit counts suffice inside a tile.
struct merge_tile_slices {
  std::int64_t a_begin, a_end;
  std::int64_t b_begin, b_end;
  std::int64_t out_begin, out_end;
  TILESORT_HD constexpr int a_count() const { return static_cast<int>(a_end - a_begin); }
  TILESORT_HD constexpr int b_count() const { return static_cast<int>(b_end - b_begin); }
  TILESORT_HD constexpr int count() const { return static_cast<int>(out_end - out_begin); }
};

// Merge tile `tile` of a pass with run length `run`, from the partitions at its
// two boundaries (partition_begin = partitions[tile], partition_end =
// partitions[tile + 1]). A tile that ends its group takes the rest of A (the
// partition at a group boundary belongs to the next group and says 0 there).
TILESORT_HD constexpr merge_tile_slices merge_tile_range(std::int64_t tile, int merge_tile_items, std::int64_t run,
                                                         std::int64_t n, std::int64_t partition_begin,
                                                         std::int64_t partition_end) {
  const std::int64_t out_begin = tile * merge_tile_items;
  const std::int64_t out_end = merge_sort_min(out_begin + merge_tile_items, n);
  const merge_sort_group g = merge_sort_group_of(out_begin, run, n);
  const std::int64_t a_begin = partition_begin;
  const std::int64_t a_end = out_end == g.end ? g.a_end : partition_end;
  // Outputs before out_begin in this group = (a_begin - g.begin) + (b_begin - g.a_end).
  return {a_begin, a_end, g.a_end + (out_begin - a_begin), g.a_end + (out_end - a_end), out_begin, out_end};
}

// ------------------------------------------------------------------ k-way merge passes
// A k-way pass merges groups of K = `ways` consecutive runs of R keys into
// runs of K·R (the last group may hold fewer or shorter runs). Its tiles are
// cut at samples: every G-th key of every run (G = `stride`, which divides R)
// is a sample; the samples of a group, ranked in the merged order (stable:
// key, then run, then position), cut the group at ranks 0, Q, 2Q, ...
// (Q = `cut_samples`). A cut is K split positions, one per run: how many of
// the run's keys come before that sample. Between two cuts each run holds
// at most (its samples there + 1)·G - 1 keys, so a tile holds at most
// (Q + K)·G keys (max_tile_items) and on average Q·G.
// The shape carries what the kernels would otherwise divide for (64-bit
// divisions cost dozens of instructions per thread): strides are powers of
// two, and the cut counts are worked out once on the host.
struct kway_pass_shape {
  std::int64_t n = 0;
  std::int64_t run = 1;                 // R: sorted input runs
  int ways = 2;                         // K
  int stride_shift = 0;                 // G = 1 << stride_shift
  int run_samples_shift = 0;            // R / G = 1 << run_samples_shift
  int cut_samples = 1;                  // Q
  std::int64_t groups = 0;              // ceil(n / (K·R))
  std::int64_t cuts_per_group = 0;      // cut slots of a full group
  std::int64_t last_group_cuts = 0;     // cuts of the last group (<= cuts_per_group)

  TILESORT_HD constexpr int stride() const { return 1 << stride_shift; }
  TILESORT_HD constexpr std::int64_t group_items() const { return run * ways; }
  TILESORT_HD constexpr std::int64_t run_samples() const { return std::int64_t(1) << run_samples_shift; }
  TILESORT_HD constexpr std::int64_t tiles() const { return groups * cuts_per_group; }
  // One slot per possible sample (those past n are skipped).
  TILESORT_HD constexpr std::int64_t sample_slots() const { return groups * ways * run_samples(); }
  TILESORT_HD constexpr int max_tile_items() const { return (cut_samples + ways) * stride(); }
  // Run m of group g: where it starts and how many keys it has (0 past n).
  TILESORT_HD constexpr std::int64_t run_begin(std::int64_t group, int m) const {
    return group * group_items() + std::int64_t(m) * run;
  }
  TILESORT_HD constexpr std::int64_t run_length(std::int64_t group, int m) const {
    const std::int64_t left = n - run_begin(group, m);
    return left <= 0 ? 0 : merge_sort_min(left, run);
  }
  TILESORT_HD constexpr std::int64_t group_cuts(std::int64_t group) const {
    return group + 1 == groups ? last_group_cuts : cuts_per_group;
  }
};

// `stride` and run / stride must be powers of two.
TILESORT_HD constexpr kway_pass_shape make_kway_pass_shape(std::int64_t n, std::int64_t run, int ways, int stride,
                                                           int cut_samples) {
  kway_pass_shape shape;
  shape.n = n;
  shape.run = run;
  shape.ways = ways;
  shape.stride_shift = log2_floor(stride);
  shape.run_samples_shift = log2_floor(run / stride);
  shape.cut_samples = cut_samples;
  shape.groups = ceil_div(n, run * ways);
  shape.cuts_per_group = ceil_div(ways * (run / stride), cut_samples);
  std::int64_t samples = 0;
  for (int m = 0; m < ways; ++m) samples += ceil_div(shape.run_length(shape.groups - 1, m), stride);
  shape.last_group_cuts = ceil_div(samples, cut_samples);
  return shape;
}

// Whether a key of run `m` comes before key `x` of run `j` in the stable
// merged order (m == j never asked: positions decide there).
template <typename Key, typename Compare>
TILESORT_HD bool kway_precedes(const Key& y, int m, const Key& x, int j, Compare comp) {
  return m < j ? !comp(x, y) : comp(y, x);
}

// How many keys of run[0, length) come before key x of run j (this run is m
// != j), given that `samples_before` of the run's samples (every 2^shift-th
// key) do: a binary search between two samples.
template <typename KeyIter, typename Key, typename Compare>
TILESORT_HD std::int64_t kway_split(KeyIter run, std::int64_t length, int m, const Key& x, int j,
                                    std::int64_t samples_before, int shift, Compare comp) {
  if (samples_before == 0) return 0;
  return partition_point_kway<1>(  // one searcher: binary
      ((samples_before - 1) << shift) + 1, merge_sort_min(samples_before << shift, length),
      [&](std::int64_t i) { return !kway_precedes(run[i], m, x, j, comp); }, binary_search_tag{});
}

// How many of run m's samples (positions 0, 2^shift, 2·2^shift, ... < length)
// come before key x of run j != m: a binary search.
template <typename KeyIter, typename Key, typename Compare>
TILESORT_HD std::int64_t kway_samples_before(KeyIter run, std::int64_t length, int m, const Key& x, int j, int shift,
                                             Compare comp) {
  return partition_point_kway<1>(  // one searcher: binary
      std::int64_t(0), ((length - 1) >> shift) + 1,
      [&](std::int64_t i) { return !kway_precedes(run[i << shift], m, x, j, comp); }, binary_search_tag{});
}

// The merge sort's k-way passes: tiles of T keys sorted on chip, then
// ceil(log_K(tiles)) passes, pass p merging runs of T·K^p.
struct kway_merge_sort_plan {
  std::int64_t n = 0;
  int tile_items = 1;  // T
  int ways = 2, stride = 1, cut_samples = 1;
  std::int64_t tiles = 0;
  int merge_passes = 0;
  TILESORT_HD constexpr std::int64_t run_length(int pass) const {
    std::int64_t run = tile_items;
    for (int p = 0; p < pass; ++p) run *= ways;
    return run;
  }
  TILESORT_HD constexpr kway_pass_shape pass_shape(int pass) const {
    return make_kway_pass_shape(n, run_length(pass), ways, stride, cut_samples);
  }
  TILESORT_HD constexpr bool writes_output(int step) const { return ((merge_passes - step) & 1) == 0; }
  // Entries of the partitions buffer: the cut positions of the largest pass
  // (K per tile).
  TILESORT_HD constexpr std::int64_t partition_count() const {
    std::int64_t most = 0;
    for (int p = 0; p < merge_passes; ++p) {
      const std::int64_t c = pass_shape(p).tiles() * ways;
      most = c > most ? c : most;
    }
    return most;
  }
};

TILESORT_HD constexpr kway_merge_sort_plan make_kway_merge_sort_plan(std::int64_t n, int tile_items, int ways,
                                                                    int stride, int cut_samples) {
  kway_merge_sort_plan plan;
  plan.n = n < 0 ? 0 : n;
  plan.tile_items = tile_items;
  plan.ways = ways;
  plan.stride = stride;
  plan.cut_samples = cut_samples;
  plan.tiles = ceil_div(plan.n, tile_items);
  std::int64_t runs = plan.tiles;
  while (runs > 1) {
    runs = ceil_div(runs, ways);
    ++plan.merge_passes;
  }
  return plan;
}

// ------------------------------------------------------------------ temp storage
// [keys: n keys][values: n values (pairs only)][partitions: int64 per tile boundary,
// or K per tile for the k-way passes],
// each buffer 256-byte aligned. Nothing is needed when the sort fits one tile,
// but total_bytes is never 0: a caller that allocates exactly temp_bytes must
// get a non-null pointer, or its second call would be another size query.
struct merge_sort_temp_layout {
  std::size_t keys_offset = 0, keys_bytes = 0;
  std::size_t values_offset = 0, values_bytes = 0;
  std::size_t partitions_offset = 0, partitions_bytes = 0;
  std::size_t total_bytes = 1;
};

// Plan: merge_sort_plan or kway_merge_sort_plan (partition_count() int64s).
template <typename Plan>
TILESORT_HD constexpr merge_sort_temp_layout make_merge_sort_temp_layout(const Plan& plan, std::size_t key_size,
                                                                         std::size_t value_size) {
  merge_sort_temp_layout layout;
  if (plan.merge_passes == 0) return layout;
  const std::size_t n = static_cast<std::size_t>(plan.n);
  layout.keys_offset = 0;
  layout.keys_bytes = n * key_size;
  layout.values_offset = align_temp(layout.keys_offset + layout.keys_bytes);
  layout.values_bytes = n * value_size;
  layout.partitions_offset = align_temp(layout.values_offset + layout.values_bytes);
  layout.partitions_bytes = static_cast<std::size_t>(plan.partition_count()) * sizeof(std::int64_t);
  layout.total_bytes = layout.partitions_offset + layout.partitions_bytes;
  return layout;
}

// Typed views of the carved temp storage (null where the layout has no bytes).
template <typename Key, typename Value>
struct merge_sort_buffers {
  Key* keys;
  Value* values;
  std::int64_t* partitions;
};

template <typename Key, typename Value>
TILESORT_HD merge_sort_buffers<Key, Value> carve_merge_sort_temp(void* d_temp, const merge_sort_temp_layout& layout) {
  char* base = static_cast<char*>(d_temp);
  return {layout.keys_bytes ? reinterpret_cast<Key*>(base + layout.keys_offset) : nullptr,
          layout.values_bytes ? reinterpret_cast<Value*>(base + layout.values_offset) : nullptr,
          layout.partitions_bytes ? reinterpret_cast<std::int64_t*>(base + layout.partitions_offset) : nullptr};
}

// ------------------------------------------------------------------ shared-memory transposes
// Blocked -> striped (and back) through shared memory: thread t writes items
// t·IPT + i, then reads items t + k·threads (or the reverse). Without padding
// the blocked side has a lane stride of IPT·sizeof(T) bytes: an IPT-way bank
// conflict for power-of-two IPT. One 4-byte word of padding after every 128
// bytes (one bank row) skews the rows of the blocked access onto distinct
// banks, while each striped access still reads one contiguous row. The host
// test checks conflict freedom with a bank model for 1-, 2-, 4- and 8-byte
// items and the policy's items per thread.
template <typename T>
inline constexpr int transpose_pad_period = sizeof(T) <= 128 ? static_cast<int>(128 / sizeof(T)) : 1;  // elements
template <typename T>
inline constexpr int transpose_pad_amount = sizeof(T) >= 4 ? 1 : static_cast<int>(4 / sizeof(T));  // elements

template <typename T>
TILESORT_HD constexpr int transpose_slot(int index) {
  return index + index / transpose_pad_period<T> * transpose_pad_amount<T>;
}

// Elements of a padded array that holds indices [0, count).
template <typename T>
TILESORT_HD constexpr int transpose_slots(int count) {
  return transpose_slot<T>(count);
}

}  // namespace tilesort::detail
