// Host tests for detail/segment_ranges.cuh: segments and gaps of offsets
// descriptions (gaps and segments partition [0, n) when well formed; clamping
// when not), heads (head at 0 omitted or given, repeated heads), flag bits,
// uniform rows, the well-formedness checks, the bins (first sorter that holds
// a segment), packed entries, and the capacity bounds that size the temp
// storage (checked against random layouts).
#include <tilesort/detail/segment_ranges.cuh>

#include <algorithm>
#include <random>
#include <vector>

#include "common/test_util.cuh"

namespace {

using namespace tilesort::detail;
using tilesort_test::fresh_seed;

TEST(SegmentRanges, OffsetsSegmentsAndGapsPartitionTheKeys) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 500; ++trial) {
    const std::int64_t n = rng() % 2000;
    std::vector<std::int64_t> begin, end;
    std::int64_t p = rng() % 3 == 0 ? 0 : std::int64_t(rng() % 20);
    while (p <= n && begin.size() < 200) {
      const std::int64_t length = rng() % 4 == 0 ? 0 : std::int64_t(rng() % 100);
      const std::int64_t e = std::min(n, p + length);
      begin.push_back(p);
      end.push_back(e);
      if (e == n && rng() % 2) break;
      p = e + (rng() % 3 == 0 ? std::int64_t(rng() % 10) : 0);
      if (p > n) break;
    }
    const auto count = static_cast<std::int64_t>(begin.size());
    std::vector<int> cover(n, 0);
    for (std::int64_t i = 0; i < count; ++i) {
      EXPECT_TRUE(offsets_well_formed_at(begin.data(), end.data(), i, count, n));
      const key_range r = offsets_segment(begin.data(), end.data(), i, n);
      EXPECT_EQ(begin[i], r.begin);
      EXPECT_EQ(end[i], r.end);
      for (std::int64_t q = r.begin; q < r.end; ++q) ++cover[q];
    }
    for (std::int64_t i = 0; i <= count; ++i) {
      const key_range g = offsets_gap(begin.data(), end.data(), i, count, n);
      for (std::int64_t q = g.begin; q < g.end; ++q) ++cover[q];
    }
    for (std::int64_t q = 0; q < n; ++q) ASSERT_EQ(1, cover[q]) << "position " << q << " of " << n;
  }
}

TEST(SegmentRanges, OffsetsMalformedAreClampedAndDetected) {
  const std::int64_t n = 100;
  const std::int64_t begin[] = {-5, 50, 40, 90, 95};
  const std::uint64_t ubegin[] = {0, ~0ull};
  const std::int64_t end[] = {10, 45, 95, 200, 94};
  const key_range a = offsets_segment(begin, end, 0, n);
  EXPECT_EQ(0, a.begin);
  EXPECT_EQ(10, a.end);
  const key_range b = offsets_segment(begin, end, 1, n);  // end < begin: empty
  EXPECT_EQ(0, b.size());
  const key_range c = offsets_segment(begin, end, 3, n);  // end past n
  EXPECT_EQ(100, c.end);
  const key_range d = offsets_segment(begin, end, 4, n);
  EXPECT_EQ(0, d.size());
  EXPECT_FALSE(offsets_well_formed_at(begin, end, 0, 5, n));  // negative begin
  EXPECT_FALSE(offsets_well_formed_at(begin, end, 1, 5, n));  // end < begin
  EXPECT_FALSE(offsets_well_formed_at(begin, end, 2, 5, n));  // overlaps the next
  EXPECT_FALSE(offsets_well_formed_at(begin, end, 3, 5, n));  // past n
  EXPECT_FALSE(offsets_well_formed_at(begin, end, 4, 5, n));
  const std::uint64_t uend[] = {5, 7};
  EXPECT_TRUE(offsets_well_formed_at(ubegin, uend, 0, 1, n));
  EXPECT_FALSE(offsets_well_formed_at(ubegin, uend, 1, 2, n));  // 2^64 - 1 is no position
  EXPECT_GE(offsets_segment(ubegin, uend, 1, n).begin, 0);  // clamped into [0, n)
  EXPECT_LE(offsets_segment(ubegin, uend, 1, n).end, n);
  // A gap never runs backwards.
  EXPECT_EQ(0, offsets_gap(begin, end, 2, 5, n).size());
  // Count 0: one gap, everything.
  EXPECT_EQ(n, offsets_gap(begin, end, 0, 0, n).size());
}

TEST(SegmentRanges, Heads) {
  const std::int64_t n = 50;
  const int heads[] = {4, 19, 22, 22, 49};
  const key_range expected[] = {{0, 4}, {4, 19}, {19, 22}, {22, 22}, {22, 49}, {49, 50}};
  for (int i = 0; i <= 5; ++i) {
    const key_range r = heads_segment(heads, i, 5, n);
    EXPECT_EQ(expected[i].begin, r.begin) << i;
    EXPECT_EQ(expected[i].end, r.end) << i;
    if (i < 5) EXPECT_TRUE(heads_well_formed_at(heads, i, 5, n)) << i;
  }
  const int with_zero[] = {0, 10};
  EXPECT_EQ(0, heads_segment(with_zero, 0, 2, n).size());  // a head at 0: an empty first segment
  EXPECT_EQ(10, heads_segment(with_zero, 1, 2, n).size());
  EXPECT_EQ(40, heads_segment(with_zero, 2, 2, n).size());
  EXPECT_EQ(n, heads_segment(with_zero, 0, 0, n).size());  // no heads: one segment
  const int bad[] = {10, 5, 60, -1};
  EXPECT_FALSE(heads_well_formed_at(bad, 0, 4, n));
  EXPECT_TRUE(heads_well_formed_at(bad, 1, 2, n));
  EXPECT_FALSE(heads_well_formed_at(bad, 2, 4, n));
  EXPECT_FALSE(heads_well_formed_at(bad, 3, 4, n));
  // Clamped: decreasing heads give empty segments, never negative ranges.
  EXPECT_EQ(0, heads_segment(bad, 1, 4, n).size());
  EXPECT_LE(heads_segment(bad, 3, 4, n).end, n);
}

TEST(SegmentRanges, FlagBits) {
  // Bit 0 of word 0 is ignored (position 0 always starts a segment); bits at
  // n and beyond are ignored.
  EXPECT_EQ(0xfffffffeu, head_bits_of_word(0xffffffffu, 0, 100));
  EXPECT_EQ(0xffffffffu, head_bits_of_word(0xffffffffu, 1, 100));
  EXPECT_EQ(0xfu, head_bits_of_word(0xffffffffu, 3, 100));  // positions 96..99
  EXPECT_EQ(0u, head_bits_of_word(0xffffffffu, 4, 100));
  EXPECT_EQ(0x7ffffffeu, head_bits_of_word(0xffffffffu, 0, 31));
  EXPECT_EQ(0xfffffffeu, head_bits_of_word(0xffffffffu, 0, 32));
}

TEST(SegmentRanges, Uniform) {
  EXPECT_EQ(0, uniform_segment(0, 10, 25).begin);
  EXPECT_EQ(20, uniform_segment(2, 10, 25).begin);
  EXPECT_EQ(25, uniform_segment(2, 10, 25).end);
  const std::int64_t big = std::int64_t(3) << 31;
  EXPECT_EQ(big, uniform_segment(3, std::int64_t(1) << 31, big + 5).begin);
  EXPECT_EQ(big + 5, uniform_segment(3, std::int64_t(1) << 31, big + 5).end);
}

TEST(SegmentRanges, BinsAndPacking) {
  const int capacities[] = {32, 64, 128, 128, 256, 1024, 8192};
  EXPECT_EQ(trivial_bin, bin_of_length(0, capacities, 7));
  EXPECT_EQ(trivial_bin, bin_of_length(1, capacities, 7));
  EXPECT_EQ(0, bin_of_length(2, capacities, 7));
  EXPECT_EQ(0, bin_of_length(32, capacities, 7));
  EXPECT_EQ(1, bin_of_length(33, capacities, 7));
  EXPECT_EQ(2, bin_of_length(128, capacities, 7));  // the first of two equal capacities
  EXPECT_EQ(4, bin_of_length(129, capacities, 7));
  EXPECT_EQ(6, bin_of_length(8192, capacities, 7));
  EXPECT_EQ(7, bin_of_length(8193, capacities, 7));  // long: the merge path
  EXPECT_EQ(2, bin_min_length(capacities, 0));
  EXPECT_EQ(33, bin_min_length(capacities, 1));
  EXPECT_EQ(129, bin_min_length(capacities, 4));
  for (std::int64_t begin : {std::int64_t(0), std::int64_t(12345), (std::int64_t(1) << 40) + 7, max_packed_begin - 1})
    for (std::int64_t length : {1, 2, 300, 8192, 65536}) {
      const std::uint64_t packed = pack_segment(begin, length);
      EXPECT_EQ(begin, packed_begin(packed));
      EXPECT_EQ(length, packed_length(packed));
    }
}

TEST(SegmentRanges, PassesAndBounds) {
  EXPECT_EQ(0, merge_passes_for(0, 8192));
  EXPECT_EQ(0, merge_passes_for(8192, 8192));
  EXPECT_EQ(1, merge_passes_for(8193, 8192));
  EXPECT_EQ(1, merge_passes_for(10000, 8192));
  EXPECT_EQ(2, merge_passes_for(3 * 8192, 8192));
  EXPECT_EQ(11, merge_passes_for(std::int64_t(1) << 24, 8192));
  EXPECT_EQ(9, merge_passes_for(std::int64_t(1) << 22, 8192));
  EXPECT_EQ(20, segments_of_at_least(100, 5, 1000));
  EXPECT_EQ(7, segments_of_at_least(100, 5, 7));
  EXPECT_EQ(100 / 16 + 3, tiles_of_ranges(100, 16, 3));
}

TEST(SegmentRanges, BoundsHoldForRandomLayouts) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int capacities[] = {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
  const int tile = 8192;
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t n = 1 + rng() % 200000;
    // Lengths from a heavy-tailed law: many short, a few long; empty ones too.
    std::vector<std::int64_t> lengths;
    std::int64_t total = 0;
    while (total < n) {
      const double u = std::uniform_real_distribution<double>(1e-6, 1.0)(rng);
      std::int64_t length = std::min<std::int64_t>(n - total, static_cast<std::int64_t>(1.0 / u) - 1);
      if (trial % 2) length = std::min<std::int64_t>(length, rng() % 3000);
      lengths.push_back(length);
      total += length;
    }
    const auto segments = static_cast<std::int64_t>(lengths.size());
    std::vector<std::int64_t> per_bin(10, 0);
    std::int64_t long_tiles = 0;
    for (std::int64_t length : lengths) {
      const int bin = bin_of_length(length, capacities, 9);
      if (bin >= 0) ++per_bin[bin];
      if (bin == 9) long_tiles += (length - 1) / tile + 1;
    }
    for (int b = 0; b < 9; ++b)
      EXPECT_LE(per_bin[b], segments_of_at_least(n, bin_min_length(capacities, b), segments)) << "bin " << b;
    EXPECT_LE(per_bin[9], segments_of_at_least(n, 8193, segments));
    EXPECT_LE(long_tiles, tiles_of_ranges(n, tile, segments_of_at_least(n, 8193, segments)));
  }
}

}  // namespace
