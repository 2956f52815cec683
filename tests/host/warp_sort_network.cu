// Host tests for warp/warp_sort.cuh: the warp sort's network, guards and
// re-blocking, run on an emulated warp. The sort is written against an
// "exchange" (lane(), exchange_xor, exchange_from); here 32 host threads play
// the lanes and trade values through a barrier, so the exact code the GPU runs
// (minus the word-by-word shuffle intrinsics) is checked on every machine,
// for every shape, against std::sort. The GPU tests (tests/gpu/warp_sort.cu)
// cover the real shuffles, key types and comparators.
#include <tilesort/warp/warp_sort.cuh>

#include <array>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/test_util.cuh"

// Outside the anonymous namespace: the device pass sees members referenced
// only by host code and would warn about unused internal functions.
namespace warp_emulation {

// 32 lanes in lockstep at every shuffle. Detects lanes that disagree on the
// sequence of shuffles (divergent control flow) and exchanges that would cross
// a logical warp.
class emulated_warp {
 public:
  static constexpr int lanes = 32;
  static constexpr int max_bytes = 64;

  explicit emulated_warp(int logical_width) : width_(logical_width) {}

  // The sort's functions are __host__ __device__, so these are too; only the
  // host side ever runs.
  class exchange {
   public:
    exchange(emulated_warp* warp, int physical_lane) : warp_(warp), physical_lane_(physical_lane) {}
    __host__ __device__ int lane() const {
#ifdef __CUDA_ARCH__
      return 0;
#else
      return physical_lane_ & (warp_->width_ - 1);
#endif
    }
    template <typename T>
    __host__ __device__ T exchange_xor(const T& value, int lane_mask) const {
#ifdef __CUDA_ARCH__
      return value;
#else
      if (lane_mask <= 0 || lane_mask >= warp_->width_) warp_->fail("xor mask outside the logical warp");
      return warp_->shuffle(physical_lane_, value, lane() ^ lane_mask);
#endif
    }
    template <typename T>
    __host__ __device__ T exchange_from(const T& value, int source_lane) const {
#ifdef __CUDA_ARCH__
      return value;
#else
      return warp_->shuffle(physical_lane_, value, source_lane);
#endif
    }

   private:
    emulated_warp* warp_;
    int physical_lane_;
  };

  // Run body(exchange, physical lane) on all 32 lanes at once.
  template <typename Body>
  void run(Body body) {
    std::vector<std::thread> threads;
    for (int lane = 0; lane < lanes; ++lane) {
      threads.emplace_back([this, lane, &body] {
        const exchange ex(this, lane);
        body(ex, lane);
        retire();
      });
    }
    for (auto& t : threads) t.join();
  }

  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }

 private:
  template <typename T>
  T shuffle(int physical_lane, const T& value, int logical_source) {
    static_assert(sizeof(T) <= max_bytes);
    std::memcpy(bytes_[physical_lane].data(), &value, sizeof(T));
    ++calls_[physical_lane];
    wait_for_all();
    // As __shfl_sync with `width`: the source lane is taken modulo the width.
    const int source = (physical_lane & ~(width_ - 1)) | (logical_source & (width_ - 1));
    if (calls_[source] != calls_[physical_lane]) fail("lanes took different paths");
    T result;
    std::memcpy(&result, bytes_[source].data(), sizeof(T));
    wait_for_all();
    return result;
  }

  void wait_for_all() {
    std::unique_lock<std::mutex> lock(mutex_);
    const long generation = generation_;
    if (++arrived_ == active_) {
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return generation_ != generation; });
    }
  }

  void retire() {
    std::unique_lock<std::mutex> lock(mutex_);
    --active_;
    if (arrived_ > 0) {
      // Someone waits at a shuffle this lane never reached.
      if (failure_.empty()) failure_ = "lanes made different numbers of shuffles";
      if (arrived_ >= active_) {
        arrived_ = 0;
        ++generation_;
        changed_.notify_all();
      }
    }
  }

  void fail(const char* what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = what;
  }

  int width_;
  std::array<std::array<unsigned char, max_bytes>, lanes> bytes_{};
  std::array<long, lanes> calls_{};
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  int active_ = lanes;
  long generation_ = 0;
  std::string failure_;
};

}  // namespace warp_emulation

namespace {

using tilesort_test::fresh_seed;
using warp_emulation::emulated_warp;

// Orders by the key's top bits only: many ties between different keys, so a
// network that duplicates or drops an element on a tie is caught.
struct coarse_less {
  __host__ __device__ bool operator()(int a, int b) const { return (a >> 6) < (b >> 6); }
};

enum class mode { keys, pairs };

// Sort 32 lanes' worth of logical warps of W x IPT int keys (values = input
// position) on the emulated warp; check every logical warp against std::sort.
template <int W, int IPT, mode Mode, bool Guarded, typename Compare>
void check_shape(std::uint64_t seed, Compare comp) {
  SCOPED_TRACE("W=" + std::to_string(W) + " IPT=" + std::to_string(IPT) + (Mode == mode::pairs ? " pairs" : " keys") +
               (Guarded ? " valid_items" : "") + " seed=" + std::to_string(seed));
  constexpr int tile = W * IPT;
  constexpr int groups = emulated_warp::lanes / W;
  std::mt19937_64 rng(seed);
  std::array<std::array<int, IPT>, emulated_warp::lanes> keys{};
  std::array<std::array<int, IPT>, emulated_warp::lanes> values{};
  for (int lane = 0; lane < emulated_warp::lanes; ++lane) {
    for (int i = 0; i < IPT; ++i) {
      // Half the keys from a small range, so every tile has equal keys.
      const int key_range = rng() % 2 ? 100 : 1 << 20;
      keys[lane][i] = static_cast<int>(rng() % key_range) - key_range / 2;
      values[lane][i] = (lane % W) * IPT + i;  // position in its logical warp
    }
  }
  // valid_items per logical warp: the edge cases first, then random.
  const int edge[] = {0, 1, tile, tile + 1, -1, tile - 1, 1 << 30, -(1 << 30)};
  std::array<int, groups> valid{};
  for (int g = 0; g < groups; ++g) {
    valid[g] = g < 8 ? edge[g] : static_cast<int>(rng() % (tile + 1));
    if (!Guarded) valid[g] = tile;
  }
  const auto keys_in = keys;
  const auto values_in = values;

  emulated_warp warp(W);
  warp.run([&](const emulated_warp::exchange& ex, int lane) {
    int k[IPT];
    int v[IPT];
    for (int i = 0; i < IPT; ++i) {
      k[i] = keys[lane][i];
      v[i] = values[lane][i];
    }
    tilesort::detail::no_value none[IPT];
    if constexpr (Mode == mode::keys) {
      tilesort::detail::warp_sort_impl<W, Guarded>(k, none, valid[lane / W], comp, ex);
    } else {
      tilesort::detail::warp_sort_impl<W, Guarded>(k, v, valid[lane / W], comp, ex);
    }
    for (int i = 0; i < IPT; ++i) {
      keys[lane][i] = k[i];
      values[lane][i] = v[i];
    }
  });
  ASSERT_FALSE(warp.failed()) << warp.failure();

  for (int g = 0; g < groups; ++g) {
    SCOPED_TRACE("logical warp " + std::to_string(g) + " valid_items=" + std::to_string(valid[g]));
    const int n_valid = std::clamp(valid[g], 0, tile);
    std::vector<int> in_keys, out_keys, in_values, out_values;
    for (int lane = g * W; lane < (g + 1) * W; ++lane) {
      for (int i = 0; i < IPT; ++i) {
        in_keys.push_back(keys_in[lane][i]);
        out_keys.push_back(keys[lane][i]);
        in_values.push_back(values_in[lane][i]);
        out_values.push_back(values[lane][i]);
      }
    }
    // The sorted prefix: ordered, and (as pairs, or as keys) a permutation of
    // the valid inputs; keys-only under a coarse comparator must still keep
    // every distinct key.
    std::vector<int> ref(in_keys.begin(), in_keys.begin() + n_valid);
    std::stable_sort(ref.begin(), ref.end(), comp);
    for (int i = 0; i < n_valid; ++i) {
      ASSERT_FALSE(comp(ref[i], out_keys[i]) || comp(out_keys[i], ref[i]))
          << "rank " << i << ": " << out_keys[i] << ", expected one equivalent to " << ref[i];
    }
    ASSERT_TRUE(tilesort_test::is_permutation_of(std::vector<int>(in_keys.begin(), in_keys.begin() + n_valid),
                                                 std::vector<int>(out_keys.begin(), out_keys.begin() + n_valid)))
        << "the sorted keys are not a permutation of the valid keys";
    if constexpr (Mode == mode::pairs) {
      for (int i = 0; i < n_valid; ++i) {
        ASSERT_TRUE(out_values[i] >= 0 && out_values[i] < static_cast<int>(in_keys.size()) &&
                    in_keys[out_values[i]] == out_keys[i])
            << "rank " << i << ": the value did not travel with its key";
      }
      std::vector<int> sorted_values(out_values.begin(), out_values.begin() + n_valid);
      std::sort(sorted_values.begin(), sorted_values.end());
      ASSERT_TRUE(std::adjacent_find(sorted_values.begin(), sorted_values.end()) == sorted_values.end())
          << "a pair was duplicated";
    }
    // Past valid_items nothing moves.
    for (int i = n_valid; i < tile; ++i) {
      ASSERT_EQ(in_keys[i], out_keys[i]) << "invalid key at " << i << " moved";
      if constexpr (Mode == mode::pairs) ASSERT_EQ(in_values[i], out_values[i]) << "invalid value at " << i << " moved";
    }
  }
}

template <int W, int IPT>
void check_all_modes(std::uint64_t seed) {
  check_shape<W, IPT, mode::keys, false>(seed, tilesort::less{});
  check_shape<W, IPT, mode::pairs, false>(seed + 1, coarse_less{});
  check_shape<W, IPT, mode::keys, true>(seed + 2, coarse_less{});
  check_shape<W, IPT, mode::pairs, true>(seed + 3, tilesort::less{});
}

TEST(WarpSortNetwork, PowerOfTwoItems) {
  const auto seed = fresh_seed();
  for (int trial = 0; trial < (tilesort_test::small_run() ? 1 : 3); ++trial) {
    check_all_modes<1, 4>(seed + 10 * trial);
    check_all_modes<2, 1>(seed + 10 * trial);
    check_all_modes<2, 16>(seed + 10 * trial);
    check_all_modes<4, 2>(seed + 10 * trial);
    check_all_modes<8, 8>(seed + 10 * trial);
    check_all_modes<16, 4>(seed + 10 * trial);
    check_all_modes<32, 1>(seed + 10 * trial);
    check_all_modes<32, 2>(seed + 10 * trial);
    check_all_modes<32, 4>(seed + 10 * trial);
    check_all_modes<32, 8>(seed + 10 * trial);
  }
}

TEST(WarpSortNetwork, AnyItemCount) {
  const auto seed = fresh_seed();
  for (int trial = 0; trial < (tilesort_test::small_run() ? 1 : 3); ++trial) {
    check_all_modes<1, 3>(seed + 10 * trial);
    check_all_modes<2, 3>(seed + 10 * trial);
    check_all_modes<4, 5>(seed + 10 * trial);
    check_all_modes<4, 7>(seed + 10 * trial);
    check_all_modes<8, 6>(seed + 10 * trial);
    check_all_modes<16, 3>(seed + 10 * trial);
    check_all_modes<32, 3>(seed + 10 * trial);
    check_all_modes<32, 5>(seed + 10 * trial);
    check_all_modes<4, 9>(seed + 10 * trial);
    check_all_modes<8, 12>(seed + 10 * trial);
  }
}

// Re-blocking alone: element x moves from (x / Src, x % Src) to (x / Dst, x % Dst).
template <int W, int Src, int Dst>
void check_reblock() {
  SCOPED_TRACE("W=" + std::to_string(W) + " " + std::to_string(Src) + " -> " + std::to_string(Dst));
  std::array<std::array<int, Dst>, emulated_warp::lanes> out{};
  emulated_warp warp(W);
  warp.run([&](const emulated_warp::exchange& ex, int lane) {
    int src[Src];
    int dst[Dst];
    for (int i = 0; i < Src; ++i) src[i] = (lane / W) * 100000 + (lane % W) * Src + i;
    tilesort::detail::reblock(src, dst, ex.lane(), ex);
    for (int k = 0; k < Dst; ++k) out[lane][k] = dst[k];
  });
  ASSERT_FALSE(warp.failed()) << warp.failure();
  for (int lane = 0; lane < emulated_warp::lanes; ++lane) {
    for (int k = 0; k < Dst; ++k) {
      const int x = (lane % W) * Dst + k;
      if (x < W * Src) ASSERT_EQ((lane / W) * 100000 + x, out[lane][k]) << "lane " << lane << " slot " << k;
    }
  }
}

TEST(WarpSortNetwork, Reblock) {
  check_reblock<32, 3, 4>();
  check_reblock<32, 4, 3>();
  check_reblock<32, 5, 8>();
  check_reblock<32, 8, 5>();
  check_reblock<8, 12, 16>();
  check_reblock<8, 16, 12>();
  check_reblock<4, 7, 8>();
  check_reblock<4, 8, 7>();
  check_reblock<2, 1, 3>();
  check_reblock<16, 9, 16>();
  check_reblock<16, 16, 9>();
}

}  // namespace
