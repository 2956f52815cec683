// tests/common/host_sort_cases.cuh — what the GPU tests of the host sort
// (tests/gpu/host_sort_*.cu) share: pinned, pageable or staged host arrays,
// a progress recorder, the plan a call will make, and the checks against
// std::stable_sort (keys bit for bit, pairs with their input positions).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include <tilesort/host/host_sort.cuh>

#include "test_util.cuh"

// The racecheck run (TILESORT_TEST_RACECHECK) leaves the host sort out: its
// own kernels share memory only in the classify kernel's tree load (written,
// a barrier, then read), the device sorts it calls are raced in their own
// tests, and one host sort is dozens of device sorts.
#define SKIP_HOST_SORT_UNDER_RACECHECK()                                                          \
  do {                                                                                           \
    if (tilesort_test::racecheck_run()) GTEST_SKIP() << "racecheck run: the host sort is left out"; \
  } while (0)

namespace tilesort_test {

// pageable: the call registers the arrays; staged: pageable with
// registration turned off (the test hook), the path where the driver
// refuses it, so the arrays go through the staging buffers and the scratch
// comes from cudaHostAlloc; pinned: the test registers them.
enum class host_memory { pageable, staged, pinned };
inline constexpr host_memory all_memories[] = {host_memory::pageable, host_memory::staged, host_memory::pinned};
inline const char* name(host_memory m) {
  return m == host_memory::pinned ? "pinned" : m == host_memory::staged ? "staged" : "pageable";
}

// Turns the host sort's registration of pageable memory off for the guard's
// lifetime, when `memory` is staged.
class staging_guard {
 public:
  explicit staging_guard(host_memory memory) : staged_(memory == host_memory::staged) {
    if (staged_) tilesort::detail::host_sort_registers_pageable = false;
  }
  ~staging_guard() { tilesort::detail::host_sort_registers_pageable = true; }
  staging_guard(const staging_guard&) = delete;
  staging_guard& operator=(const staging_guard&) = delete;

 private:
  bool staged_;
};

// Small budgets put a few million items out of core; the sanitizer runs
// (TILESORT_TEST_SMALL) take a quarter of a million items through the same paths.
inline std::size_t small_budget() { return small_run() ? std::size_t(2) << 20 : std::size_t(16) << 20; }
inline std::size_t out_of_core_items() { return small_run() ? std::size_t(1) << 18 : std::size_t(1) << 22; }

// Registers a vector's memory (cudaHostRegister) for the guard's lifetime,
// when `memory` is pinned.
class pin_guard {
 public:
  template <typename T>
  pin_guard(std::vector<T>& v, host_memory memory) {
    if (memory == host_memory::pinned && !v.empty()) {
      if (cudaHostRegister(v.data(), v.size() * sizeof(T), cudaHostRegisterDefault) == cudaSuccess) p_ = v.data();
    }
  }
  ~pin_guard() {
    if (p_ != nullptr) (void)cudaHostUnregister(p_);
  }
  pin_guard(const pin_guard&) = delete;
  pin_guard& operator=(const pin_guard&) = delete;
  bool pinned() const { return p_ != nullptr; }

 private:
  void* p_ = nullptr;
};

// Records the progress callback's calls: done never decreases and never
// passes total, and the last call has done == total.
struct progress_record {
  std::size_t calls = 0, last_done = 0, last_total = 0;
  bool monotone = true;
  tilesort::host_sort_progress callback() {
    return [this](std::size_t done, std::size_t total) {
      if (done < last_done || done > total) monotone = false;
      ++calls;
      last_done = done;
      last_total = total;
    };
  }
  void expect_complete() const {
    EXPECT_GT(calls, 0u);
    EXPECT_TRUE(monotone);
    EXPECT_EQ(last_done, last_total);
  }
};

// The plan host_sort_keys (Value = no_value) or host_sort_pairs makes for n items.
template <typename Key, typename Value = tilesort::detail::no_value, typename Compare = tilesort::less>
tilesort::detail::host_sort_plan host_plan(std::int64_t n, std::size_t budget, Compare comp = {}) {
  const tilesort::host_sort_options options;
  return tilesort::detail::host_sorter<Key, Value, Compare>(comp, options).plan(n, budget);
}

// host_sort_keys of `keys` in the given memory and budget: bit for bit
// std::stable_sort's result, and the progress complete; `stats`, if given,
// receives what the call did.
template <typename Key, typename Compare>
void expect_host_sort_keys(std::vector<Key> keys, std::size_t budget, host_memory memory, Compare comp,
                           tilesort::host_sort_stats* stats = nullptr) {
  const std::vector<Key> in = keys;
  progress_record progress;
  tilesort::host_sort_stats own_stats;
  if (stats == nullptr) stats = &own_stats;
  tilesort::host_sort_options options;
  options.device_memory_budget = budget;
  options.progress = progress.callback();
  options.stats = stats;
  {
    pin_guard pin(keys, memory);
    staging_guard staging(memory);
    ASSERT_EQ(memory == host_memory::pinned, pin.pinned());
    ASSERT_EQ(cudaSuccess, tilesort::host_sort_keys(keys.data(), std::int64_t(keys.size()), comp, options));
  }
  if (keys.size() > 1) EXPECT_EQ(memory == host_memory::pageable ? 1 : 0, stats->registered_arrays);
  expect_stable_sorted(in, keys, comp);
  progress.expect_complete();
}

// host_sort_pairs of `keys` with their positions as values: the pairs of
// std::stable_sort, position for position (`stats` as above).
template <typename Key, typename Compare>
void expect_host_sort_pairs(std::vector<Key> keys, std::size_t budget, host_memory memory, Compare comp,
                            tilesort::host_sort_stats* stats = nullptr) {
  const std::vector<Key> in = keys;
  std::vector<std::uint32_t> positions = iota_indices(keys.size());
  tilesort::host_sort_stats own_stats;
  if (stats == nullptr) stats = &own_stats;
  tilesort::host_sort_options options;
  options.device_memory_budget = budget;
  options.stats = stats;
  {
    pin_guard pin_keys(keys, memory), pin_values(positions, memory);
    staging_guard staging(memory);
    ASSERT_EQ(memory == host_memory::pinned, pin_keys.pinned() && pin_values.pinned());
    ASSERT_EQ(cudaSuccess, tilesort::host_sort_pairs(keys.data(), positions.data(), std::int64_t(keys.size()), comp,
                                                     options));
  }
  // Two small vectors may share a page: the second registration is then
  // refused and that array staged.
  if (memory != host_memory::pageable)
    EXPECT_EQ(0, stats->registered_arrays);
  else if (keys.size() > 1)
    EXPECT_LE(keys.size() * sizeof(Key) >= (std::size_t(1) << 20) ? 2 : 1, stats->registered_arrays);
  expect_stable_pairs(in, keys, positions, comp);
}

}  // namespace tilesort_test
