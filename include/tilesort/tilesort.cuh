// tilesort.cuh — everything in tilesort: the version, the comparators and
// the thread, warp, block, device and host levels.
#pragma once

#include "version.cuh"
#include "comparators.cuh"
#include "thread/thread_load.cuh"
#include "thread/thread_sort.cuh"
#include "block/block_bitonic_sort.cuh"
#include "block/block_sort.cuh"
#include "warp/warp_sort.cuh"
#include "device/bitonic_sort.cuh"
#include "device/locality_sort.cuh"
#include "device/merge_sort.cuh"
#include "device/radix_sort.cuh"
#include "device/sample_sort.cuh"
#include "device/segmented_sort.cuh"
#include "device/sort.cuh"
#include "device/sort_stats.cuh"
#include "host/host_sort.cuh"

/// @namespace tilesort
/// GPU sorting primitives, one level per folder: comparators; thread-level
/// networks (thread/); warp sorts in registers (warp/); block sorts with
/// caller-owned shared memory (block/); device sorts with two-phase temp
/// storage (device/); sorts of arrays in host memory (host/).
/// `#include <tilesort/tilesort.cuh>` brings in all of them.

/// @namespace tilesort::segments
/// The ways to describe segments to tilesort::segmented_sort_keys and
/// tilesort::segmented_sort_pairs: offsets, heads, head flags, uniform rows.
