// examples/distributed_sort.cu — one array sharded over every GPU of the
// machine, sorted with tilesort::nccl::sort_keys (one host thread per GPU,
// communicators from ncclCommInitAll; with one process per GPU, as under
// torchrun or MPI, each process builds its own with ncclCommInitRank and
// runs rank_main the same way).
//
// Each GPU makes its shard of pseudo-random u32 keys, the sort runs, and each
// rank checks its own order, then its boundary with its neighbours: it sends
// its last key to the next rank (ncclSend / ncclRecv) and compares it with its
// first. A sum over ranks (ncclAllReduce) of the disorder found and of an
// order-independent checksum before and after gives the global verdict,
// which rank 0 prints.
//
//   example_distributed_sort [keys per GPU, default 2^24]
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <tilesort/distributed/nccl_sort.cuh>

#include "common/example_util.cuh"

#define NCCL_CHECK(call)                                                                                    \
  do {                                                                                                      \
    const ncclResult_t example_nccl_ = (call);                                                              \
    if (example_nccl_ != ncclSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(example_nccl_)); \
      return 1;                                                                                             \
    }                                                                                                       \
  } while (0)

namespace {

__host__ __device__ std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void make_shard(std::uint32_t* keys, std::int64_t n, int rank) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    keys[i] = static_cast<std::uint32_t>(mix((std::uint64_t(rank) << 40) + std::uint64_t(i)));
}

// stats[0] += keys out of order; stats[1] += sum of mix(key) (order-independent).
__global__ void inspect(const std::uint32_t* keys, std::int64_t n, unsigned long long* stats) {
  unsigned long long descents = 0, sum = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    descents += i > 0 && keys[i] < keys[i - 1];
    sum += mix(keys[i]);
  }
  atomicAdd(&stats[0], descents);
  atomicAdd(&stats[1], sum);
}

struct rank_result {
  int status = 0;
  double ms = 0;
};

int rank_main(int rank, int ranks, ncclComm_t comm, std::int64_t n, rank_result& result) {
  CHECK(cudaSetDevice(rank));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::uint32_t* keys = nullptr;
  unsigned long long* stats = nullptr;  // [descents, checksum before, checksum after, boundary breaks]
  CHECK(cudaMalloc(&keys, std::max<std::int64_t>(n, 1) * sizeof(std::uint32_t)));
  CHECK(cudaMalloc(&stats, 6 * sizeof(unsigned long long)));
  CHECK(cudaMemsetAsync(stats, 0, 6 * sizeof(unsigned long long), stream));
  make_shard<<<1024, 256, 0, stream>>>(keys, n, rank);
  unsigned long long* before = stats + 4;  // scratch: [descents, checksum] of the input
  inspect<<<1024, 256, 0, stream>>>(keys, n, before);

  // The sort: size query, temp storage, sort in place.
  std::size_t temp_bytes = 0;
  CHECK(tilesort::nccl::sort_keys(nullptr, temp_bytes, keys, keys, n, comm));
  void* temp = nullptr;
  CHECK(cudaMallocAsync(&temp, temp_bytes, stream));
  CHECK(cudaStreamSynchronize(stream));
  const auto start = std::chrono::steady_clock::now();
  CHECK(tilesort::nccl::sort_keys(temp, temp_bytes, keys, keys, n, comm, tilesort::less{}, stream));
  CHECK(cudaStreamSynchronize(stream));
  result.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(cudaFreeAsync(temp, stream));

  // Own order, then the boundary: my last key must not exceed the next rank's first.
  inspect<<<1024, 256, 0, stream>>>(keys, n, stats);  // stats[0] descents, stats[1] checksum after
  CHECK(cudaMemcpyAsync(stats + 2, before + 1, sizeof(unsigned long long), cudaMemcpyDeviceToDevice, stream));
  std::uint32_t* edge = nullptr;  // [my first, previous rank's last]
  CHECK(cudaMallocAsync(&edge, 2 * sizeof(std::uint32_t), stream));
  if (n > 0) CHECK(cudaMemcpyAsync(edge, keys, sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream));
  NCCL_CHECK(ncclGroupStart());
  if (rank + 1 < ranks && n > 0) NCCL_CHECK(ncclSend(keys + n - 1, 1, ncclUint32, rank + 1, comm, stream));
  if (rank > 0 && n > 0) NCCL_CHECK(ncclRecv(edge + 1, 1, ncclUint32, rank - 1, comm, stream));
  NCCL_CHECK(ncclGroupEnd());
  std::uint32_t host_edge[2] = {0, 0};
  CHECK(cudaMemcpyAsync(host_edge, edge, sizeof(host_edge), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  const unsigned long long broken = rank > 0 && n > 0 && host_edge[1] > host_edge[0] ? 1 : 0;
  CHECK(cudaMemcpyAsync(stats + 3, &broken, sizeof(broken), cudaMemcpyHostToDevice, stream));

  // Global verdict: sums over ranks of [descents, checksum after, checksum before, boundary breaks].
  NCCL_CHECK(ncclAllReduce(stats, stats, 4, ncclUint64, ncclSum, comm, stream));
  unsigned long long total[4];
  CHECK(cudaMemcpyAsync(total, stats, sizeof(total), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::printf("rank %d: %lld keys from %u\n", rank, static_cast<long long>(n), n > 0 ? host_edge[0] : 0u);
  if (rank == 0) {
    const bool ok = total[0] == 0 && total[3] == 0 && total[1] == total[2];
    std::printf("global check over %d GPUs, %lld keys: %s (descents %llu, broken boundaries %llu, checksum %s)\n",
                ranks, static_cast<long long>(n) * ranks, ok ? "sorted" : "NOT SORTED", total[0], total[3],
                total[1] == total[2] ? "kept" : "CHANGED");
    result.status = ok ? 0 : 1;
  }
  CHECK(cudaFreeAsync(edge, stream));
  CHECK(cudaFree(keys));
  CHECK(cudaFree(stats));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!example::require_device("distributed_sort")) return 0;
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off unless the caller says otherwise
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : std::int64_t(1) << 24;
  int ranks = 0;
  CHECK(cudaGetDeviceCount(&ranks));
  std::vector<ncclComm_t> comms(ranks);
  NCCL_CHECK(ncclCommInitAll(comms.data(), ranks, nullptr));  // devices 0 .. ranks-1
  std::vector<rank_result> results(ranks);
  std::vector<int> codes(ranks, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)  // one host thread per rank: the sort waits on the host twice
    threads.emplace_back([&, r] { codes[r] = rank_main(r, ranks, comms[r], n, results[r]); });
  for (auto& t : threads) t.join();
  double slowest = 0;
  for (int r = 0; r < ranks; ++r) slowest = std::max(slowest, results[r].ms);
  std::printf("sort: %.2f ms wall on the slowest rank (%.2f GKeys/s over all GPUs)\n", slowest,
              double(n) * ranks / (slowest * 1e6));
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  for (int r = 0; r < ranks; ++r)
    if (codes[r] != 0 || results[r].status != 0) return 1;
  return 0;
}
