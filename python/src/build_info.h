// build_info.h — what the extension's GPU code was built for, and whether it
// loads on the current device: the facts behind tilesort.show_config() and
// the message of an unsupported GPU or driver (tilesort/_device.py).
//
//   const char* archs = tilesort_py::cuda_architectures();   // "80-real,90-real,100-real,100-virtual"
//   cudaError_t loads = tilesort_py::load_probe_kernel();     // cudaSuccess where the kernels run here
#pragma once

#include <cuda_runtime.h>

namespace tilesort_py {

// The CUDA architectures the kernels were compiled for, as CMake's
// CUDA_ARCHITECTURES entries joined by commas: "80-real" is SASS for sm_80,
// "100-virtual" PTX for compute_100, a bare number both.
const char* cuda_architectures();

// Loads an empty kernel compiled with the same architectures as every other
// kernel of the extension on the current device: cudaSuccess where they run
// there, else why not (cudaErrorNoKernelImageForDevice: no SASS for the GPU
// and no PTX it can JIT; cudaErrorUnsupportedPtxVersion: PTX newer than the
// driver; cudaErrorInsufficientDriver: a driver older than the runtime).
cudaError_t load_probe_kernel();

}  // namespace tilesort_py
