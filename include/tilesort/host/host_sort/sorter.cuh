// host/host_sort/sorter.cuh — the engine behind host_sort_keys and
// host_sort_pairs (host/host_sort.cuh): one object per call owns the device
// allocation, the pinned scratch and bucket table, the registration of
// pageable arrays (or their staging buffers) and the two streams, and runs
// the plan of detail/host_sort_plan.cuh:
//
//   round trip (in core)   items in, the front door's sort, items out
//   splitters              samples read on the host, sorted on the device,
//                          the splitter tree built from them
//   pass 1 (per chunk)     in, classify, radix sort of (bucket, position),
//                          bucket ends, gather, out to the scratch
//   pass 2 (per batch)     one piece per chunk from the scratch, the front
//                          door's sort, out to the batch's final place
//
// Chunks and batches alternate between two slots and two streams: one
// slot's copies overlap the other's kernels, and the host waits only for
// the slot it is about to reuse (or for staged pieces of pageable arrays).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../comparators.cuh"
#include "../../detail/error.cuh"
#include "../../detail/host_sort_plan.cuh"
#include "../../detail/launch.cuh"
#include "../../detail/side_streams.cuh"
#include "../../detail/values.cuh"
#include "../../device/radix_sort.cuh"
#include "../../device/sort.cuh"
#include "kernels.cuh"
#include "options.cuh"
#include "policy.cuh"
#include "transfers.cuh"

namespace tilesort::detail {

// A size query that failed counts as more memory than any budget.
inline std::size_t host_sort_queried(cudaError_t error, std::size_t bytes) {
  return error == cudaSuccess ? bytes : ~std::size_t(0) / 4;
}

// Bytes of the scratch for n items: keys, then values at an aligned offset.
inline std::size_t host_sort_scratch_size(std::int64_t n, std::size_t key_bytes, std::size_t value_bytes) {
  return value_bytes == 0 ? std::size_t(n) * key_bytes : align_temp(std::size_t(n) * key_bytes) + std::size_t(n) * value_bytes;
}

template <typename Key, typename Value, typename Compare>
class host_sorter {
 public:
  static constexpr bool pairs = has_values<Value>;
  static constexpr std::size_t value_bytes = value_bytes_of<Value>;

  host_sorter(Compare comp, const host_sort_options& options) : comp_(comp), options_(options) {}
  host_sorter(const host_sorter&) = delete;
  host_sorter& operator=(const host_sorter&) = delete;
  ~host_sorter() { (void)release(); }

  // The plan for n items in `budget` bytes of device memory.
  host_sort_plan plan(std::int64_t n, std::size_t budget) const {
    const Compare comp = comp_;
    const auto sort_temp = [comp](std::int64_t c) {
      std::size_t bytes = 0;
      cudaError_t e;
      if constexpr (pairs) {
        e = sort_pairs(nullptr, bytes, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr),
                       static_cast<const Value*>(nullptr), static_cast<Value*>(nullptr), c, comp);
      } else {
        e = sort_keys(nullptr, bytes, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr), c, comp);
      }
      return host_sort_queried(e, bytes);
    };
    const auto sample_temp = [comp](std::int64_t c) {
      std::size_t bytes = 0;
      const cudaError_t e =
          sort_keys(nullptr, bytes, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr), c, comp);
      return host_sort_queried(e, bytes);
    };
    const auto partition_temp = [](std::int64_t c) {
      std::size_t bytes = 0;
      const cudaError_t e = radix_sort_pairs(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                             static_cast<std::uint32_t*>(nullptr),
                                             static_cast<const std::uint32_t*>(nullptr),
                                             static_cast<std::uint32_t*>(nullptr), c);
      return host_sort_queried(e, bytes);
    };
    return make_host_sort_plan(n, sizeof(Key), value_bytes, budget, host_sort_policy::shape(), sort_temp,
                               sample_temp, partition_temp);
  }

  // Sorts keys (and values) by the plan `top` (status cudaSuccess); the
  // arrays' memory kinds as host_memory_is_direct found them (pageable ones
  // are registered for the call where the driver allows).
  cudaError_t run(Key* keys, Value* values, const host_sort_plan& top, bool direct_keys, bool direct_values) {
    direct_keys_ = direct_keys;
    direct_values_ = direct_values;
    total_ = top.link_bytes();
    report();
    stats_.in_core = top.in_core;
    cudaError_t error = timed(stats_.setup_s, [&] { return start(top, keys, values); });
    if (error == cudaSuccess) error = sort_range(keys, values, top);
    const cudaError_t released = timed(stats_.release_s, [&] { return release(); });
    if (options_.stats != nullptr) *options_.stats = stats_;
    if (error == cudaSuccess) error = released;
    if (error == cudaSuccess) {
      done_ = total_;
      report();
    }
    return error;
  }

 private:
  // ------------------------------------------------------------------ resources
  cudaError_t start(const host_sort_plan& top, Key* keys, Value* values) {
    stream_ = options_.stream;
    if (allocations_.fails() || cudaMallocAsync(&device_, top.device_bytes, stream_) != cudaSuccess) {
      (void)cudaGetLastError();
      device_ = nullptr;
      return cudaErrorMemoryAllocation;
    }
    device_bytes_ = top.device_bytes;
    if (!top.in_core) {
      const std::size_t scratch_bytes = host_sort_scratch_size(top.n, sizeof(Key), value_bytes);
      if (options_.host_scratch != nullptr) {
        scratch_ = static_cast<unsigned char*>(options_.host_scratch);
      } else {
        void* p = nullptr;
        TILESORT_RETURN_IF_ERROR(host_sort_alloc_scratch(p, scratch_registered_, scratch_bytes, allocations_));
        scratch_ = static_cast<unsigned char*>(p);
        owns_scratch_ = true;
      }
      table_entries_ = top.chunks * top.buckets();
      void* table = nullptr;
      TILESORT_RETURN_IF_ERROR(host_sort_alloc_pinned(table, std::size_t(table_entries_) * 4, allocations_));
      table_ = static_cast<std::uint32_t*>(table);
    }
    if (!direct_keys_) direct_keys_ = registrations_.add(keys, std::size_t(top.n) * sizeof(Key));
    if constexpr (pairs)
      if (!direct_values_) direct_values_ = registrations_.add(values, std::size_t(top.n) * value_bytes);
    stats_.registered_arrays = registrations_.count();
    TILESORT_RETURN_IF_ERROR(stager_.init(!direct_keys_ || (pairs && !direct_values_), allocations_));
    TILESORT_RETURN_IF_ERROR(side_streams(2, set_));
    TILESORT_RETURN_IF_ERROR(fork_side_streams(*set_, 2, stream_));
    for (cudaEvent_t& e : done_events_) TILESORT_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return cudaSuccess;
  }

  // Waits for everything this call enqueued and frees what it took; the
  // first error of these steps (all of them run).
  cudaError_t release() {
    cudaError_t first = cudaSuccess;
    const auto keep = [&first](cudaError_t e) {
      if (first == cudaSuccess) first = e;
    };
    if (set_ != nullptr)
      for (int i = 0; i < 2; ++i) keep(cudaStreamSynchronize(set_->streams[i]));
    set_ = nullptr;
    keep(stager_.settle());
    if (device_ != nullptr) {
      keep(cudaFreeAsync(device_, stream_));
      keep(cudaStreamSynchronize(stream_));
      device_ = nullptr;
    }
    keep(registrations_.release());
    if (owns_scratch_) keep(host_sort_free_scratch(scratch_, scratch_registered_));
    scratch_ = nullptr;
    owns_scratch_ = false;
    if (table_ != nullptr) keep(cudaFreeHost(table_));
    table_ = nullptr;
    for (cudaEvent_t& e : done_events_) {
      if (e != nullptr) keep(cudaEventDestroy(e));
      e = nullptr;
    }
    return first;
  }

  cudaStream_t slot_stream(int k) const { return set_->streams[k]; }
  unsigned char* slot(const host_sort_plan& p, int k) const { return static_cast<unsigned char*>(device_) + p.slot_offset(k); }
  Key* scratch_keys() const { return reinterpret_cast<Key*>(scratch_); }
  Value* scratch_values(std::int64_t n) const {
    return reinterpret_cast<Value*>(scratch_ + align_temp(std::size_t(n) * sizeof(Key)));
  }
  static Value* values_at(Value* values, std::int64_t at) {
    if constexpr (pairs) {
      return values + at;
    } else {
      return values;
    }
  }

  // step(), its host time added to `seconds`.
  template <typename Step>
  static cudaError_t timed(double& seconds, Step step) {
    const auto begin = std::chrono::steady_clock::now();
    const cudaError_t error = step();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return error;
  }

  void advance(std::size_t bytes) {
    done_ += bytes;
    report();
  }
  void report() const {
    if (options_.progress) options_.progress(done_, total_);
  }

  // ------------------------------------------------------------------ steps
  cudaError_t sort_range(Key* keys, Value* values, const host_sort_plan& p) {
    if (p.in_core) return timed(stats_.round_trip_s, [&] { return round_trip(keys, values, p); });
    if (p.chunks * p.buckets() > table_entries_) return cudaErrorInvalidValue;
    TILESORT_RETURN_IF_ERROR(timed(stats_.splitters_s, [&] { return choose_splitters(keys, p); }));
    TILESORT_RETURN_IF_ERROR(timed(stats_.partition_s, [&] { return partition(keys, values, p); }));
    stats_.chunks += p.chunks;
    return place_buckets(keys, values, p);
  }

  // The device sort of n items in place, with `temp_bytes` of temp storage.
  cudaError_t sort_on_device(Key* keys, Value* values, std::int64_t n, void* temp, std::size_t temp_bytes,
                             cudaStream_t stream) const {
    if constexpr (pairs) {
      return sort_pairs(temp, temp_bytes, keys, keys, values, values, n, comp_, stream);
    } else {
      return sort_keys(temp, temp_bytes, keys, keys, n, comp_, stream);
    }
  }

  cudaError_t round_trip(Key* keys, Value* values, const host_sort_plan& p) {
    const cudaStream_t s = slot_stream(0);
    auto* base = static_cast<unsigned char*>(device_);
    Key* d_keys = reinterpret_cast<Key*>(base + p.core.offset[sort_keys_at]);
    Value* d_values = reinterpret_cast<Value*>(base + p.core.offset[sort_values_at]);
    const std::size_t key_bytes = std::size_t(p.n) * sizeof(Key), values_bytes = std::size_t(p.n) * value_bytes;
    TILESORT_RETURN_IF_ERROR(stager_.to_device(d_keys, keys, key_bytes, direct_keys_, s));
    if constexpr (pairs) TILESORT_RETURN_IF_ERROR(stager_.to_device(d_values, values, values_bytes, direct_values_, s));
    TILESORT_RETURN_IF_ERROR(sort_on_device(d_keys, d_values, p.n, base + p.core.offset[sort_temp_at],
                                            p.core.total - p.core.offset[sort_temp_at], s));
    TILESORT_RETURN_IF_ERROR(stager_.to_host(keys, d_keys, key_bytes, direct_keys_, s));
    if constexpr (pairs) TILESORT_RETURN_IF_ERROR(stager_.to_host(values, d_values, values_bytes, direct_values_, s));
    TILESORT_RETURN_IF_ERROR(cudaStreamSynchronize(s));
    advance(2 * (key_bytes + values_bytes));
    return cudaSuccess;
  }

  // The splitter tree at the allocation's start, from samples of keys.
  cudaError_t choose_splitters(const Key* keys, const host_sort_plan& p) {
    const cudaStream_t s = slot_stream(0);
    unsigned char* at = slot(p, 0);
    Key* d_samples = reinterpret_cast<Key*>(at + p.sample.offset[sample_keys_at]);
    std::vector<unsigned char> samples(std::size_t(p.samples) * sizeof(Key));
    for (int i = 0; i < p.samples; ++i)
      std::memcpy(samples.data() + std::size_t(i) * sizeof(Key), keys + sample_position(i, p.samples, p.n), sizeof(Key));
    TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(d_samples, samples.data(), samples.size(), cudaMemcpyHostToDevice, s));
    std::size_t temp_bytes = p.sample.total - p.sample.offset[sample_temp_at];
    TILESORT_RETURN_IF_ERROR(sort_keys(at + p.sample.offset[sample_temp_at], temp_bytes, d_samples, d_samples,
                                       std::int64_t(p.samples), comp_, s));
    TILESORT_RETURN_IF_ERROR(launch_kernel(host_sort_tree_kernel<Key>, host_sort_grid(p.splitters()),
                                           host_sort_threads, 0, s, false, static_cast<const Key*>(d_samples),
                                           p.samples, p.levels, static_cast<Key*>(device_)));
    return cudaStreamSynchronize(s);  // `samples` lives until its copy is done
  }

  // Pass 1: every chunk partitioned by bucket into the scratch at its own
  // place, its bucket ends into row c of the table.
  cudaError_t partition(const Key* keys, const Value* values, const host_sort_plan& p) {
    const int buckets = p.buckets();
    const std::size_t item = p.item_bytes();
    for (std::int64_t c = 0; c < p.chunks; ++c) {
      const int k = int(c % 2);
      const cudaStream_t s = slot_stream(k);
      if (c >= 2) {
        TILESORT_RETURN_IF_ERROR(cudaEventSynchronize(done_events_[k]));
        advance(2 * std::size_t(p.chunk_size(c - 2)) * item);
      }
      unsigned char* at = slot(p, k);
      const auto buffer = [&](int b) { return at + p.chunk.offset[b]; };
      Key* keys_in = reinterpret_cast<Key*>(buffer(chunk_keys_in));
      Value* values_in = reinterpret_cast<Value*>(buffer(chunk_values_in));
      Key* keys_out = reinterpret_cast<Key*>(buffer(chunk_keys_out));
      Value* values_out = reinterpret_cast<Value*>(buffer(chunk_values_out));
      auto* bucket_of = reinterpret_cast<std::uint32_t*>(buffer(chunk_buckets));
      auto* positions = reinterpret_cast<std::uint32_t*>(buffer(chunk_positions));
      auto* ends = reinterpret_cast<std::uint32_t*>(buffer(chunk_ends));
      const std::int64_t m = p.chunk_size(c), begin = p.chunk_begin(c);
      TILESORT_RETURN_IF_ERROR(stager_.to_device(keys_in, keys + begin, std::size_t(m) * sizeof(Key), direct_keys_, s));
      if constexpr (pairs)
        TILESORT_RETURN_IF_ERROR(stager_.to_device(values_in, values + begin, std::size_t(m) * value_bytes, direct_values_, s));
      const unsigned grid = host_sort_grid(m);
      TILESORT_RETURN_IF_ERROR(launch_kernel(host_sort_classify_kernel<Key, Compare>, grid, host_sort_threads,
                                             (std::size_t(1) << p.levels) * sizeof(Key), s, false,
                                             static_cast<const Key*>(keys_in), m, static_cast<const Key*>(device_),
                                             p.levels, bucket_of, positions, comp_));
      std::size_t temp_bytes = p.chunk.total - p.chunk.offset[chunk_temp];
      TILESORT_RETURN_IF_ERROR(radix_sort_pairs(buffer(chunk_temp), temp_bytes, bucket_of, bucket_of, positions,
                                                positions, m, less{}, s));
      TILESORT_RETURN_IF_ERROR(cudaMemsetAsync(ends, 0, std::size_t(buckets) * 4, s));
      TILESORT_RETURN_IF_ERROR(launch_kernel(host_sort_ends_kernel<>, grid, host_sort_threads, 0, s, false,
                                             static_cast<const std::uint32_t*>(bucket_of), m, ends));
      TILESORT_RETURN_IF_ERROR(launch_kernel(host_sort_gather_kernel<Key, Value>, grid, host_sort_threads, 0, s, false,
                                             static_cast<const Key*>(keys_in), static_cast<const Value*>(values_in),
                                             static_cast<const std::uint32_t*>(positions), m, keys_out, values_out));
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(scratch_keys() + begin, keys_out, std::size_t(m) * sizeof(Key),
                                               cudaMemcpyDeviceToHost, s));
      if constexpr (pairs)
        TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(scratch_values(p.n) + begin, values_out, std::size_t(m) * value_bytes,
                                                 cudaMemcpyDeviceToHost, s));
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(table_ + c * buckets, ends, std::size_t(buckets) * 4,
                                               cudaMemcpyDeviceToHost, s));
      TILESORT_RETURN_IF_ERROR(cudaEventRecord(done_events_[k], s));
    }
    for (std::int64_t c = p.chunks >= 2 ? p.chunks - 2 : 0; c < p.chunks; ++c) {
      TILESORT_RETURN_IF_ERROR(cudaEventSynchronize(done_events_[c % 2]));
      advance(2 * std::size_t(p.chunk_size(c)) * item);
    }
    return cudaSuccess;
  }

  // Pass 2: the batches of buckets to their final places; buckets larger
  // than a batch copied there on the host, and those between splitters
  // sorted again (after every batch: they reuse the scratch and the table).
  cudaError_t place_buckets(Key* keys, Value* values, const host_sort_plan& p) {
    const int buckets = p.buckets();
    std::vector<std::int64_t> sizes(std::size_t(buckets), 0);
    for (std::int64_t c = 0; c < p.chunks; ++c) {
      std::uint32_t* ends = table_ + c * buckets;
      host_sort_fill_ends(ends, buckets);
      for (int b = 0; b < buckets; ++b) sizes[b] += host_sort_piece_of(ends, b, b + 1).size;
    }
    const std::vector<host_sort_batch> batches = host_sort_batches(sizes, p.batch_items);
    std::vector<host_sort_batch> sorted, others;
    for (const host_sort_batch& b : batches) (b.action == host_sort_action::sort ? sorted : others).push_back(b);
    TILESORT_RETURN_IF_ERROR(timed(stats_.batches_s, [&] { return sort_batches(sorted, keys, values, p); }));
    TILESORT_RETURN_IF_ERROR(timed(stats_.host_copies_s, [&] {
      for (const host_sort_batch& b : others) {
        gather_on_host(b, keys, values, p);
        if (b.action == host_sort_action::copy) advance(2 * std::size_t(b.size) * p.item_bytes());
      }
      return cudaSuccess;
    }));
    stats_.batches += std::int64_t(sorted.size());
    for (const host_sort_batch& b : others) {
      if (b.action == host_sort_action::copy) {
        ++stats_.copied_buckets;
        continue;
      }
      ++stats_.resorted_buckets;
      const host_sort_plan again = plan(b.size, device_bytes_);
      TILESORT_RETURN_IF_ERROR(again.status);
      total_ += again.link_bytes();
      advance(2 * std::size_t(b.size) * p.item_bytes());  // its share of the total: the pass 2 it took instead
      TILESORT_RETURN_IF_ERROR(sort_range(keys + b.begin, values_at(values, b.begin), again));
    }
    return cudaSuccess;
  }

  // The batches of pass 2 that the device sorts, the two slots in turn.
  cudaError_t sort_batches(const std::vector<host_sort_batch>& sorted, Key* keys, Value* values,
                           const host_sort_plan& p) {
    const std::size_t item = p.item_bytes();
    const std::size_t count = sorted.size();
    for (std::size_t j = 0; j < count; ++j) {
      const int k = int(j % 2);
      if (j >= 2) {
        TILESORT_RETURN_IF_ERROR(cudaEventSynchronize(done_events_[k]));
        advance(2 * std::size_t(sorted[j - 2].size) * item);
      }
      TILESORT_RETURN_IF_ERROR(load_batch(sorted[j], p, k));
      if (j >= 1) TILESORT_RETURN_IF_ERROR(store_batch(sorted[j - 1], keys, values, p, 1 - k));
    }
    if (count >= 1) TILESORT_RETURN_IF_ERROR(store_batch(sorted[count - 1], keys, values, p, int((count - 1) % 2)));
    for (std::size_t j = count >= 2 ? count - 2 : 0; j < count; ++j) {
      TILESORT_RETURN_IF_ERROR(cudaEventSynchronize(done_events_[j % 2]));
      advance(2 * std::size_t(sorted[j].size) * item);
    }
    return cudaSuccess;
  }

  // Batch `b` onto slot k (one piece per chunk, in chunk order) and sorted there.
  cudaError_t load_batch(const host_sort_batch& b, const host_sort_plan& p, int k) {
    const cudaStream_t s = slot_stream(k);
    unsigned char* at = slot(p, k);
    Key* d_keys = reinterpret_cast<Key*>(at + p.batch.offset[sort_keys_at]);
    Value* d_values = reinterpret_cast<Value*>(at + p.batch.offset[sort_values_at]);
    std::int64_t filled = 0;
    for (std::int64_t c = 0; c < p.chunks; ++c) {
      const host_sort_piece piece = host_sort_piece_of(table_ + c * p.buckets(), b.first_bucket, b.end_bucket);
      if (piece.size == 0) continue;
      const std::int64_t from = p.chunk_begin(c) + piece.begin;
      TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(d_keys + filled, scratch_keys() + from,
                                               std::size_t(piece.size) * sizeof(Key), cudaMemcpyHostToDevice, s));
      if constexpr (pairs)
        TILESORT_RETURN_IF_ERROR(cudaMemcpyAsync(d_values + filled, scratch_values(p.n) + from,
                                                 std::size_t(piece.size) * value_bytes, cudaMemcpyHostToDevice, s));
      filled += piece.size;
    }
    return sort_on_device(d_keys, d_values, b.size, at + p.batch.offset[sort_temp_at],
                          p.batch.total - p.batch.offset[sort_temp_at], s);
  }

  // Slot k's sorted batch `b` to its place in the caller's arrays.
  cudaError_t store_batch(const host_sort_batch& b, Key* keys, Value* values, const host_sort_plan& p, int k) {
    const cudaStream_t s = slot_stream(k);
    unsigned char* at = slot(p, k);
    TILESORT_RETURN_IF_ERROR(stager_.to_host(keys + b.begin, at + p.batch.offset[sort_keys_at],
                                             std::size_t(b.size) * sizeof(Key), direct_keys_, s));
    if constexpr (pairs)
      TILESORT_RETURN_IF_ERROR(stager_.to_host(values + b.begin, at + p.batch.offset[sort_values_at],
                                               std::size_t(b.size) * value_bytes, direct_values_, s));
    return cudaEventRecord(done_events_[k], s);
  }

  // Batch `b`'s items from the scratch to their place, in input order.
  void gather_on_host(const host_sort_batch& b, Key* keys, Value* values, const host_sort_plan& p) const {
    std::int64_t filled = b.begin;
    for (std::int64_t c = 0; c < p.chunks; ++c) {
      const host_sort_piece piece = host_sort_piece_of(table_ + c * p.buckets(), b.first_bucket, b.end_bucket);
      const std::int64_t from = p.chunk_begin(c) + piece.begin;
      std::memcpy(keys + filled, scratch_keys() + from, std::size_t(piece.size) * sizeof(Key));
      if constexpr (pairs)
        std::memcpy(values + filled, scratch_values(p.n) + from, std::size_t(piece.size) * value_bytes);
      filled += piece.size;
    }
  }

  Compare comp_;
  const host_sort_options& options_;
  bool direct_keys_ = true, direct_values_ = true;
  cudaStream_t stream_ = 0;
  host_sort_allocation_count allocations_;
  void* device_ = nullptr;
  std::size_t device_bytes_ = 0;
  unsigned char* scratch_ = nullptr;
  bool owns_scratch_ = false, scratch_registered_ = false;
  std::uint32_t* table_ = nullptr;
  std::int64_t table_entries_ = 0;
  host_sort_stager stager_;
  host_sort_registrations registrations_;
  side_stream_set* set_ = nullptr;
  cudaEvent_t done_events_[2] = {};
  std::size_t done_ = 0, total_ = 0;
  host_sort_stats stats_;
};

}  // namespace tilesort::detail
