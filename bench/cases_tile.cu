// bench/cases_tile.cu — families "warp" and "block": sort many independent
// tiles of u32 keys (2^26 keys by default), one kernel = load + sort + store.
//
//   warp:  one warp per tile of 32 x IPT keys, 16-byte vector loads/stores
//          straight into the blocked arrangement; tilesort::warp_sort<32> vs
//          cub::WarpMergeSort of the same shape, plus a copy-only kernel with
//          the same access (the ceiling).
//   block: one block per tile of BlockThreads x IPT keys (and u32 values),
//          loaded and stored warp-striped through shared memory (the access of
//          CUB's BLOCK_LOAD/STORE_WARP_TRANSPOSE); tilesort::block_sort vs
//          cub::BlockMergeSort and cub::BlockRadixSort (which stores straight
//          from its striped output, as CUB users do).
// Each tile is verified as its own segment.
#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_merge_sort.cuh>

#include <cstdio>

#include <tilesort/block/block_sort.cuh>
#include <tilesort/comparators.cuh>
#include <tilesort/warp/warp_sort.cuh>

#include "bench.cuh"

namespace bench {
namespace {

using u32 = std::uint32_t;
constexpr int kWarpKernelWarps = 4;  // warps per block in the warp-tile kernels

__device__ inline unsigned char* dynamic_smem() {
  extern __shared__ __align__(16) unsigned char bench_tile_smem[];
  return bench_tile_smem;
}

enum class warp_kernel { copy, tilesort, cub };

template <warp_kernel Kind, int IPT>
__global__ void __launch_bounds__(32 * kWarpKernelWarps) warp_tiles(const u32* __restrict__ in, u32* __restrict__ out) {
  static_assert(IPT % 4 == 0, "16-byte loads");
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const std::int64_t tile = std::int64_t(blockIdx.x) * kWarpKernelWarps + warp;
  const uint4* src = reinterpret_cast<const uint4*>(in + tile * 32 * IPT) + lane * (IPT / 4);
  uint4* dst = reinterpret_cast<uint4*>(out + tile * 32 * IPT) + lane * (IPT / 4);
  u32 keys[IPT];
#pragma unroll
  for (int v = 0; v < IPT / 4; ++v) {
    const uint4 q = src[v];
    keys[4 * v + 0] = q.x;
    keys[4 * v + 1] = q.y;
    keys[4 * v + 2] = q.z;
    keys[4 * v + 3] = q.w;
  }
  if constexpr (Kind == warp_kernel::tilesort) {
    tilesort::warp_sort<32>(keys, tilesort::less{});
  } else if constexpr (Kind == warp_kernel::cub) {
    using sorter = cub::WarpMergeSort<u32, IPT, 32>;
    auto* storage = reinterpret_cast<typename sorter::TempStorage*>(dynamic_smem());
    sorter(storage[warp]).Sort(keys, tilesort::less{});
  }
#pragma unroll
  for (int v = 0; v < IPT / 4; ++v) dst[v] = make_uint4(keys[4 * v], keys[4 * v + 1], keys[4 * v + 2], keys[4 * v + 3]);
}

template <warp_kernel Kind, int IPT>
std::size_t warp_tiles_smem() {
  if constexpr (Kind == warp_kernel::cub) {
    return kWarpKernelWarps * sizeof(typename cub::WarpMergeSort<u32, IPT, 32>::TempStorage);
  } else {
    return 0;
  }
}

// Warp-striped global <-> blocked registers through a padded shared-memory
// region per warp: one word of padding per 32 keys puts the blocked accesses
// (lane stride IPT words) on distinct banks.
template <int IPT>
constexpr int warp_region_words() {
  return 32 * IPT + IPT;
}

template <int IPT, typename T>
__device__ void load_warp_striped(const T* tile, T (&items)[IPT], T* exchange) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const T* src = tile + warp * 32 * IPT;
  T* region = exchange + warp * warp_region_words<IPT>();
#pragma unroll
  for (int k = 0; k < IPT; ++k) region[k * 33 + lane] = src[k * 32 + lane];
  __syncwarp();
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    const int i = lane * IPT + k;
    items[k] = region[i + i / 32];
  }
  __syncwarp();
}

template <int IPT, typename T>
__device__ void store_warp_striped(T* tile, const T (&items)[IPT], T* exchange) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T* dst = tile + warp * 32 * IPT;
  T* region = exchange + warp * warp_region_words<IPT>();
#pragma unroll
  for (int k = 0; k < IPT; ++k) {
    const int i = lane * IPT + k;
    region[i + i / 32] = items[k];
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < IPT; ++k) dst[k * 32 + lane] = region[k * 33 + lane];
  __syncwarp();
}

enum class block_kernel { tilesort, cub_merge, cub_radix };

template <int BT, int IPT, bool Pairs>
struct cub_block_types {
  using value = std::conditional_t<Pairs, u32, cub::NullType>;
  using load = cub::BlockLoad<u32, BT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using store = cub::BlockStore<u32, BT, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using merge = cub::BlockMergeSort<u32, BT, IPT, value>;
  using radix = cub::BlockRadixSort<u32, BT, IPT, value>;
  union merge_storage {
    typename load::TempStorage load;
    typename store::TempStorage store;
    typename merge::TempStorage sort;
  };
  union radix_storage {
    typename load::TempStorage load;
    typename radix::TempStorage sort;
  };
};

// CUB's blocked load of the tile at `base` (keys, then values for pairs) through
// storage.load, the way CUB's block sorts are fed; the block is synchronised
// afterwards so that storage can be reused by the sort.
template <int BT, int IPT, bool Pairs, typename Storage>
__device__ void cub_load_tile(Storage& storage, const u32* keys_in, const u32* values_in, std::int64_t base,
                              u32 (&keys)[IPT], u32 (&values)[IPT]) {
  using load = typename cub_block_types<BT, IPT, Pairs>::load;
  load(storage.load).Load(keys_in + base, keys);
  if constexpr (Pairs) {
    __syncthreads();
    load(storage.load).Load(values_in + base, values);
  }
  __syncthreads();
}

template <int BT, int IPT, bool Pairs>
using tilesort_block = tilesort::block_sort<u32, BT, IPT, std::conditional_t<Pairs, u32, void>>;

template <block_kernel Kind, int BT, int IPT, bool Pairs>
std::size_t block_tiles_smem() {
  using cubt = cub_block_types<BT, IPT, Pairs>;
  if constexpr (Kind == block_kernel::tilesort) {
    const std::size_t exchange = std::size_t(BT / 32) * warp_region_words<IPT>() * sizeof(u32);
    const std::size_t sort = sizeof(typename tilesort_block<BT, IPT, Pairs>::temp_storage);
    return exchange > sort ? exchange : sort;
  } else if constexpr (Kind == block_kernel::cub_merge) {
    return sizeof(typename cubt::merge_storage);
  } else {
    return sizeof(typename cubt::radix_storage);
  }
}

template <block_kernel Kind, int BT, int IPT, bool Pairs>
__global__ void __launch_bounds__(BT) block_tiles(const u32* __restrict__ keys_in, u32* __restrict__ keys_out,
                                                  const u32* __restrict__ values_in, u32* __restrict__ values_out) {
  constexpr int tile_items = BT * IPT;
  const std::int64_t base = std::int64_t(blockIdx.x) * tile_items;
  u32 keys[IPT];
  u32 values[IPT];
  if constexpr (Kind == block_kernel::tilesort) {
    using sorter = tilesort_block<BT, IPT, Pairs>;
    u32* exchange = reinterpret_cast<u32*>(dynamic_smem());
    auto& storage = *reinterpret_cast<typename sorter::temp_storage*>(dynamic_smem());
    load_warp_striped(keys_in + base, keys, exchange);
    if constexpr (Pairs) load_warp_striped(values_in + base, values, exchange);
    __syncthreads();
    if constexpr (Pairs) {
      sorter(storage).sort_pairs(keys, values, tilesort::less{});
    } else {
      sorter(storage).sort(keys, tilesort::less{});
    }
    __syncthreads();
    store_warp_striped(keys_out + base, keys, exchange);
    if constexpr (Pairs) store_warp_striped(values_out + base, values, exchange);
  } else if constexpr (Kind == block_kernel::cub_merge) {
    using cubt = cub_block_types<BT, IPT, Pairs>;
    auto& storage = *reinterpret_cast<typename cubt::merge_storage*>(dynamic_smem());
    cub_load_tile<BT, IPT, Pairs>(storage, keys_in, values_in, base, keys, values);
    if constexpr (Pairs) {
      typename cubt::merge(storage.sort).Sort(keys, values, tilesort::less{});
    } else {
      typename cubt::merge(storage.sort).Sort(keys, tilesort::less{});
    }
    __syncthreads();
    typename cubt::store(storage.store).Store(keys_out + base, keys);
    if constexpr (Pairs) {
      __syncthreads();
      typename cubt::store(storage.store).Store(values_out + base, values);
    }
  } else {
    using cubt = cub_block_types<BT, IPT, Pairs>;
    auto& storage = *reinterpret_cast<typename cubt::radix_storage*>(dynamic_smem());
    cub_load_tile<BT, IPT, Pairs>(storage, keys_in, values_in, base, keys, values);
    if constexpr (Pairs) {
      typename cubt::radix(storage.sort).SortBlockedToStriped(keys, values);
    } else {
      typename cubt::radix(storage.sort).SortBlockedToStriped(keys);
    }
    cub::StoreDirectStriped<BT>(int(threadIdx.x), keys_out + base, keys);
    if constexpr (Pairs) cub::StoreDirectStriped<BT>(int(threadIdx.x), values_out + base, values);
  }
}

// Kernels that need more than 48 KiB of dynamic shared memory opt in once,
// before their measurement (outside the timed region).
template <typename Kernel>
void allow_smem(Kernel* kernel, std::size_t smem) {
  if (smem > 48 * 1024) BENCH_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
}

template <block_kernel Kind, int BT, int IPT, bool Pairs>
cudaError_t launch_block(std::int64_t tiles, cudaStream_t stream, const u32* keys_in, u32* keys_out,
                         const u32* values_in, u32* values_out) {
  if (tiles <= 0) return cudaSuccess;
  block_tiles<Kind, BT, IPT, Pairs><<<unsigned(tiles), BT, block_tiles_smem<Kind, BT, IPT, Pairs>(), stream>>>(
      keys_in, keys_out, values_in, values_out);
  return cudaGetLastError();
}

template <warp_kernel Kind, int IPT>
cudaError_t launch_warp(std::int64_t tiles, cudaStream_t stream, const u32* in, u32* out) {
  const std::int64_t blocks = tiles / kWarpKernelWarps;
  if (blocks <= 0) return cudaSuccess;
  warp_tiles<Kind, IPT><<<unsigned(blocks), 32 * kWarpKernelWarps, warp_tiles_smem<Kind, IPT>(), stream>>>(in, out);
  return cudaGetLastError();
}

std::string gk(double g) {
  char b[48];
  std::snprintf(b, sizeof b, "%.0f GKeys/s", g);
  return b;
}

template <int IPT>
void run_warp(harness& h, std::int64_t n) {
  constexpr int tile = 32 * IPT;
  const std::int64_t tiles = n / tile;
  device_data<u32, void> d(h, n, dist::random, case_seed("warp " + std::to_string(n)), tile);
  const std::string shape = "32x" + std::to_string(IPT);
  auto timed = [&](warp_kernel kind, const std::string& impl, const std::string& role, bool sorted) {
    harness::timed_call c;
    c.impl = impl;
    c.role = role;
    c.restore = d.restore(h);
    c.call = [&, kind](cudaStream_t s) {
      switch (kind) {
        case warp_kernel::copy: return launch_warp<warp_kernel::copy, IPT>(tiles, s, d.keys.get(), d.out_keys.get());
        case warp_kernel::tilesort:
          return launch_warp<warp_kernel::tilesort, IPT>(tiles, s, d.keys.get(), d.out_keys.get());
        case warp_kernel::cub: return launch_warp<warp_kernel::cub, IPT>(tiles, s, d.keys.get(), d.out_keys.get());
      }
      return cudaErrorInvalidValue;
    };
    c.verify = verifier<u32, void>(h, d.out_keys.get(), nullptr, n, tile, tilesort::less{}, d.fingerprint, sorted);
    return h.measure(c);
  };
  allow_smem(warp_tiles<warp_kernel::cub, IPT>, warp_tiles_smem<warp_kernel::cub, IPT>());
  const record copy = timed(warp_kernel::copy, "copy kernel " + shape + " (ceiling)", "ceiling", false);
  if (copy.median_ms > 0) h.bound = "copy kernel " + gk(copy.gkeys());
  timed(warp_kernel::tilesort, "tilesort::warp_sort<32> " + shape, "tilesort", true);
  timed(warp_kernel::cub, "cub::WarpMergeSort " + shape, "alt", true);
}

template <int BT, int IPT, bool Pairs>
void run_block(harness& h, std::int64_t n) {
  constexpr int tile = BT * IPT;
  const std::int64_t tiles = n / tile;
  using V = std::conditional_t<Pairs, u32, void>;
  device_data<u32, V> d(h, n, dist::random, case_seed("block " + std::to_string(n) + (Pairs ? " pairs" : "")), tile);
  const std::string shape = std::to_string(BT) + "x" + std::to_string(IPT);
  h.bound = "copy " + gk(h.copy_bound_gkeys(2.0 * (sizeof(u32) + value_size<V>())));
  auto timed = [&](block_kernel kind, const std::string& impl, const std::string& role) {
    try {
      switch (kind) {
        case block_kernel::tilesort:
          allow_smem(block_tiles<block_kernel::tilesort, BT, IPT, Pairs>,
                     block_tiles_smem<block_kernel::tilesort, BT, IPT, Pairs>());
          break;
        case block_kernel::cub_merge:
          allow_smem(block_tiles<block_kernel::cub_merge, BT, IPT, Pairs>,
                     block_tiles_smem<block_kernel::cub_merge, BT, IPT, Pairs>());
          break;
        case block_kernel::cub_radix:
          allow_smem(block_tiles<block_kernel::cub_radix, BT, IPT, Pairs>,
                     block_tiles_smem<block_kernel::cub_radix, BT, IPT, Pairs>());
          break;
      }
    } catch (const cuda_failure& e) {
      h.report(impl, role, "ERROR", std::string("shared memory opt-in failed: ") + e.what());
      return;
    }
    harness::timed_call c;
    c.impl = impl;
    c.role = role;
    c.restore = d.restore(h);
    c.call = [&, kind](cudaStream_t s) {
      const u32* values_in = nullptr;
      u32* values_out = nullptr;
      if constexpr (Pairs) {
        values_in = d.values.get();
        values_out = d.out_values.get();
      }
      switch (kind) {
        case block_kernel::tilesort:
          return launch_block<block_kernel::tilesort, BT, IPT, Pairs>(tiles, s, d.keys.get(), d.out_keys.get(),
                                                                      values_in, values_out);
        case block_kernel::cub_merge:
          return launch_block<block_kernel::cub_merge, BT, IPT, Pairs>(tiles, s, d.keys.get(), d.out_keys.get(),
                                                                       values_in, values_out);
        case block_kernel::cub_radix:
          return launch_block<block_kernel::cub_radix, BT, IPT, Pairs>(tiles, s, d.keys.get(), d.out_keys.get(),
                                                                       values_in, values_out);
      }
      return cudaErrorInvalidValue;
    };
    c.verify = verifier<u32, V>(h, d.out_keys.get(), d.out_values.get(), n, tile, tilesort::less{}, d.fingerprint);
    h.measure(c);
  };
  const std::string what = Pairs ? "::sort_pairs " : "::sort ";
  timed(block_kernel::tilesort, "tilesort::block_sort" + what + shape, "tilesort");
  timed(block_kernel::cub_merge, "cub::BlockMergeSort " + shape, "alt");
  timed(block_kernel::cub_radix, "cub::BlockRadixSort " + shape, "alt");
}

// n rounded down to whole tiles (the warp kernels launch 4 tiles per block).
std::int64_t whole_tiles(std::int64_t n, std::int64_t granule) { return n / granule * granule; }

}  // namespace

void add_tile_cases(const options& opt, std::vector<bench_case>& cases) {
  const std::vector<std::int64_t> sizes = opt.sizes_or({pow2(26)});
  if (opt.wants_family("warp") && opt.wants_type("u32") && opt.wants_dist("random", true)) {
    for (std::int64_t size : sizes) {
      auto add = [&](int ipt, void (*run)(harness&, std::int64_t)) {
        const std::int64_t n = whole_tiles(size, std::int64_t(32) * ipt * kWarpKernelWarps);
        if (n <= 0) return;
        cases.push_back({"warp", "warp_sort<32> 32x" + std::to_string(ipt), "u32", "tile=" + std::to_string(32 * ipt),
                         n, [n, run](harness& h) { run(h, n); }});
      };
      add(4, run_warp<4>);
      add(8, run_warp<8>);
      add(16, run_warp<16>);
    }
  }
  if (opt.wants_family("block") && opt.wants_dist("random", true)) {
    for (std::int64_t size : sizes) {
      auto add = [&](int bt, int ipt, bool pairs, void (*run)(harness&, std::int64_t)) {
        if (!opt.wants_type(pairs ? "pairs32" : "u32")) return;
        const std::int64_t n = whole_tiles(size, std::int64_t(bt) * ipt);
        if (n <= 0) return;
        cases.push_back({"block", "block_sort " + std::to_string(bt) + "x" + std::to_string(ipt),
                         pairs ? "pairs32" : "u32", "tile=" + std::to_string(bt * ipt), n,
                         [n, run](harness& h) { run(h, n); }});
      };
      add(128, 16, false, run_block<128, 16, false>);
      add(256, 8, false, run_block<256, 8, false>);
      add(256, 16, false, run_block<256, 16, false>);
      add(128, 16, true, run_block<128, 16, true>);
      add(256, 8, true, run_block<256, 8, true>);
      add(256, 16, true, run_block<256, 16, true>);
    }
  }
}

}  // namespace bench
