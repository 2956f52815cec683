// device/segmented_sort/row_sorters.cuh — the row sorters of the segmented sort:
// one logical warp (warp_sort, keys in registers) or one block (block_sort)
// sorts one segment ("row") at a time, keys loaded with
// thread/thread_load.cuh's consecutive (blocked) loads and stored the same
// way. One read and one write per key. They serve uniform rows (one launch,
// the first shape that holds a row) and the general path's bins (one launch
// per shape over a list of packed segments whose length is read on the
// device). Values come from a pointer or are made at load (each key's
// position in its row) and go to a pointer or are widened at store.
// Stability: block_sort is stable; the warp sort breaks ties by the key's
// position in its row (16-bit ranks), skipped for keys alone when
// equivalent keys are bitwise equal (integers under less/greater).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../../block/block_sort.cuh"
#include "../../comparators.cuh"
#include "../../detail/config.cuh"
#include "../../detail/error.cuh"
#include "../../detail/segment_ranges.cuh"
#include "../../thread/thread_load.cuh"
#include "../../thread/thread_sort.cuh"
#include "../../warp/warp_sort.cuh"
#include "../../detail/launch.cuh"

namespace tilesort {

/// Row sorters of the segmented sort, by increasing capacity (threads x
/// items): logical warps for short rows, blocks for longer ones. Chosen for
/// sm_90 with tilesort-bench's segmented cases
/// (docs/tuning/segmented_sort.md). 8-byte keys or pairs use half the items
/// per thread to stay clear of register spills. Pairs leave the warp sorters
/// above 64 keys: the warp network moves key and rank at each of its log^2
/// stages, block_sort's merges move them log times. The largest shape, a
/// block of 1024 threads (16384 4-byte keys or pairs, at most 64 registers a
/// thread), sorts segments of up to 16384 keys whole, in one read and one
/// write; longer segments take the merge path (larger shapes spilled or were
/// slower than it).
///
/// @code
/// using rows = tilesort::uniform_segments_policy<std::uint32_t>;
/// static_assert(rows::max_row == 16384);
/// @endcode
template <typename Key, typename Value = void>
struct uniform_segments_policy {
  /// One row sorter's shape: a row of up to threads x items keys.
  struct shape {
    int threads;  ///< threads per row (a logical warp of up to 32, or a block)
    int items;    ///< keys per thread
  };
  /// sizeof(Value), 0 for keys only.
  static constexpr std::size_t value_bytes = detail::value_bytes_of<Value>;
  static constexpr bool pairs = value_bytes > 0;                 ///< values travel with the keys
  static constexpr bool wide = sizeof(Key) + value_bytes > 8;    ///< items over 8 bytes: half the items per thread
  static constexpr int warp_block_threads = 128;                 ///< threads per block of the warp-per-row kernel

 private:
  static constexpr shape key_warps[] = {{8, 4}, {16, 4}, {32, 4}, {32, wide ? 4 : 8}, {32, wide ? 8 : 16}};
  static constexpr shape key_blocks[] = {{128, wide ? 4 : 8}, {128, wide ? 8 : 16}, {256, wide ? 8 : 16},
                                         {512, wide ? 8 : 16}, {1024, wide ? 8 : 16}};
  static constexpr shape pair_warps[] = {{8, 4}, {16, 4}};
  static constexpr shape pair_blocks[] = {{32, 4},   {64, 4},   {128, 4},  {128, 8},
                                          {128, 16}, {256, 16}, {512, 16}, {1024, 16}};
  static constexpr shape wide_pair_blocks[] = {{32, 4}, {64, 4}, {128, 4}, {128, 8}, {256, 8}, {512, 8}, {1024, 8}};

 public:
  static constexpr int warp_shape_count = pairs ? 2 : 5;                  ///< number of warp shapes
  static constexpr int block_shape_count = !pairs ? 5 : wide ? 7 : 8;     ///< number of block shapes
  /// Warp shape i (i < warp_shape_count), by increasing capacity.
  static constexpr shape warp_shape(int i) { return pairs ? pair_warps[i] : key_warps[i]; }
  /// Block shape i (i < block_shape_count), by increasing capacity.
  static constexpr shape block_shape(int i) {
    return !pairs ? key_blocks[i] : wide ? wide_pair_blocks[i] : pair_blocks[i];
  }
  /// The longest row sorted whole; longer segments take the merge path.
  static constexpr std::int64_t max_row =
      std::int64_t(block_shape(block_shape_count - 1).threads) * block_shape(block_shape_count - 1).items;
};

namespace detail {

// A key and its position in its row; ties between equivalent keys go to the
// lower position, which turns an unstable network into a stable sort. The
// rank is a full word beside keys of 4 bytes or more (the struct's size is
// the same, and ptxas then needs no byte permutes to pack and unpack it).
template <typename Key>
using rank_type = std::conditional_t<(sizeof(Key) >= 4), std::uint32_t, std::uint16_t>;
template <typename Key>
struct ranked_key {
  Key key;
  rank_type<Key> rank;
};
template <typename Compare>
struct rank_tiebreak {
  Compare comp;
  template <typename Key>
  TILESORT_HD bool operator()(const ranked_key<Key>& a, const ranked_key<Key>& b) const {
    // Both comparisons always, combined bitwise: no branch in the network.
    return comp(a.key, b.key) | (!comp(b.key, a.key) & (a.rank < b.rank));
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
// A row whose keys lie `stride` apart: a dim other than the last of a
// contiguous array (detail::row_positions_sort with a stride).
struct strided_row_slice : row_slice {
  std::int64_t stride;
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

// Where the key at `position` of a row lies, and one thread's `mine` keys of
// its row loaded or stored (consecutive: vectorized where aligned; strided:
// one access each, neighbouring rows read the same sectors).
TILESORT_HD std::int64_t row_offset(const row_slice& s, std::uint32_t position) { return s.row_begin + position; }
TILESORT_HD std::int64_t row_offset(const strided_row_slice& s, std::uint32_t position) {
  return s.row_begin + std::int64_t(position) * s.stride;
}
template <int Items, typename T>
TILESORT_DEVICE void load_row_items(const T* base, const row_slice& s, T (&items)[Items]) {
  load_consecutive<Items>(base + s.row_begin + s.first, s.mine, items);
}
template <int Items, typename T>
TILESORT_DEVICE void load_row_items(const T* base, const strided_row_slice& s, T (&items)[Items]) {
  const T* first = base + row_offset(s, s.first);
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i)
    if (i < s.mine) items[i] = first[i * s.stride];
}
template <int Items, typename T>
TILESORT_DEVICE void store_row_items(T* base, const row_slice& s, const T (&items)[Items]) {
  store_consecutive<Items>(base + s.row_begin + s.first, s.mine, items);
}
template <int Items, typename T>
TILESORT_DEVICE void store_row_items(T* base, const strided_row_slice& s, const T (&items)[Items]) {
  T* first = base + row_offset(s, s.first);
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i)
    if (i < s.mine) first[i * s.stride] = items[i];
}

// Where a row sorter's values come from and where they go. A source is a
// pointer (an array beside the keys) or row_positions: each key's position
// in its row, generated at load (no array read; sorted with the keys it is
// the key's index in its row, torch.sort's indices). A sink is a pointer of
// the value type or a widening_sink, which stores each value converted to
// Wide (positions as int64 indices), so the sort moves 4-byte positions.
struct row_positions {};
template <typename Wide>
struct widening_sink {
  Wide* out;
};

template <typename Source>
struct row_source_value;
template <typename T>
struct row_source_value<const T*> {
  using type = T;
};
template <>
struct row_source_value<row_positions> {
  using type = std::uint32_t;
};
template <typename Source>
using row_value_t = typename row_source_value<Source>::type;

template <int Items, typename T, typename Slice>
TILESORT_DEVICE void load_row_values(const T* values, const Slice& s, T (&items)[Items]) {
  load_row_items<Items>(values, s, items);
}
template <int Items, typename Slice>
TILESORT_DEVICE void load_row_values(row_positions, const Slice& s, std::uint32_t (&items)[Items]) {
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) items[i] = static_cast<std::uint32_t>(s.first + i);
}
// The value of the key at `position` in the row of slice s.
template <typename T, typename Slice>
TILESORT_DEVICE T row_value_at(const T* values, const Slice& s, std::uint32_t position) {
  return values[row_offset(s, position)];
}
template <typename Slice>
TILESORT_DEVICE std::uint32_t row_value_at(row_positions, const Slice&, std::uint32_t position) {
  return position;
}
template <int Items, typename T, typename Slice>
TILESORT_DEVICE void store_row_values(T* values, const Slice& s, const T (&items)[Items]) {
  store_row_items<Items>(values, s, items);
}
template <int Items, typename Wide, typename T, typename Slice>
TILESORT_DEVICE void store_row_values(widening_sink<Wide> sink, const Slice& s, const T (&items)[Items]) {
  Wide wide[Items];
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) wide[i] = static_cast<Wide>(items[i]);
  store_row_items<Items>(sink.out, s, wide);
}

// Where a row sorter's keys come from and where they go: a pointer of the
// key type (the keys sort as they are), or, for keys of up to 4 bytes whose
// order has an image of 32 bits or fewer (detail::row_positions_sort),
// packed_row_keys: each key sorts as one word, its image above its position
// in the row: 64 bits for images of 4 bytes, 32 bits (image << 16 |
// position) for images of 1 or 2 bytes, as rows hold at most 16384 keys. The
// words of a row are all distinct, so an unstable network sorts them stably
// under plain less, with no tie-break; at store the position comes out of
// the low bits, the sorted key is read back from the row by it (every bit
// kept, nothing to invert), and the position is written as int64
// (torch.sort's indices). keys_out may be null (positions only) or keys_in.
template <typename Key, typename Image>
struct packed_row_keys {
  const Key* keys_in;
  Key* keys_out;
  std::int64_t* positions;
  Image image;

  using image_bits =
      std::remove_cv_t<std::remove_reference_t<decltype(std::declval<const Image&>()(std::declval<const Key&>()))>>;
  static_assert(sizeof(image_bits) <= 4, "packed rows take images of 32 bits or fewer");
  using word = std::conditional_t<(sizeof(image_bits) <= 2), std::uint32_t, std::uint64_t>;
  static constexpr int position_bits = sizeof(word) == 4 ? 16 : 32;
  static constexpr word position_mask = (word(1) << position_bits) - 1;
  TILESORT_HD word pack(const Key& key, int position) const {
    return word(word(image(key)) << position_bits) | word(position);
  }
};

template <typename Keys>
struct row_key_of;
template <typename T>
struct row_key_of<const T*> {
  using type = T;
};
template <typename Key, typename Image>
struct row_key_of<packed_row_keys<Key, Image>> {
  using type = typename packed_row_keys<Key, Image>::word;
};
template <typename Keys>
using row_key_t = typename row_key_of<Keys>::type;

template <int Items, typename Key, typename Slice>
TILESORT_DEVICE void load_row_keys(const Key* keys, const Slice& s, Key (&items)[Items]) {
  load_row_items<Items>(keys, s, items);
}
// Items past the row keep what they held (the block sorters' padding).
template <int Items, typename Key, typename Image, typename Word, typename Slice>
TILESORT_DEVICE void load_row_keys(const packed_row_keys<Key, Image>& packed, const Slice& s, Word (&items)[Items]) {
  Key keys[Items];
  load_row_items<Items>(packed.keys_in, s, keys);
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i)
    if (i < s.mine) items[i] = packed.pack(keys[i], s.first + i);
}

// `sync`: what the packed store calls, in every thread of the row's sorter,
// between its reads of the row and its first store (in place, it reads the
// row back by position).
template <int Items, typename Key, typename Slice, typename Sync>
TILESORT_DEVICE void store_row_keys(Key* keys, const Slice& s, const Key (&items)[Items], Sync) {
  store_row_items<Items>(keys, s, items);
}
template <int Items, typename Key, typename Image, typename Word, typename Slice, typename Sync>
TILESORT_DEVICE void store_row_keys(const packed_row_keys<Key, Image>& packed, const Slice& s,
                                    const Word (&items)[Items], Sync sync) {
  constexpr Word mask = packed_row_keys<Key, Image>::position_mask;
  if (packed.keys_out != nullptr) {
    Key keys[Items];
TILESORT_UNROLL
    for (int i = 0; i < Items; ++i)
      if (i < s.mine) keys[i] = packed.keys_in[row_offset(s, static_cast<std::uint32_t>(items[i] & mask))];
    sync();
    store_row_items<Items>(packed.keys_out, s, keys);
  }
  std::int64_t positions[Items];
TILESORT_UNROLL
  for (int i = 0; i < Items; ++i) positions[i] = static_cast<std::uint32_t>(items[i] & mask);
  store_row_items<Items>(packed.positions, s, positions);
}

// The rows a row-sorter kernel sorts: uniform rows (count known on the host)
// or a bin's list of packed segments (count read on the device).
struct uniform_rows {
  static constexpr bool one_block_per_row = true;  // block sorters: launched with a block per row
  std::int64_t n;
  std::int64_t length;
  TILESORT_HD std::int64_t count() const { return ceil_div(n, length); }
  TILESORT_HD row_slice slice(std::int64_t row, std::int64_t, int thread_in_row, int items) const {
    return slice_of_row(row, length, n, thread_in_row, items);
  }
};

// Uniform rows of `length` keys along a dim other than the last of a
// contiguous array of rows * length keys: row r is (o, j) = (r / stride, r %
// stride), its keys at o * length * stride + j + i * stride. Consecutive rows
// are neighbouring columns: sorters running at the same time read and write
// the same sectors.
struct strided_rows {
  static constexpr bool one_block_per_row = true;
  std::int64_t rows;
  std::int64_t length;
  std::int64_t stride;
  TILESORT_HD std::int64_t count() const { return rows; }
  TILESORT_HD strided_row_slice slice(std::int64_t row, std::int64_t, int thread_in_row, int items) const {
    strided_row_slice s;
    const std::int64_t outer = row / stride;
    s.row_begin = outer * length * stride + (row - outer * stride);
    s.stride = stride;
    s.row_items = row < rows ? static_cast<int>(length) : 0;
    s.first = thread_in_row * items;
    const int rest = s.row_items - s.first;
    s.mine = rest <= 0 ? 0 : (rest < items ? rest : items);
    return s;
  }
};

struct listed_rows {
  static constexpr bool one_block_per_row = false;  // a fixed grid loops over the rows
  const std::uint64_t* entries;
  const unsigned long long* counter;
  const unsigned* abandoned;  // non-zero: the description overflowed its bounds, sort nothing
  TILESORT_DEVICE std::int64_t count() const { return *abandoned ? 0 : static_cast<std::int64_t>(*counter); }
  TILESORT_DEVICE row_slice slice(std::int64_t row, std::int64_t count, int thread_in_row, int items) const {
    row_slice s{0, 0, thread_in_row * items, 0};
    if (row < count) {
      const std::uint64_t entry = entries[row];
      s.row_begin = packed_begin(entry);
      s.row_items = packed_length(entry);
    }
    const int rest = s.row_items - s.first;
    s.mine = rest <= 0 ? 0 : (rest < items ? rest : items);
    return s;
  }
};

// One logical warp of `Lanes` lanes sorts each row. The loop over rows is the
// same for every thread of a block (whole warps call the shuffles).
template <int Lanes, int Items, int BlockThreads, typename Rows, typename KeysIn, typename KeysOut, typename Source,
          typename Sink, typename Compare>
__global__ __launch_bounds__(BlockThreads) void sort_rows_by_warps(Rows rows, KeysIn keys_in, KeysOut keys_out,
                                                                   Source values_in, Sink values_out, Compare comp) {
  using Key = row_key_t<KeysIn>;
  using Value = row_value_t<Source>;
  static_assert(Lanes * Items <= 65536, "ranks are 16-bit");
  constexpr int rows_per_block = BlockThreads / Lanes;
  constexpr bool ranked = has_values<Value> || !equivalence_is_identity<Key, Compare>;
  const std::int64_t count = rows.count();
  for (std::int64_t first_row = std::int64_t(blockIdx.x) * rows_per_block; first_row < count;
       first_row += std::int64_t(gridDim.x) * rows_per_block) {
    const std::int64_t row = first_row + threadIdx.x / Lanes;
    const auto s = rows.slice(row, count, threadIdx.x % Lanes, Items);

    Key keys[Items];
    Value values[Items];
    load_row_keys<Items>(keys_in, s, keys);

    if constexpr (ranked) {
      ranked_key<Key> ranked_keys[Items];
TILESORT_UNROLL
      for (int i = 0; i < Items; ++i) ranked_keys[i] = {keys[i], static_cast<rank_type<Key>>(s.first + i)};
      warp_sort<Lanes>(ranked_keys, s.row_items, rank_tiebreak<Compare>{comp});
TILESORT_UNROLL
      for (int i = 0; i < Items; ++i) keys[i] = ranked_keys[i].key;
      if constexpr (has_values<Value>) {
        // Values do not ride through the network: each sorted key's rank is
        // its value's position in the row, so the values are gathered from
        // the row afterwards (the row's few lines, read once from DRAM).
TILESORT_UNROLL
        for (int i = 0; i < Items; ++i)
          if (i < s.mine) values[i] = row_value_at(values_in, s, ranked_keys[i].rank);
        __syncwarp();  // in place: every lane has read its row's values before any lane stores
      }
    } else {
      warp_sort<Lanes>(keys, s.row_items, comp);
    }

    store_row_keys<Items>(keys_out, s, keys, [] { __syncwarp(); });
    if constexpr (has_values<Value>) store_row_values<Items>(values_out, s, values);
  }
}

// One block sorts one row.
template <int Threads, int Items, typename Slice, typename Storage, typename KeysIn, typename KeysOut, typename Source,
          typename Sink, typename Compare>
TILESORT_DEVICE void sort_one_row_by_block(const Slice& s, Storage& storage, KeysIn keys_in, KeysOut keys_out,
                                           Source values_in, Sink values_out, Compare comp) {
  using Key = row_key_t<KeysIn>;
  using Value = row_value_t<Source>;
  using sorter = block_sort<Key, Threads, Items, std::conditional_t<has_values<Value>, Value, void>>;
  Key keys[Items];
  Value values[Items];
  if constexpr (equivalence_is_identity<Key, Compare>) {
    // Keys past the row are padding, the last key: the warps that hold only
    // padding do no merging, and nothing past the row is stored, so the
    // padding needs no restoring. Filled before the load: with a fill after
    // it, the 1024 x 16 sorter of a bin's u32 pairs spilled 112 bytes; this
    // way none (sm_90, nvcc 13.0; against the sort(keys, count) it replaces,
    // u32 keys and pairs: registers down for every block sorter but a bin's
    // 128 x 8 pairs, 48 -> 96).
TILESORT_UNROLL
    for (int i = 0; i < Items; ++i) keys[i] = last_key<Key, Compare>();
  }
  load_row_keys<Items>(keys_in, s, keys);
  if constexpr (has_values<Value>) load_row_values<Items>(values_in, s, values);
  if constexpr (equivalence_is_identity<Key, Compare>) {
    if constexpr (has_values<Value>) {
      sorter(storage).sort_pairs_padded(keys, values, s.row_items, comp);
    } else {
      sorter(storage).sort_padded(keys, s.row_items, comp);
    }
  } else if constexpr (has_values<Value>) {
    sorter(storage).sort_pairs(keys, values, s.row_items, comp);
  } else {
    sorter(storage).sort(keys, s.row_items, comp);
  }
  store_row_keys<Items>(keys_out, s, keys, [] { __syncthreads(); });
  if constexpr (has_values<Value>) store_row_values<Items>(values_out, s, values);
}

// One block sorts each row; its shared memory is block_sort's temp_storage.
// Uniform rows get one block per row and no loop: inside a loop over rows,
// ptxas kept both of block_sort's paths (full and partial tile) live and gave
// the 256 x 16 sorter 107 registers for u32 keys and 184 for u32 pairs (2
// and 1 blocks per SM); without it, 64 and 80 (sm_90, nvcc 13.0). A bin's
// list of segments has its count on the device and keeps the loop.
template <int Threads, int Items, typename Rows, typename KeysIn, typename KeysOut, typename Source, typename Sink,
          typename Compare>
__global__ __launch_bounds__(Threads) void sort_rows_by_blocks(Rows rows, KeysIn keys_in, KeysOut keys_out,
                                                               Source values_in, Sink values_out, Compare comp) {
  using Key = row_key_t<KeysIn>;
  using Value = row_value_t<Source>;
  using sorter = block_sort<Key, Threads, Items, std::conditional_t<has_values<Value>, Value, void>>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto& storage = *reinterpret_cast<typename sorter::temp_storage*>(shared_bytes);
  const std::int64_t count = rows.count();
  if constexpr (Rows::one_block_per_row) {
    const std::int64_t row = blockIdx.x;
    if (row < count)
      sort_one_row_by_block<Threads, Items>(rows.slice(row, count, threadIdx.x, Items), storage, keys_in, keys_out,
                                            values_in, values_out, comp);
  } else {
    for (std::int64_t row = blockIdx.x; row < count; row += gridDim.x) {
      sort_one_row_by_block<Threads, Items>(rows.slice(row, count, threadIdx.x, Items), storage, keys_in, keys_out,
                                            values_in, values_out, comp);
      __syncthreads();  // the next row reuses the sort's shared memory
    }
  }
}

// Launch the row sorter of shape `Shape` (warp shapes first, then block
// shapes) over `rows` with `grid` blocks.
template <typename Policy, int Shape, typename Rows, typename KeysIn, typename KeysOut, typename Source, typename Sink,
          typename Compare>
cudaError_t launch_row_sorter(Rows rows, unsigned grid, KeysIn keys_in, KeysOut keys_out, Source values_in,
                              Sink values_out, Compare comp, cudaStream_t stream) {
  using Key = row_key_t<KeysIn>;
  using Value = row_value_t<Source>;
  if constexpr (Shape < Policy::warp_shape_count) {
    constexpr auto shape = Policy::warp_shape(Shape);
    return launch_kernel(sort_rows_by_warps<shape.threads, shape.items, Policy::warp_block_threads, Rows, KeysIn,
                                            KeysOut, Source, Sink, Compare>,
                         grid, Policy::warp_block_threads, 0, stream, false, rows, keys_in, keys_out, values_in,
                         values_out, comp);
  } else {
    constexpr auto shape = Policy::block_shape(Shape - Policy::warp_shape_count);
    using sorter = block_sort<Key, shape.threads, shape.items, std::conditional_t<has_values<Value>, Value, void>>;
    constexpr std::size_t shared_bytes = sizeof(typename sorter::temp_storage);
    auto* kernel = sort_rows_by_blocks<shape.threads, shape.items, Rows, KeysIn, KeysOut, Source, Sink, Compare>;
    TILESORT_RETURN_IF_ERROR(allow_dynamic_shared_memory(kernel, shared_bytes));
    return launch_kernel(kernel, grid, shape.threads, shared_bytes, stream, false, rows, keys_in, keys_out, values_in,
                         values_out, comp);
  }
}

template <typename Policy>
constexpr int row_sorter_threads(int shape) {
  return shape < Policy::warp_shape_count ? Policy::warp_block_threads
                                          : Policy::block_shape(shape - Policy::warp_shape_count).threads;
}
template <typename Policy>
constexpr int rows_per_block(int shape) {
  return shape < Policy::warp_shape_count ? Policy::warp_block_threads / Policy::warp_shape(shape).threads : 1;
}

// Uniform rows (uniform_rows or strided_rows) of `length` keys: the first
// shape that holds a row sorts them all, one row per logical warp or block,
// one launch.
template <typename Policy, int Shape, typename Rows, typename KeysIn, typename KeysOut, typename Source, typename Sink,
          typename Compare>
cudaError_t launch_uniform_rows(Rows rows, KeysIn keys_in, KeysOut keys_out, Source values_in, Sink values_out,
                                std::int64_t length, Compare comp, cudaStream_t stream) {
  if constexpr (Shape < Policy::warp_shape_count + Policy::block_shape_count) {
    constexpr auto shape = Shape < Policy::warp_shape_count ? Policy::warp_shape(Shape)
                                                            : Policy::block_shape(Shape - Policy::warp_shape_count);
    constexpr int capacity = shape.threads * shape.items;
    if (length > capacity)
      return launch_uniform_rows<Policy, Shape + 1>(rows, keys_in, keys_out, values_in, values_out, length, comp,
                                                    stream);
    const std::int64_t blocks = ceil_div(rows.count(), rows_per_block<Policy>(Shape));
    if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
    return launch_row_sorter<Policy, Shape>(rows, static_cast<unsigned>(blocks), keys_in, keys_out, values_in,
                                            values_out, comp, stream);
  } else {
    return cudaErrorNotSupported;  // unreachable: longer rows take the general path
  }
}

}  // namespace detail
}  // namespace tilesort
