// tilesort.cuh — everything in tilesort: the comparators and the thread,
// warp, block and device levels.
#pragma once

#include "comparators.cuh"
#include "thread/thread_load.cuh"
#include "thread/thread_sort.cuh"
#include "block/block_bitonic_sort.cuh"
#include "block/block_sort.cuh"
#include "warp/warp_sort.cuh"
#include "device/bitonic_sort.cuh"
#include "device/locality_sort.cuh"
#include "device/merge_sort.cuh"
#include "device/sample_sort.cuh"
#include "device/segmented_sort.cuh"
#include "device/sort.cuh"
#include "device/sort_stats.cuh"
