// examples/common/example_util.cuh — what every example shares: a CUDA call
// check, the "is there a GPU" guard, and printing values in numbered rows.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>

// Report a failed CUDA call (where and why) and leave main with status 1.
#define CHECK(call)                                                                                        \
  do {                                                                                                     \
    const cudaError_t example_error_ = (call);                                                             \
    if (example_error_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                            \
                   cudaGetErrorString(example_error_));                                                    \
      return 1;                                                                                            \
    }                                                                                                      \
  } while (0)

namespace example {

// True when a CUDA device is present.
inline bool cuda_device_present() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

// True when a CUDA device is present; otherwise says that `program` needs one
// (the caller then exits with status 0).
inline bool require_device(const char* program) {
  if (cuda_device_present()) return true;
  std::printf("%s: no CUDA device found, nothing to run (run it on a machine with an NVIDIA GPU).\n", program);
  return false;
}

// `title`, then `count` values in rows of `per_row`, each row led by the
// index of its first value; `cell(i)` prints value i. A blank line follows.
template <typename Cell>
void print_rows(const char* title, std::size_t count, Cell cell, std::size_t per_row = 10) {
  std::printf("%s\n", title);
  for (std::size_t row = 0; row < count; row += per_row) {
    std::printf("%5zu: ", row);
    for (std::size_t i = row; i < row + per_row && i < count; ++i) cell(i);
    std::printf("\n");
  }
  std::printf("\n");
}

}  // namespace example
