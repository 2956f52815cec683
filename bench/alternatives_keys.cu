// bench/alternatives_keys.cu — CUB and Thrust sorts of keys only (u32, u64,
// f32, the struct key), instantiated once for the merge and bitonic families.
#include <tilesort/comparators.cuh>

#include "alternatives_impl.cuh"

BENCH_INSTANTIATE_COMPARISON_SORTS(std::uint32_t, void, tilesort::less)
BENCH_INSTANTIATE_COMPARISON_SORTS(std::uint64_t, void, tilesort::less)
BENCH_INSTANTIATE_COMPARISON_SORTS(float, void, tilesort::less)
BENCH_INSTANTIATE_COMPARISON_SORTS(bench::pair_key, void, bench::by_a)
BENCH_INSTANTIATE_RADIX_SORT(std::uint32_t, void)
BENCH_INSTANTIATE_RADIX_SORT(std::uint64_t, void)
BENCH_INSTANTIATE_RADIX_SORT(float, void)
