// device/radix_sort/buckets.cuh — the hybrid radix sort's last stage: after
// the passes over the bucket digits (detail/radix_sort_plan.cuh,
// radix_choose_buckets) the keys in the output are grouped by bucket, in
// bucket order, each bucket's keys in input order. These steps finish them:
//   1. radix_bucket_starts_kernel: one read of the keys finds where each
//      bucket starts (each key's bucket is compared with its left
//      neighbour's, and the starts of the buckets in between are written,
//      empty ones included);
//   2. keys alone whose equivalent keys are identical (integers under
//      less / greater), where the plan chose a tile shape
//      (radix_bucket_tile_for): radix_bucket_tile_kernel, a block per
//      bucket, sorts every bucket of up to a tile in shared memory (read
//      once, written once) and marks it done by an empty segment; order
//      among equal keys cannot show, so the tile need not be stable;
//   3. the segmented sort's general path (device/segmented_sort.cuh) sorts
//      every bucket left in place by the sort's order, stably: buckets of up
//      to a block's tile are read once and written once (a warp or a block
//      per bucket), longer ones (skewed keys the histogram did not foresee)
//      go to its early-exit merge sort, with the radix sort's alternate
//      buffers as scratch.
// Where the histogram chose the LSD sort (or the front door's probe skipped
// the radix sort), step 1 returns at once and the starts stay zero: every
// bucket is empty and steps 2 and 3 touch no key.
#pragma once

#include <cstdint>

#include "../../block/block_scan.cuh"
#include "../../detail/config.cuh"
#include "../../detail/error.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/radix_sort_plan.cuh"
#include "../segmented_sort.cuh"

namespace tilesort::detail {

// starts[b] = the first position whose key's bucket is b or later, for b in
// [0, 256^digits], over positions [0, n] (position n's bucket is 256^digits).
// A warp takes 32 x Items consecutive positions at a time, lane-striped so
// that every load is coalesced; each key is read once and its bucket found
// once, its left neighbour's bucket comes by shuffle (the warp's first
// position reads one key more). Buckets fit 32 bits (at most 2^16 + 1).
template <int Items, typename Key, typename Image>
__global__ void radix_bucket_starts_kernel(const Key* keys, std::int64_t n, Image image, const radix_control* control,
                                           int digits, std::int64_t* starts) {
  static_assert(Items >= 1, "a warp takes 32 x Items positions at a time");
  wait_for_previous_kernel();
  allow_next_kernel();
  if (control->schedule.buckets == 0) return;
  const int buckets = 1 << (8 * digits);
  int bucket_digit[radix_bucket_digits];
  TILESORT_UNROLL
  for (int k = 0; k < radix_bucket_digits; ++k) bucket_digit[k] = control->schedule.bucket_digit[k];
  const auto bucket_of = [&](std::int64_t p) {
    return p < n ? static_cast<int>(radix_bucket_of(image(keys[p]), bucket_digit, digits)) : buckets;
  };
  constexpr int span = warp_threads * Items;
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp_threads;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / warp_threads;
  for (std::int64_t first = warp * span; first <= n; first += warps * span) {  // warp-uniform
    int bucket[Items];
    TILESORT_UNROLL
    for (int j = 0; j < Items; ++j) bucket[j] = bucket_of(first + j * warp_threads + lane);
    int before = first > 0 ? bucket_of(first - 1) : -1;  // the bucket left of the lane's position
    TILESORT_UNROLL
    for (int j = 0; j < Items; ++j) {
      const int up = __shfl_up_sync(0xffffffffu, bucket[j], 1);
      const int left = lane == 0 ? before : up;
      before = __shfl_sync(0xffffffffu, bucket[j], warp_threads - 1);
      const std::int64_t p = first + j * warp_threads + lane;
      if (p <= n)
        for (int b = left + 1; b <= bucket[j]; ++b) starts[b] = p;
    }
  }
}

// A bucket tile's shared memory: the bucket's keys, the counts (then starts)
// of its sub-buckets, which the top `digit_bits` varying bits of the keys
// select (four per key of a full tile), and the block's reductions.
template <int Threads, int Items, typename Key>
struct radix_bucket_tile_storage {
  static constexpr int capacity = Threads * Items;
  static constexpr int digit_bits = log2_floor(capacity) - 2;
  static constexpr int bins = 1 << digit_bits;
  static constexpr int warps = Threads / warp_threads;
  static_assert(Threads % warp_threads == 0 && bins % Threads == 0, "whole warps, whole sub-buckets per thread");
  Key keys[capacity];
  unsigned count[bins];
  std::uint64_t any_bits[warps], all_bits[warps];  // per warp: OR and AND of the images
  unsigned longest[warps];                         // per warp: the most keys a thread's sub-buckets hold
  std::int64_t warp_sums[warps + 1];               // block_exclusive_sum's
};

// One block per bucket of the hybrid sort, keys alone whose equivalent keys
// are identical. A bucket of 2 to Threads x Items keys: its keys are loaded
// (lane-striped), the bits that vary among them found (OR and AND over the
// block), and the top digit_bits of those split the bucket into sub-buckets
// in shared memory (a shared atomic per key gives its place in its
// sub-bucket). Each thread owns bins / Threads consecutive sub-buckets and
// sorts them together by insertion (they are in order among themselves),
// then the tile is written back. ends[bucket] = its start (an empty segment:
// done) or, where the bucket is longer than the tile or a thread's
// sub-buckets hold more than MaxRun keys (keys the top varying bits do not
// spread), its end: the segmented sort then sorts it.
template <int Threads, int Items, int MaxRun, typename Key, typename Image>
__global__ __launch_bounds__(Threads, 1024 / Threads) void radix_bucket_tile_kernel(Key* keys,
                                                                                    const std::int64_t* starts,
                                                                                    std::int64_t* ends, Image image) {
  using storage_type = radix_bucket_tile_storage<Threads, Items, Key>;
  constexpr int per_thread = storage_type::bins / Threads;
  constexpr int digit_bits = storage_type::digit_bits;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto& shared = *reinterpret_cast<storage_type*>(shared_bytes);
  wait_for_previous_kernel();
  allow_next_kernel();
  const std::int64_t bucket = blockIdx.x;
  const std::int64_t begin = starts[bucket];
  const std::int64_t end = starts[bucket + 1];
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % warp_threads;
  const int warp = t / warp_threads;
  if (end - begin < 2 || end - begin > storage_type::capacity) {  // block-uniform
    if (t == 0) ends[bucket] = end - begin < 2 ? begin : end;
    return;
  }
  const int count = static_cast<int>(end - begin);
  const auto bits_of = [&](const Key& key) { return static_cast<std::uint64_t>(image(key)); };

  // The keys (slots past the bucket stay unread and unused), and the bits
  // that vary among them.
  Key key[Items];
  std::uint64_t any = 0, all = ~std::uint64_t(0);
  TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) {
    const int p = i * Threads + t;
    if (p < count) {
      key[i] = keys[begin + p];
      const std::uint64_t b = bits_of(key[i]);
      any |= b;
      all &= b;
    }
  }
  const auto warp_or = [](std::uint64_t x) {
    return std::uint64_t(__reduce_or_sync(0xffffffffu, unsigned(x >> 32))) << 32 |
           __reduce_or_sync(0xffffffffu, unsigned(x));
  };
  const auto warp_and = [](std::uint64_t x) {
    return std::uint64_t(__reduce_and_sync(0xffffffffu, unsigned(x >> 32))) << 32 |
           __reduce_and_sync(0xffffffffu, unsigned(x));
  };
  any = warp_or(any);
  all = warp_and(all);
  for (int k = 0; k < per_thread; ++k) shared.count[k * Threads + t] = 0;
  if (lane == 0) {
    shared.any_bits[warp] = any;
    shared.all_bits[warp] = all;
  }
  __syncthreads();
  any = 0;
  all = ~std::uint64_t(0);
  TILESORT_UNROLL
  for (int w = 0; w < storage_type::warps; ++w) {
    any |= shared.any_bits[w];
    all &= shared.all_bits[w];
  }
  const std::uint64_t varying = any ^ all;
  if (varying == 0) {  // every key the same: in order already
    if (t == 0) ends[bucket] = begin;
    return;
  }
  const int top = 63 - __clzll(static_cast<long long>(varying));
  const int shift = top + 1 > digit_bits ? top + 1 - digit_bits : 0;
  const auto digit_of = [&](const Key& k) {
    return static_cast<unsigned>(bits_of(k) >> shift) & unsigned(storage_type::bins - 1);
  };

  // Each key's place in its sub-bucket, then each thread's sub-buckets'
  // counts, their starts (a block scan) and the most keys a thread holds.
  unsigned place[Items];
  TILESORT_UNROLL
  for (int i = 0; i < Items; ++i)
    if (i * Threads + t < count) place[i] = atomicAdd(&shared.count[digit_of(key[i])], 1u);
  __syncthreads();
  unsigned run[per_thread];
  unsigned mine = 0;
  TILESORT_UNROLL
  for (int k = 0; k < per_thread; ++k) {
    run[k] = shared.count[t * per_thread + k];
    mine += run[k];
  }
  const unsigned warp_longest = __reduce_max_sync(0xffffffffu, mine);
  if (lane == 0) shared.longest[warp] = warp_longest;
  std::int64_t total = 0;
  const int first = static_cast<int>(block_exclusive_sum<Threads>(mine, shared.warp_sums, total));  // barriers
  unsigned longest = 0;
  TILESORT_UNROLL
  for (int w = 0; w < storage_type::warps; ++w) longest = shared.longest[w] > longest ? shared.longest[w] : longest;
  if (longest > unsigned(MaxRun)) {  // block-uniform: the segmented sort takes the bucket
    if (t == 0) ends[bucket] = end;
    return;
  }
  unsigned at = static_cast<unsigned>(first);
  TILESORT_UNROLL
  for (int k = 0; k < per_thread; ++k) {
    shared.count[t * per_thread + k] = at;
    at += run[k];
  }
  __syncthreads();
  TILESORT_UNROLL
  for (int i = 0; i < Items; ++i)
    if (i * Threads + t < count) shared.keys[shared.count[digit_of(key[i])] + place[i]] = key[i];
  __syncthreads();

  // The thread's sub-buckets, [first, first + mine), by insertion.
  for (int a = first + 1; a < first + static_cast<int>(mine); ++a) {
    const Key x = shared.keys[a];
    const std::uint64_t bx = bits_of(x);
    int j = a - 1;
    while (j >= first && bits_of(shared.keys[j]) > bx) {
      shared.keys[j + 1] = shared.keys[j];
      --j;
    }
    shared.keys[j + 1] = x;
  }
  __syncthreads();
  TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) {
    const int p = i * Threads + t;
    if (p < count) keys[begin + p] = shared.keys[p];
  }
  if (t == 0) ends[bucket] = begin;
}

// Launches the bucket tiles of shape `shape` (Policy::bucket_tile_*) over
// `buckets` buckets, a block each.
template <typename Policy, int Shape = 0, typename Key, typename Image>
cudaError_t launch_radix_bucket_tiles(int shape, Key* keys, const std::int64_t* starts, std::int64_t* ends,
                                      std::int64_t buckets, Image image, cudaStream_t stream) {
  if constexpr (Shape < Policy::bucket_tile_shapes) {
    if (shape != Shape)
      return launch_radix_bucket_tiles<Policy, Shape + 1>(shape, keys, starts, ends, buckets, image, stream);
    constexpr int threads = Policy::bucket_tile_threads(Shape);
    constexpr int items = Policy::bucket_tile_items(Shape);
    constexpr std::size_t shared_bytes = sizeof(radix_bucket_tile_storage<threads, items, Key>);
    auto* kernel = radix_bucket_tile_kernel<threads, items, Policy::bucket_tile_max_run, Key, Image>;
    if (buckets <= 0 || buckets > 0x7fffffff) return cudaErrorInvalidValue;
    TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(kernel, shared_bytes));
    return launch_kernel(kernel, static_cast<unsigned>(buckets), threads, shared_bytes, stream, true, keys, starts,
                         ends, image);
  } else {
    return cudaErrorInvalidValue;  // (no such shape)
  }
}

}  // namespace tilesort::detail
