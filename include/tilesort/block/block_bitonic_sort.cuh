// block/block_bitonic_sort.cuh — the classic bitonic sorting network for one
// thread block.
//
// block_bitonic_sort<Key, BlockThreads, Value>: one key per thread, in
// caller-owned shared memory. log2(P)(log2(P)+1)/2 stages for P =
// next_pow2(BlockThreads), one __syncthreads() after each; per stage the lower
// thread of each pair compare-exchanges the two slots. Not stable. Input and
// output are "one key per thread": thread i ends with rank i. It uses the
// "flip" form of the network (detail/bitonic_plan.cuh), so partial blocks need
// no sentinel from the caller: every comparison with a slot past valid_items is
// skipped. The register-tile engine of the device bitonic sort, which this
// network is the reference for, is block/bitonic_tile.cuh.
#pragma once

#include <type_traits>

#include "../comparators.cuh"
#include "../detail/bitonic_plan.cuh"
#include "../detail/config.cuh"
#include "../detail/uninitialized_array.cuh"
#include "../thread/thread_sort.cuh"  // detail::no_value

namespace tilesort {

/// Bitonic sort of one key (and optionally one value) per thread, in
/// caller-owned shared memory; not stable. BlockThreads from 1 to 1024, not
/// necessarily a power of two; thread i ends with rank i. The caller must
/// __syncthreads() before it reuses `temp_storage` for something else.
///
/// @tparam Key          key type
/// @tparam BlockThreads threads of the block (one key each)
/// @tparam Value        payload type, or void for keys alone
///
/// @code
/// __global__ void sort_rows(int* data) {     // 256 keys per block
///   using sorter = tilesort::block_bitonic_sort<int, 256>;
///   __shared__ sorter::temp_storage storage;
///   int key = data[blockIdx.x * 256 + threadIdx.x];
///   sorter(storage).sort(key);                 // ascending; sort(key, tilesort::greater{}) descends
///   data[blockIdx.x * 256 + threadIdx.x] = key;
/// }
/// @endcode
//
// Shared-memory banks: in each stage a warp's active lanes read slots i and
// partner(i), where partner flips the same low bits for every lane. Within a
// warp that maps 32 consecutive slots onto a permutation of 32 consecutive
// slots, or onto another aligned run of 32; either way every access touches
// 32 distinct banks for 4-byte keys (8-byte keys: two conflict-free halves),
// so no padding is needed.
template <typename Key, int BlockThreads, typename Value = void>
class block_bitonic_sort {
  static_assert(BlockThreads >= 1 && BlockThreads <= 1024, "one key per thread, at most 1024 threads");
  static constexpr bool has_values = detail::has_values<Value>;
  using value_type = detail::value_or_none<Value>;

 public:
  /// Shared memory for one sort, put in __shared__ by the caller.
  struct temp_storage {
    detail::uninitialized_array<Key, BlockThreads> keys;                       ///< one key per thread
    detail::uninitialized_array<value_type, has_values ? BlockThreads : 1> values;  ///< one value per thread
  };

  /// Binds the sorter to the caller's shared memory.
  /// @param storage shared memory that the sort may use until it returns
  __device__ explicit block_bitonic_sort(temp_storage& storage) : storage_(storage) {}

  /// Sorts the block's BlockThreads keys; thread i receives rank i.
  /// @param key  this thread's key, replaced by rank threadIdx.x
  /// @param comp strict weak order
  template <typename Compare = less>
  __device__ void sort(Key& key, Compare comp = {}) {
    value_type value{};
    network(key, value, BlockThreads, comp);
  }

  /// Sorts the keys of threads [0, valid_items); the other threads get their
  /// own key back (they are virtual +infinity and never compared).
  /// @code
  /// sorter(storage).sort(key, row_length);
  /// @endcode
  template <typename Compare = less>
  __device__ void sort(Key& key, int valid_items, Compare comp = {}) {
    value_type value{};
    network(key, value, valid_items, comp);
  }

  /// Sorts keys with payloads (Value must not be void); not stable.
  /// @code
  /// tilesort::block_bitonic_sort<float, 128, int>(storage).sort_pairs(key, index);
  /// @endcode
  template <typename Compare = less>
  __device__ void sort_pairs(Key& key, value_type& value, Compare comp = {}) {
    static_assert(has_values, "sort_pairs needs a Value type");
    network(key, value, BlockThreads, comp);
  }
  /// sort_pairs() of the pairs of threads [0, valid_items); the other threads
  /// keep their own pair.
  template <typename Compare = less>
  __device__ void sort_pairs(Key& key, value_type& value, int valid_items, Compare comp = {}) {
    static_assert(has_values, "sort_pairs needs a Value type");
    network(key, value, valid_items, comp);
  }

 private:
  template <typename Compare>
  __device__ void network(Key& key, value_type& value, int valid_items, Compare comp) {
    const int t = static_cast<int>(threadIdx.x);
    const int valid = valid_items < 0 ? 0 : valid_items > BlockThreads ? BlockThreads : valid_items;
    storage_.keys[t] = key;
    if constexpr (has_values) storage_.values[t] = value;
    __syncthreads();
    // Merges up to the smallest power of two >= valid; the rest would compare nothing.
    const int merges = detail::ceil_log2(valid);
    for (int m = 1; m <= merges; ++m) {
      for (int p = m - 1; p >= 0; --p) {
        const int partner = p == m - 1 ? t ^ ((1 << m) - 1) : t ^ (1 << p);
        if (partner > t && partner < valid) {
          const Key a = storage_.keys[t];
          const Key b = storage_.keys[partner];
          if (comp(b, a)) {
            storage_.keys[t] = b;
            storage_.keys[partner] = a;
            if constexpr (has_values) {
              const value_type va = storage_.values[t];
              storage_.values[t] = storage_.values[partner];
              storage_.values[partner] = va;
            }
          }
        }
        __syncthreads();
      }
    }
    key = storage_.keys[t];
    if constexpr (has_values) value = storage_.values[t];
  }

  temp_storage& storage_;
};

}  // namespace tilesort
