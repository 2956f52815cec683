// GPU tests for segmented_sort_keys/pairs with segments::uniform(length):
// every row checked against a per-row std::stable_sort, across row sorters
// (warp rows, block rows), partial last rows, key types, comparators,
// distributions, in place, the convenience overload and the error paths.
#include <tilesort/device/segmented_sort.cuh>

#include "common/test_util.cuh"

namespace {

using namespace tilesort_test;

// Lengths that hit every row sorter and its edges (policy for 4-byte keys:
// warp rows up to 32/64/128/256/512, block rows up to 1024/2048/4096/8192/16384).
const std::int64_t lengths[] = {2,    3,    31,   32,   33,   64,   100,  128,   255,   256,  300,
                                 512,  513,  1000, 1024, 2048, 3000, 4096, 8192, 10000, 16384};

template <typename Key, typename Compare>
std::vector<Key> reference_rows(std::vector<Key> keys, std::int64_t length, Compare comp) {
  for (std::size_t begin = 0; begin < keys.size(); begin += length)
    std::stable_sort(keys.begin() + begin, keys.begin() + std::min<std::size_t>(keys.size(), begin + length), comp);
  return keys;
}

template <typename Key, typename Compare>
void check_keys(std::int64_t n, std::int64_t length, distribution dist, Compare comp, bool in_place) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(std::string("n=") + std::to_string(n) + " length=" + std::to_string(length) + " dist=" + name(dist) +
               (in_place ? " in place" : "") + " seed=" + std::to_string(seed));
  const auto in = make_keys<Key>(n, dist, seed, comp);
  device_buffer<Key> d_in(in), d_out(n);
  d_out.poison();
  Key* out_ptr = in_place ? d_in.data() : d_out.data();
  std::size_t temp_bytes = 0;
  CUDA_ASSERT(tilesort::segmented_sort_keys(nullptr, temp_bytes, d_in.data(), out_ptr, n,
                                            tilesort::segments::uniform(length), comp));
  device_buffer<char> temp(temp_bytes);
  CUDA_ASSERT(tilesort::segmented_sort_keys(temp.data(), temp_bytes, d_in.data(), out_ptr, n,
                                            tilesort::segments::uniform(length), comp));
  CUDA_ASSERT_LAUNCH();
  const auto out = in_place ? d_in.download() : d_out.download();
  const auto ref = reference_rows(in, length, comp);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!bytes_equal(ref[i], out[i])) {
      FAIL() << "row " << i / length << " differs from std::stable_sort at position " << i % length;
    }
  }
}

// Pairs with values = original index: exact match with the stable reference.
template <typename Key, typename Compare>
void check_pairs(std::int64_t n, std::int64_t length, distribution dist, Compare comp, bool in_place) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(std::string("pairs n=") + std::to_string(n) + " length=" + std::to_string(length) +
               " dist=" + name(dist) + (in_place ? " in place" : "") + " seed=" + std::to_string(seed));
  const auto keys = make_keys<Key>(n, dist, seed, comp);
  std::vector<std::uint32_t> index(n);
  for (std::int64_t i = 0; i < n; ++i) index[i] = static_cast<std::uint32_t>(i);
  device_buffer<Key> d_keys(keys), d_keys_out(n);
  device_buffer<std::uint32_t> d_values(index), d_values_out(n);
  d_keys_out.poison();
  d_values_out.poison();
  Key* k_out = in_place ? d_keys.data() : d_keys_out.data();
  std::uint32_t* v_out = in_place ? d_values.data() : d_values_out.data();
  CUDA_ASSERT(tilesort::segmented_sort_pairs(d_keys.data(), k_out, d_values.data(), v_out, n,
                                             tilesort::segments::uniform(length), comp));
  CUDA_ASSERT_LAUNCH();
  const auto out_keys = in_place ? d_keys.download() : d_keys_out.download();
  const auto out_index = in_place ? d_values.download() : d_values_out.download();
  std::vector<std::uint32_t> ref = index;
  for (std::int64_t begin = 0; begin < n; begin += length)
    std::stable_sort(ref.begin() + begin, ref.begin() + std::min(n, begin + length),
                     [&](std::uint32_t a, std::uint32_t b) { return comp(keys[a], keys[b]); });
  for (std::int64_t i = 0; i < n; ++i) {
    if (ref[i] != out_index[i] || !bytes_equal(keys[ref[i]], out_keys[i]))
      FAIL() << "row " << i / length << " position " << i % length << ": value " << out_index[i] << ", expected "
             << ref[i];
  }
}

std::int64_t rows_for(std::int64_t length) { return small_run() ? 3 : (length < 256 ? 2000 : 40); }

TEST(SegmentedUniform, U32KeysEveryLength) {
  REQUIRE_GPU();
  for (auto length : lengths) check_keys<std::uint32_t>(rows_for(length) * length - length / 3, length, distribution::random, tilesort::less{}, false);
}

TEST(SegmentedUniform, U32PairsEveryLengthStable) {
  REQUIRE_GPU();
  for (auto length : lengths) check_pairs<std::uint32_t>(rows_for(length) * length - 1, length, distribution::few_distinct, tilesort::less{}, false);
}

// Many rows per launch, as the benchmark sorts them (2^24 keys in rows of
// 300 lost pairs there once, with 40-row tests passing): every block sorter
// shape for pairs, each over thousands of rows.
TEST(SegmentedUniform, U32PairsManyRows) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "skipped in the small (sanitizer) run";
  for (std::int64_t length : {200, 300, 700, 1500, 3000, 4096})
    check_pairs<std::uint32_t>((std::int64_t(1) << 21) + 11, length, distribution::random, tilesort::less{}, false);
}

TEST(SegmentedUniform, Distributions) {
  REQUIRE_GPU();
  for (auto dist : all_distributions)
    for (std::int64_t length : {32, 300, 2048}) {
      check_keys<std::uint32_t>(rows_for(length) * length + 7, length, dist, tilesort::greater{}, false);
      check_pairs<std::uint32_t>(rows_for(length) * length + 7, length, dist, tilesort::less{}, true);
    }
}

TEST(SegmentedUniform, FloatsNanLastStable) {
  REQUIRE_GPU();
  // -0.0 and +0.0 are equivalent: their order must be kept (bitwise reference).
  for (std::int64_t length : {17, 128, 500, 4000}) check_keys<float>(rows_for(length) * length, length, distribution::nan_and_zero, tilesort::less{}, false);
  for (std::int64_t length : {64, 1500}) check_keys<__half>(rows_for(length) * length, length, distribution::nan_and_zero, tilesort::greater{}, true);
}

TEST(SegmentedUniform, UserKeysStable) {
  REQUIRE_GPU();
  for (std::int64_t length : {8, 100, 512, 2000}) check_keys<user_key>(rows_for(length) * length + 3, length, distribution::random, user_key_less{}, false);
}

TEST(SegmentedUniform, WideKeysAndPairs) {
  REQUIRE_GPU();
  for (std::int64_t length : {5, 64, 256, 512, 1000, 4096}) {
    check_keys<std::int64_t>(rows_for(length) * length + 1, length, distribution::random, tilesort::less{}, true);
    check_pairs<std::uint64_t>(rows_for(length) * length + 1, length, distribution::few_distinct, tilesort::greater{}, false);
  }
  for (std::int64_t length : {2, 40, 600}) check_keys<std::uint8_t>(rows_for(length) * length + 5, length, distribution::random, tilesort::less{}, false);
}

TEST(SegmentedUniform, EdgeSizes) {
  REQUIRE_GPU();
  for (std::int64_t n : {1, 2, 31, 32, 33, 1000}) {
    check_keys<std::uint32_t>(n, 1, distribution::random, tilesort::less{}, false);   // rows of one: a copy
    check_keys<std::uint32_t>(n, 5000, distribution::random, tilesort::less{}, false); // one row shorter than length
  }
}

TEST(SegmentedUniform, EmptyInputAndErrors) {
  REQUIRE_GPU();
  const std::vector<std::uint32_t> in = make_keys<std::uint32_t>(1000, distribution::random, fresh_seed());
  device_buffer<std::uint32_t> d(in), out(1000);
  std::size_t temp_bytes = 0;
  CUDA_ASSERT(tilesort::segmented_sort_keys(nullptr, temp_bytes, d.data(), out.data(), 1000, tilesort::segments::uniform(10)));
  EXPECT_GT(temp_bytes, 0u);
  device_buffer<char> temp(temp_bytes);
  const auto uniform10 = tilesort::segments::uniform(10);
  EXPECT_EQ(cudaSuccess, tilesort::segmented_sort_keys(temp.data(), temp_bytes, d.data(), out.data(), 0, uniform10));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), temp_bytes, d.data(), out.data(), -1, uniform10));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), temp_bytes, d.data(), d.data(), 1000, tilesort::segments::uniform(0)));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), temp_bytes, static_cast<const std::uint32_t*>(nullptr), out.data(), 1000, uniform10));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), temp_bytes, d.data(), static_cast<std::uint32_t*>(nullptr), 1000, uniform10));
  std::size_t too_small = 0;
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), too_small, d.data(), d.data(), 1000, uniform10));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_pairs(temp.data(), temp_bytes, d.data(), d.data(),
                                                                  static_cast<const int*>(nullptr), static_cast<int*>(nullptr), 1000, uniform10));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(d.download() == in) << "a rejected call changed the input";
}

// Rows longer than the largest block sorter take the general path (the
// early-exit merge sort per row); the last row may be short enough for a bin.
TEST(SegmentedUniform, RowsLongerThanABlock) {
  REQUIRE_GPU();
  for (std::int64_t length : {8193, 10000, 40000}) {
    check_keys<std::uint32_t>(small_run() ? 2 * length + 5 : 6 * length + 3000, length, distribution::random,
                              tilesort::less{}, true);
    check_pairs<std::uint32_t>(small_run() ? 2 * length - 7 : 5 * length + 9000, length, distribution::few_distinct,
                               tilesort::less{}, false);
  }
  check_keys<std::uint32_t>(100000, 100000, distribution::nearly_sorted, tilesort::greater{}, false);
}

TEST(SegmentedUniform, StreamAndGraphCapture) {
  REQUIRE_GPU();
  const std::int64_t n = 64 * 300;
  const auto in = make_keys<std::uint32_t>(n, distribution::random, fresh_seed());
  device_buffer<std::uint32_t> d(in), out(n);
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t captured = tilesort::segmented_sort_keys(d.data(), out.data(), n, tilesort::segments::uniform(300),
                                                             tilesort::less{}, stream);
  CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(cudaSuccess, captured) << "the convenience overload could not be captured";
  cudaGraphExec_t exec;
  CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_ASSERT(cudaGraphLaunch(exec, stream));
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  EXPECT_TRUE(out.download() == reference_rows(in, 300, tilesort::less{}));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
