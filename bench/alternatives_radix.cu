// bench/alternatives_radix.cu — cub::DeviceRadixSort for the radix family's
// key and value types that the other families do not use.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "alternatives_impl.cuh"

BENCH_INSTANTIATE_RADIX_SORT(std::uint8_t, void)
BENCH_INSTANTIATE_RADIX_SORT(std::uint16_t, void)
BENCH_INSTANTIATE_RADIX_SORT(std::int32_t, void)
BENCH_INSTANTIATE_RADIX_SORT(std::int64_t, void)
BENCH_INSTANTIATE_RADIX_SORT(__half, void)
BENCH_INSTANTIATE_RADIX_SORT(__nv_bfloat16, void)
BENCH_INSTANTIATE_RADIX_SORT(double, void)
