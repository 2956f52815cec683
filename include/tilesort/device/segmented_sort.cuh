// device/segmented_sort.cuh — stable segmented sort: many independent
// segments of one array, each sorted on its own, in one call.
//
// Uniform segments (segments::uniform(length): rows of `length` keys, the last
// one may be shorter) are sorted by one launch and no scratch memory, with the
// smallest row sorter that holds a row:
//   * rows of up to 512 keys: one logical warp per row (warp_sort, keys in
//     registers, exchanged by shuffles); stability comes from breaking ties by
//     the key's position in its row, which travels with the key (skipped for
//     keys alone when equivalent keys are bitwise equal, e.g. integers under
//     less/greater);
//   * rows of up to 8192 keys (4096 for 8-byte keys or pairs): one block per
//     row (block_sort, stable by construction).
// Each row is read once and written once: 2 * (sizeof(Key) [+ sizeof(Value)])
// bytes of traffic per key. Longer rows return cudaErrorNotSupported for now:
// the general segmented sort (merge passes with early exit) will take them.
//
//   std::size_t temp_bytes = 0;
//   tilesort::segmented_sort_keys(nullptr, temp_bytes, d_in, d_out, n, tilesort::segments::uniform(300));
//   cudaMalloc(&d_temp, temp_bytes);
//   tilesort::segmented_sort_keys(d_temp, temp_bytes, d_in, d_out, n, tilesort::segments::uniform(300));
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../block/block_sort.cuh"
#include "../comparators.cuh"
#include "../detail/error.cuh"
#include "../detail/temp_storage.cuh"
#include "../thread/thread_load.cuh"
#include "../thread/thread_sort.cuh"
#include "../warp/warp_sort.cuh"
#include "segments.cuh"

namespace tilesort {

// Row sorters for uniform segments, by increasing capacity (threads x items).
// Chosen for the H100 (sm_90) with tilesort-bench's segmented cases; 8-byte
// keys or pairs use half the items per thread to stay clear of register spills.
template <typename Key, typename Value = void>
struct uniform_segments_policy {
  struct shape {
    int threads;
    int items;
  };
  static constexpr std::size_t value_bytes = std::is_void_v<Value> ? 0 : sizeof(std::conditional_t<std::is_void_v<Value>, char, Value>);
  static constexpr bool wide = sizeof(Key) + value_bytes > 8;
  static constexpr int warp_block_threads = 128;  // threads per block of the warp-per-row kernel
  static constexpr shape warp_shapes[] = {{8, 4}, {16, 4}, {32, 4}, {32, wide ? 4 : 8}, {32, wide ? 8 : 16}};
  static constexpr shape block_shapes[] = {{128, wide ? 4 : 8}, {128, wide ? 8 : 16}, {256, wide ? 8 : 16},
                                           {512, wide ? 8 : 16}};
  static constexpr int warp_shape_count = sizeof(warp_shapes) / sizeof(shape);
  static constexpr int block_shape_count = sizeof(block_shapes) / sizeof(shape);
  static constexpr std::int64_t max_row = std::int64_t(block_shapes[block_shape_count - 1].threads) *
                                          block_shapes[block_shape_count - 1].items;
};

namespace detail {

// A key and its position in its row; ties between equivalent keys go to the
// lower position, which turns an unstable network into a stable sort.
template <typename Key>
struct ranked_key {
  Key key;
  std::uint16_t rank;
};
template <typename Compare>
struct rank_tiebreak {
  Compare comp;
  template <typename Key>
  TILESORT_HD bool operator()(const ranked_key<Key>& a, const ranked_key<Key>& b) const {
    if (comp(a.key, b.key)) return true;
    if (comp(b.key, a.key)) return false;
    return a.rank < b.rank;
  }
};

// Where one thread's items of a row lie: the row's first key, the row length
// (valid keys), and how many of the thread's `items` consecutive keys exist.
struct row_slice {
  std::int64_t row_begin;
  int row_items;
  int first;  // thread's first position in the row
  int mine;   // its keys inside the row, 0..items
};
TILESORT_HD row_slice slice_of_row(std::int64_t row, std::int64_t length, std::int64_t n, int thread_in_row,
                                   int items) {
  row_slice s;
  s.row_begin = row * length;
  const std::int64_t left = n - s.row_begin;
  s.row_items = left <= 0 ? 0 : static_cast<int>(left < length ? left : length);
  s.first = thread_in_row * items;
  const int rest = s.row_items - s.first;
  s.mine = rest <= 0 ? 0 : (rest < items ? rest : items);
  return s;
}

template <typename Value>
inline constexpr bool has_values = !std::is_same_v<Value, no_value>;

// One logical warp of `Lanes` lanes sorts each row.
template <int Lanes, int Items, int BlockThreads, typename Key, typename Value, typename Compare>
__global__ __launch_bounds__(BlockThreads) void sort_rows_by_warps(const Key* keys_in, Key* keys_out,
                                                                   const Value* values_in, Value* values_out,
                                                                   std::int64_t n, std::int64_t length, Compare comp) {
  static_assert(Lanes * Items <= 65536, "ranks are 16-bit");
  constexpr int rows_per_block = BlockThreads / Lanes;
  constexpr bool ranked = has_values<Value> || !equivalence_is_identity<Key, Compare>;
  const std::int64_t row = std::int64_t(blockIdx.x) * rows_per_block + threadIdx.x / Lanes;
  const row_slice s = slice_of_row(row, length, n, threadIdx.x % Lanes, Items);

  Key keys[Items];
  Value values[Items];
  load_consecutive<Items>(keys_in + s.row_begin + s.first, s.mine, keys);
  if constexpr (has_values<Value>) load_consecutive<Items>(values_in + s.row_begin + s.first, s.mine, values);

  if constexpr (ranked) {
    ranked_key<Key> ranked_keys[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) ranked_keys[i] = {keys[i], static_cast<std::uint16_t>(s.first + i)};
    if constexpr (has_values<Value>) {
      warp_sort_pairs<Lanes>(ranked_keys, values, s.row_items, rank_tiebreak<Compare>{comp});
    } else {
      warp_sort<Lanes>(ranked_keys, s.row_items, rank_tiebreak<Compare>{comp});
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) keys[i] = ranked_keys[i].key;
  } else {
    warp_sort<Lanes>(keys, s.row_items, comp);
  }

  store_consecutive<Items>(keys_out + s.row_begin + s.first, s.mine, keys);
  if constexpr (has_values<Value>) store_consecutive<Items>(values_out + s.row_begin + s.first, s.mine, values);
}

// One block sorts each row; its shared memory is block_sort's temp_storage.
template <int Threads, int Items, typename Key, typename Value, typename Compare>
__global__ __launch_bounds__(Threads) void sort_rows_by_blocks(const Key* keys_in, Key* keys_out,
                                                               const Value* values_in, Value* values_out,
                                                               std::int64_t n, std::int64_t length, Compare comp) {
  using sorter = block_sort<Key, Threads, Items, std::conditional_t<has_values<Value>, Value, void>>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto& storage = *reinterpret_cast<typename sorter::temp_storage*>(shared_bytes);
  const row_slice s = slice_of_row(blockIdx.x, length, n, threadIdx.x, Items);

  Key keys[Items];
  Value values[Items];
  load_consecutive<Items>(keys_in + s.row_begin + s.first, s.mine, keys);
  if constexpr (has_values<Value>) {
    load_consecutive<Items>(values_in + s.row_begin + s.first, s.mine, values);
    sorter(storage).sort_pairs(keys, values, s.row_items, comp);
  } else {
    sorter(storage).sort(keys, s.row_items, comp);
  }
  store_consecutive<Items>(keys_out + s.row_begin + s.first, s.mine, keys);
  if constexpr (has_values<Value>) store_consecutive<Items>(values_out + s.row_begin + s.first, s.mine, values);
}

template <typename Policy, int Shape, typename Key, typename Value, typename Compare>
cudaError_t launch_uniform_rows(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                std::int64_t n, std::int64_t length, Compare comp, cudaStream_t stream) {
  const std::int64_t rows = ceil_div(n, length);
  if constexpr (Shape < Policy::warp_shape_count) {
    constexpr auto shape = Policy::warp_shapes[Shape];
    if (length > shape.threads * shape.items)
      return launch_uniform_rows<Policy, Shape + 1>(keys_in, keys_out, values_in, values_out, n, length, comp, stream);
    constexpr int rows_per_block = Policy::warp_block_threads / shape.threads;
    const auto blocks = static_cast<unsigned>(ceil_div(rows, rows_per_block));
    sort_rows_by_warps<shape.threads, shape.items, Policy::warp_block_threads>
        <<<blocks, Policy::warp_block_threads, 0, stream>>>(keys_in, keys_out, values_in, values_out, n, length, comp);
    return cudaGetLastError();
  } else if constexpr (Shape < Policy::warp_shape_count + Policy::block_shape_count) {
    constexpr auto shape = Policy::block_shapes[Shape - Policy::warp_shape_count];
    if (length > shape.threads * shape.items)
      return launch_uniform_rows<Policy, Shape + 1>(keys_in, keys_out, values_in, values_out, n, length, comp, stream);
    using sorter = block_sort<Key, shape.threads, shape.items, std::conditional_t<has_values<Value>, Value, void>>;
    constexpr std::size_t shared_bytes = sizeof(typename sorter::temp_storage);
    auto kernel = sort_rows_by_blocks<shape.threads, shape.items, Key, Value, Compare>;
    if constexpr (shared_bytes > 48 * 1024)
      TILESORT_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    static_cast<int>(shared_bytes)));
    kernel<<<static_cast<unsigned>(rows), shape.threads, shared_bytes, stream>>>(keys_in, keys_out, values_in,
                                                                                  values_out, n, length, comp);
    return cudaGetLastError();
  } else {
    return cudaErrorNotSupported;
  }
}

// Validation and the cheap cases shared by keys and pairs.
template <typename Key, typename Value, typename Compare>
cudaError_t segmented_sort_uniform(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                   const Value* values_in, Value* values_out, std::int64_t n,
                                   segments::uniform_t segments, Compare comp, cudaStream_t stream) {
  using policy = uniform_segments_policy<Key, std::conditional_t<has_values<Value>, Value, void>>;
  if (n < 0 || segments.length <= 0) return cudaErrorInvalidValue;
  const std::int64_t length = std::min(segments.length, std::max<std::int64_t>(n, 1));
  if (length > policy::max_row) return cudaErrorNotSupported;
  if (d_temp == nullptr) {  // size query: nothing else happens
    temp_bytes = min_temp_bytes;
    return cudaSuccess;
  }
  TILESORT_RETURN_IF_ERROR(check_temp(d_temp, temp_bytes, min_temp_bytes));
  TILESORT_RETURN_IF_ERROR(check_sort_args(keys_in, keys_out, values_in, values_out, has_values<Value>, n));
  if (n == 0) return cudaSuccess;
  if (length == 1) {  // every row is sorted already
    if (keys_out != keys_in)
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(keys_out, keys_in, n * sizeof(Key), cudaMemcpyDeviceToDevice, stream));
    if constexpr (has_values<Value>) {
      if (values_out != values_in)
        TILESORT_RETURN_IF_ERROR(
            cudaMemcpyAsync(values_out, values_in, n * sizeof(Value), cudaMemcpyDeviceToDevice, stream));
    }
    return cudaSuccess;
  }
  return launch_uniform_rows<policy, 0>(keys_in, keys_out, values_in, values_out, n, length, comp, stream);
}

}  // namespace detail

/// Stable segmented sort of keys. With segments::uniform(length): rows of
/// `length` keys (the last may be shorter), rows up to
/// uniform_segments_policy::max_row keys (8192 for 4-byte keys); longer rows
/// return cudaErrorNotSupported. Two-phase: call with d_temp == nullptr to get
/// temp_bytes. keys_out may equal keys_in.
///
///   tilesort::segmented_sort_keys(d_temp, temp_bytes, d_keys, d_keys, n, tilesort::segments::uniform(32));
template <typename Key, typename Compare = less>
cudaError_t segmented_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                std::int64_t n, segments::uniform_t segments, Compare comp = {},
                                cudaStream_t stream = 0) {
  return detail::segmented_sort_uniform(d_temp, temp_bytes, keys_in, keys_out, static_cast<const detail::no_value*>(nullptr),
                                        static_cast<detail::no_value*>(nullptr), n, segments, comp, stream);
}

/// Stable segmented sort of key-value pairs; values travel with their keys.
/// values_out may equal values_in.
template <typename Key, typename Value, typename Compare = less>
cudaError_t segmented_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, Key* keys_out,
                                 const Value* values_in, Value* values_out, std::int64_t n,
                                 segments::uniform_t segments, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::segmented_sort_uniform(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, segments, comp,
                                        stream);
}

/// Convenience form: allocates its temp storage on `stream` (cudaMallocAsync).
template <typename Key, typename Segments, typename Compare = less>
cudaError_t segmented_sort_keys(const Key* keys_in, Key* keys_out, std::int64_t n, Segments segments,
                                Compare comp = {}, cudaStream_t stream = 0) {
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return segmented_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, segments, comp, stream);
  });
}

template <typename Key, typename Value, typename Segments, typename Compare = less>
cudaError_t segmented_sort_pairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                 std::int64_t n, Segments segments, Compare comp = {}, cudaStream_t stream = 0) {
  return detail::with_stream_temp(stream, [&](void* d_temp, std::size_t& temp_bytes) {
    return segmented_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, segments, comp,
                                stream);
  });
}

}  // namespace tilesort
