// dispatch.cu — run_job, one Python call's device work in stream order.
// Rows (or one short array) of keys of up to 4 bytes with an index payload:
// one library call on the keys as they are, packed with their positions by
// the row sorters (rows_positions_job). One array with an index payload where
// the front door radix-sorts: one library call on the keys as they are,
// which makes the positions itself (positions_job). Ragged segments of keys
// of up to 4 bytes with an index payload: 64-bit words of rank and position
// sorted alone (segments_words_job). Otherwise a prologue kernel (ranks of keys that sort as
// ranks, the index payload where the sort does not make it),
// the library sort (run_sort picks the instantiation for the key width and
// algorithm), and an epilogue kernel that turns sorted ranks back into the
// original key bits. Also order_rank / order_unrank / order_shared, the
// dtype order on the host for the tests.
//
// Temp storage of a job: a ranks buffer (n keys of the sort's width) when
// the ranks cannot sort in keys_out (keys of 1 or 2 bytes, argsort), then
// the library's temp storage.
//
//   tilesort_py::sort_job job{};   // + pointers, n, the order, temp, stream
//   std::size_t bytes = 0;
//   tilesort_py::run_job(job, bytes);   // size query
#include <cstdint>

#include "dtype_order.cuh"
#include "sort_call.h"

namespace tilesort_py {
namespace {

constexpr int elementwise_threads = 256;
constexpr std::size_t temp_alignment = 256;

// Blocks of elementwise_threads for n elements, grid-stride beyond 4096 blocks.
unsigned elementwise_blocks(std::int64_t n) {
  constexpr std::int64_t max_blocks = 4096;
  const std::int64_t wanted = (n + elementwise_threads - 1) / elementwise_threads;
  return static_cast<unsigned>(wanted < max_blocks ? wanted : max_blocks);
}

// ranks[i] = the key's rank, widened to the sort's width (Rank), when ranks
// is given; index[i] = its position in its row of `period` keys, when index
// is given (kept incrementally: one division per thread, not per key).
template <typename Bits, typename Rank>
__global__ void prologue_kernel(const Bits* keys, Rank* ranks, std::uint64_t* index, std::int64_t n,
                                std::int64_t period, dtype_order<Bits> order) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t step = stride % period;
  std::int64_t column = i % period;
  for (; i < n; i += stride) {
    if (ranks != nullptr) ranks[i] = static_cast<Rank>(order.rank(keys[i]));
    if (index != nullptr) index[i] = static_cast<std::uint64_t>(column);
    column += step;
    if (column >= period) column -= period;
  }
}

// keys_out[i] = the key of sorted rank i: its inverse, or for a shared rank
// (floating zero, NaN) the input key the index payload names, bit for bit.
// ranks may equal keys_out (Rank == Bits); keys_in must not.
template <typename Bits, typename Rank>
__global__ void epilogue_kernel(const Bits* keys_in, const Rank* ranks, Bits* keys_out, const std::uint64_t* index,
                                std::int64_t n, std::int64_t period, dtype_order<Bits> order) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const auto rank = static_cast<Bits>(ranks[i]);
    keys_out[i] = order.shared(rank) ? keys_in[i - i % period + std::int64_t(index[i])] : order.unrank(rank);
  }
}

std::size_t aligned(std::size_t bytes) { return (bytes + temp_alignment - 1) / temp_alignment * temp_alignment; }

// run_job for keys of Bits sorted with keys of Rank (the same width, or 4
// bytes for keys of 1 and 2).
template <typename Bits, typename Rank>
cudaError_t job_for(const sort_job& job, std::size_t& temp_bytes) {
  const bool floating = job.kind == 'f';
  const bool ranked = sizeof(Bits) < sizeof(Rank) || (floating && job.rank_floats);
  const bool restore = ranked && job.keys_out != nullptr;
  // Ranks sort in keys_out when it has their width; keys not wanted sort in temp.
  const bool ranks_in_output = restore && sizeof(Bits) == sizeof(Rank);
  const bool scratch = ranked ? !ranks_in_output : job.keys_out == nullptr;
  const std::size_t scratch_bytes = scratch ? aligned(std::size_t(job.n > 0 ? job.n : 0) * sizeof(Rank)) : 0;
  const std::int64_t period = job.algo == algorithm::rows ? job.row_length : job.n;

  const auto order = make_dtype_order<Bits>(job.kind, static_cast<Bits>(job.inf_bits), job.descending);
  auto* temp = static_cast<char*>(job.temp);
  Rank* const scratch_keys = scratch && temp != nullptr ? reinterpret_cast<Rank*>(temp) : nullptr;
  Rank* const ranks = !ranked ? nullptr : ranks_in_output ? static_cast<Rank*>(job.keys_out) : scratch_keys;

  sort_call call{};
  call.algo = job.algo;
  call.keys_in = ranked ? ranks : job.keys_in;
  call.keys_out = ranked ? ranks : job.keys_out != nullptr ? job.keys_out : scratch_keys;
  call.values_in = job.index_payload ? job.values_out : job.values_in;
  call.values_out = job.values_out;
  call.n = job.n;
  call.row_length = job.row_length;
  call.offsets = job.offsets;
  call.segments = job.segments;
  call.kind = ranked ? 'u' : job.kind;  // ranks sort as unsigned integers, ascending
  call.inf_bits = ranked ? 0 : job.inf_bits;
  call.descending = ranked ? false : job.descending;
  call.temp = temp == nullptr ? nullptr : temp + scratch_bytes;
  call.stream = job.stream;

  // Rows with an index payload: the row sorter makes the positions where the
  // rows fit one (a size query tells, touching nothing), else they are written first.
  if (job.algo == algorithm::rows && job.index_payload) {
    sort_call probe = call;
    probe.algo = algorithm::row_positions;
    probe.temp = nullptr;
    std::size_t probe_bytes = 0;
    if (run_sort(sizeof(Rank), probe, probe_bytes) != cudaErrorNotSupported) call.algo = algorithm::row_positions;
  }
  const bool fill_index = job.index_payload && call.algo != algorithm::row_positions;

  std::size_t sort_bytes = 0;
  if (temp == nullptr) {  // size query
    const cudaError_t error = run_sort(sizeof(Rank), call, sort_bytes);
    temp_bytes = scratch_bytes + sort_bytes;
    return error;
  }
  // Keys of a shared rank come back through the index, read from the intact input.
  if (restore && floating && (!job.index_payload || job.keys_out == job.keys_in)) return cudaErrorInvalidValue;
  if (temp_bytes < scratch_bytes) return cudaErrorInvalidValue;
  if (job.n == 0) return cudaSuccess;
  if (period <= 0) return cudaErrorInvalidValue;  // rows of no keys
  sort_bytes = temp_bytes - scratch_bytes;

  auto* index = job.index_payload ? static_cast<std::uint64_t*>(job.values_out) : nullptr;
  const auto* keys_in = static_cast<const Bits*>(job.keys_in);
  if (ranked || fill_index) {
    prologue_kernel<Bits, Rank><<<elementwise_blocks(job.n), elementwise_threads, 0, job.stream>>>(
        keys_in, ranks, fill_index ? index : nullptr, job.n, period, order);
    if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  }
  if (const cudaError_t error = run_sort(sizeof(Rank), call, sort_bytes); error != cudaSuccess) return error;
  if (!restore) return cudaSuccess;
  epilogue_kernel<Bits, Rank><<<elementwise_blocks(job.n), elementwise_threads, 0, job.stream>>>(
      keys_in, ranks, static_cast<Bits*>(job.keys_out), index, job.n, period, order);
  return cudaGetLastError();
}

// The sort_call of a job whose positions the library makes (front_positions,
// row_positions): its keys, positions, size and order; keys_out, temp and
// the rows' shape are the caller's to set.
sort_call positions_call(const sort_job& job, algorithm algo) {
  sort_call call{};
  call.algo = algo;
  call.keys_in = job.keys_in;
  call.keys_out = job.keys_out;
  call.values_out = job.values_out;
  call.n = job.n;
  call.kind = job.kind;
  call.inf_bits = job.inf_bits;
  call.descending = job.descending;
  call.stream = job.stream;
  return call;
}

// Runs (or sizes) `call` for `job`, the keys in their own width: where the
// job does not want the sorted keys (argsort), they go to scratch at the
// front of the temp storage, the library's temp storage after it.
cudaError_t run_with_key_scratch(const sort_job& job, sort_call call, std::size_t& temp_bytes) {
  const bool scratch = job.keys_out == nullptr;
  const std::size_t scratch_bytes = scratch ? aligned(std::size_t(job.n) * std::size_t(job.key_bytes)) : 0;
  auto* temp = static_cast<char*>(job.temp);
  call.keys_out = scratch ? static_cast<void*>(temp) : job.keys_out;
  call.temp = temp == nullptr ? nullptr : temp + scratch_bytes;
  if (temp == nullptr) {  // size query
    std::size_t sort_bytes = 0;
    const cudaError_t error = run_sort(job.key_bytes, call, sort_bytes);
    if (error == cudaSuccess) temp_bytes = scratch_bytes + sort_bytes;
    return error;
  }
  if (temp_bytes < scratch_bytes) return cudaErrorInvalidValue;
  std::size_t sort_bytes = temp_bytes - scratch_bytes;
  return run_sort(job.key_bytes, call, sort_bytes);
}

// A front job with an index payload where the front door radix-sorts (the
// library says so, size query included): the keys in their own width, no
// ranks, the positions made by the sort; argsort's sorted keys go to temp.
// cudaErrorNotSupported: the job takes job_for instead.
cudaError_t positions_job(const sort_job& job, std::size_t& temp_bytes) {
  if (job.algo != algorithm::front || !job.index_payload || job.n <= 0) return cudaErrorNotSupported;
  return run_with_key_scratch(job, positions_call(job, algorithm::front_positions), temp_bytes);
}

// The longest one array (a front job) that sorts as one row (rows_positions_job):
// one launch of one block, against the front door's prologue, sort and epilogue.
constexpr std::int64_t one_row_max_keys = 4096;

// A job with an index payload whose keys (1, 2 or 4 bytes) sort in their own
// width as rows, packed with their positions (algorithm::row_positions): uniform
// rows that fit a row sorter, or one short array. No ranks, no index array,
// no prologue or epilogue: one launch, no temp storage (size 0; the call reads none).
// cudaErrorNotSupported: the job takes another path.
cudaError_t rows_positions_job(const sort_job& job, std::size_t& temp_bytes) {
  const bool one_row = job.algo == algorithm::front && job.n <= one_row_max_keys;
  if (!job.index_payload || job.key_bytes > 4 || job.n <= 0 || !(job.algo == algorithm::rows || one_row))
    return cudaErrorNotSupported;
  sort_call call = positions_call(job, algorithm::row_positions);  // keys_out null: positions only
  call.row_length = one_row ? job.n : job.row_length;
  call.row_stride = job.row_stride;
  std::size_t sort_bytes = 0;
  if (const cudaError_t error = run_sort(job.key_bytes, call, sort_bytes); error != cudaSuccess) return error;
  if (job.temp == nullptr) {  // size query
    temp_bytes = 0;
    return cudaSuccess;
  }
  call.temp = job.values_out;  // any non-null address of sort_bytes: the row sorters read no temp storage
  return run_sort(job.key_bytes, call, sort_bytes);
}

// The longest rows along another dim that sort where they lie, by key width.
// Each key read or written there takes a sector of its own (a row is a
// column); that beats two transposed copies where a block holds many rows
// (neighbouring columns, read together: the warp sorters, rows of up to 256
// keys of up to 4 bytes) and for 8-byte keys, whose block sorters cost more
// per key, up to 1024 (the measurements: docs/tuning/python.md).
constexpr std::int64_t strided_max_row_narrow = 256;
constexpr std::int64_t strided_max_row_wide = 1024;

// Rows along another dim (row_stride > 1) with an index payload: the row
// sorters read and write them where they lie. Keys of up to 4 bytes as in
// rows_positions_job; 8-byte keys in their own order (not as ranks), their
// sorted keys in temp storage when not wanted. cudaErrorNotSupported for
// anything else, and for rows longer than the limits above (the caller moves
// the dim last).
cudaError_t strided_rows_job(const sort_job& job, std::size_t& temp_bytes) {
  if (job.algo != algorithm::rows || !job.index_payload || job.n <= 0) return cudaErrorNotSupported;
  if (job.row_length > (job.key_bytes <= 4 ? strided_max_row_narrow : strided_max_row_wide))
    return cudaErrorNotSupported;
  if (job.key_bytes <= 4) return rows_positions_job(job, temp_bytes);
  if (job.kind == 'f' && job.rank_floats) return cudaErrorNotSupported;
  sort_call call = positions_call(job, algorithm::row_positions);
  call.row_length = job.row_length;
  call.row_stride = job.row_stride;
  return run_with_key_scratch(job, call, temp_bytes);
}

// words[i] = the key's rank (at most 32 bits) above its position i.
template <typename Bits>
__global__ void pack_words_kernel(const Bits* keys, std::uint64_t* words, std::int64_t n, dtype_order<Bits> order) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    words[i] = std::uint64_t(std::uint32_t(order.rank(keys[i]))) << 32 | std::uint32_t(i);
}

// positions[i] = the sorted word's position; keys_out[i] (when wanted) = the
// input key there, bit for bit. keys_out must not be keys_in.
template <typename Bits>
__global__ void unpack_words_kernel(const Bits* keys_in, const std::uint64_t* words, Bits* keys_out,
                                    std::int64_t* positions, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint32_t position = std::uint32_t(words[i]);
    positions[i] = position;
    if (keys_out != nullptr) keys_out[i] = keys_in[position];
  }
}

// Ragged segments (CSR offsets) of keys of up to 4 bytes with an index
// payload, fewer than 2^32 keys, out of place: each key becomes one 64-bit
// word, its rank above its position in the array (a prologue kernel); the
// words sort alone under less (algorithm::offsets_words: no comparator
// work, no tie-break, stable because the words are distinct; words outside
// every segment keep their place, so their position stays theirs); an
// epilogue writes the positions as int64 and reads each sorted key from the
// input by its position (bit for bit). Temp storage: the words (n x 8
// bytes), then the library's. cudaErrorNotSupported: the job takes job_for.
template <typename Bits>
cudaError_t segments_words_for(const sort_job& job, std::size_t& temp_bytes) {
  const std::size_t words_bytes = aligned(std::size_t(job.n) * sizeof(std::uint64_t));
  auto* temp = static_cast<char*>(job.temp);
  auto* words = temp == nullptr ? nullptr : reinterpret_cast<std::uint64_t*>(temp);
  sort_call call{};
  call.algo = algorithm::offsets_words;
  call.keys_in = words;
  call.keys_out = words;
  call.n = job.n;
  call.offsets = job.offsets;
  call.segments = job.segments;
  call.kind = 'u';
  call.temp = temp == nullptr ? nullptr : temp + words_bytes;
  call.stream = job.stream;
  std::size_t sort_bytes = 0;
  if (temp == nullptr) {  // size query
    const cudaError_t error = run_sort(8, call, sort_bytes);
    if (error == cudaSuccess) temp_bytes = words_bytes + sort_bytes;
    return error;
  }
  if (temp_bytes < words_bytes) return cudaErrorInvalidValue;
  sort_bytes = temp_bytes - words_bytes;
  const auto order = make_dtype_order<Bits>(job.kind, static_cast<Bits>(job.inf_bits), job.descending);
  const auto* keys_in = static_cast<const Bits*>(job.keys_in);
  pack_words_kernel<Bits><<<elementwise_blocks(job.n), elementwise_threads, 0, job.stream>>>(keys_in, words, job.n,
                                                                                              order);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  if (const cudaError_t error = run_sort(8, call, sort_bytes); error != cudaSuccess) return error;
  unpack_words_kernel<Bits><<<elementwise_blocks(job.n), elementwise_threads, 0, job.stream>>>(
      keys_in, words, static_cast<Bits*>(job.keys_out), static_cast<std::int64_t*>(job.values_out), job.n);
  return cudaGetLastError();
}

cudaError_t segments_words_job(const sort_job& job, std::size_t& temp_bytes) {
  if (job.algo != algorithm::offsets || !job.index_payload || job.key_bytes > 4 || job.n <= 0 ||
      job.n > std::int64_t(UINT32_MAX) || (job.keys_out != nullptr && job.keys_out == job.keys_in))
    return cudaErrorNotSupported;
  switch (job.key_bytes) {
    case 1: return segments_words_for<std::uint8_t>(job, temp_bytes);
    case 2: return segments_words_for<std::uint16_t>(job, temp_bytes);
    default: return segments_words_for<std::uint32_t>(job, temp_bytes);
  }
}

template <typename Bits>
cudaError_t sort_for(const sort_call& call, std::size_t& temp_bytes) {
  switch (call.algo) {
    case algorithm::front: return sort_with<Bits, algorithm::front>(call, temp_bytes);
    case algorithm::rows: return sort_with<Bits, algorithm::rows>(call, temp_bytes);
    case algorithm::locality: return sort_with<Bits, algorithm::locality>(call, temp_bytes);
    case algorithm::offsets: return sort_with<Bits, algorithm::offsets>(call, temp_bytes);
    case algorithm::row_positions: return sort_with<Bits, algorithm::row_positions>(call, temp_bytes);
    case algorithm::front_positions: return sort_with<Bits, algorithm::front_positions>(call, temp_bytes);
    case algorithm::offsets_words:
      if constexpr (sizeof(Bits) == 8)
        return sort_with<Bits, algorithm::offsets_words>(call, temp_bytes);
      else
        return cudaErrorInvalidValue;
  }
  return cudaErrorInvalidValue;
}

// Keys of 1 and 2 bytes sort in their own width on the paths that take them.
template <typename Bits>
cudaError_t sort_narrow(const sort_call& call, std::size_t& temp_bytes) {
  if (call.algo == algorithm::front_positions) return sort_with<Bits, algorithm::front_positions>(call, temp_bytes);
  if (call.algo == algorithm::row_positions) return sort_with<Bits, algorithm::row_positions>(call, temp_bytes);
  return cudaErrorInvalidValue;
}

template <typename Bits>
dtype_order<Bits> host_order(char kind, std::uint64_t inf_bits, bool descending) {
  return make_dtype_order<Bits>(kind, static_cast<Bits>(inf_bits), descending);
}

// f(order) with the dtype_order of key_bytes (1, 2, 4, else 8).
template <typename F>
auto with_host_order(int key_bytes, char kind, std::uint64_t inf_bits, bool descending, F f) {
  switch (key_bytes) {
    case 1: return f(host_order<std::uint8_t>(kind, inf_bits, descending));
    case 2: return f(host_order<std::uint16_t>(kind, inf_bits, descending));
    case 4: return f(host_order<std::uint32_t>(kind, inf_bits, descending));
    default: return f(host_order<std::uint64_t>(kind, inf_bits, descending));
  }
}

}  // namespace

cudaError_t run_job(const sort_job& job, std::size_t& temp_bytes) {
  if (job.n < 0) return cudaErrorInvalidValue;
  if (job.row_stride > 1) return strided_rows_job(job, temp_bytes);
  if (const cudaError_t error = rows_positions_job(job, temp_bytes); error != cudaErrorNotSupported) return error;
  if (const cudaError_t error = positions_job(job, temp_bytes); error != cudaErrorNotSupported) return error;
  if (const cudaError_t error = segments_words_job(job, temp_bytes); error != cudaErrorNotSupported) return error;
  switch (job.key_bytes) {
    case 1: return job_for<std::uint8_t, std::uint32_t>(job, temp_bytes);
    case 2: return job_for<std::uint16_t, std::uint32_t>(job, temp_bytes);
    case 4: return job_for<std::uint32_t, std::uint32_t>(job, temp_bytes);
    case 8: return job_for<std::uint64_t, std::uint64_t>(job, temp_bytes);
  }
  return cudaErrorInvalidValue;
}

cudaError_t run_sort(int key_bytes, const sort_call& call, std::size_t& temp_bytes) {
  switch (key_bytes) {
    case 1: return sort_narrow<std::uint8_t>(call, temp_bytes);
    case 2: return sort_narrow<std::uint16_t>(call, temp_bytes);
    case 4: return sort_for<std::uint32_t>(call, temp_bytes);
    case 8: return sort_for<std::uint64_t>(call, temp_bytes);
  }
  return cudaErrorInvalidValue;
}

std::uint64_t order_rank(int key_bytes, char kind, std::uint64_t inf_bits, bool descending, std::uint64_t bits) {
  return with_host_order(key_bytes, kind, inf_bits, descending, [bits](auto order) {
    return std::uint64_t(order.rank(static_cast<decltype(order.flip)>(bits)));
  });
}

std::uint64_t order_unrank(int key_bytes, char kind, std::uint64_t inf_bits, bool descending, std::uint64_t rank) {
  return with_host_order(key_bytes, kind, inf_bits, descending, [rank](auto order) {
    return std::uint64_t(order.unrank(static_cast<decltype(order.flip)>(rank)));
  });
}

bool order_shared(int key_bytes, char kind, std::uint64_t inf_bits, bool descending, std::uint64_t rank) {
  return with_host_order(key_bytes, kind, inf_bits, descending,
                         [rank](auto order) { return order.shared(static_cast<decltype(order.flip)>(rank)); });
}

}  // namespace tilesort_py
