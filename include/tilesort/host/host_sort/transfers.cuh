// host/host_sort/transfers.cuh — the host side of the out-of-core sort
// (host/host_sort.cuh): whether the link reaches an array directly (pinned
// or managed memory), the registration of pageable arrays for one call so
// that it does, the pinned staging buffers for those the driver will not
// register, the host allocations (with the test hooks that make one of them
// fail or turn registration off).
//
// Registration: cudaHostRegister of a pageable array the caller has written
// costs a few hundredths of a second per GiB and lets every copy run at the
// pinned rate; staging costs one host memcpy per byte each way on the
// calling thread, several times slower than the link. The out-of-core
// scratch is allocated the same way: pageable memory whose pages are
// faulted in by several threads, then registered (cudaHostAlloc pins and
// zeroes on one thread, far slower for gigabytes).
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
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

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

// Test hook: false leaves pageable arrays unregistered (staged) and
// allocates the scratch with cudaHostAlloc, the paths a call takes where
// the driver refuses to register memory.
inline thread_local bool host_sort_registers_pageable = true;

// Faults in every page of [p, p + bytes) from up to
// host_sort_policy::touch_threads threads (the kernel zeroes each page; a
// thread that cannot start leaves its piece to the calling thread).
inline void host_sort_touch_pages(unsigned char* p, std::size_t bytes) {
  constexpr std::size_t page = 4096;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(host_sort_policy::touch_threads, cores);
  const std::size_t piece = (bytes / threads + page) / page * page;
  const auto touch = [p, bytes, piece](std::size_t from) {
    for (std::size_t at = from; at < std::min(bytes, from + piece); at += page) p[at] = 0;
  };
  std::vector<std::thread> workers;
  for (std::size_t from = piece; from < bytes; from += piece) {
    try {
      workers.emplace_back(touch, from);
    } catch (...) {
      touch(from);
    }
  }
  touch(0);
  for (std::thread& w : workers) w.join();
}

// The out-of-core scratch: pageable memory faulted in on several threads
// and registered, or where the driver refuses that, cudaHostAlloc;
// `registered` tells host_sort_free_scratch which. A failure leaves `p` null.
inline cudaError_t host_sort_alloc_scratch(void*& p, bool& registered, std::size_t bytes,
                                           host_sort_allocation_count& count) {
  p = nullptr;
  registered = false;
  if (count.fails()) return cudaErrorMemoryAllocation;
  constexpr std::size_t page = 4096;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
  if (host_sort_registers_pageable) {
    if (void* q = std::aligned_alloc(page, rounded)) {
      host_sort_touch_pages(static_cast<unsigned char*>(q), rounded);
      if (cudaHostRegister(q, rounded, cudaHostRegisterDefault) == cudaSuccess) {
        p = q;
        registered = true;
        return cudaSuccess;
      }
      (void)cudaGetLastError();
      std::free(q);
    }
  }
  if (cudaHostAlloc(&p, rounded, cudaHostAllocDefault) != cudaSuccess) {
    (void)cudaGetLastError();
    p = nullptr;
    return cudaErrorMemoryAllocation;
  }
  return cudaSuccess;
}

// Frees what host_sort_alloc_scratch returned (null: nothing).
inline cudaError_t host_sort_free_scratch(void* p, bool registered) {
  if (p == nullptr) return cudaSuccess;
  if (!registered) return cudaFreeHost(p);
  const cudaError_t error = cudaHostUnregister(p);
  std::free(p);
  return error;
}

// The caller's pageable arrays registered for one call; release() (or the
// destructor) unregisters them once no transfer uses them.
class host_sort_registrations {
 public:
  host_sort_registrations() = default;
  host_sort_registrations(const host_sort_registrations&) = delete;
  host_sort_registrations& operator=(const host_sort_registrations&) = delete;
  ~host_sort_registrations() { (void)release(); }

  // Whether [p, p + bytes) is now registered; false, the error cleared,
  // where the driver refuses (e.g. one of its pages is in another
  // registered range, or the memory is read-only): it is then staged.
  bool add(void* p, std::size_t bytes) {
    if (!host_sort_registers_pageable || bytes == 0 || count_ == max_arrays) return false;
    if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    arrays_[count_++] = p;
    return true;
  }
  int count() const { return count_; }
  cudaError_t release() {
    cudaError_t first = cudaSuccess;
    for (int k = 0; k < count_; ++k) {
      const cudaError_t e = cudaHostUnregister(arrays_[k]);
      if (first == cudaSuccess) first = e;
    }
    count_ = 0;
    return first;
  }

 private:
  static constexpr int max_arrays = 2;  // keys and values
  void* arrays_[max_arrays] = {};
  int count_ = 0;
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
