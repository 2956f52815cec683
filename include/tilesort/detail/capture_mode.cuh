// detail/capture_mode.cuh — host calls that are not stream-ordered
// (cudaFuncSetAttribute, occupancy queries, stream and event creation) made
// legal while the caller captures a graph, in any capture mode.
#pragma once

#include <cuda_runtime.h>

#include "error.cuh"

namespace tilesort::detail {

// Runs `calls` (returning cudaError_t) with the thread in relaxed capture
// mode, then restores the caller's mode; returns the first error.
template <typename Calls>
cudaError_t in_relaxed_capture_mode(Calls&& calls) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  TILESORT_RETURN_IF_ERROR(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t error = calls();
  const cudaError_t restore_error = cudaThreadExchangeStreamCaptureMode(&mode);
  return error != cudaSuccess ? error : restore_error;
}

}  // namespace tilesort::detail
