// GPU tests for device/locality_sort.cu: locality_sort_keys / locality_sort_pairs
// against std::stable_sort, bit for bit (stability included), over key types,
// payloads, comparators (less, greater, user), sizes around the blocksort and
// merge-tile edges, every distribution plus the local ones the sort is for
// (keys[i] = i + rand() % 64 or % 25, sorted with a few far moves, shuffled
// runs, sorted with one tile shifted), in place and out of place, both
// overloads, a stream and graph capture, the statistics (sorted input:
// nothing merged, nothing copied; one tile shifted: one window; nearly
// sorted: window merges only), the error paths (input and output untouched),
// and a size past 2^31 checked on the host by order and hash.
//
// Every run poisons the output and a guard zone on both sides of each buffer:
// the guards must survive, and out of place keys_in must be unchanged.
#include <tilesort/device/locality_sort.cuh>

#include <optional>
#include <random>

#include "common/test_util.cuh"

namespace {

using namespace tilesort_test;
using u32 = std::uint32_t;

using policy_u32 = tilesort::detail::locality_policy_for<u32, tilesort::detail::no_value>;

// ------------------------------------------------------------------ inputs
// The distributions of test_util plus the local ones this sort is for.
enum class local { none, plus_64, plus_25, far_moves, shuffled_runs, sawtooth, one_tile_shifted };

const char* local_name(local l) {
  switch (l) {
    case local::none: return "";
    case local::plus_64: return "i + rand() % 64";
    case local::plus_25: return "i + rand() % 25";
    case local::far_moves: return "sorted, a few far moves";
    case local::shuffled_runs: return "shuffled sorted runs of 3000";
    case local::sawtooth: return "ascending runs of 5000 at random bases";
    case local::one_tile_shifted: return "sorted, one blocksort tile shifted 10 places down";
  }
  return "?";
}

// Keys of a local distribution, made from ordinals; `Key` must hold n + 64.
template <typename Key>
std::vector<Key> make_local(std::size_t n, local l, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> ordinal(n);
  for (std::size_t i = 0; i < n; ++i) ordinal[i] = static_cast<std::int64_t>(i);
  switch (l) {
    case local::plus_64:
      for (auto& v : ordinal) v += static_cast<std::int64_t>(rng() % 64);
      break;
    case local::plus_25:
      for (auto& v : ordinal) v += static_cast<std::int64_t>(rng() % 25);
      break;
    case local::far_moves:
      for (int k = 0; k < 5 && n > 1; ++k) std::swap(ordinal[rng() % n], ordinal[rng() % n]);
      break;
    case local::shuffled_runs: {
      std::vector<std::vector<std::int64_t>> runs;
      for (std::size_t b = 0; b < n; b += 3000)
        runs.emplace_back(ordinal.begin() + b, ordinal.begin() + std::min(n, b + 3000));
      std::shuffle(runs.begin(), runs.end(), rng);
      ordinal.clear();
      for (auto& r : runs) ordinal.insert(ordinal.end(), r.begin(), r.end());
      break;
    }
    case local::sawtooth: {
      std::int64_t base = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (i % 5000 == 0) base = static_cast<std::int64_t>(rng() % (n + 1));
        ordinal[i] = base + static_cast<std::int64_t>(i % 5000);
      }
      break;
    }
    case local::one_tile_shifted: {
      // Keys 2i, tile 3's lowered by 21: every tile stays in order, and only
      // the boundary before tile 3 is not (its first key belongs 10 places
      // earlier).
      const std::size_t begin = 3 * static_cast<std::size_t>(policy_u32::tile_items);
      const std::size_t end = begin + policy_u32::tile_items;
      for (std::size_t i = 0; i < n; ++i) ordinal[i] = 2 * ordinal[i] - (i >= begin && i < end ? 21 : 0);
      break;
    }
    case local::none: break;
  }
  std::vector<Key> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<Key, user_key>) {
      keys[i] = user_key{static_cast<std::int32_t>(ordinal[i] / 3), static_cast<std::uint16_t>(i), 0};
    } else {
      keys[i] = static_cast<Key>(ordinal[i]);
    }
  }
  return keys;
}

// ------------------------------------------------------------------ running the sort
struct run_options {
  bool in_place = false;
  bool convenience = false;
  cudaStream_t stream = 0;
  tilesort::sort_stats* stats = nullptr;  // pinned host memory
};

std::string describe(std::int64_t n, const run_options& o) {
  return "n=" + std::to_string(n) + (o.in_place ? " in place" : " copy") + (o.convenience ? " convenience" : "");
}

// Keys, and values when Value is not no_value; returns what the caller sees afterwards.
template <typename Key, typename Value, typename Compare>
std::pair<std::vector<Key>, std::vector<Value>> device_sort(const std::vector<Key>& keys_host,
                                                            const std::vector<Value>& values_host, Compare comp,
                                                            const run_options& o) {
  constexpr bool pairs = !std::is_same_v<Value, tilesort::detail::no_value>;
  const auto n = static_cast<std::int64_t>(keys_host.size());
  sort_buffers<Key, Value> b(keys_host, values_host);  // values_host is empty for keys alone
  Key* kdst = b.keys_out(o.in_place);
  Value* vdst = b.values_out(o.in_place);
  tilesort::sort_options options;
  options.stats = o.stats;
  run_device_sort(
      o.convenience, o.stream,
      [&] {
        if constexpr (pairs) {
          return tilesort::locality_sort_pairs(b.keys_in(), kdst, b.values_in(), vdst, n, comp, o.stream, options);
        } else {
          return tilesort::locality_sort_keys(b.keys_in(), kdst, n, comp, o.stream, options);
        }
      },
      [&](void* temp, std::size_t& bytes) {
        if constexpr (pairs) {
          return tilesort::locality_sort_pairs(temp, bytes, b.keys_in(), kdst, b.values_in(), vdst, n, comp, o.stream,
                                               options);
        } else {
          return tilesort::locality_sort_keys(temp, bytes, b.keys_in(), kdst, n, comp, o.stream, options);
        }
      });
  return b.result(o.in_place);
}

template <typename Key, typename Compare>
void check_keys(const std::vector<Key>& in, Compare comp, const run_options& o) {
  SCOPED_TRACE(describe(static_cast<std::int64_t>(in.size()), o));
  const auto out = device_sort(in, std::vector<tilesort::detail::no_value>(), comp, o).first;
  expect_stable_sorted(in, out, comp);
}

// Values are the original indices: the output must equal std::stable_sort's permutation.
template <typename Key, typename Compare>
void check_pairs(const std::vector<Key>& in, Compare comp, const run_options& o) {
  SCOPED_TRACE(describe(static_cast<std::int64_t>(in.size()), o) + " pairs");
  const auto [keys, values] = device_sort(in, iota_indices(in.size()), comp, o);
  expect_stable_pairs(in, keys, values, comp);
}

// Sizes around every edge: tiny, the merge tile, the blocksort tile, odd run
// counts (a group without B), primes, powers of two +-1.
std::vector<std::int64_t> edge_sizes(std::int64_t t, std::int64_t m) {
  std::vector<std::int64_t> sizes = {0, 1, 2, 3, 31, 32, 33, 100, m - 1, m, m + 1, t - 1, t, t + 1, 2 * t - 1, 2 * t,
                                     2 * t + 1, 3 * t + 7, 4 * t + m / 2 + 1};
  if (small_run()) return sizes;
  for (std::int64_t s : {std::int64_t(7919), std::int64_t(65521), std::int64_t(65537), std::int64_t(131071), 5 * t + 3,
                         9 * t - 1, std::int64_t(1000003), (std::int64_t(1) << 20) - 1, (std::int64_t(1) << 20) + 1,
                         (std::int64_t(1) << 22) + 3})
    sizes.push_back(s);
  return sizes;
}

std::int64_t local_size() { return small_run() ? 5 * policy_u32::tile_items + 77 : (std::int64_t(1) << 21) + 12345; }

// ------------------------------------------------------------------ tests
TEST(LocalitySort, U32EdgeSizesEveryDistribution) {
  REQUIRE_GPU();
  for (std::int64_t n : edge_sizes(policy_u32::tile_items, policy_u32::merge_tile_items)) {
    for (distribution d : all_distributions) {
      const auto in = make_keys<u32>(n, d, fresh_seed());
      check_keys(in, tilesort::less{}, run_options{});
      if (HasFatalFailure()) return;
    }
  }
}

TEST(LocalitySort, LocalDistributions) {
  REQUIRE_GPU();
  const std::int64_t n = local_size();
  for (local l : {local::plus_64, local::plus_25, local::far_moves, local::shuffled_runs, local::sawtooth,
                  local::one_tile_shifted}) {
    SCOPED_TRACE(local_name(l));
    const auto keys = make_local<u32>(n, l, fresh_seed());
    check_keys(keys, tilesort::less{}, run_options{});
    run_options in_place;
    in_place.in_place = true;
    check_pairs(keys, tilesort::less{}, in_place);
    check_keys(keys, tilesort::greater{}, run_options{});  // locality reversed: the "wrong" order
    if (HasFatalFailure()) return;
  }
}

TEST(LocalitySort, PairsStableEveryDistribution) {
  REQUIRE_GPU();
  const std::int64_t t = policy_u32::tile_items;
  for (std::int64_t n : {std::int64_t(33), t + 1, 3 * t + 7, small_run() ? std::int64_t(50000) : std::int64_t(1000003)}) {
    for (distribution d : all_distributions) {
      const auto in = make_keys<u32>(n, d, fresh_seed());
      check_pairs(in, tilesort::less{}, run_options{});
      if (HasFatalFailure()) return;
    }
  }
}

template <typename Key>
void check_type(std::int64_t n) {
  using compare = typename comparator_for<Key>::type;
  for (distribution d : {distribution::random, distribution::few_distinct, distribution::nearly_sorted,
                         distribution::sorted, distribution::reversed, distribution::nan_and_zero}) {
    check_keys(make_keys<Key>(n, d, fresh_seed(), compare{}), compare{}, run_options{});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(LocalitySort, KeyTypes) {
  REQUIRE_GPU();
  const std::int64_t n = small_run() ? 30000 : 300001;
  check_type<std::int8_t>(n);
  check_type<std::uint16_t>(n);
  check_type<std::int64_t>(n);
  check_type<float>(n);
  check_type<double>(n);
  check_type<__half>(n);
  check_type<__nv_bfloat16>(n);
  check_type<user_key>(n);  // equal `major`, different `minor`: stability is visible
}

TEST(LocalitySort, WidePairs) {
  REQUIRE_GPU();
  // 12-byte items: the policy with half the items per thread (T = 4096).
  for (std::int64_t n : {std::int64_t(4095), std::int64_t(4097), std::int64_t(2049), small_run() ? std::int64_t(30000) : std::int64_t(700001)}) {
    check_pairs(make_keys<std::uint64_t>(n, distribution::few_distinct, fresh_seed(), tilesort::greater{}),
                tilesort::greater{}, run_options{});
    check_pairs(make_local<std::uint64_t>(n, local::plus_64, fresh_seed()), tilesort::greater{}, run_options{});
  }
}

TEST(LocalitySort, InPlaceAndConvenience) {
  REQUIRE_GPU();
  const std::int64_t n = local_size();
  for (bool convenience : {false, true}) {
    run_options o;
    o.in_place = true;
    o.convenience = convenience;
    check_keys(make_keys<u32>(n, distribution::random, fresh_seed()), tilesort::less{}, o);
    check_keys(make_local<u32>(n, local::plus_64, fresh_seed()), tilesort::less{}, o);
    check_keys(make_keys<u32>(n, distribution::sorted, fresh_seed()), tilesort::less{}, o);  // nothing is written
    check_pairs(make_keys<u32>(n, distribution::few_distinct, fresh_seed()), tilesort::less{}, o);
    o.in_place = false;
    check_pairs(make_local<u32>(n, local::plus_25, fresh_seed()), tilesort::less{}, o);
  }
}

TEST(LocalitySort, Statistics) {
  REQUIRE_GPU();
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  const std::int64_t t = policy_u32::tile_items;
  const std::int64_t n = small_run() ? 16 * t : 256 * t;  // a power of two of tiles: every pass is full
  const std::int64_t tiles = n / policy_u32::merge_tile_items;
  const int passes = small_run() ? 4 : 8;
  run_options o;
  o.stats = stats;
  auto run = [&](const std::vector<u32>& keys, const char* what) {
    std::memset(stats, 0xff, sizeof *stats);
    check_keys(keys, tilesort::less{}, o);
    EXPECT_EQ(n, stats->n) << what;
    EXPECT_EQ(passes, stats->merge_passes) << what;
    EXPECT_EQ(n / t, stats->blocksort_tiles) << what;
    EXPECT_EQ(n, stats->blocksort_keys) << what;
    EXPECT_EQ(tiles, stats->full_pass_tiles) << what;
    std::printf("%s:\n%s", what, tilesort::format_sort_stats(*stats).c_str());
  };
  run(make_keys<u32>(n, distribution::sorted, fresh_seed()), "sorted");
  EXPECT_EQ(n / t, stats->presorted_tiles);
  for (int p = 0; p < passes; ++p) {
    EXPECT_EQ(0, stats->pass[p].merge_tiles);
    EXPECT_EQ(0, stats->pass[p].window_merges);
  }
  EXPECT_EQ(0, stats->final_copy_tiles);
  EXPECT_EQ(0, stats->boundary.window_merges);
  EXPECT_EQ(0.0, stats->merge_pass_equivalents());

  // Every tile in order, one boundary not: not sorted input, so the boundary
  // plans run, and one window fixes it.
  run(make_local<u32>(n, local::one_tile_shifted, fresh_seed()), "one tile shifted");
  EXPECT_EQ(n / t, stats->presorted_tiles);
  EXPECT_EQ(1, stats->boundary.window_merges);
  EXPECT_EQ(0, stats->final_copy_tiles);

  // Displacement 64 fits the smallest window: the boundary windows (one per
  // blocksort-tile boundary, nearly all of them out of order) sort it, and no
  // pass merges anything.
  run(make_local<u32>(n, local::plus_64, fresh_seed()), "i + rand() % 64");
  EXPECT_LE(stats->boundary.window_merges, n / t - 1);
  EXPECT_GE(stats->boundary.window_merges, (n / t - 1) * 9 / 10);
  for (int p = 0; p < passes; ++p) {
    EXPECT_EQ(0, stats->pass[p].merge_tiles) << "pass " << p;
    EXPECT_EQ(0, stats->pass[p].window_merges) << "pass " << p;
  }
  EXPECT_EQ(0, stats->final_copy_tiles);
  EXPECT_LT(stats->merge_pass_equivalents(), 0.1);

  // No tile looks local: merge_sort's passes (the dense passes kernel), every
  // tile merged in every pass, nothing copied.
  run(make_keys<u32>(n, distribution::random, fresh_seed()), "random");
  EXPECT_EQ(0, stats->boundary.window_merges);
  for (int p = 0; p < passes; ++p) {
    EXPECT_EQ(tiles, stats->pass[p].merge_tiles) << "pass " << p;
    EXPECT_EQ(n, stats->pass[p].merged_keys) << "pass " << p;
  }
  EXPECT_EQ(0, stats->final_copy_tiles);
  EXPECT_DOUBLE_EQ(passes, stats->merge_pass_equivalents());
  cudaFreeHost(stats);
}

// From dense_kernel_min_keys keys on (2^23 for keys alone, 2^21 for pairs),
// random keys take merge_sort's k-way passes in one cooperative kernel (items
// of 4 bytes and more; nearly sorted input skips it) or the pairwise dense
// kernel (1- and 2-byte keys): every pass merges every key.
TEST(LocalitySort, RandomKeysTakeTheDenseKernel) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "large case skipped in the small run";
  using tilesort::detail::dense_passes;
  using tilesort::detail::locality_dense_choice;
  using policy_pairs = tilesort::detail::locality_policy_for<u32, u32>;
  using policy_u16 = tilesort::detail::locality_policy_for<std::uint16_t, tilesort::detail::no_value>;
  static_assert(policy_u32::dense_kernel_min_keys < policy_u32::dense_kway_min_keys);
  static_assert(policy_pairs::dense_kernel_min_keys < policy_pairs::dense_kway_min_keys);
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  run_options o;
  o.stats = stats;
  const std::int64_t n = policy_u32::dense_kernel_min_keys + 12345;
  ASSERT_EQ(dense_passes::kway_kernel, locality_dense_choice<policy_u32>(true, n));
  const auto plan = tilesort::detail::locality_dense_plan<policy_u32>(n);
  ASSERT_GT(plan.merge_passes, 0);
  check_keys(make_keys<u32>(n, distribution::random, fresh_seed()), tilesort::less{}, o);
  EXPECT_EQ(plan.merge_passes, stats->merge_passes);
  for (int p = 0; p < plan.merge_passes; ++p) EXPECT_EQ(n, stats->pass[p].merged_keys) << "pass " << p;
  EXPECT_EQ(0, stats->final_copy_tiles);
  check_keys(make_local<u32>(n, local::plus_64, fresh_seed()), tilesort::less{}, o);
  EXPECT_EQ(0, stats->pass[0].merge_tiles);  // windows sorted it: the k-way kernel returned at once
  o.in_place = true;
  const std::int64_t pairs_n = policy_pairs::dense_kernel_min_keys + 777;
  ASSERT_EQ(dense_passes::kway_kernel, locality_dense_choice<policy_pairs>(true, pairs_n));
  check_pairs(make_keys<u32>(pairs_n, distribution::random, fresh_seed()), tilesort::less{}, o);
  const std::int64_t n16 = policy_u16::dense_kernel_min_keys + 4321;
  ASSERT_EQ(dense_passes::own_kernel, locality_dense_choice<policy_u16>(true, n16));
  o.in_place = false;
  check_keys(make_keys<std::uint16_t>(n16, distribution::random, fresh_seed()), tilesort::less{}, o);
  const int passes = tilesort::detail::merge_passes_for(n16, policy_u16::tile_items);
  EXPECT_EQ(passes, stats->merge_passes);
  for (int p = 0; p < passes; ++p) EXPECT_EQ(n16, stats->pass[p].merged_keys) << "pass " << p;
  cudaFreeHost(stats);
}

// From dense_kway_min_keys keys on, random keys take merge_sort's k-way
// kernels (launched after the passes kernel, each returning at once unless no
// blocksort tile looked local); nearly sorted input at that size skips them.
TEST(LocalitySort, LargeRandomTakesKwayPasses) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "large case skipped in the small run";
  const std::int64_t n = policy_u32::dense_kway_min_keys + 12345;
  const auto plan = tilesort::detail::locality_dense_plan<policy_u32>(n);
  ASSERT_GT(plan.merge_passes, 0);
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  run_options o;
  o.stats = stats;
  std::memset(stats, 0xff, sizeof *stats);
  check_keys(make_keys<u32>(n, distribution::random, fresh_seed()), tilesort::less{}, o);
  EXPECT_EQ(plan.merge_passes, stats->merge_passes);
  for (int p = 0; p < plan.merge_passes; ++p) {
    EXPECT_EQ(n, stats->pass[p].merged_keys) << "pass " << p;
    EXPECT_GE(stats->pass[p].merge_tiles, tilesort::detail::ceil_div(n, std::int64_t(policy_u32::merge_tile_items)))
        << "pass " << p;
  }
  EXPECT_EQ(0, stats->final_copy_tiles);
  EXPECT_DOUBLE_EQ(plan.merge_passes, stats->merge_pass_equivalents());
  o.in_place = true;
  check_keys(make_keys<u32>(n, distribution::random, fresh_seed()), tilesort::less{}, o);
  check_pairs(make_keys<u32>(n, distribution::few_distinct, fresh_seed()), tilesort::less{}, o);
  check_keys(make_local<u32>(n, local::plus_64, fresh_seed()), tilesort::less{}, o);
  EXPECT_EQ(0, stats->pass[0].merge_tiles);  // windows sorted it: the k-way kernels returned at once
  o.in_place = false;
  check_pairs(make_keys<u32>(n, distribution::random, fresh_seed()), tilesort::less{}, o);
  check_keys(make_keys<std::uint64_t>(n, distribution::random, fresh_seed()), tilesort::less{}, o);  // 8-way
  cudaFreeHost(stats);
}

TEST(LocalitySort, StreamAndGraphCapture) {
  REQUIRE_GPU();
  const std::int64_t n = local_size();
  const auto in = make_local<u32>(n, local::plus_64, fresh_seed());
  device_buffer<u32> keys(in), out(n);
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t captured = tilesort::locality_sort_keys(keys.data(), out.data(), n, tilesort::less{}, stream);
  CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(cudaSuccess, captured) << "the convenience overload could not be captured";
  cudaGraphExec_t exec;
  CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  auto expected = in;
  std::stable_sort(expected.begin(), expected.end());
  for (int replay = 0; replay < 2; ++replay) {
    out.poison();
    CUDA_ASSERT(cudaGraphLaunch(exec, stream));
    CUDA_ASSERT(cudaStreamSynchronize(stream));
    EXPECT_TRUE(out.download() == expected) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  // Two-phase on the stream, in place.
  std::size_t bytes = 0;
  CUDA_ASSERT(tilesort::locality_sort_keys(nullptr, bytes, keys.data(), keys.data(), n));
  device_buffer<unsigned char> temp(bytes);
  CUDA_ASSERT(tilesort::locality_sort_keys(temp.data(), bytes, keys.data(), keys.data(), n, tilesort::less{}, stream));
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  EXPECT_TRUE(keys.download() == expected);
  cudaStreamDestroy(stream);
}

TEST(LocalitySort, ErrorsLeaveEverythingUntouched) {
  REQUIRE_GPU();
  const std::int64_t n = 3 * policy_u32::tile_items;
  const auto in = make_keys<u32>(n, distribution::random, fresh_seed());
  guarded_buffer<u32> keys(n), out(n);
  keys.upload(in);
  std::size_t bytes = 0;
  CUDA_ASSERT(tilesort::locality_sort_keys(nullptr, bytes, keys.data(), out.data(), n));
  device_buffer<unsigned char> temp(bytes);
  const u32* null_in = nullptr;
  u32* null_out = nullptr;
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::locality_sort_keys(temp.data(), bytes, keys.data(), out.data(), -1));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::locality_sort_keys(temp.data(), bytes, null_in, out.data(), n));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::locality_sort_keys(temp.data(), bytes, keys.data(), null_out, n));
  std::size_t small = bytes - 1;
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::locality_sort_keys(temp.data(), small, keys.data(), out.data(), n));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::locality_sort_keys(keys.data(), out.data(), -5));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::locality_sort_pairs(keys.data(), out.data(), static_cast<const u32*>(nullptr),
                                                                 null_out, n));
  // n == 0 and n == 1 are valid and cheap.
  EXPECT_EQ(cudaSuccess, tilesort::locality_sort_keys(null_in, null_out, 0));
  std::size_t zero = 0;
  EXPECT_EQ(cudaSuccess, tilesort::locality_sort_keys(nullptr, zero, null_in, null_out, 0));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(bitwise_equal(in, keys.download())) << "a rejected call changed the input";
  EXPECT_TRUE(out.untouched()) << "a rejected call wrote the output";
  EXPECT_TRUE(keys.guards_intact() && out.guards_intact());
}

TEST(LocalitySort, PastTwoToThe31) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "large case skipped in the small run";
  const std::int64_t n = (std::int64_t(1) << 31) + 4099;
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_ASSERT(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < std::size_t(n) * sizeof(u32) * 2 + (std::size_t(1) << 30)) GTEST_SKIP() << "not enough device memory";
  for (bool random : {false, true}) {
    SCOPED_TRACE(random ? "random" : "i + rand() % 64");
    std::vector<u32> keys(n);
    std::uint64_t hash_in = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t h = splitmix64(static_cast<std::uint64_t>(i));
      keys[i] = random ? static_cast<u32>(h) : static_cast<u32>(i + static_cast<std::int64_t>(h % 64));
      hash_in += splitmix64(keys[i]);
    }
    device_buffer<u32> d(keys);
    CUDA_ASSERT(tilesort::locality_sort_keys(d.data(), d.data(), n));
    CUDA_ASSERT(cudaDeviceSynchronize());
    d.download().swap(keys);
    std::uint64_t hash_out = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      hash_out += splitmix64(keys[i]);
      if (i > 0 && keys[i] < keys[i - 1]) FAIL() << "unsorted at " << i;
    }
    EXPECT_EQ(hash_in, hash_out) << "not a permutation";
  }
}

}  // namespace
