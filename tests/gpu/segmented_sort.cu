// GPU tests for segmented_sort_keys/pairs with every segment description
// (offsets with 32- and 64-bit offsets, heads with and without a head at 0,
// flags, uniform rows longer than a block), over the layouts of the issue
// (all length 32 / 300 / 10000, uniform random [1, 2000], power law, one
// segment, all length 1), empty input, empty segments, gaps, one giant
// segment, segments across every tile boundary, several distributions, keys
// and pairs (values = original index) checked exactly against a per-segment
// std::stable_sort, in place (gaps untouched) and out of place (gaps copied,
// input unchanged, nothing written outside [0, n)), the statistics, the check
// of malformed descriptions, the error paths, stream + graph capture, and a
// size past 2^31.
#include <tilesort/device/segmented_sort.cuh>

#include <algorithm>
#include <optional>
#include <random>
#include <thread>

#include "common/test_util.cuh"

namespace {

using namespace tilesort_test;
using u32 = std::uint32_t;

// ------------------------------------------------------------------ layouts
// Segments in position order, [begin[i], end[i]); gaps between them possible.
struct layout {
  std::string name;
  std::int64_t n = 0;
  std::vector<std::int64_t> begin, end;

  bool gapless() const {
    std::int64_t p = 0;
    for (std::size_t i = 0; i < begin.size(); ++i) {
      if (begin[i] != p) return false;
      p = end[i];
    }
    return p == n;
  }
  bool has_empty() const {
    for (std::size_t i = 0; i < begin.size(); ++i)
      if (begin[i] == end[i]) return true;
    return false;
  }
  std::int64_t uniform_length() const {  // 0 unless every segment but the last has one length
    if (!gapless() || begin.empty()) return 0;
    const std::int64_t length = end[0] - begin[0];
    for (std::size_t i = 0; i < begin.size(); ++i) {
      const std::int64_t l = end[i] - begin[i];
      if (l != length && !(i + 1 == begin.size() && l > 0 && l < length)) return 0;
    }
    return length;
  }
};

layout from_lengths(std::string name, const std::vector<std::int64_t>& lengths, std::int64_t gap_every = 0,
                    std::int64_t gap = 0) {
  layout l;
  l.name = std::move(name);
  std::int64_t p = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (gap_every > 0 && i % gap_every == 0) p += gap;
    l.begin.push_back(p);
    p += lengths[i];
    l.end.push_back(p);
  }
  l.n = p + (gap_every > 0 ? gap : 0);
  return l;
}

layout uniform_layout(std::int64_t n, std::int64_t length) {
  std::vector<std::int64_t> lengths;
  for (std::int64_t p = 0; p < n; p += length) lengths.push_back(std::min(length, n - p));
  return from_lengths("all length " + std::to_string(length) + " n=" + std::to_string(n), lengths);
}

layout random_lengths(std::mt19937_64& rng, std::int64_t n, std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> lengths;
  std::int64_t total = 0;
  while (total < n) {
    const std::int64_t length = std::min(n - total, lo + std::int64_t(rng() % (hi - lo + 1)));
    lengths.push_back(length);
    total += length;
  }
  return from_lengths("random lengths [" + std::to_string(lo) + "," + std::to_string(hi) + "] n=" + std::to_string(n),
                      lengths);
}

// P(length >= x) = 1/x, capped: many tiny segments, a few huge ones.
layout power_law(std::mt19937_64& rng, std::int64_t n, std::int64_t cap) {
  std::vector<std::int64_t> lengths;
  std::int64_t total = 0;
  while (total < n) {
    const double u = std::uniform_real_distribution<double>(1e-9, 1.0)(rng);
    const std::int64_t length = std::min({n - total, cap, std::max<std::int64_t>(1, std::int64_t(1.0 / u))});
    lengths.push_back(length);
    total += length;
  }
  return from_lengths("power law n=" + std::to_string(n), lengths);
}

// Random segment starts (mean length `mean`), with empty segments where two
// starts coincide.
layout random_starts(std::mt19937_64& rng, std::int64_t n, std::int64_t mean) {
  std::vector<std::int64_t> heads;
  for (std::int64_t i = 0; i < n / mean; ++i) heads.push_back(std::int64_t(rng() % n));
  std::sort(heads.begin(), heads.end());
  layout l;
  l.name = "random starts mean " + std::to_string(mean) + " n=" + std::to_string(n);
  l.n = n;
  std::int64_t p = 0;
  for (std::int64_t h : heads) {
    l.begin.push_back(p);
    l.end.push_back(h);
    p = h;
  }
  l.begin.push_back(p);
  l.end.push_back(n);
  return l;
}

// ------------------------------------------------------------------ descriptions
enum class form { offsets32, offsets64, heads, heads_with_zero, flags, uniform };

const char* form_name(form f) {
  switch (f) {
    case form::offsets32: return "offsets<int>";
    case form::offsets64: return "offsets<int64>";
    case form::heads: return "heads";
    case form::heads_with_zero: return "heads with 0";
    case form::flags: return "flags";
    case form::uniform: return "uniform";
  }
  return "?";
}

// Which descriptions can express the layout.
std::vector<form> forms_for(const layout& l) {
  std::vector<form> forms = {form::offsets32, form::offsets64};
  if (l.gapless()) {
    forms.push_back(form::heads);
    if (!l.begin.empty() && l.end[0] > 0) forms.push_back(form::heads_with_zero);  // a head at 0: empty first segment
    if (!l.has_empty()) forms.push_back(form::flags);
    if (l.uniform_length() > 0) forms.push_back(form::uniform);
  }
  return forms;
}

// The description's device arrays, alive while the sort runs.
struct description {
  std::optional<device_buffer<int>> begin32, end32;
  std::optional<device_buffer<std::int64_t>> begin64, end64, heads;
  std::optional<device_buffer<std::uint32_t>> bits;
  std::int64_t count = 0;
  std::int64_t length = 0;
};

void prepare(const layout& l, form f, description& d) {
  auto to32 = [](const std::vector<std::int64_t>& v) { return std::vector<int>(v.begin(), v.end()); };
  switch (f) {
    case form::offsets32:
      d.begin32.emplace(to32(l.begin));
      d.end32.emplace(to32(l.end));
      d.count = static_cast<std::int64_t>(l.begin.size());
      break;
    case form::offsets64:
      d.begin64.emplace(l.begin);
      d.end64.emplace(l.end);
      d.count = static_cast<std::int64_t>(l.begin.size());
      break;
    case form::heads:
    case form::heads_with_zero: {
      std::vector<std::int64_t> heads(l.begin.begin() + 1, l.begin.end());
      if (f == form::heads_with_zero) heads.insert(heads.begin(), 0);
      d.heads.emplace(heads);
      d.count = static_cast<std::int64_t>(heads.size());
      break;
    }
    case form::flags: {
      std::vector<std::uint32_t> bits((l.n + 31) / 32 + 1, 0);
      for (std::int64_t b : l.begin) bits[b / 32] |= 1u << (b % 32);
      // Bits that must be ignored: position 0 and past n.
      bits[0] |= 1u;
      if (l.n % 32 != 0) bits[l.n / 32] |= ~((1u << (l.n % 32)) - 1u);
      d.bits.emplace(bits);
      break;
    }
    case form::uniform: d.length = l.uniform_length(); break;
  }
}

// Which descriptions a check compiles (each one instantiates a classify
// kernel; the sorters are shared).
constexpr unsigned bit(form f) { return 1u << static_cast<int>(f); }
constexpr unsigned all_forms = 0x3f;

// Calls `sort(segments)` with the description's tilesort::segments value
// (forms outside Forms are not compiled and fail).
template <unsigned Forms = all_forms, typename Sort>
cudaError_t with_segments(form f, const description& d, Sort&& sort) {
  if ((Forms & bit(f)) == 0) return cudaErrorNotSupported;
  if constexpr ((Forms & (Forms - 1)) == 0) {  // one form: no switch over the others
    if constexpr (Forms == bit(form::offsets32)) {
      return sort(tilesort::segments::offsets(static_cast<const int*>(d.begin32->data()),
                                              static_cast<const int*>(d.end32->data()), d.count));
    } else if constexpr (Forms == bit(form::offsets64)) {
      return sort(tilesort::segments::offsets(static_cast<const std::int64_t*>(d.begin64->data()),
                                              static_cast<const std::int64_t*>(d.end64->data()), d.count));
    } else if constexpr (Forms == bit(form::heads) || Forms == bit(form::heads_with_zero)) {
      return sort(tilesort::segments::heads(static_cast<const std::int64_t*>(d.heads->data()), d.count));
    } else if constexpr (Forms == bit(form::flags)) {
      return sort(tilesort::segments::flags(d.bits->data()));
    } else {
      return sort(tilesort::segments::uniform(d.length));
    }
  } else {
    switch (f) {
      case form::offsets32:
        return sort(tilesort::segments::offsets(static_cast<const int*>(d.begin32->data()),
                                                static_cast<const int*>(d.end32->data()), d.count));
      case form::offsets64:
        return sort(tilesort::segments::offsets(static_cast<const std::int64_t*>(d.begin64->data()),
                                                static_cast<const std::int64_t*>(d.end64->data()), d.count));
      case form::heads:
      case form::heads_with_zero:
        return sort(tilesort::segments::heads(static_cast<const std::int64_t*>(d.heads->data()), d.count));
      case form::flags: return sort(tilesort::segments::flags(d.bits->data()));
      case form::uniform: return sort(tilesort::segments::uniform(d.length));
    }
  }
  return cudaErrorInvalidValue;
}

// ------------------------------------------------------------------ the check
template <typename Key, typename Compare>
std::vector<u32> reference_order(const std::vector<Key>& keys, const layout& l, Compare comp) {
  std::vector<u32> order = iota_indices(keys.size());
  for (std::size_t s = 0; s < l.begin.size(); ++s)
    std::stable_sort(order.begin() + l.begin[s], order.begin() + l.end[s],
                     [&](u32 a, u32 b) { return comp(keys[a], keys[b]); });
  return order;
}

struct run_options {
  bool in_place = false;
  bool convenience = false;
  cudaStream_t stream = 0;
  tilesort::sort_stats* stats = nullptr;  // pinned
};

// Pairs: values are the original indices, so the output must be exactly
// std::stable_sort's permutation of each segment.
template <typename Key, bool Pairs, unsigned Forms = all_forms, typename Compare>
void check(const layout& l, form f, distribution dist, Compare comp, const run_options& o) {
  const auto seed = fresh_seed();
  SCOPED_TRACE(l.name + " " + form_name(f) + " " + name(dist) + (Pairs ? " pairs" : " keys") +
               (o.in_place ? " in place" : " copy") + (o.convenience ? " convenience" : "") +
               " seed=" + std::to_string(seed));
  const std::int64_t n = l.n;
  const auto keys = make_keys<Key>(n, dist, seed, comp);
  const std::vector<u32> index = iota_indices(n);
  description d;
  prepare(l, f, d);
  guarded_buffer<Key> keys_in(n), keys_out(n);
  guarded_buffer<u32> values_in(n), values_out(n);
  keys_in.upload(keys);
  values_in.upload(index);
  Key* kdst = o.in_place ? keys_in.data() : keys_out.data();
  u32* vdst = o.in_place ? values_in.data() : values_out.data();
  tilesort::sort_options options;
  options.stats = o.stats;
  std::optional<device_buffer<unsigned char>> temp;
  // One call: the size query (d_temp == nullptr), or the sort.
  auto call = [&](void* d_temp, std::size_t& bytes, auto segs) -> cudaError_t {
    if constexpr (Pairs) {
      return tilesort::segmented_sort_pairs(d_temp, bytes, keys_in.data(), kdst, values_in.data(), vdst, n, segs,
                                            comp, o.stream, options);
    } else {
      return tilesort::segmented_sort_keys(d_temp, bytes, keys_in.data(), kdst, n, segs, comp, o.stream, options);
    }
  };
  auto sort = [&](auto segs) -> cudaError_t {
    if (o.convenience) {
      if constexpr (Pairs) {
        return tilesort::segmented_sort_pairs(keys_in.data(), kdst, values_in.data(), vdst, n, segs, comp, o.stream,
                                              options);
      } else {
        return tilesort::segmented_sort_keys(keys_in.data(), kdst, n, segs, comp, o.stream, options);
      }
    }
    std::size_t bytes = 0;
    const cudaError_t e = call(nullptr, bytes, segs);
    if (e != cudaSuccess) return e;
    temp.emplace(bytes);
    temp->poison();
    return call(temp->data(), bytes, segs);
  };
  ASSERT_EQ(cudaSuccess, with_segments<Forms>(f, d, sort));
  CUDA_ASSERT(cudaStreamSynchronize(o.stream));
  CUDA_ASSERT(cudaGetLastError());
  EXPECT_TRUE(keys_in.guards_intact() && keys_out.guards_intact() && values_in.guards_intact() &&
              values_out.guards_intact())
      << "a write outside [0, n)";
  if (!o.in_place) {
    EXPECT_TRUE(bitwise_equal(keys, keys_in.download())) << "keys_in was modified";
    if (Pairs) EXPECT_TRUE(bitwise_equal(index, values_in.download())) << "values_in was modified";
  }
  const auto out = o.in_place ? keys_in.download() : keys_out.download();
  const auto out_index = Pairs ? (o.in_place ? values_in.download() : values_out.download()) : std::vector<u32>();
  // Keys outside every segment stay (in place) or are copied (out of place):
  // either way the expected key at a gap is the input's.
  const auto order = reference_order(keys, l, comp);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!bytes_equal(keys[order[i]], out[i])) FAIL() << "key differs at " << i << " of " << n;
    if (Pairs && out_index[i] != order[i])
      FAIL() << "value at " << i << " is " << out_index[i] << ", expected " << order[i];
  }
  if (o.stats) {
    const tilesort::sort_stats& s = *o.stats;
    EXPECT_EQ(n, s.n);
    std::int64_t sortable = 0;  // keys in segments of 2 keys or more
    for (std::size_t i = 0; i < l.begin.size(); ++i)
      if (l.end[i] - l.begin[i] >= 2) sortable += l.end[i] - l.begin[i];
    EXPECT_EQ(sortable, s.direct_keys + s.blocksort_keys) << "every key of a segment is sorted once on chip";
    EXPECT_LE(s.final_copy_keys, s.blocksort_keys);
    EXPECT_LE(s.merge_passes, tilesort::sort_stats::max_passes);
  }
}

template <bool Pairs>
void check_all_forms(const layout& l, distribution dist) {
  for (form f : forms_for(l)) {
    check<u32, Pairs>(l, f, dist, tilesort::less{}, run_options{});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

std::int64_t scaled(std::int64_t n) { return small_run() ? std::max<std::int64_t>(1, n / 64) : n; }

// ------------------------------------------------------------------ tests
TEST(SegmentedSort, IssueLayoutsEveryForm) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const std::vector<layout> layouts = {
      uniform_layout(scaled(1 << 18), 32),
      uniform_layout(scaled(300 * 700 + 17), 300),
      uniform_layout(small_run() ? 20000 : 40 * 10000 + 123, 10000),
      random_lengths(rng, scaled(1 << 20), 1, 2000),
      power_law(rng, scaled(1 << 20), small_run() ? 20000 : 1 << 18),
      uniform_layout(scaled(1 << 20) + 3, scaled(1 << 20) + 3),  // one segment
      uniform_layout(scaled(100000), 1),                          // all length 1
  };
  for (const layout& l : layouts) {
    check_all_forms<false>(l, distribution::random);
    if (HasFatalFailure()) return;
    check_all_forms<true>(l, distribution::few_distinct);
    if (HasFatalFailure()) return;
  }
}

TEST(SegmentedSort, RandomStartsWithEmptySegments) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  for (std::int64_t mean : {300, 10000}) {
    const layout l = random_starts(rng, scaled(small_run() ? 200000 : 1000000), mean);
    check_all_forms<true>(l, distribution::random);
    if (HasFatalFailure()) return;
  }
  // Many empty segments in a row, at the start and at the end.
  const layout empties = from_lengths("empties", {0, 0, 5, 0, 0, 0, 100, 0, 9000, 0, 1, 0, 20000, 0, 0});
  check_all_forms<true>(empties, distribution::random);
}

TEST(SegmentedSort, TileBoundaries) {
  REQUIRE_GPU();
  // Segment lengths at every sorter capacity and blocksort / merge tile edge,
  // in one array so that segments start at odd offsets.
  const std::int64_t t = tilesort::detail::locality_policy_for<u32, tilesort::detail::no_value>::tile_items;
  const std::int64_t m = tilesort::detail::locality_policy_for<u32, tilesort::detail::no_value>::merge_tile_items;
  std::vector<std::int64_t> lengths;
  for (std::int64_t c : {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384})
    for (std::int64_t d : {-1, 0, 1}) lengths.push_back(c + d);
  for (std::int64_t c : {m, t, 2 * t, 3 * t, 4 * t, 5 * t})
    for (std::int64_t d : {-1, 0, 1}) lengths.push_back(c + d);
  lengths.push_back(small_run() ? 6 * t + 5 : 17 * t + m / 2);
  const layout l = from_lengths("tile edges", lengths);
  for (distribution dist : {distribution::random, distribution::sorted, distribution::nearly_sorted,
                            distribution::reversed, distribution::all_equal}) {
    if (dist == distribution::all_equal) {
      check_all_forms<false>(l, dist);
    } else {
      check_all_forms<true>(l, dist);
    }
    if (HasFatalFailure()) return;
  }
}

TEST(SegmentedSort, OneGiantSegment) {
  REQUIRE_GPU();
  const std::int64_t n = small_run() ? 70000 : (1 << 22) + 17;
  const layout l = uniform_layout(n, n);
  for (distribution dist : {distribution::random, distribution::nearly_sorted, distribution::sorted}) {
    run_options o;
    check<u32, false>(l, form::offsets64, dist, tilesort::less{}, o);
    o.in_place = true;
    check<u32, true>(l, form::uniform, dist, tilesort::less{}, o);
  }
}

TEST(SegmentedSort, GapsUntouchedInPlaceCopiedOutOfPlace) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  std::vector<std::int64_t> lengths;
  for (int i = 0; i < 300; ++i) lengths.push_back(1 + rng() % (i % 50 == 0 ? 30000 : 700));
  for (std::int64_t gap : {1, 40, 65, 5000, 20000}) {
    const layout l = from_lengths("gaps of " + std::to_string(gap), lengths, 7, gap);
    for (bool in_place : {false, true}) {
      run_options o;
      o.in_place = in_place;
      check<u32, false>(l, form::offsets32, distribution::random, tilesort::less{}, o);
      check<u32, true>(l, form::offsets32, distribution::random, tilesort::less{}, o);
      if (HasFatalFailure()) return;
    }
  }
  // One small segment in a big array: almost everything is a gap.
  layout sparse;
  sparse.name = "one segment in a gap";
  sparse.n = 1 << 20;
  sparse.begin = {12345};
  sparse.end = {12345 + 1000};
  for (bool in_place : {false, true}) {
    run_options o;
    o.in_place = in_place;
    check<u32, true>(sparse, form::offsets64, distribution::random, tilesort::less{}, o);
  }
  // No segment at all: out of place is a copy, in place nothing moves.
  layout none;
  none.name = "no segments";
  none.n = 5000;
  for (bool in_place : {false, true}) {
    run_options o;
    o.in_place = in_place;
    check<u32, false>(none, form::offsets32, distribution::random, tilesort::less{}, o);
  }
}

TEST(SegmentedSort, InPlaceAndConvenience) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const layout l = random_lengths(rng, scaled(300000), 1, 20000);
  for (form f : forms_for(l)) {
    run_options o;
    o.in_place = true;
    check<u32, false>(l, f, distribution::nearly_sorted, tilesort::less{}, o);
    o.convenience = true;
    check<u32, true>(l, f, distribution::reversed, tilesort::less{}, o);
    if (HasFatalFailure()) return;
  }
}

TEST(SegmentedSort, KeyTypes) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const layout l = random_lengths(rng, scaled(200000), 1, 12000);
  constexpr unsigned offsets32 = bit(form::offsets32), heads = bit(form::heads);
  constexpr unsigned offsets64 = bit(form::offsets64), uniform = bit(form::uniform);
  // -0.0 and +0.0 are equivalent: their order must be kept (bitwise reference).
  check<float, false, offsets32>(l, form::offsets32, distribution::nan_and_zero, tilesort::less{}, run_options{});
  run_options in_place;
  in_place.in_place = true;
  check<user_key, false, heads>(l, form::heads, distribution::random, user_key_less{}, in_place);
  // 8-byte keys with values: the "wide" sorters (half the items per thread).
  check<std::uint64_t, true, offsets64>(l, form::offsets64, distribution::few_distinct, tilesort::greater{},
                                         run_options{});
  check<std::uint64_t, true, uniform>(uniform_layout(scaled(200000), 5000), form::uniform, distribution::random,
                                      tilesort::greater{}, run_options{});  // rows longer than the wide sorters
}

TEST(SegmentedSort, Statistics) {
  REQUIRE_GPU();
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  std::mt19937_64 rng(fresh_seed());
  for (const layout& l : {random_starts(rng, scaled(1000000), 300), random_starts(rng, scaled(1000000), 10000),
                          uniform_layout(scaled(100000), 100)}) {
    std::memset(stats, 0xff, sizeof *stats);
    run_options o;
    o.stats = stats;
    for (form f : {form::offsets32, form::flags, form::uniform}) {
      const auto forms = forms_for(l);
      if (std::find(forms.begin(), forms.end(), f) == forms.end()) continue;
      check<u32, false>(l, f, distribution::random, tilesort::less{}, o);
      constexpr std::int64_t max_row = tilesort::uniform_segments_policy<u32>::max_row;
      // Segments longer than max_row (16384 for u32 keys) are merged: at mean 300 there are
      // none with overwhelming probability; at mean 10000 most keys are.
      // As uniform rows longer than that (a small random layout can be two
      // segments, the second shorter: uniform), every row is merged, the
      // short last one included.
      std::int64_t long_keys = 0, direct = 0;
      const bool merged_rows = f == form::uniform && l.uniform_length() > max_row;
      for (std::size_t i = 0; i < l.begin.size(); ++i) {
        const std::int64_t length = l.end[i] - l.begin[i];
        if (length > max_row || merged_rows) long_keys += length;
        if (length >= 2 && length <= max_row && !merged_rows) ++direct;
      }
      EXPECT_EQ(long_keys, stats->blocksort_keys);
      EXPECT_EQ(direct, stats->direct_segments);
      EXPECT_EQ(8192, stats->blocksort_items);
      EXPECT_EQ(4096, stats->tile_items);
      // Random keys in segments of up to 84k keys need at most log2(84k / 8192)
      // merge passes' worth of merging, far from a full pass per pass.
      EXPECT_LE(stats->merge_pass_equivalents(), 5.0);
      std::printf("%s, %s:\n%s", l.name.c_str(), form_name(f), tilesort::format_sort_stats(*stats).c_str());
    }
  }
  cudaFreeHost(stats);
}

TEST(SegmentedSort, EmptyInputAndErrors) {
  REQUIRE_GPU();
  const std::int64_t n = 10000;
  const auto in = make_keys<u32>(n, distribution::random, fresh_seed());
  device_buffer<u32> keys(in), out(n);
  out.poison();
  const std::vector<int> offsets_host = {0, 100, 5000, 10000};
  device_buffer<int> offsets(offsets_host);
  const auto segs = tilesort::segments::offsets(static_cast<const int*>(offsets.data()),
                                                static_cast<const int*>(offsets.data()) + 1, 3);
  std::size_t bytes = 0;
  CUDA_ASSERT(tilesort::segmented_sort_keys(nullptr, bytes, keys.data(), out.data(), n, segs));
  EXPECT_GT(bytes, 0u);
  device_buffer<unsigned char> temp(bytes);
  const u32* null_in = nullptr;
  u32* null_out = nullptr;
  // n == 0: nothing to do, null pointers allowed.
  std::size_t zero_bytes = 0;
  CUDA_EXPECT(tilesort::segmented_sort_keys(nullptr, zero_bytes, null_in, null_out, 0, segs));
  device_buffer<unsigned char> zero_temp(std::max<std::size_t>(zero_bytes, 1));
  EXPECT_EQ(cudaSuccess, tilesort::segmented_sort_keys(zero_temp.data(), zero_bytes, null_in, null_out, 0, segs));
  EXPECT_EQ(cudaSuccess, tilesort::segmented_sort_keys(null_in, null_out, 0, tilesort::segments::flags(nullptr)));
  // Rejected before anything is written.
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), bytes, keys.data(), out.data(), -1, segs));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), bytes, null_in, out.data(), n, segs));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), bytes, keys.data(), null_out, n, segs));
  std::size_t small = bytes - 1;
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(temp.data(), small, keys.data(), out.data(), n, segs));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(static_cast<void*>(temp.data()), bytes, keys.data(),
                                                                 out.data(), n,
                                                                 tilesort::segments::offsets(static_cast<const int*>(nullptr),
                                                                                             static_cast<const int*>(nullptr), 3)));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(keys.data(), out.data(), n,
                                                                 tilesort::segments::offsets(static_cast<const int*>(offsets.data()),
                                                                                             static_cast<const int*>(offsets.data()) + 1, -1)));
  EXPECT_EQ(cudaErrorInvalidValue,
            tilesort::segmented_sort_keys(keys.data(), out.data(), n, tilesort::segments::heads(static_cast<const int*>(nullptr), 2)));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(keys.data(), out.data(), n, tilesort::segments::flags(nullptr)));
  EXPECT_EQ(cudaErrorInvalidValue, tilesort::segmented_sort_keys(keys.data(), out.data(), n, tilesort::segments::uniform(0)));
  EXPECT_EQ(cudaErrorInvalidValue,
            tilesort::segmented_sort_pairs(keys.data(), out.data(), static_cast<const u32*>(nullptr), null_out, n, segs));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(keys.download() == in) << "a rejected call changed the input";
  const auto poisoned = out.download();
  for (u32 v : poisoned)
    if (v != 0xA5A5A5A5u) FAIL() << "a rejected call wrote the output";
}

TEST(SegmentedSort, CheckedDescriptions) {
  REQUIRE_GPU();
  const std::int64_t n = 10000;
  const auto in = make_keys<u32>(n, distribution::random, fresh_seed());
  device_buffer<u32> keys(in), out(n);
  out.poison();
  tilesort::sort_options checked;
  checked.check_segments = true;
  auto run_offsets = [&](std::vector<std::int64_t> b, std::vector<std::int64_t> e) {
    device_buffer<std::int64_t> db(b), de(e);
    return tilesort::segmented_sort_keys(keys.data(), out.data(), n,
                                         tilesort::segments::offsets(static_cast<const std::int64_t*>(db.data()),
                                                                     static_cast<const std::int64_t*>(de.data()),
                                                                     static_cast<std::int64_t>(b.size())),
                                         tilesort::less{}, 0, checked);
  };
  auto run_heads = [&](std::vector<int> h) {
    device_buffer<int> dh(h);
    return tilesort::segmented_sort_keys(keys.data(), out.data(), n,
                                         tilesort::segments::heads(static_cast<const int*>(dh.data()),
                                                                   static_cast<std::int64_t>(h.size())),
                                         tilesort::less{}, 0, checked);
  };
  EXPECT_EQ(cudaErrorInvalidValue, run_offsets({0, 50}, {60, 100}));       // overlap
  EXPECT_EQ(cudaErrorInvalidValue, run_offsets({-1, 50}, {10, 100}));      // negative
  EXPECT_EQ(cudaErrorInvalidValue, run_offsets({0, 50}, {10, n + 1}));     // past n
  EXPECT_EQ(cudaErrorInvalidValue, run_offsets({0, 50}, {10, 40}));        // end < begin
  EXPECT_EQ(cudaErrorInvalidValue, run_offsets({500, 50}, {600, 60}));     // out of order
  EXPECT_EQ(cudaErrorInvalidValue, run_heads({10, 5}));
  EXPECT_EQ(cudaErrorInvalidValue, run_heads({10, 20000}));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(keys.download() == in) << "a rejected call changed the input";
  for (u32 v : out.download())
    if (v != 0xA5A5A5A5u) FAIL() << "a rejected call wrote the output";
  // Well formed: accepted and sorted (gaps copied through).
  EXPECT_EQ(cudaSuccess, run_offsets({0, 50, 50}, {10, 50, 9000}));
  CUDA_ASSERT(cudaDeviceSynchronize());
  auto expected = in;
  std::stable_sort(expected.begin(), expected.begin() + 10);
  std::stable_sort(expected.begin() + 50, expected.begin() + 9000);
  EXPECT_TRUE(out.download() == expected);
  EXPECT_EQ(cudaSuccess, run_heads({0, 10, 10, 9000}));
  CUDA_ASSERT(cudaDeviceSynchronize());
  expected = in;
  std::stable_sort(expected.begin(), expected.begin() + 10);
  std::stable_sort(expected.begin() + 10, expected.begin() + 9000);
  std::stable_sort(expected.begin() + 9000, expected.end());
  EXPECT_TRUE(out.download() == expected);
}

TEST(SegmentedSort, MalformedWithoutCheckStaysInBounds) {
  REQUIRE_GPU();
  // Unchecked malformed descriptions give an unspecified order, but must not
  // fault or write outside the keys (the lists are bounded).
  const std::int64_t n = 3000;
  const auto in = make_keys<u32>(n, distribution::random, fresh_seed());
  guarded_buffer<u32> keys(n), out(n);
  keys.upload(in);
  std::vector<std::int64_t> b(2000, 0), e(2000, n);  // 2000 overlapping copies of [0, n)
  b[7] = -100;
  e[9] = n + 100000;
  device_buffer<std::int64_t> db(b), de(e);
  for (bool in_place : {false, true}) {
    EXPECT_EQ(cudaSuccess, tilesort::segmented_sort_keys(keys.data(), in_place ? keys.data() : out.data(), n,
                                                         tilesort::segments::offsets(static_cast<const std::int64_t*>(db.data()),
                                                                                     static_cast<const std::int64_t*>(de.data()),
                                                                                     std::int64_t(2000))));
    CUDA_ASSERT(cudaDeviceSynchronize());
    EXPECT_TRUE(keys.guards_intact() && out.guards_intact());
  }
  std::vector<int> heads = {2000, 10, 2500, 5, 7000, -3};
  device_buffer<int> dh(heads);
  EXPECT_EQ(cudaSuccess, tilesort::segmented_sort_keys(keys.data(), out.data(), n,
                                                       tilesort::segments::heads(static_cast<const int*>(dh.data()),
                                                                                 std::int64_t(6))));
  CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_TRUE(keys.guards_intact() && out.guards_intact());
}

TEST(SegmentedSort, StreamAndGraphCapture) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  // Past side_stream_min_keys (outside the small run): the bins' side
  // streams are forked and joined inside the capture.
  const layout l = random_lengths(rng, scaled(std::int64_t(1) << 21), 1, 30000);
  ASSERT_TRUE(small_run() || l.n >= tilesort::segmented_sort_policy<u32>::side_stream_min_keys);
  const auto in = make_keys<u32>(l.n, distribution::random, fresh_seed());
  description d;
  prepare(l, form::offsets32, d);
  device_buffer<u32> keys(in), out(l.n);
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tilesort::sort_stats* stats = nullptr;
  CUDA_ASSERT(cudaMallocHost(&stats, sizeof *stats));
  tilesort::sort_options options;
  options.stats = stats;
  cudaGraph_t graph;
  CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t captured = with_segments(form::offsets32, d, [&](auto segs) {
    return tilesort::segmented_sort_keys(keys.data(), out.data(), l.n, segs, tilesort::less{}, stream, options);
  });
  CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
  ASSERT_EQ(cudaSuccess, captured) << "the convenience overload could not be captured";
  cudaGraphExec_t exec;
  CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    out.poison();
    CUDA_ASSERT(cudaGraphLaunch(exec, stream));
    CUDA_ASSERT(cudaStreamSynchronize(stream));
    auto expected = in;
    for (std::size_t s = 0; s < l.begin.size(); ++s)
      std::stable_sort(expected.begin() + l.begin[s], expected.begin() + l.end[s]);
    EXPECT_TRUE(out.download() == expected) << "replay " << replay;
    EXPECT_EQ(l.n, stats->n);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFreeHost(stats);
}

// Two host threads sort at once, each on its own stream, past
// side_stream_min_keys: each thread forks onto side streams of its own.
TEST(SegmentedSort, TwoHostThreadsAtOnce) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const layout l = random_lengths(rng, scaled(std::int64_t(3) << 20), 1, 30000);
  description d;
  prepare(l, form::offsets32, d);
  std::vector<std::vector<u32>> in, got(2);
  for (int t = 0; t < 2; ++t) in.push_back(make_keys<u32>(l.n, distribution::random, fresh_seed()));
  cudaError_t results[2] = {cudaErrorUnknown, cudaErrorUnknown};
  auto work = [&](int t) {
    device_buffer<u32> keys(in[t]), out(l.n);
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return;
    for (int round = 0; round < 3 && (round == 0 || results[t] == cudaSuccess); ++round) {
      results[t] = with_segments(form::offsets32, d, [&](auto segs) {
        return tilesort::segmented_sort_keys(keys.data(), out.data(), l.n, segs, tilesort::less{}, stream);
      });
    }
    if (results[t] == cudaSuccess) results[t] = cudaStreamSynchronize(stream);
    if (results[t] == cudaSuccess) got[t] = out.download();
    cudaStreamDestroy(stream);
  };
  std::thread first(work, 0), second(work, 1);
  first.join();
  second.join();
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(cudaSuccess, results[t]) << "thread " << t << ": " << cudaGetErrorString(results[t]);
    auto expected = in[t];
    for (std::size_t s = 0; s < l.begin.size(); ++s)
      std::stable_sort(expected.begin() + l.begin[s], expected.begin() + l.end[s]);
    EXPECT_TRUE(got[t] == expected) << "thread " << t;
  }
}

// cudaDeviceReset between two sorts past side_stream_min_keys: the second
// makes its side streams again in the new context.
TEST(SegmentedSort, SortsAfterDeviceReset) {
  REQUIRE_GPU();
  std::mt19937_64 rng(fresh_seed());
  const layout l = random_lengths(rng, scaled(std::int64_t(3) << 20), 1, 30000);
  const auto in = make_keys<u32>(l.n, distribution::random, fresh_seed());
  auto expected = in;
  for (std::size_t s = 0; s < l.begin.size(); ++s)
    std::stable_sort(expected.begin() + l.begin[s], expected.begin() + l.end[s]);
  for (int round = 0; round < 2; ++round) {
    {
      description d;
      prepare(l, form::offsets32, d);
      device_buffer<u32> keys(in), out(l.n);
      const cudaError_t sorted = with_segments(form::offsets32, d, [&](auto segs) {
        return tilesort::segmented_sort_keys(keys.data(), out.data(), l.n, segs);
      });
      ASSERT_EQ(cudaSuccess, sorted) << "round " << round << ": " << cudaGetErrorString(sorted);
      CUDA_ASSERT(cudaDeviceSynchronize());
      EXPECT_TRUE(out.download() == expected) << "round " << round;
    }
    if (round == 0) CUDA_ASSERT(cudaDeviceReset());
  }
}

TEST(SegmentedSort, PastTwoToThe31) {
  REQUIRE_GPU();
  if (small_run()) GTEST_SKIP() << "large case skipped in the small run";
  const std::int64_t n = (std::int64_t(1) << 31) + 100003;
  const std::int64_t length = 3000007;  // long rows: the merge path, positions past 2^31
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_ASSERT(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < std::size_t(n) * sizeof(u32) * 3 + (std::size_t(1) << 30)) GTEST_SKIP() << "not enough device memory";
  std::vector<u32> keys(n);
  for (std::int64_t i = 0; i < n; ++i) keys[i] = static_cast<u32>(splitmix64(static_cast<std::uint64_t>(i)));
  device_buffer<u32> d(keys);
  CUDA_ASSERT(tilesort::segmented_sort_keys(d.data(), d.data(), n, tilesort::segments::uniform(length)));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto out = d.download();
  // Each row sorted, and the same multiset per row (order-independent hash).
  for (std::int64_t row = 0; row * length < n; ++row) {
    const std::int64_t b = row * length, e = std::min(n, b + length);
    std::uint64_t sum_in = 0, sum_out = 0;
    for (std::int64_t i = b; i < e; ++i) {
      sum_in += splitmix64(keys[i] + 0x1234567ull);
      sum_out += splitmix64(out[i] + 0x1234567ull);
      if (i > b && out[i] < out[i - 1]) FAIL() << "row " << row << " unsorted at " << i;
    }
    ASSERT_EQ(sum_in, sum_out) << "row " << row << " is not a permutation";
  }
}

}  // namespace
