// bench/alternatives_pairs.cu — CUB and Thrust sorts of key-value pairs
// (u32/u32, u32/u64, u64/u64), instantiated once for the merge and bitonic
// families.
#include <tilesort/comparators.cuh>

#include "alternatives_impl.cuh"

BENCH_INSTANTIATE_COMPARISON_SORTS(std::uint32_t, std::uint32_t, tilesort::less)
BENCH_INSTANTIATE_COMPARISON_SORTS(std::uint32_t, std::uint64_t, tilesort::less)
BENCH_INSTANTIATE_COMPARISON_SORTS(std::uint64_t, std::uint64_t, tilesort::less)
BENCH_INSTANTIATE_RADIX_SORT(std::uint32_t, std::uint32_t)
BENCH_INSTANTIATE_RADIX_SORT(std::uint32_t, std::uint64_t)
BENCH_INSTANTIATE_RADIX_SORT(std::uint64_t, std::uint64_t)
