// block/block_sort.cuh — stable sort of the BlockThreads x ItemsPerThread keys
// (and optional values) that a block holds in registers.
//
// Arrangement, in and out: blocked. Thread t holds tile positions (ranks of
// the result) [t*IPT, (t+1)*IPT):
//
//   thread:    0            1                    BlockThreads-1
//   keys:   [0 .. IPT-1][IPT .. 2*IPT-1] ... [(BT-1)*IPT .. BT*IPT-1]
//
// Algorithm: a merge sort (detail/block_merge_plan.cuh has the index math).
// 1. Each thread sorts its IPT keys in registers: odd-even transposition
//    (stable); keys alone under an order whose equivalent keys are identical
//    use the shorter bitonic network (stability is unobservable there).
// 2. ceil(log2(BlockThreads)) merge rounds; round r merges runs of IPT*2^r
//    keys pairwise. Each thread stores its keys (with their payloads) to
//    shared memory, finds where its IPT outputs start with a merge-path
//    search of log2(IPT*2^r) + 1 steps, and merges those outputs back into
//    registers (ties take the earlier run: stable). Rounds 0-4 stay inside a
//    warp and synchronise with __syncwarp(); later rounds use
//    __syncthreads(). Keys alone with identical equivalent keys and a
//    power-of-two IPT do rounds 0-4 instead as bitonic merges across lanes
//    in registers (__shfl_xor_sync): no shared memory, no search.
// 3. sort_nearly (full tiles whose keys lie near their sorted place): after
//    the warp rounds, if every boundary between two warps' runs passes two
//    comparisons, one merge of the 32 x IPT keys around each boundary
//    replaces the block rounds of step 2 (detail/block_merge_plan.cuh,
//    boundary windows); otherwise step 2 runs as usual.
// Payloads ride in shared memory beside their keys (one 8-byte access for a
// 4-byte key and a 4-byte value). Values wider than a 32-bit source position
// would make that item larger travel as the position instead and are
// permuted once at the end.
//
// Cost per shared-memory round, per thread: IPT stores, 2*(log2(run) + 1)
// search loads and IPT + 1 merge loads; two barriers (one __syncwarp() and
// one __syncthreads() in the first block round, __syncwarp() only in warp
// rounds). Blocked stores are free of bank conflicts thanks to a padded
// layout (block_merge_plan.cuh); merge and search reads are data dependent.
// Shared memory: temp_storage, BT*IPT*(sizeof(Key) + payload) bytes plus one
// padding slot per 16-32 items (payload: 0, sizeof(Value), or 4 by position).
#pragma once

#include <climits>
#include <cstddef>
#include <cuda/std/limits>
#include <type_traits>

#include "../comparators.cuh"
#include "../detail/block_merge_plan.cuh"
#include "../detail/config.cuh"
#include "../detail/merge_path.cuh"
#include "../thread/thread_sort.cuh"

namespace tilesort {

/// Tuning of tilesort::block_sort, chosen for sm_90 with tilesort-bench's
/// tile benchmark (load + sort + store of independent tiles). Specialise it to
/// override. The measurements, and the variants tried and dropped, are in
/// docs/tuning/block_and_warp_sort.md.
template <typename Key, typename Value, int BlockThreads, int ItemsPerThread>
struct block_sort_policy {
  /// Unroll the merge rounds so that run lengths, search steps and shared
  /// offsets become constants (faster than a rolled loop, for more code).
  static constexpr bool unroll_rounds = true;
  /// Keys alone under an order whose equivalent keys are identical (integers
  /// with less/greater), IPT a power of two: merge rounds 0-4 as bitonic
  /// merges across lanes in registers instead of in shared memory (unstable,
  /// which nobody can observe there; fewer instructions and barriers).
  static constexpr bool warp_shuffle_merge = true;
};

namespace detail {

TILESORT_HD constexpr std::size_t max_size(std::size_t a, std::size_t b) { return a > b ? a : b; }

// ---------------------------------------------------------------- items
// What travels through shared memory in one merge round: a key and its
// payload, aligned so that a key and a 4-byte payload move as one 8-byte
// access.
template <typename Key, typename Payload>
struct sort_item_alignment {
  static constexpr std::size_t bytes = sizeof(Key) + value_bytes_of<Payload>;
  static constexpr std::size_t natural = alignof(Key) > alignof(Payload) ? alignof(Key) : alignof(Payload);
  static constexpr std::size_t value = (is_pow2(static_cast<long long>(bytes)) && bytes <= 16 && bytes > natural)
                                           ? bytes
                                           : natural;
};

template <typename Key, typename Payload>
struct alignas(sort_item_alignment<Key, Payload>::value) sort_item {
  Key key;
  Payload value;
  TILESORT_HD Payload payload() const { return value; }
  TILESORT_HD static sort_item make(const Key& k, const Payload& v) { return sort_item{k, v}; }
};

template <typename Key>
struct alignas(sort_item_alignment<Key, no_value>::value) sort_item<Key, no_value> {
  Key key;
  TILESORT_HD no_value payload() const { return {}; }
  TILESORT_HD static sort_item make(const Key& k, const no_value&) { return sort_item{k}; }
};

// How a block sort carries values: beside the key when that makes the item no
// larger than a 32-bit source position would; otherwise as that position
// (Payload = int), with one permutation of the values at the end.
template <typename Key, typename Value>
struct block_sort_payload {
  static constexpr bool by_index =
      has_values<Value> && sizeof(sort_item<Key, value_or_none<Value>>) > sizeof(sort_item<Key, int>);
  using type = std::conditional_t<has_values<Value>, std::conditional_t<by_index, int, Value>, no_value>;
};

// Stable sort of the first `count` keys (a run-time count); keys at index >=
// count stay where they are. Used by partial tiles, where they are invalid.
template <typename Key, typename Value, int N, typename Compare>
TILESORT_HD void odd_even_transposition_sort_prefix(Key (&keys)[N], Value (&values)[N], int count, Compare comp) {
  TILESORT_UNROLL
  for (int round = 0; round < N; ++round) {
    TILESORT_UNROLL
    for (int i = round & 1; i + 1 < N; i += 2) {
      if (i + 1 < count) compare_exchange(keys[i], keys[i + 1], values[i], values[i + 1], comp);
    }
  }
}

// ---------------------------------------------------------------- core
// The per-thread steps of one block sort, free of barriers and thread
// indices so that the host tests can run them thread by thread. `Slots` is
// anything indexable by shared-memory slot: item* on the device.
template <typename Key, typename Payload, int BlockThreads, int ItemsPerThread>
struct block_merge_core {
  using item = sort_item<Key, Payload>;
  using layout = padded_layout<ItemsPerThread, static_cast<int>(sizeof(item))>;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static constexpr int rounds = block_merge_rounds(BlockThreads);
  static constexpr int warp_rounds = warp_merge_rounds(BlockThreads);
  static constexpr int buffer_slots = layout::slots(tile_items);

  // Step 1: the thread's own keys, in registers.
  template <bool Partial, typename Compare>
  TILESORT_HD static void sort_thread(int thread, int valid_items, Key (&keys)[ItemsPerThread],
                                      Payload (&payload)[ItemsPerThread], Compare comp) {
    if constexpr (Partial) {
      odd_even_transposition_sort_prefix(keys, payload, valid_thread_items(thread, ItemsPerThread, valid_items), comp);
    } else if constexpr (!has_values<Payload> && equivalence_is_identity<Key, Compare>) {
      bitonic_network_sort(keys, payload, comp);
    } else {
      odd_even_transposition_sort(keys, payload, comp);
    }
  }

  // Blocked store: position t*IPT + i. The padded layout makes every slot a
  // compile-time offset from the thread's first one.
  template <typename Slots>
  TILESORT_HD static void store(Slots& slots, int thread, const Key (&keys)[ItemsPerThread],
                                const Payload (&payload)[ItemsPerThread]) {
    const int first = layout::index(thread * ItemsPerThread);
    TILESORT_UNROLL
    for (int i = 0; i < ItemsPerThread; ++i) slots[first + layout::thread_offset(i)] = item::make(keys[i], payload[i]);
  }

  template <typename Slots>
  struct key_view {
    const Slots& slots;
    int begin;
    TILESORT_HD Key operator[](int i) const { return slots[layout::index(begin + i)].key; }
  };

  // Step 2, one round: merge this thread's IPT outputs of its run pair into
  // registers. Clamp keeps every read inside the run pair (warp rounds: the
  // next warp's slots are being written meanwhile); without it a read can
  // touch position b_end, which is harmless in block rounds (written before
  // the barrier, or the spare slot after the tile) and saves an instruction.
  template <bool Clamp, bool Partial, typename Slots, typename Compare>
  TILESORT_HD static void merge(const Slots& slots, int thread, int round, int valid_items,
                                Key (&keys)[ItemsPerThread], Payload (&payload)[ItemsPerThread], Compare comp) {
    merge_runs<Clamp, Partial>(slots, block_merge_range(thread, round, ItemsPerThread, tile_items),
                               ItemsPerThread << round, valid_items, keys, payload, comp);
  }

  // The same for any run pair `range` whose runs are at most `max_run` long.
  template <bool Clamp, bool Partial, typename Slots, typename Compare>
  TILESORT_HD static void merge_runs(const Slots& slots, const merge_range& range, int max_run, int valid_items,
                                     Key (&keys)[ItemsPerThread], Payload (&payload)[ItemsPerThread], Compare comp) {
    const int a_items = range.a_end - range.a_begin;
    const int b_items = Partial ? valid_b_items(range, valid_items) : range.b_end - range.b_begin;
    // Partial tiles: outputs past the valid keys are B's invalid tail, in place.
    const int diagonal = (Partial && range.diagonal > a_items + b_items) ? a_items + b_items : range.diagonal;
    // Neither run is longer than max_run, which bounds the search's
    // steps. With a power-of-two block every run pair is full, so the
    // search's probes stay inside it (merge_path_bounded) and need no branch.
    const int split = merge_path_bounded<is_pow2(BlockThreads)>(key_view<Slots>{slots, range.a_begin}, a_items,
                                                                key_view<Slots>{slots, range.b_begin}, b_items,
                                                                diagonal, max_run, comp);

    int a = range.a_begin + split;
    int b = range.b_begin + (range.diagonal - split);
    const int a_end = range.a_end;
    const int b_end = range.b_end;
    const int b_valid_end = range.b_begin + b_items;  // == b_end for full tiles
    const int last = b_end - 1;
    auto load = [&](int p) -> item { return slots[layout::index(Clamp ? (p < last ? p : last) : p)]; };

    item a_item = load(a);
    item b_item = load(b);
    TILESORT_UNROLL
    for (int i = 0; i < ItemsPerThread; ++i) {
      // Ties take A: stable. Invalid B keys (partial tiles) lose to every A key.
      const bool take_b =
          b < b_end && (a >= a_end || ((!Partial || b < b_valid_end) && comp(b_item.key, a_item.key)));
      keys[i] = take_b ? b_item.key : a_item.key;
      payload[i] = take_b ? b_item.payload() : a_item.payload();
      if (take_b) {
        ++b;
      } else {
        ++a;
      }
      if (i + 1 < ItemsPerThread) {
        const item loaded = load(take_b ? b : a);
        if (take_b) {
          b_item = loaded;
        } else {
          a_item = loaded;
        }
      }
    }
  }
};

// ---------------------------------------------------------------- warp rounds in registers
// Bitonic merge of sorted runs spread over lane groups, blocked layout, IPT a
// power of two. Merging two runs of `group/2` lanes each: a flip step pairs
// element j with its mirror 2S-1-j (lane l with l ^ (group-1), register e
// with IPT-1-e), then half-cleaners pair lanes l and l ^ m for m = group/4
// .. 1 (same register), then the registers of each lane are cleaned at
// distances IPT/2 .. 1. The lower element of each pair keeps the smaller key.
//
// One lane's side of a lane-level compare-exchange: `partner_key` is the key
// lane l ^ mask sent. With identical equivalent keys, "partner is smaller"
// decides both sides.
template <typename Key, typename Compare>
TILESORT_HD Key keep_from_partner(const Key& key, const Key& partner_key, bool keep_smaller, Compare comp) {
  return (comp(partner_key, key) == keep_smaller) ? partner_key : key;
}

// A whole lane-level step (host tests): `partner` holds what lane l ^ mask
// sent, already mirrored for the flip.
template <typename Key, int ItemsPerThread, typename Compare>
TILESORT_HD void exchange_with_partner(Key (&keys)[ItemsPerThread], const Key (&partner)[ItemsPerThread],
                                       bool keep_smaller, Compare comp) {
  TILESORT_UNROLL
  for (int e = 0; e < ItemsPerThread; ++e) keys[e] = keep_from_partner(keys[e], partner[e], keep_smaller, comp);
}

// The in-register part: the lane's keys are a bitonic sequence.
template <typename Key, int ItemsPerThread, typename Compare>
TILESORT_HD void clean_bitonic_registers(Key (&keys)[ItemsPerThread], Compare comp) {
  no_value none[ItemsPerThread];
  TILESORT_UNROLL
  for (int distance = ItemsPerThread / 2; distance > 0; distance >>= 1) {
    TILESORT_UNROLL
    for (int e = 0; e < ItemsPerThread; ++e) {
      if ((e & distance) == 0) compare_exchange(keys[e], keys[e + distance], none[e], none[e + distance], comp);
    }
  }
}

// After each thread sorted its keys: the five warp rounds, in registers.
template <typename Key, int ItemsPerThread, typename Compare>
TILESORT_DEVICE void warp_merge_rounds_in_registers(Key (&keys)[ItemsPerThread], int lane, Compare comp) {
  static_assert(is_pow2(ItemsPerThread), "the register warp merge needs a power-of-two ItemsPerThread");
  TILESORT_UNROLL
  for (int group = 2; group <= warp_threads; group <<= 1) {
    // Flip: register e takes the partner's register IPT-1-e. Mirrored
    // registers go in pairs, so only two received keys are live at a time.
    const bool lower_half = (lane & (group >> 1)) == 0;
    TILESORT_UNROLL
    for (int e = 0; e < (ItemsPerThread + 1) / 2; ++e) {
      const int mirror = ItemsPerThread - 1 - e;
      const Key for_e = __shfl_xor_sync(0xffffffffu, keys[mirror], group - 1);
      const Key for_mirror = __shfl_xor_sync(0xffffffffu, keys[e], group - 1);
      keys[e] = keep_from_partner(keys[e], for_e, lower_half, comp);
      if (mirror != e) keys[mirror] = keep_from_partner(keys[mirror], for_mirror, lower_half, comp);
    }
    TILESORT_UNROLL
    for (int mask = group >> 2; mask > 0; mask >>= 1) {
      const bool lower = (lane & mask) == 0;
      TILESORT_UNROLL
      for (int e = 0; e < ItemsPerThread; ++e)
        keys[e] = keep_from_partner(keys[e], static_cast<Key>(__shfl_xor_sync(0xffffffffu, keys[e], mask)), lower, comp);
    }
    clean_bitonic_registers(keys, comp);
  }
}

TILESORT_DEVICE int linear_thread_index() {
  return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}

}  // namespace detail

/// Stable block-wide sort of BlockThreads x ItemsPerThread keys (and optional
/// values) held in registers, blocked in and blocked out. Any trivially
/// copyable Key and Value; any strict weak order `comp`. BlockThreads must
/// equal the block's thread count (a multiple of 32, at most 1024; 1-, 2- or
/// 3-D blocks use the linear thread index). Every thread of the block calls
/// each member with the same arguments (valid_items included).
///
/// Shared memory: temp_storage, which the caller declares __shared__ (it may
/// share bytes with other stages in a union). Call __syncthreads() between a
/// previous use of those bytes and a sort, and after a sort before reusing
/// them (sorting the next tile with the same storage included).
///
/// @tparam Key            key type (trivially copyable)
/// @tparam BlockThreads   threads of the block
/// @tparam ItemsPerThread keys each thread holds
/// @tparam Value          payload type, or void for keys alone
///
/// @code
/// using sorter = tilesort::block_sort<std::uint32_t, 128, 16>;
/// __global__ void sort_tiles(std::uint32_t* data) {
///   __shared__ sorter::temp_storage storage;
///   std::uint32_t* mine = data + blockIdx.x * 2048 + threadIdx.x * 16;
///   std::uint32_t keys[16];
///   for (int i = 0; i < 16; ++i) keys[i] = mine[i];  // blocked
///   sorter(storage).sort(keys);                     // ascending, stable
///   for (int i = 0; i < 16; ++i) mine[i] = keys[i];
/// }
/// @endcode
template <typename Key, int BlockThreads, int ItemsPerThread, typename Value = void>
class block_sort {
  static_assert(BlockThreads > 0 && BlockThreads % 32 == 0 && BlockThreads <= 1024,
                "block_sort: BlockThreads must be a multiple of 32, at most 1024");
  static_assert(ItemsPerThread >= 1, "block_sort: ItemsPerThread must be positive");
  static_assert(std::is_trivially_copyable_v<Key>, "block_sort: keys must be trivially copyable");
  static_assert(!detail::has_values<Value> || std::is_trivially_copyable_v<Value>,
                "block_sort: values must be trivially copyable");
  // Tile positions, padded slots and merge-range ends (up to twice a run past
  // the tile start) are 32-bit.
  static_assert(static_cast<long long>(BlockThreads) * ItemsPerThread <= INT_MAX / 4,
                "block_sort: the tile is too large for 32-bit positions");

  using payload_rule = detail::block_sort_payload<Key, Value>;
  using payload_type = typename payload_rule::type;
  using policy = block_sort_policy<Key, Value, BlockThreads, ItemsPerThread>;
  using value_array_type = detail::value_or_none<Value>;
  using value_layout = detail::padded_layout<ItemsPerThread, static_cast<int>(sizeof(value_array_type))>;
  template <typename Payload>
  using core_for = detail::block_merge_core<Key, Payload, BlockThreads, ItemsPerThread>;
  using core = core_for<payload_type>;

  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  template <typename Payload>
  static constexpr std::size_t bytes_for =
      static_cast<std::size_t>(core_for<Payload>::buffer_slots) * sizeof(typename core_for<Payload>::item);
  // sort() merges keys alone, sort_pairs() keys with their payloads; values
  // moved by position are permuted at the end through the same bytes.
  static constexpr std::size_t value_bytes =
      payload_rule::by_index ? static_cast<std::size_t>(value_layout::slots(tile_items)) * sizeof(value_array_type) : 0;
  static constexpr std::size_t storage_bytes =
      detail::max_size(detail::max_size(bytes_for<detail::no_value>, bytes_for<payload_type>), value_bytes);
  static constexpr std::size_t storage_alignment = detail::max_size(
      detail::max_size(alignof(typename core_for<detail::no_value>::item), alignof(typename core::item)),
      alignof(value_array_type));
  static constexpr int round_unroll = policy::unroll_rounds ? 16 : 1;

 public:
  /// Shared memory for one sort: raw bytes (keys need no constructor), put in
  /// __shared__ by the caller.
  struct temp_storage {
    alignas(storage_alignment) unsigned char bytes[storage_bytes];  ///< the sort's shared-memory bytes
  };

  /// Binds the sorter to the caller's shared memory.
  /// @param storage shared memory that the sort may use until it returns
  TILESORT_DEVICE explicit block_sort(temp_storage& storage) : storage_(storage) {}

  /// Sorts the tile: keys[i] of thread t becomes rank t*IPT + i. Stable.
  /// @param keys this thread's ItemsPerThread keys (blocked arrangement)
  /// @param comp strict weak order
  /// @code
  /// sorter(storage).sort(keys);                       // ascending
  /// sorter(storage).sort(keys, tilesort::greater{});  // descending
  /// @endcode
  template <typename Compare = less>
  TILESORT_DEVICE void sort(Key (&keys)[ItemsPerThread], Compare comp = {}) {
    detail::no_value none[ItemsPerThread];
    run<false>(keys, none, tile_items, comp);
  }

  /// Sorts a partial tile: only the keys at blocked positions < valid_items
  /// count (the others need no sentinel value and act as +infinity). The first
  /// valid_items ranks are the valid keys, stably sorted; the invalid keys
  /// follow (in their input order, though callers should not rely on it).
  /// @code
  /// sorter(storage).sort(keys, num_keys - tile_begin);
  /// @endcode
  template <typename Compare = less>
  TILESORT_DEVICE void sort(Key (&keys)[ItemsPerThread], int valid_items, Compare comp = {}) {
    detail::no_value none[ItemsPerThread];
    if (valid_items >= tile_items) {
      run<false>(keys, none, tile_items, comp);
    } else if (valid_items > 1) {
      partial(keys, none, valid_items, comp);
    }
  }

  /// sort(keys, comp) for a full tile whose keys may lie near their sorted
  /// place: when, after the warps have sorted their 32 x IPT keys each, the
  /// keys that still move lie within 16 x IPT positions of the boundaries
  /// between warps (two comparisons per boundary tell), one merge of the keys
  /// around each boundary replaces the block-wide merge rounds; otherwise
  /// those rounds run as in sort(). The same result either way. `nearly` is a
  /// block-uniform switch: false does exactly what sort() does.
  template <typename Compare = less>
  TILESORT_DEVICE void sort_nearly(Key (&keys)[ItemsPerThread], Compare comp = {}, bool nearly = true) {
    detail::no_value none[ItemsPerThread];
    run<false>(keys, none, tile_items, comp, nearly);
  }

  /// Sorts keys and moves values with them (only when Value is not void). Stable.
  /// @code
  /// tilesort::block_sort<float, 256, 8, int> sorter(storage);
  /// sorter.sort_pairs(keys, values);
  /// @endcode
  template <typename Compare = less>
  TILESORT_DEVICE void sort_pairs(Key (&keys)[ItemsPerThread], value_array_type (&values)[ItemsPerThread],
                                  Compare comp = {}) {
    static_assert(detail::has_values<Value>, "block_sort::sort_pairs needs a Value type");
    pairs<false>(keys, values, tile_items, comp);
  }

  /// sort_nearly() for keys and values.
  template <typename Compare = less>
  TILESORT_DEVICE void sort_pairs_nearly(Key (&keys)[ItemsPerThread], value_array_type (&values)[ItemsPerThread],
                                         Compare comp = {}, bool nearly = true) {
    static_assert(detail::has_values<Value>, "block_sort::sort_pairs_nearly needs a Value type");
    pairs<false>(keys, values, tile_items, comp, nearly);
  }

  /// Sorts a full tile whose keys from blocked position live_items on are
  /// padding: all equivalent to each other, and no key before them ordered
  /// after them (e.g. the largest key under less). The result is sort(keys)'s,
  /// the padding staying where it is, but warps that hold only padding skip
  /// the merging (a row of 9000 keys in a 1024 x 16 tile leaves 14 of 32
  /// warps idle).
  /// @code
  /// for (int i = 0; i < 16; ++i) if (t * 16 + i >= count) keys[i] = UINT_MAX;
  /// sorter(storage).sort_padded(keys, count);
  /// @endcode
  template <typename Compare = less>
  TILESORT_DEVICE void sort_padded(Key (&keys)[ItemsPerThread], int live_items, Compare comp = {}) {
    detail::no_value none[ItemsPerThread];
    run<false, true>(keys, none, tile_items, comp, false, live_items);
  }

  /// sort_padded() for keys and values (the padding's values stay with it).
  template <typename Compare = less>
  TILESORT_DEVICE void sort_pairs_padded(Key (&keys)[ItemsPerThread], value_array_type (&values)[ItemsPerThread],
                                         int live_items, Compare comp = {}) {
    static_assert(detail::has_values<Value>, "block_sort::sort_pairs_padded needs a Value type");
    pairs<false, true>(keys, values, tile_items, comp, false, live_items);
  }

  /// sort_pairs() for a partial tile (see sort(keys, valid_items, comp)); the
  /// values of invalid keys stay with them.
  template <typename Compare = less>
  TILESORT_DEVICE void sort_pairs(Key (&keys)[ItemsPerThread], value_array_type (&values)[ItemsPerThread],
                                  int valid_items, Compare comp = {}) {
    static_assert(detail::has_values<Value>, "block_sort::sort_pairs needs a Value type");
    if (valid_items >= tile_items) {
      pairs<false>(keys, values, tile_items, comp);
    } else if (valid_items > 1) {
      partial(keys, values, valid_items, comp);
    }
  }

 private:
  // A partial tile. Integer keys under less/greater have a largest key: give
  // it to the invalid positions and sort the full tile as padded (the faster
  // path). Stability keeps valid keys equal to it ahead, so the invalid
  // positions come out last and in input order, at the same blocked
  // positions they went in: each thread puts its own invalid keys back.
  template <typename Values, typename Compare>
  TILESORT_DEVICE void partial(Key (&keys)[ItemsPerThread], Values (&values)[ItemsPerThread], int valid_items,
                               Compare comp) {
    constexpr bool keys_only = !detail::has_values<Values>;
    if constexpr (detail::equivalence_is_identity<Key, Compare>) {
      const Key largest = detail::last_key<Key, Compare>();
      const int first = detail::linear_thread_index() * ItemsPerThread;
      Key original[ItemsPerThread];
      TILESORT_UNROLL
      for (int i = 0; i < ItemsPerThread; ++i) {
        original[i] = keys[i];
        if (first + i >= valid_items) keys[i] = largest;
      }
      if constexpr (keys_only) {
        sort_padded(keys, valid_items, comp);
      } else {
        sort_pairs_padded(keys, values, valid_items, comp);
      }
      TILESORT_UNROLL
      for (int i = 0; i < ItemsPerThread; ++i) {
        if (first + i >= valid_items) keys[i] = original[i];
      }
    } else if constexpr (keys_only) {
      run<true>(keys, values, valid_items, comp);
    } else {
      pairs<true>(keys, values, valid_items, comp);
    }
  }

  template <bool Partial, bool Trim = false, typename Compare>
  TILESORT_DEVICE void pairs(Key (&keys)[ItemsPerThread], value_array_type (&values)[ItemsPerThread], int valid_items,
                             Compare comp, bool nearly = false, int live_items = tile_items) {
    if constexpr (payload_rule::by_index) {
      const int thread = detail::linear_thread_index();
      int origin[ItemsPerThread];
      TILESORT_UNROLL
      for (int i = 0; i < ItemsPerThread; ++i) origin[i] = thread * ItemsPerThread + i;
      run<Partial, Trim>(keys, origin, valid_items, comp, nearly, live_items);
      permute_values(thread, values, origin);
    } else {
      run<Partial, Trim>(keys, values, valid_items, comp, nearly, live_items);
    }
  }

  // values[i] = the value that was at tile position origin[i].
  TILESORT_DEVICE void permute_values(int thread, value_array_type (&values)[ItemsPerThread],
                                      const int (&origin)[ItemsPerThread]) {
    // Every thread has read its last merge round; the value slots overlap them.
    sync(core::rounds > core::warp_rounds);
    auto* const slots = reinterpret_cast<value_array_type*>(storage_.bytes);
    const int first = value_layout::index(thread * ItemsPerThread);
    TILESORT_UNROLL
    for (int i = 0; i < ItemsPerThread; ++i) slots[first + value_layout::thread_offset(i)] = values[i];
    sync(core::rounds > core::warp_rounds);
    TILESORT_UNROLL
    for (int i = 0; i < ItemsPerThread; ++i) values[i] = slots[value_layout::index(origin[i])];
  }

  // One-warp blocks (and warp rounds) need only __syncwarp().
  TILESORT_DEVICE static void sync(bool block_wide) {
    if (block_wide) {
      __syncthreads();
    } else {
      __syncwarp();
    }
  }

  // Trim: warps whose positions all lie at or past live_items (padding that
  // ends where it starts, see sort_padded) do no sorting.
  template <bool Partial, bool Trim = false, typename Payload, typename Compare>
  TILESORT_DEVICE void run(Key (&keys)[ItemsPerThread], Payload (&payload)[ItemsPerThread], int valid_items,
                           Compare comp, bool nearly = false, int live_items = tile_items) {
    using run_core = core_for<Payload>;
    const int thread = detail::linear_thread_index();
    auto* const slots = reinterpret_cast<typename run_core::item*>(storage_.bytes);
    const bool idle = Trim && (thread / detail::warp_threads) * detail::warp_threads * ItemsPerThread >= live_items;
    if (!idle) run_warp<Partial>(thread, slots, keys, payload, valid_items, comp);
    if constexpr (!Partial && run_core::rounds > run_core::warp_rounds) {
      if (nearly && boundary_windows(thread, keys, payload, comp)) return;
    }
    block_rounds<Partial>(thread, keys, payload, valid_items, comp, idle);
  }

  // The thread's own sort, then the rounds whose run pairs lie inside a warp.
  template <bool Partial, typename Item, typename Payload, typename Compare>
  TILESORT_DEVICE static void run_warp(int thread, Item* slots, Key (&keys)[ItemsPerThread],
                                       Payload (&payload)[ItemsPerThread], int valid_items, Compare comp) {
    using run_core = core_for<Payload>;
    run_core::template sort_thread<Partial>(thread, valid_items, keys, payload, comp);

    constexpr bool registers_only = policy::warp_shuffle_merge && !Partial && detail::is_pow2(ItemsPerThread) &&
                                    !detail::has_values<Payload> &&
                                    detail::equivalence_is_identity<Key, Compare>;
    if constexpr (registers_only) {
      detail::warp_merge_rounds_in_registers(keys, thread % detail::warp_threads, comp);
    } else {
      // Warp rounds: a warp stores and reads only its own 32*IPT positions;
      // the __syncwarp() before the stores lets it finish reading the last round.
      TILESORT_UNROLL_COUNT(round_unroll)
      for (int round = 0; round < run_core::warp_rounds; ++round) {
        if (round > 0) __syncwarp();
        run_core::store(slots, thread, keys, payload);
        __syncwarp();
        run_core::template merge<true, Partial>(slots, thread, round, valid_items, keys, payload, comp);
      }
    }
  }

  // sort_nearly's step after the warp rounds (detail/block_merge_plan.cuh,
  // boundary windows): store the warps' sorted runs, check every boundary
  // between them, and if all fit, merge the windows around them; false (and
  // nothing changed in registers) when one does not fit.
  template <typename Payload, typename Compare>
  TILESORT_DEVICE bool boundary_windows(int thread, Key (&keys)[ItemsPerThread], Payload (&payload)[ItemsPerThread],
                                        Compare comp) {
    using run_core = core_for<Payload>;
    using layout = typename run_core::layout;
    constexpr int warps = BlockThreads / detail::warp_threads;
    auto* const slots = reinterpret_cast<typename run_core::item*>(storage_.bytes);
    __syncwarp();  // the warp's last round read only the warp's own slots
    run_core::store(slots, thread, keys, payload);
    __syncthreads();
    bool fits = true;
    if (thread > 0 && thread < warps) {
      const auto key = [&](int p) { return slots[layout::index(p)].key; };
      fits = detail::boundary_window_fits(thread * detail::warp_threads * ItemsPerThread, ItemsPerThread, key, comp);
    }
    if (__syncthreads_and(fits) == 0) return false;
    if (detail::boundary_window_moves(thread, ItemsPerThread, tile_items))
      run_core::template merge_runs<false, false>(slots, detail::boundary_window_range(thread, ItemsPerThread),
                                                  detail::warp_threads * ItemsPerThread / 2, tile_items, keys, payload,
                                                  comp);
    return true;
  }

  // Rounds whose run pairs span several warps. The first one's stores
  // overwrite only the warp's own positions, which only this warp read in the
  // last warp round (if it used shared memory at all). An idle warp stores
  // and waits but merges nothing.
  template <bool Partial, typename Payload, typename Compare>
  TILESORT_DEVICE void block_rounds(int thread, Key (&keys)[ItemsPerThread], Payload (&payload)[ItemsPerThread],
                                    int valid_items, Compare comp, bool idle = false) {
    using run_core = core_for<Payload>;
    auto* const slots = reinterpret_cast<typename run_core::item*>(storage_.bytes);
    TILESORT_UNROLL_COUNT(round_unroll)
    for (int round = run_core::warp_rounds; round < run_core::rounds; ++round) {
      sync(round > run_core::warp_rounds);
      run_core::store(slots, thread, keys, payload);
      __syncthreads();
      if (!idle) run_core::template merge<false, Partial>(slots, thread, round, valid_items, keys, payload, comp);
    }
  }

  temp_storage& storage_;
};

}  // namespace tilesort
