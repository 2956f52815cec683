// build_info.cu — the kernels' architectures (a compile definition set by
// python/CMakeLists.txt from CMAKE_CUDA_ARCHITECTURES, so that the list
// travels with the objects it describes) and the probe kernel that shows
// whether they load on the current device.
#include "build_info.h"

#ifndef TILESORT_PY_CUDA_ARCHITECTURES
#error "TILESORT_PY_CUDA_ARCHITECTURES: set by python/CMakeLists.txt"
#endif

namespace tilesort_py {
namespace {

__global__ void probe_kernel() {}

}  // namespace

const char* cuda_architectures() { return TILESORT_PY_CUDA_ARCHITECTURES; }

cudaError_t load_probe_kernel() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, probe_kernel);
}

}  // namespace tilesort_py
