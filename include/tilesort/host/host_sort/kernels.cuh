// host/host_sort/kernels.cuh — the kernels of the out-of-core sort's first
// pass (host/host_sort.cuh): the splitter tree from the sorted samples, and
// per chunk the bucket of every item (the sample sort's tree walk,
// detail/sample_sort_plan.cuh), the buckets' ends once the (bucket,
// position) pairs are sorted, and the gather of the items into bucket order.
// Each is one grid-stride loop over the chunk.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../../detail/launch.cuh"
#include "../../detail/sample_sort_plan.cuh"
#include "../../detail/values.cuh"

namespace tilesort::detail {

inline constexpr int host_sort_threads = 256;

// Blocks of host_sort_threads for a grid-stride loop over `items`.
inline unsigned host_sort_grid(std::int64_t items) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(ceil_div(items, host_sort_threads),
                                                                                 std::int64_t(1) << 16)));
}

// tree[slot] (1 <= slot < 2^levels) = the splitter of that slot's rank,
// picked from the sorted samples (slot 0 unused).
template <typename Key>
__global__ void host_sort_tree_kernel(const Key* sorted_samples, int samples, int levels, Key* tree) {
  const int splitters = (1 << levels) - 1;
  for (int slot = int(blockIdx.x * blockDim.x + threadIdx.x) + 1; slot <= splitters; slot += gridDim.x * blockDim.x)
    tree[slot] = sorted_samples[splitter_sample_rank(splitter_tree_rank(slot, levels), samples, splitters)];
}

// buckets[i] = the bucket of keys[i], positions[i] = i. The tree (2^levels
// keys) is copied to shared memory first.
template <typename Key, typename Compare>
__global__ void __launch_bounds__(host_sort_threads)
    host_sort_classify_kernel(const Key* keys, std::int64_t n, const Key* tree, int levels, std::uint32_t* buckets,
                              std::uint32_t* positions, Compare comp) {
  extern __shared__ __align__(16) unsigned char host_sort_smem[];
  Key* shared_tree = reinterpret_cast<Key*>(host_sort_smem);
  for (int slot = int(threadIdx.x) + 1; slot < (1 << levels); slot += blockDim.x) shared_tree[slot] = tree[slot];
  __syncthreads();
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    buckets[i] = static_cast<std::uint32_t>(classify_key(shared_tree, levels, keys[i], comp));
    positions[i] = static_cast<std::uint32_t>(i);
  }
}

// After the stable sort of (bucket, position): ends[b] = one past the last
// item of bucket b, for the buckets present (the others stay 0).
template <int Unused = 0>
__global__ void __launch_bounds__(host_sort_threads)
    host_sort_ends_kernel(const std::uint32_t* buckets, std::int64_t n, std::uint32_t* ends) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    if (i + 1 == n || buckets[i + 1] != buckets[i]) ends[buckets[i]] = static_cast<std::uint32_t>(i + 1);
}

// keys_out[i] = keys_in[positions[i]] (values likewise).
template <typename Key, typename Value>
__global__ void __launch_bounds__(host_sort_threads)
    host_sort_gather_kernel(const Key* keys_in, const Value* values_in, const std::uint32_t* positions,
                            std::int64_t n, Key* keys_out, Value* values_out) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint32_t from = positions[i];
    keys_out[i] = keys_in[from];
    if constexpr (has_values<Value>) values_out[i] = values_in[from];
  }
}

}  // namespace tilesort::detail
