// distributed/nccl_sort.cuh — tilesort::nccl::sort_keys / sort_pairs: a
// stable sort of an array sharded over the ranks of an NCCL communicator,
// one shard per GPU, that keeps each rank's shard size (CMake target
// tilesort::nccl; the core library does not need NCCL).
//
// The algorithm, per rank (p ranks, n_local items here, N in all):
//  1. header: one all-gather of a fixed 40-byte header (n_local, key and
//     value sizes, this rank's argument check); the host waits for it
//     (host sync 1) and every rank returns the same error if any rank's
//     header is bad, before anything else is enqueued;
//  2. local sort: tilesort::sort_keys / sort_pairs (the front door: the
//     fastest single-GPU sort we have) of the shard into temp storage;
//  3. splitters: exact cuts by a distributed multi-sequence selection. For
//     every rank boundary, each rank probes its own run at evenly spaced
//     positions, all ranks count every probe against their runs (binary
//     searches, ties broken by rank), a reduce-scatter sums the counts into
//     the probes' global positions, and each rank narrows its intervals:
//     1 to 3 rounds of (all-gather, reduce-scatter) for shards up to 2^31
//     keys on up to 8 ranks (detail/nccl_sort_plan.cuh). The cuts are
//     gathered (p × (p + 1) integers) and the host waits for them (host
//     sync 2: the exchange sizes NCCL needs on the host);
//  4. exchange: one all-to-all, grouped ncclSend / ncclRecv of bytes (any
//     trivially copyable key and value); rank d receives p sorted runs,
//     exactly n_local items in all;
//  5. merge: ceil(log2 p) passes of pairwise merge-path merges of the runs
//     (ties from the lower rank: stable in (rank, index) order), the last
//     into keys_out / values_out. Where the pass count is odd the own run is
//     merged from where the local sort left it, never copied.
// Cost per rank: the local sort, (p-1)/p · n_local · item bytes over the
// network each way, ceil(log2 p) merge passes, and 2 + 2 · rounds small
// collectives; docs/tuning/distributed.md has the model and the measurements.
//
// Everything runs on `stream` except the two host waits above: the call is
// not capturable in a CUDA graph. Both waits poll the communicator for
// asynchronous errors (and an optional deadline) instead of blocking blindly.
//
// Errors. An argument error on any rank (null pointers, n_local < 0, too
// little temp storage, a different key or value size on another rank, a
// shard past 2^40 keys) makes every rank return it from the header exchange,
// with nothing written. A comparator that is not a strict weak order, or not
// the same on every rank, makes every rank return cudaErrorInvalidValue
// before the exchange. A null communicator, a failed ncclCommCount /
// ncclCommUserRank, or a stream of another device than the communicator's
// return at once on that rank alone: the other ranks then wait in the
// header exchange, as they would for any rank that does not call. An NCCL
// failure returns cudaErrorUnknown (cudaErrorInvalidValue for NCCL's
// invalid-argument results) and, through sort_options::nccl_result, NCCL's
// own result; a deadline returns cudaErrorTimeout. After either, the
// communicator may be inside an unfinished collective: call
// ncclCommAbort(comm) on every rank (it returns once this rank's NCCL work
// is torn down, and makes the peers' collectives fail rather than hang),
// synchronise or destroy `stream`, then build a new communicator
// (ncclCommInitRank) before sorting again. keys_out and values_out are
// unspecified then.
//
// One host thread (or process) per rank: the call blocks its thread in the
// two waits, so a thread that drives several GPUs must give each rank its
// own thread. Every rank calls with temp storage (the size query,
// d_temp == nullptr, is local and never communicates).
//
//   std::size_t temp_bytes = 0;
//   tilesort::nccl::sort_keys(nullptr, temp_bytes, d_keys, d_keys, n_local, comm);   // size query
//   cudaMallocAsync(&d_temp, temp_bytes, stream);
//   tilesort::nccl::sort_keys(d_temp, temp_bytes, d_keys, d_keys, n_local, comm, tilesort::less{}, stream);
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/nccl_sort_plan.cuh"
#include "../detail/temp_storage.cuh"
#include "../device/sort.cuh"
#include "nccl_sort/comm.cuh"
#include "nccl_sort/kernels.cuh"

/// @namespace tilesort::nccl
/// The sorts of an array sharded over the ranks of an NCCL communicator
/// (target tilesort::nccl, header `tilesort/distributed/nccl_sort.cuh`).

namespace tilesort {
namespace nccl {

/// Events that tilesort::nccl::sort_keys / sort_pairs record on the stream
/// at the end of each phase (any may be null: not recorded), for timing the
/// phases with cudaEventElapsedTime.
///
/// @code
/// tilesort::nccl::phase_events events{start, sorted, split, exchanged, merged};   // created by the caller
/// tilesort::nccl::sort_options options;
/// options.events = &events;
/// @endcode
struct phase_events {
  cudaEvent_t start = nullptr;       ///< at entry, before the header exchange
  cudaEvent_t local_sort = nullptr;  ///< after the header exchange and the local sort
  cudaEvent_t splitters = nullptr;   ///< after the splitter search and the cut gather
  cudaEvent_t exchange = nullptr;    ///< after the all-to-all
  cudaEvent_t merge = nullptr;       ///< after the merge passes (the end)
};

/// What one call did, filled on return when sort_options::report is set.
///
/// @code
/// tilesort::nccl::sort_report report;
/// options.report = &report;   // then report.send_counts[d]: items sent to rank d
/// @endcode
struct sort_report {
  int ranks = 0;                          ///< communicator size
  int rank = 0;                           ///< this rank
  std::int64_t n_total = 0;               ///< items on all ranks
  int search_rounds = 0;                  ///< splitter-search rounds
  std::int64_t search_probes = 0;         ///< probes per boundary per rank per round
  std::vector<std::int64_t> send_counts;  ///< items sent to each rank (the own rank's stay local)
  std::vector<std::int64_t> recv_counts;  ///< items received from each rank
};

/// Optional inputs and outputs of tilesort::nccl::sort_keys / sort_pairs.
///
/// @code
/// ncclResult_t why = ncclSuccess;
/// tilesort::nccl::sort_options options;
/// options.nccl_result = &why;
/// options.timeout_ms = 60000;   // give up waiting for the peers after a minute
/// @endcode
struct sort_options {
  ncclResult_t* nccl_result = nullptr;   ///< receives the first NCCL failure (ncclSuccess if none)
  const phase_events* events = nullptr;  ///< events to record between phases
  sort_report* report = nullptr;         ///< filled on return
  std::int64_t timeout_ms = 0;           ///< deadline of each host wait; 0: none
};

namespace detail {

using tilesort::detail::no_value;

template <typename Value>
inline constexpr bool has_values = !std::is_same_v<Value, no_value>;

// The single-GPU sort of the shard: tilesort's front door.
template <typename Key, typename Value, typename Compare>
cudaError_t local_sort(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                       const Value* values_in, Value* values_out, std::int64_t n, Compare comp, cudaStream_t stream) {
  if constexpr (has_values<Value>) {
    return tilesort::sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  } else {
    return tilesort::sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, comp, stream);
  }
}

template <typename Key, typename Value>
tilesort::detail::nccl_sort_layout layout_for(int ranks, std::int64_t n_local, std::size_t local_sort_bytes) {
  return tilesort::detail::make_nccl_sort_layout(ranks, n_local, sizeof(Key), has_values<Value> ? sizeof(Value) : 0,
                                                 local_sort_bytes, sizeof(merge_pair_entry<Key, Value>),
                                                 merge_policy<Key>::tile_items);
}

inline void record(cudaEvent_t event, cudaStream_t stream) {
  if (event != nullptr) (void)cudaEventRecord(event, stream);
}

template <typename T>
T* at(void* base, std::size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

// Steps 3 (after the local sort): the splitter search, then the cut gather
// and the merge plan, all enqueued; the host then waits (sync 2).
template <typename Key, typename Value, typename Compare>
cudaError_t search_cuts(const comm_context& c, void* d_temp, const tilesort::detail::nccl_sort_layout& l,
                        int ranks, int me, std::int64_t n_total,
                        const tilesort::detail::selection_plan& plan, Compare comp, cudaStream_t stream) {
  constexpr int step_threads = 256;
  const Key* run = at<const Key>(d_temp, l.sorted_keys);
  search_view<Key> v;
  v.headers = at<const tilesort::detail::shard_header>(d_temp, l.headers);
  v.ranks = ranks;
  v.me = me;
  v.n_total = n_total;
  v.probes = plan.probes;
  v.intervals = at<tilesort::detail::cut_interval>(d_temp, l.intervals);
  const int boundaries = ranks - 1;
  const std::size_t probes_per_rank = std::size_t(boundaries) * std::size_t(plan.probes);
  const tilesort::detail::probe_slot slot = tilesort::detail::make_probe_slot(ranks, plan.probes, sizeof(Key));
  v.probe_positions_out = at<std::int64_t>(d_temp, l.probes_out);
  v.probe_keys_out = at<Key>(d_temp, l.probes_out + slot.keys_offset);
  v.probes_in = at<const unsigned char>(d_temp, l.probes_in);
  v.slot_bytes = slot.bytes;
  v.slot_keys_offset = slot.keys_offset;
  v.probe_counts = at<std::int64_t>(d_temp, l.probe_counts);
  v.probe_globals = at<const std::int64_t>(d_temp, l.probe_globals);
  v.own_cuts = at<std::int64_t>(d_temp, l.own_cuts);
  const std::size_t all_probes = probes_per_rank * std::size_t(ranks);
  const int count_blocks = static_cast<int>((all_probes + 255) / 256);
  const dim3 probe_grid(static_cast<unsigned>((plan.probes + step_threads - 1) / step_threads), boundaries);
  for (int round = 0; round <= plan.rounds; ++round) {
    const bool probe = round < plan.rounds;
    cut_search_step_kernel<step_threads, Key>
        <<<probe ? probe_grid : dim3(1, boundaries), step_threads, 0, stream>>>(v, run, round, probe);
    TILESORT_RETURN_IF_ERROR(cudaGetLastError());
    if (!probe) break;
    TILESORT_RETURN_IF_ERROR(
        c.all_gather(at<void>(d_temp, l.probes_out), at<void>(d_temp, l.probes_in), slot.bytes, stream));
    probe_count_kernel<<<count_blocks, 256, 0, stream>>>(v, run, comp);
    TILESORT_RETURN_IF_ERROR(cudaGetLastError());
    TILESORT_RETURN_IF_ERROR(c.reduce_scatter_sum(v.probe_counts, at<std::int64_t>(d_temp, l.probe_globals),
                                                  probes_per_rank, stream));
  }
  return c.all_gather(v.own_cuts, at<void>(d_temp, l.cuts), sizeof(std::int64_t) * std::size_t(ranks + 1), stream);
}

// Step 5: the merge passes over the received runs.
template <typename Key, typename Value, typename Compare>
cudaError_t merge_runs(void* d_temp, const tilesort::detail::nccl_sort_layout& l, int ranks,
                       const std::vector<std::int64_t>& run_offsets, Compare comp, cudaStream_t stream) {
  using policy = merge_policy<Key>;
  using entry = merge_pair_entry<Key, Value>;
  const auto* pairs = at<const entry>(d_temp, l.merge_pairs);
  auto* splits = at<std::int64_t>(d_temp, l.merge_splits);
  int first_pair = 0;
  for (int pass = 0; pass < tilesort::detail::merge_passes(ranks); ++pass) {
    const int pair_count = tilesort::detail::merge_pairs(ranks, pass);
    const std::int64_t tiles = tilesort::detail::merge_pass_tiles(run_offsets.data(), ranks, pass, policy::tile_items);
    if (tiles > 0) {
      const std::int64_t split_count = tiles + pair_count;
      merge_split_kernel<policy><<<static_cast<unsigned>((split_count + 255) / 256), 256, 0, stream>>>(
          pairs + first_pair, pair_count, splits, split_count, comp);
      TILESORT_RETURN_IF_ERROR(cudaGetLastError());
      constexpr auto merge_tile = merge_tile_kernel<policy, Key, Value, Compare>;
      constexpr std::size_t shared = sizeof(merge_tile_storage<policy, Key, Value>);
      static_assert(shared <= 227 * 1024, "a distributed merge tile of these keys and values exceeds shared memory");
      TILESORT_RETURN_IF_ERROR(tilesort::detail::allow_dynamic_shared_memory(merge_tile, shared));
      merge_tile<<<static_cast<unsigned>(tiles), policy::threads, shared, stream>>>(pairs + first_pair, pair_count,
                                                                                   splits, comp);
      TILESORT_RETURN_IF_ERROR(cudaGetLastError());
    }
    first_pair += pair_count;
  }
  return cudaSuccess;
}

// This rank's argument check (step 1's status).
template <typename Key, typename Value>
cudaError_t check_local(void* d_temp, std::size_t temp_bytes, const Key* keys_in, Key* keys_out,
                        const Value* values_in, Value* values_out, std::int64_t n_local, std::size_t needed) {
  TILESORT_RETURN_IF_ERROR(
      tilesort::detail::check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, n_local));
  if (n_local > tilesort::detail::max_shard_keys) return cudaErrorInvalidValue;
  return tilesort::detail::check_temp(d_temp, temp_bytes, needed);
}

// The whole call: size query, or steps 1-5.
template <typename Key, typename Value, typename Compare>
cudaError_t nccl_sort(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, const Value* values_in,
                      Value* values_out, std::int64_t n_local, ncclComm_t comm, Compare comp, cudaStream_t stream,
                      const sort_options& options) {
  static_assert(std::is_trivially_copyable_v<Key>, "keys travel as bytes: Key must be trivially copyable");
  static_assert(std::is_trivially_copyable_v<Value>, "values travel as bytes: Value must be trivially copyable");
  namespace plan = tilesort::detail;
  if (options.nccl_result != nullptr) *options.nccl_result = ncclSuccess;
  const comm_context c{comm, options.nccl_result, options.timeout_ms};
  if (comm == nullptr) return cudaErrorInvalidValue;
  int ranks = 0, me = 0, comm_device = 0, device = 0;
  TILESORT_RETURN_IF_ERROR(c.check(ncclCommCount(comm, &ranks)));
  TILESORT_RETURN_IF_ERROR(c.check(ncclCommUserRank(comm, &me)));
  TILESORT_RETURN_IF_ERROR(c.check(ncclCommCuDevice(comm, &comm_device)));
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  if (device != comm_device) return cudaErrorInvalidDevice;

  const bool query = d_temp == nullptr;
  const phase_events events = options.events != nullptr ? *options.events : phase_events{};
  if (ranks == 1) {  // one rank: the local sort is the whole sort
    if (!query) record(events.start, stream);
    TILESORT_RETURN_IF_ERROR(
        local_sort(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n_local, comp, stream));
    if (query) return cudaSuccess;
    for (cudaEvent_t e : {events.local_sort, events.splitters, events.exchange, events.merge}) record(e, stream);
    if (options.report != nullptr) *options.report = sort_report{1, 0, n_local, 0, 0, {0}, {n_local}};
    return cudaSuccess;
  }

  // Temp layout (the local sort's share sized by its own query).
  std::size_t local_bytes = 0;
  const cudaError_t sizing =
      n_local < 0 ? cudaErrorInvalidValue
                  : local_sort<Key, Value>(nullptr, local_bytes, nullptr, nullptr, nullptr, nullptr, n_local, comp, stream);
  if (query) {
    TILESORT_RETURN_IF_ERROR(sizing);
    temp_bytes = layout_for<Key, Value>(ranks, n_local, local_bytes).total;
    return cudaSuccess;
  }
  const plan::nccl_sort_layout l = layout_for<Key, Value>(ranks, sizing == cudaSuccess ? n_local : 0, local_bytes);
  // A non-sticky error an earlier call left behind is not this call's: cleared
  // here, it cannot fail the launch checks below and so keep this rank out of
  // the header exchange the others wait in (a sticky one fails the launches anyway).
  (void)cudaGetLastError();
  cudaError_t status = sizing;
  if (status == cudaSuccess)
    status = check_local(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n_local, l.total);
  record(events.start, stream);

  // 1. Header exchange, in the temp storage if it can hold the headers,
  //    else in a buffer of its own (so that a rank with bad temp storage still answers).
  const std::size_t header_bytes = sizeof(plan::shard_header) * std::size_t(ranks);
  void* header_space = d_temp;
  const bool own_space = temp_bytes < l.headers + header_bytes;
  if (own_space && cudaMallocAsync(&header_space, header_bytes, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaErrorMemoryAllocation;  // (the other ranks wait in the header exchange)
  }
  auto* headers = at<plan::shard_header>(header_space, own_space ? 0 : l.headers);
  const plan::shard_header mine{plan::shard_header_magic,
                                static_cast<std::int32_t>(status),
                                me,
                                ranks,
                                status == cudaSuccess ? n_local : 0,
                                static_cast<std::int64_t>(sizeof(Key)),
                                has_values<Value> ? static_cast<std::int64_t>(sizeof(Value)) : 0};
  write_header_kernel<<<1, 1, 0, stream>>>(headers + me, mine);
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) error = c.all_gather(headers + me, headers, sizeof(plan::shard_header), stream);
  if (error == cudaSuccess) error = c.wait(stream);  // host sync 1
  std::vector<plan::shard_header> all(static_cast<std::size_t>(ranks));
  if (error == cudaSuccess)
    error = cudaMemcpyAsync(all.data(), headers, header_bytes, cudaMemcpyDeviceToHost, stream);  // (stream is idle)
  if (own_space) (void)cudaFreeAsync(header_space, stream);
  TILESORT_RETURN_IF_ERROR(error);
  const plan::shard_census census = plan::take_census(all.data(), ranks);
  TILESORT_RETURN_IF_ERROR(census.error);
  const plan::selection_plan search = plan::make_selection_plan(ranks, census.n_max);
  if (options.report != nullptr) {
    *options.report = sort_report{ranks, me, census.n_total, search.rounds, search.probes, {}, {}};
    options.report->send_counts.assign(ranks, 0);
    options.report->recv_counts.assign(ranks, 0);
  }
  if (census.n_total == 0) {
    for (cudaEvent_t e : {events.local_sort, events.splitters, events.exchange, events.merge}) record(e, stream);
    return cudaSuccess;
  }

  // 2. Local sort into the sorted buffers.
  Key* sorted_keys = at<Key>(d_temp, l.sorted_keys);
  Value* sorted_values = has_values<Value> ? at<Value>(d_temp, l.sorted_values) : nullptr;
  TILESORT_RETURN_IF_ERROR(local_sort(at<void>(d_temp, l.scratch), local_bytes, keys_in, sorted_keys, values_in,
                                      sorted_values, n_local, comp, stream));
  record(events.local_sort, stream);

  // 3. Splitters, the cut gather, the merge plan; host sync 2.
  TILESORT_RETURN_IF_ERROR(
      (search_cuts<Key, Value>(c, d_temp, l, ranks, me, census.n_total, search, comp, stream)));
  Key* received_keys = at<Key>(d_temp, l.received_keys);
  Value* received_values = has_values<Value> ? at<Value>(d_temp, l.received_values) : nullptr;
  merge_buffers<Key, Value> buffers{{received_keys, sorted_keys, keys_out}, {received_values, sorted_values, values_out}};
  merge_plan_kernel<<<1, 1, 0, stream>>>(at<const std::int64_t>(d_temp, l.cuts), at<std::int64_t>(d_temp, l.run_offsets),
                                         ranks, me, buffers, at<merge_pair_entry<Key, Value>>(d_temp, l.merge_pairs),
                                         std::int64_t(merge_policy<Key>::tile_items));
  TILESORT_RETURN_IF_ERROR(cudaGetLastError());
  record(events.splitters, stream);
  TILESORT_RETURN_IF_ERROR(c.wait(stream));  // host sync 2
  std::vector<std::int64_t> cuts(std::size_t(ranks) * std::size_t(ranks + 1));
  TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(cuts.data(), at<void>(d_temp, l.cuts), cuts.size() * sizeof(std::int64_t),
                                           cudaMemcpyDeviceToHost, stream));
  plan::exchange_plan x;
  TILESORT_RETURN_IF_ERROR(plan::make_exchange_plan(cuts.data(), all.data(), ranks, me, x));
  if (options.report != nullptr) {
    options.report->send_counts = x.send_count;
    options.report->recv_counts = x.recv_count;
  }

  // 4. Exchange (the own run copied only where pass 0 does not read it in place).
  if (!plan::own_run_in_place(ranks) && x.recv_count[me] > 0) {
    const std::size_t count = std::size_t(x.recv_count[me]);
    TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(received_keys + x.recv_offset[me], sorted_keys + x.send_offset[me],
                                             count * sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (has_values<Value>)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(received_values + x.recv_offset[me],
                                               sorted_values + x.send_offset[me], count * sizeof(Value),
                                               cudaMemcpyDeviceToDevice, stream));
  }
  const exchange_part parts[2] = {{sorted_keys, received_keys, sizeof(Key)},
                                  {sorted_values, received_values, has_values<Value> ? sizeof(Value) : 0}};
  TILESORT_RETURN_IF_ERROR(all_to_all(c, ranks, me, parts, has_values<Value> ? 2 : 1, x.send_count, x.send_offset,
                                      x.recv_count, x.recv_offset, stream));
  record(events.exchange, stream);

  // 5. Merge.
  TILESORT_RETURN_IF_ERROR((merge_runs<Key, Value>(d_temp, l, ranks, x.recv_offset, comp, stream)));
  record(events.merge, stream);
  return cudaSuccess;
}

}  // namespace detail

/// Stable sort of an array sharded over the ranks of `comm`: afterwards
/// rank r holds n_local keys again (its own count), sorted, and every key
/// of rank r orders before or equal to every key of rank r + 1; equal keys
/// keep their (rank, index) order. Call with d_temp == nullptr for
/// temp_bytes (local: no communication). The host waits twice (the shard
/// headers, the exchange sizes): not graph-capturable. Errors, and what to
/// do after an NCCL failure: see the top of distributed/nccl_sort.cuh.
///
/// @param d_temp     device temp storage, or nullptr for the size query
/// @param temp_bytes size of d_temp; set by the size query
/// @param keys_in    this rank's keys (device)
/// @param keys_out   this rank's sorted share (device; may equal keys_in)
/// @param n_local    keys on this rank (may differ between ranks; 0 allowed)
/// @param comm       the communicator; one rank per GPU, the current device its device
/// @param comp       strict weak order, the same on every rank
/// @param stream     stream on the communicator's device
/// @return cudaSuccess, or the same error on every rank (see above)
///
/// @code
/// std::size_t bytes = 0;
/// tilesort::nccl::sort_keys(nullptr, bytes, d_keys, d_keys, n_local, comm);          // size query
/// cudaMallocAsync(&d_temp, bytes, stream);
/// tilesort::nccl::sort_keys(d_temp, bytes, d_keys, d_keys, n_local, comm, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n_local,
                      ncclComm_t comm, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::nccl_sort<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n_local,
                                                  comm, comp, stream, sort_options{});
}

/// sort_keys with options: the NCCL result, phase events, a report, a deadline.
///
/// @code
/// tilesort::nccl::sort_report report;
/// tilesort::nccl::sort_options options;
/// options.report = &report;
/// tilesort::nccl::sort_keys(d_temp, bytes, d_keys, d_keys, n_local, comm, tilesort::less{}, stream, options);
/// @endcode
template <typename Key, typename Compare>
cudaError_t sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out, std::int64_t n_local,
                      ncclComm_t comm, Compare comp, cudaStream_t stream, const sort_options& options) {
  return detail::nccl_sort<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n_local,
                                                  comm, comp, stream, options);
}

/// Stable sort of (key, value) pairs sharded over the ranks of `comm`, by
/// key; values travel with their keys. As sort_keys, plus the device arrays
/// values_in and values_out (values_out may equal values_in).
///
/// @code
/// tilesort::nccl::sort_pairs(nullptr, bytes, d_keys, d_keys, d_vals, d_vals, n_local, comm);   // size query
/// tilesort::nccl::sort_pairs(d_temp, bytes, d_keys, d_keys, d_vals, d_vals, n_local, comm, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                       const Value* values_in, Value* values_out, std::int64_t n_local, ncclComm_t comm,
                       Compare comp = {}, cudaStream_t stream = 0) {
  return detail::nccl_sort(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n_local, comm, comp, stream,
                           sort_options{});
}

/// sort_pairs with options: the NCCL result, phase events, a report, a deadline.
///
/// @code
/// tilesort::nccl::sort_pairs(d_temp, bytes, d_k, d_k, d_v, d_v, n_local, comm, tilesort::less{}, stream, options);
/// @endcode
template <typename Key, typename Value, typename Compare>
cudaError_t sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                       const Value* values_in, Value* values_out, std::int64_t n_local, ncclComm_t comm, Compare comp,
                       cudaStream_t stream, const sort_options& options) {
  return detail::nccl_sort(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n_local, comm, comp, stream,
                           options);
}

/// sort_keys with stream-ordered temp storage (cudaMallocAsync /
/// cudaFreeAsync on `stream`). A failed allocation returns
/// cudaErrorMemoryAllocation on that rank alone (the others wait in the
/// header exchange).
///
/// @code
/// tilesort::nccl::sort_keys(d_keys, d_keys, n_local, comm, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Compare = less>
cudaError_t sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n_local, ncclComm_t comm, Compare comp = {},
                      cudaStream_t stream = 0, const sort_options& options = {}) {
  return tilesort::detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return detail::nccl_sort<Key, detail::no_value>(d_temp, temp_bytes, keys_in, keys_out, nullptr, nullptr, n_local,
                                                    comm, comp, stream, options);
  });
}

/// sort_pairs with stream-ordered temp storage, as the sort_keys overload.
///
/// @code
/// tilesort::nccl::sort_pairs(d_keys, d_keys, d_vals, d_vals, n_local, comm, tilesort::less{}, stream);
/// @endcode
template <typename Key, typename Value, typename Compare = less>
cudaError_t sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                       std::int64_t n_local, ncclComm_t comm, Compare comp = {}, cudaStream_t stream = 0,
                       const sort_options& options = {}) {
  return tilesort::detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return detail::nccl_sort(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n_local, comm, comp,
                             stream, options);
  });
}

}  // namespace nccl
}  // namespace tilesort
