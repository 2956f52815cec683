// detail/side_streams.cuh — independent launches of one sort run beside the
// caller's stream, ordered with it by events (fork and join).
//
// Segmented sort's row-sorter bins are independent of each other and of the
// long segments' merge sort, and a bin often holds a few hundred rows: run
// one after another on one stream, most of the GPU waits while each bin's
// single wave finishes. On side streams they overlap.
//
// The side streams and events belong to the calling host thread (one set per
// device and context, created on first use, non-blocking, kept for the
// thread's lifetime or until cudaDeviceReset): two host threads never share one, so one thread's graph capture
// cannot pull in another thread's work. An event is recorded and waited on
// at once, so reusing it in a later call is safe. Under stream capture the
// fork brings the side streams into the capture and the join returns them,
// so a captured sort is one graph.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include "capture_mode.cuh"
#include "error.cuh"

namespace tilesort::detail {

inline constexpr int max_side_streams = 16;

struct side_stream_set {
  cudaStream_t streams[max_side_streams] = {};
  cudaEvent_t joins[max_side_streams] = {};  // recorded on streams[i]
  cudaEvent_t fork = nullptr;                // recorded on the caller's stream
  unsigned long long context = 0;            // the context they belong to (current_context_id)
};

// A process-unique id of the calling thread's current CUDA context (0 when
// the driver cannot say). cudaDeviceReset replaces a device's context, and
// with it every stream and event made in the old one: a set made under
// another id is made again. (cuCtxGetCurrent and cuCtxGetId through the
// runtime's driver entry points: no link against libcuda.)
inline unsigned long long current_context_id() {
  using get_current_fn = CUresult(CUDAAPI*)(CUcontext*);
  using get_id_fn = CUresult(CUDAAPI*)(CUcontext, unsigned long long*);
  static const auto entry = [](const char* name) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return fn;
  };
  static const auto get_current = reinterpret_cast<get_current_fn>(entry("cuCtxGetCurrent"));
  static const auto get_id = reinterpret_cast<get_id_fn>(entry("cuCtxGetId"));
  CUcontext context = nullptr;
  unsigned long long id = 0;
  if (get_current == nullptr || get_id == nullptr || get_current(&context) != CUDA_SUCCESS || context == nullptr ||
      get_id(context, &id) != CUDA_SUCCESS)
    return 0;
  return id;
}

// The calling thread's set for the current device, with at least `count`
// streams created (legal while the caller captures a graph).
inline cudaError_t side_streams(int count, side_stream_set*& set) {
  constexpr int max_devices = 64;
  thread_local side_stream_set sets[max_devices];
  int device = 0;
  TILESORT_RETURN_IF_ERROR(cudaGetDevice(&device));
  if (device < 0 || device >= max_devices || count > max_side_streams) return cudaErrorInvalidValue;
  set = &sets[device];
  const unsigned long long context = current_context_id();
  if (context != set->context) {  // the old handles died with their context
    *set = side_stream_set{};
    set->context = context;
  }
  return in_relaxed_capture_mode([&] {
    if (set->fork == nullptr) TILESORT_RETURN_IF_ERROR(cudaEventCreateWithFlags(&set->fork, cudaEventDisableTiming));
    for (int i = 0; i < count; ++i) {
      if (set->streams[i] == nullptr)
        TILESORT_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&set->streams[i], cudaStreamNonBlocking));
      if (set->joins[i] == nullptr)
        TILESORT_RETURN_IF_ERROR(cudaEventCreateWithFlags(&set->joins[i], cudaEventDisableTiming));
    }
    return cudaSuccess;
  });
}

// Side streams 0 .. count - 1 start after everything enqueued on `stream` so far.
inline cudaError_t fork_side_streams(const side_stream_set& set, int count, cudaStream_t stream) {
  TILESORT_RETURN_IF_ERROR(cudaEventRecord(set.fork, stream));
  for (int i = 0; i < count; ++i) TILESORT_RETURN_IF_ERROR(cudaStreamWaitEvent(set.streams[i], set.fork, 0));
  return cudaSuccess;
}

// What `stream` enqueues next starts after everything enqueued on side
// streams 0 .. count - 1.
inline cudaError_t join_side_streams(const side_stream_set& set, int count, cudaStream_t stream) {
  for (int i = 0; i < count; ++i) {
    TILESORT_RETURN_IF_ERROR(cudaEventRecord(set.joins[i], set.streams[i]));
    TILESORT_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, set.joins[i], 0));
  }
  return cudaSuccess;
}

}  // namespace tilesort::detail
