// dispatch.cu — the extension's small device-side pieces: run_sort picks the
// instantiation for a key width and algorithm, write_ranks ranks floating
// keys before a sort, fill_row_index writes the index payload of an argsort, order_rank exposes dtype_order's
// rank to host tests.
//
//   tilesort_py::fill_row_index(d_idx, rows * length, length, stream);   // 0..length-1 per row
#include <cstdint>

#include "dtype_order.cuh"
#include "sort_call.h"

namespace tilesort_py {
namespace {

constexpr int elementwise_threads = 256;

// Blocks of elementwise_threads for n elements, grid-stride beyond 4096 blocks.
unsigned elementwise_blocks(std::int64_t n) {
  constexpr std::int64_t max_blocks = 4096;
  const std::int64_t wanted = (n + elementwise_threads - 1) / elementwise_threads;
  return static_cast<unsigned>(wanted < max_blocks ? wanted : max_blocks);
}

__global__ void row_index_kernel(std::uint64_t* values, std::int64_t n, std::int64_t row_length) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    values[i] = static_cast<std::uint64_t>(i % row_length);
}

template <typename Bits>
__global__ void rank_kernel(const Bits* keys, Bits* ranks, std::int64_t n, dtype_order<Bits> order) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    ranks[i] = order.rank(keys[i]);
}

template <typename Bits>
cudaError_t ranks_of(char kind, std::uint64_t inf_bits, bool descending, const void* keys, void* ranks,
                     std::int64_t n, cudaStream_t stream) {
  rank_kernel<Bits><<<elementwise_blocks(n), elementwise_threads, 0, stream>>>(
      static_cast<const Bits*>(keys), static_cast<Bits*>(ranks), n,
      make_dtype_order<Bits>(kind, static_cast<Bits>(inf_bits), descending));
  return cudaGetLastError();
}

template <typename Bits>
std::uint64_t rank_of(char kind, std::uint64_t inf_bits, bool descending, std::uint64_t bits) {
  return make_dtype_order<Bits>(kind, static_cast<Bits>(inf_bits), descending).rank(static_cast<Bits>(bits));
}

template <typename Bits>
cudaError_t sort_for(const sort_call& call, std::size_t& temp_bytes) {
  switch (call.algo) {
    case algorithm::merge: return sort_with<Bits, algorithm::merge>(call, temp_bytes);
    case algorithm::rows: return sort_with<Bits, algorithm::rows>(call, temp_bytes);
    case algorithm::locality: return sort_with<Bits, algorithm::locality>(call, temp_bytes);
    case algorithm::offsets: return sort_with<Bits, algorithm::offsets>(call, temp_bytes);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t run_sort(int key_bytes, const sort_call& call, std::size_t& temp_bytes) {
  switch (key_bytes) {
    case 4: return sort_for<std::uint32_t>(call, temp_bytes);
    case 8: return sort_for<std::uint64_t>(call, temp_bytes);
  }
  return cudaErrorInvalidValue;
}

cudaError_t write_ranks(int key_bytes, char kind, std::uint64_t inf_bits, bool descending, const void* keys,
                        void* ranks, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (key_bytes) {
    case 4: return ranks_of<std::uint32_t>(kind, inf_bits, descending, keys, ranks, n, stream);
    case 8: return ranks_of<std::uint64_t>(kind, inf_bits, descending, keys, ranks, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t fill_row_index(std::uint64_t* values, std::int64_t n, std::int64_t row_length, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  row_index_kernel<<<elementwise_blocks(n), elementwise_threads, 0, stream>>>(values, n, row_length);
  return cudaGetLastError();
}

std::uint64_t order_rank(int key_bytes, char kind, std::uint64_t inf_bits, bool descending, std::uint64_t bits) {
  switch (key_bytes) {
    case 1: return rank_of<std::uint8_t>(kind, inf_bits, descending, bits);
    case 2: return rank_of<std::uint16_t>(kind, inf_bits, descending, bits);
    case 4: return rank_of<std::uint32_t>(kind, inf_bits, descending, bits);
    default: return rank_of<std::uint64_t>(kind, inf_bits, descending, bits);
  }
}

}  // namespace tilesort_py
