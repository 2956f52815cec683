// host/host_sort/transfers.cuh — the host side of the out-of-core sort
// (host/host_sort.cuh): whether the link reaches an array directly (pinned
// or managed memory) or through pinned staging buffers (pageable memory),
// the staged copies themselves, and the pinned allocations (with the test
// hook that makes one of them fail).
//
// Staging: `stages` pinned buffers of stage_bytes (host_sort_policy) taken
// in turn. To the device, the host copies piece j into a free buffer while
// the link carries piece j - 1; to the host, the link fills piece j + 1's
// buffer while the host copies piece j out. A buffer is reused once the
// event recorded after its last transfer has completed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../../detail/error.cuh"
#include "policy.cuh"

namespace tilesort::detail {

// Test hook: the call's allocation of this index (0: its first) fails with
// cudaErrorMemoryAllocation, as a full device or host would; -1: none.
inline thread_local int host_sort_failing_allocation = -1;

// Counts one call's allocations for the hook.
struct host_sort_allocation_count {
  int next = 0;
  bool fails() { return next++ == host_sort_failing_allocation; }
};

// Pinned host memory (cudaHostAlloc); a failure leaves `p` null.
inline cudaError_t host_sort_alloc_pinned(void*& p, std::size_t bytes, host_sort_allocation_count& count) {
  p = nullptr;
  if (count.fails()) return cudaErrorMemoryAllocation;
  if (cudaHostAlloc(&p, bytes > 0 ? bytes : 1, cudaHostAllocDefault) != cudaSuccess) {
    (void)cudaGetLastError();
    p = nullptr;
    return cudaErrorMemoryAllocation;
  }
  return cudaSuccess;
}

// Whether the copy engines can read and write [p, p + bytes) directly:
// pinned (cudaHostAlloc, cudaHostRegister) or managed memory at both ends.
// Device memory is not a host array: cudaErrorInvalidValue.
inline cudaError_t host_memory_is_direct(const void* p, std::size_t bytes, bool& direct) {
  direct = true;
  if (bytes == 0) return cudaSuccess;
  const void* ends[2] = {p, static_cast<const unsigned char*>(p) + bytes - 1};
  for (const void* at : ends) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, at) != cudaSuccess) {
      (void)cudaGetLastError();
      direct = false;
      continue;
    }
    if (attributes.type == cudaMemoryTypeDevice) return cudaErrorInvalidValue;
    direct = direct && (attributes.type == cudaMemoryTypeHost || attributes.type == cudaMemoryTypeManaged);
  }
  return cudaSuccess;
}

// The staging buffers of pageable arrays, and the copies through them.
class host_sort_stager {
 public:
  host_sort_stager() = default;
  host_sort_stager(const host_sort_stager&) = delete;
  host_sort_stager& operator=(const host_sort_stager&) = delete;
  ~host_sort_stager() { release(); }

  // The buffers and their events (none when `needed` is false).
  cudaError_t init(bool needed, host_sort_allocation_count& count) {
    if (!needed) return cudaSuccess;
    for (int k = 0; k < stages; ++k) {
      void* p = nullptr;
      TILESORT_RETURN_IF_ERROR(host_sort_alloc_pinned(p, host_sort_policy::stage_bytes, count));
      buffers_[k] = static_cast<unsigned char*>(p);
      TILESORT_RETURN_IF_ERROR(cudaEventCreateWithFlags(&events_[k], cudaEventDisableTiming));
    }
    return cudaSuccess;
  }

  // host [src, src + bytes) to device dst, on `stream`. Direct: one
  // asynchronous copy. Staged: returns when every piece is in a staging
  // buffer and its copy is enqueued.
  cudaError_t to_device(void* dst, const void* src, std::size_t bytes, bool direct, cudaStream_t stream) {
    if (bytes == 0) return cudaSuccess;
    if (direct) return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream);
    for (std::size_t at = 0; at < bytes; at += host_sort_policy::stage_bytes) {
      const std::size_t piece = std::min(host_sort_policy::stage_bytes, bytes - at);
      int k = 0;
      TILESORT_RETURN_IF_ERROR(take(k));
      std::memcpy(buffers_[k], static_cast<const unsigned char*>(src) + at, piece);
      TILESORT_RETURN_IF_ERROR(
          cudaMemcpyAsync(static_cast<unsigned char*>(dst) + at, buffers_[k], piece, cudaMemcpyHostToDevice, stream));
      TILESORT_RETURN_IF_ERROR(cudaEventRecord(events_[k], stream));
    }
    return cudaSuccess;
  }

  // device [src, src + bytes) to host dst, after the work enqueued on
  // `stream` so far. Direct: one asynchronous copy. Staged: returns when
  // every byte is in dst.
  cudaError_t to_host(void* dst, const void* src, std::size_t bytes, bool direct, cudaStream_t stream) {
    if (bytes == 0) return cudaSuccess;
    if (direct) return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
    int waiting = -1;  // the buffer whose piece the host copies out next
    std::size_t waiting_at = 0, waiting_bytes = 0;
    for (std::size_t at = 0; at < bytes; at += host_sort_policy::stage_bytes) {
      const std::size_t piece = std::min(host_sort_policy::stage_bytes, bytes - at);
      int k = 0;
      TILESORT_RETURN_IF_ERROR(take(k));
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(buffers_[k], static_cast<const unsigned char*>(src) + at, piece,
                                               cudaMemcpyDeviceToHost, stream));
      TILESORT_RETURN_IF_ERROR(cudaEventRecord(events_[k], stream));
      if (waiting >= 0) TILESORT_RETURN_IF_ERROR(copy_out(waiting, dst, waiting_at, waiting_bytes));
      waiting = k;
      waiting_at = at;
      waiting_bytes = piece;
    }
    return copy_out(waiting, dst, waiting_at, waiting_bytes);
  }

  // Waits until no transfer uses a buffer (before they are freed).
  cudaError_t settle() {
    cudaError_t first = cudaSuccess;
    for (int k = 0; k < stages; ++k) {
      if (events_[k] == nullptr) continue;
      const cudaError_t e = cudaEventSynchronize(events_[k]);
      if (first == cudaSuccess) first = e;
    }
    return first;
  }

 private:
  static constexpr int stages = host_sort_policy::stages;
  static_assert(stages >= 2, "to_host copies one buffer out while the link fills the next");

  // The next buffer, once its last transfer is done (its event never
  // recorded: at once).
  cudaError_t take(int& k) {
    k = next_;
    next_ = (next_ + 1) % stages;
    return cudaEventSynchronize(events_[k]);
  }
  cudaError_t copy_out(int k, void* dst, std::size_t at, std::size_t bytes) {
    TILESORT_RETURN_IF_ERROR(cudaEventSynchronize(events_[k]));
    std::memcpy(static_cast<unsigned char*>(dst) + at, buffers_[k], bytes);
    return cudaSuccess;
  }
  void release() {
    (void)settle();
    for (int k = 0; k < stages; ++k) {
      if (buffers_[k] != nullptr) (void)cudaFreeHost(buffers_[k]);
      if (events_[k] != nullptr) (void)cudaEventDestroy(events_[k]);
      buffers_[k] = nullptr;
      events_[k] = nullptr;
    }
  }

  unsigned char* buffers_[stages] = {};
  cudaEvent_t events_[stages] = {};
  int next_ = 0;
};

}  // namespace tilesort::detail
