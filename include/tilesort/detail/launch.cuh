// detail/launch.cuh — how every device sort launches its kernels: one
// capture-safe launcher (launch_kernel, with its cluster and cooperative
// forms), the one way to let a kernel use more than 48 KB of dynamic shared
// memory (allow_dynamic_shared_memory), and programmatic dependent launch
// (sm_90 and later) for the chains of kernels a sort puts on one stream.
//
// A kernel launched as a dependent may start its blocks before the previous
// kernel on the stream has finished: once every block of that kernel has
// called allow_next_kernel() (or exited). It must call
// wait_for_previous_kernel() before it reads anything the previous kernel
// wrote; that wait returns when the previous kernel has completed and its
// writes are visible. The launch latency and the new grid's ramp-up then
// overlap the previous grid's last wave instead of following it (a merge
// sort of 2^24 keys is a chain of 23 kernels). The merge, locality, sample
// and bitonic sorts launch their first kernel plainly and, where
// dependent_launch_supported says so, the kernels after it as dependents
// (begin_dependent_kernel is the start of such a kernel); the segmented
// sort's own kernels and the statistics kernels are plain launches.
//
// Both device calls compile to nothing before sm_90, and the wait returns at
// once in a kernel that was launched normally; launch_kernel() asks for the
// dependent launch only when told to. Kernel attributes are set in relaxed
// capture mode, so every call here is legal while the caller captures a
// CUDA graph.
//
//   TILESORT_RETURN_IF_ERROR(detail::allow_dynamic_shared_memory(kernel, shared_bytes));
//   TILESORT_RETURN_IF_ERROR(detail::launch_kernel(kernel, blocks, threads, shared_bytes, stream,
//                                                  /*dependent=*/true, keys, n, comp));
//
// Also here: launches with clusters, and cooperative launches with the grid
// barrier their kernels may use.
#pragma once

#include <cuda_runtime.h>

#include <cuda/atomic>

#include <atomic>
#include <climits>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "capture_mode.cuh"
#include "config.cuh"
#include "error.cuh"

namespace tilesort::detail {

TILESORT_DEVICE void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

TILESORT_DEVICE void allow_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// Whether a kernel that a device-side decision may skip returns at once:
// `skip_unless_zero` is null (never skipped) or a device word that must be 0
// for the kernel to run (the locality sort's count of blocksort tiles that
// looked local; the front door's probe verdict). Read it after
// wait_for_previous_kernel() in a dependent kernel.
TILESORT_DEVICE bool skip_requested(const unsigned* skip_unless_zero) {
  return skip_unless_zero != nullptr && *skip_unless_zero != 0;
}

// The start of a kernel in a sort's chain of dependent launches: lets the
// next kernel launch, waits for the previous one's output, and says whether
// to run (false: skip_unless_zero asks this kernel to return at once).
TILESORT_DEVICE bool begin_dependent_kernel(const unsigned* skip_unless_zero) {
  allow_next_kernel();
  wait_for_previous_kernel();
  return !skip_requested(skip_unless_zero);
}

// True when the current device can launch dependents (compute capability >= 9.0).
inline cudaError_t dependent_launch_supported(bool& supported) {
  int device = 0, major = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  TILESORT_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  supported = major >= 9;
  return cudaSuccess;
}

// cudaFuncSetAttribute, legal while the caller captures a graph.
template <typename Kernel>
cudaError_t set_kernel_attribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  return in_relaxed_capture_mode([&] { return cudaFuncSetAttribute(kernel, attribute, value); });
}

// A kernel that takes more than 48 KB of dynamic shared memory must be
// allowed it before its launch (per kernel and device); below that, nothing
// to do. Capture-safe.
template <typename Kernel>
cudaError_t allow_dynamic_shared_memory(Kernel* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return set_kernel_attribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

// cudaLaunchKernelEx with the given launch attributes; returns the launch's
// error and, like cudaGetLastError after a <<<>>> launch, leaves none behind.
template <typename... Params, typename... Args>
cudaError_t launch_with_attributes(void (*kernel)(Params...), dim3 grid, unsigned threads, std::size_t shared,
                                   cudaStream_t stream, cudaLaunchAttribute* attributes, unsigned count,
                                   Args... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  const cudaError_t error = cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
  if (error != cudaSuccess) (void)cudaGetLastError();
  return error;
}

// kernel<<<grid, threads, shared, stream>>>(args...), as a dependent of the
// previous kernel on the stream when `dependent`. (More than 48 KB of
// `shared`: allow_dynamic_shared_memory first.)
template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, unsigned threads, std::size_t shared,
                          cudaStream_t stream, bool dependent, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  return launch_with_attributes(kernel, grid, threads, shared, stream, &attribute, dependent ? 1 : 0, args...);
}
// A one-dimensional grid of `grid` blocks.
template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), unsigned grid, unsigned threads, std::size_t shared,
                          cudaStream_t stream, bool dependent, Args... args) {
  return launch_kernel(kernel, dim3(grid), threads, shared, stream, dependent, args...);
}

// kernel<<<grid, threads, shared, stream>>>(args...) in thread block clusters
// of cluster_blocks blocks (sm_90; grid a multiple of it; more than 8, the
// portable cluster size, only once the caller has set the kernel's
// cudaFuncAttributeNonPortableClusterSizeAllowed), as a dependent of the
// previous kernel when `dependent`.
template <typename... Params, typename... Args>
cudaError_t launch_cluster_kernel(void (*kernel)(Params...), unsigned grid, unsigned cluster_blocks,
                                  unsigned threads, std::size_t shared, cudaStream_t stream, bool dependent,
                                  Args... args) {
  cudaLaunchAttribute attributes[2] = {};
  attributes[0].id = cudaLaunchAttributeClusterDimension;
  attributes[0].val.clusterDim.x = cluster_blocks;
  attributes[0].val.clusterDim.y = 1;
  attributes[0].val.clusterDim.z = 1;
  attributes[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[1].val.programmaticStreamSerializationAllowed = 1;
  return launch_with_attributes(kernel, dim3(grid), threads, shared, stream, attributes, dependent ? 2 : 1, args...);
}

// kernel<<<grid, threads, shared, stream>>>(args...) as a cooperative launch:
// every block of the grid is resident at once (the launch fails otherwise),
// so that the blocks may wait for each other (grid_barrier). As a dependent
// of the previous kernel when `dependent`.
template <typename... Params, typename... Args>
cudaError_t launch_cooperative_kernel(void (*kernel)(Params...), unsigned grid, unsigned threads,
                                      std::size_t shared, cudaStream_t stream, bool dependent, Args... args) {
  cudaLaunchAttribute attributes[2] = {};
  attributes[0].id = cudaLaunchAttributeCooperative;
  attributes[0].val.cooperative = 1;
  attributes[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[1].val.programmaticStreamSerializationAllowed = 1;
  return launch_with_attributes(kernel, dim3(grid), threads, shared, stream, attributes, dependent ? 2 : 1, args...);
}

inline cudaError_t device_sm_count(int& sms) {
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
}

// Blocks of `kernel` (threads, shared bytes) one SM can hold, at most `cap`
// (the occupancy query is legal while the caller captures a graph).
template <typename Kernel>
cudaError_t resident_blocks_per_sm(Kernel* kernel, int threads, std::size_t shared, int cap, int& blocks) {
  const cudaError_t error = in_relaxed_capture_mode(
      [&] { return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared); });
  if (blocks > cap) blocks = cap;
  return error;
}

// The grid of a cooperative launch of `kernel` (threads, shared bytes), or
// of a persistent one: every block it can keep resident, at most `cap` per
// SM and `limit` in all. Allows the kernel its shared memory first.
template <typename Kernel>
cudaError_t cooperative_grid(Kernel* kernel, int threads, std::size_t shared, int cap, std::int64_t limit,
                             unsigned& grid) {
  TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(kernel, shared));
  int sms = 0, per_sm = 0;
  TILESORT_RETURN_IF_ERROR(device_sm_count(sms));
  TILESORT_RETURN_IF_ERROR(resident_blocks_per_sm(kernel, threads, shared, cap, per_sm));
  if (per_sm < 1) return cudaErrorInvalidConfiguration;
  grid = static_cast<unsigned>(std::min<std::int64_t>(std::int64_t(sms) * per_sm, limit));
  return cudaSuccess;
}

// cooperative_grid for a kernel launched again and again with one shape
// (no limit): computed once per device and remembered, since the
// attribute and the occupancy query cost host time on every call.
template <auto Kernel>
cudaError_t remembered_grid(int threads, std::size_t shared, unsigned& grid) {
  constexpr int max_devices = 64;
  static std::atomic<unsigned> known[max_devices] = {};
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  if (device < max_devices && (grid = known[device].load(std::memory_order_relaxed)) > 0) return cudaSuccess;
  TILESORT_RETURN_IF_ERROR(cooperative_grid(Kernel, threads, shared, INT_MAX, INT64_MAX, grid));
  if (device < max_devices) known[device].store(grid, std::memory_order_relaxed);
  return cudaSuccess;
}

// A barrier across all blocks of a cooperative grid: no block leaves its
// k-th sync() before every block has reached it, and what any thread wrote
// to global memory before it is visible to every thread after it. `arrived`
// counts the arrivals of the whole sort (zeroed before the launch, one per
// block per barrier); every block calls sync() the same number of times.
struct grid_barrier {
  unsigned* arrived;
  unsigned target = 0;
  TILESORT_DEVICE void sync() {
    target += gridDim.x;
    __syncthreads();  // the block's writes come before thread 0's release
    if (threadIdx.x == 0) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*arrived);
      count.fetch_add(1u, cuda::memory_order_release);
      while (count.load(cuda::memory_order_acquire) < target) {
      }
    }
    __syncthreads();  // and the block's reads after its acquire
  }
};

}  // namespace tilesort::detail
