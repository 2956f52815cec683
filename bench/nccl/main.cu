// tilesort-bench-nccl — the distributed sort (tilesort::nccl::sort_keys /
// sort_pairs) on 1, 2, 4, ... GPUs of one machine, one host thread per GPU,
// against what it must beat, measured in the same run:
//  * our best single-GPU sort (tilesort::sort_keys / sort_pairs, the front
//    door) of the whole array on one GPU (strong scaling) and of one shard
//    (weak scaling, and the issue's target: total <= 1.15 x (local sort of
//    one shard + NCCL's all-to-all of the same bytes));
//  * NCCL's own all-to-all of exactly the bytes our exchange moved (grouped
//    ncclSend / ncclRecv with the per-peer counts the sort reported).
// Every configuration (key type, GPUs, keys per GPU) runs once; the strong
// table (fixed total over 1, 2, 4 GPUs) and the weak table (fixed keys per
// GPU) are read off the same rows. Times: wall clock from a barrier of all
// rank threads to the last rank's stream synchronisation, median of --reps
// after --warmup; phases from the sort's phase events (the slowest rank's,
// median). Keys are pseudo-random, made on each GPU; the working copy is
// restored before every repetition outside the timed region; the last
// repetition is checked (each rank sorted, boundaries in order, an
// order-independent checksum of (key, value) equal to the input's).
//
//   tilesort-bench-nccl [--gpus 1,2,4] [--types u32,u64,pairs32]
//                       [--totals 2^28,2^29,2^30] [--per-gpu 2^28]
//                       [--reps 5] [--warmup 1] [--json FILE] [--quick]
// --totals gives the strong-scaling sizes, --per-gpu the weak-scaling size
// (its rows are shared with the strong ones where they coincide). --quick:
// 2^22 and 2^23 keys, 2 repetitions (a smoke test).
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include <tilesort/distributed/nccl_sort.cuh>

namespace {

struct failure {
  std::string what;
};

#define BENCH_CUDA(call)                                                                                     \
  do {                                                                                                       \
    const cudaError_t bench_error_ = (call);                                                                 \
    if (bench_error_ != cudaSuccess) throw failure{std::string(#call) + ": " + cudaGetErrorString(bench_error_)}; \
  } while (0)
#define BENCH_NCCL(call)                                                                                     \
  do {                                                                                                       \
    const ncclResult_t bench_nccl_ = (call);                                                                 \
    if (bench_nccl_ != ncclSuccess) throw failure{std::string(#call) + ": " + ncclGetErrorString(bench_nccl_)}; \
  } while (0)

// ------------------------------------------------------------------ options
struct options {
  std::vector<int> gpus;
  std::vector<std::string> types = {"u32", "u64", "pairs32"};
  std::vector<std::int64_t> totals = {std::int64_t(1) << 28, std::int64_t(1) << 29, std::int64_t(1) << 30};
  std::int64_t per_gpu = std::int64_t(1) << 28;
  int reps = 5;
  int warmup = 1;
  std::string json;
};

// "2^28" or "268435456".
std::int64_t parse_count(const std::string& text) {
  const auto caret = text.find('^');
  if (caret == std::string::npos) return std::stoll(text);
  return std::int64_t(1) << std::stoi(text.substr(caret + 1));
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// ------------------------------------------------------------------ rank threads
// A reusable barrier for the rank threads of one configuration; it spins
// (yielding), so that the ranks leave it within microseconds of each other.
class spin_barrier {
 public:
  explicit spin_barrier(int count) : count_(count) {}
  void wait() {
    const unsigned round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
      arrived_.store(0, std::memory_order_relaxed);
      round_.fetch_add(1, std::memory_order_release);
      return;
    }
    while (round_.load(std::memory_order_acquire) == round) std::this_thread::yield();
  }

 private:
  const int count_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> round_{0};
};

__host__ __device__ std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename Key, typename Value>
__global__ void make_items(Key* keys, Value* values, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    keys[i] = static_cast<Key>(mix(seed + std::uint64_t(i)));
    if (values != nullptr) values[i] = static_cast<Value>(i);
  }
}

// check[0] += keys out of order, check[1] += sum of mix(key, value).
template <typename Key, typename Value>
__global__ void inspect_items(const Key* keys, const Value* values, std::int64_t n, unsigned long long* check) {
  unsigned long long descents = 0, sum = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    descents += i > 0 && keys[i] < keys[i - 1];
    sum += mix(std::uint64_t(keys[i]) * 0x100000001b3ull + (values != nullptr ? std::uint64_t(values[i]) : 0));
  }
  atomicAdd(&check[0], descents);
  atomicAdd(&check[1], sum);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// One row: a key type on `gpus` GPUs with n_local keys each.
struct row {
  std::string type;
  int gpus = 0;
  std::int64_t n_local = 0;
  double ms = 0, ms_min = 0;  // the sort, wall clock
  double phase_ms[4] = {0, 0, 0, 0};  // local sort (with the header exchange), splitters, exchange, merge
  double local_ms = 0;  // tilesort's single-GPU sort of n_local keys (GPU 0)
  double alltoall_ms = 0;  // NCCL's all-to-all of the bytes the exchange moved
  std::int64_t exchange_bytes = 0;  // the most any rank sent to the others
  int rounds = 0;
  bool verified = false;
};

const char* phase_names[4] = {"local_sort", "splitters", "exchange", "merge"};

// ------------------------------------------------------------------ one configuration
template <typename Key, typename Value>
row run_config(const std::string& type, int gpus, std::int64_t n_local, const options& o,
               const std::vector<ncclComm_t>& comms) {
  constexpr bool pairs = !std::is_void_v<Value>;
  using value_type = std::conditional_t<pairs, Value, std::uint32_t>;  // (allocated empty for keys)
  constexpr std::size_t item_bytes = sizeof(Key) + (pairs ? sizeof(value_type) : 0);
  row result;
  result.type = type;
  result.gpus = gpus;
  result.n_local = n_local;
  const int reps = o.warmup + o.reps;
  std::vector<std::vector<double>> wall(gpus, std::vector<double>(reps)), a2a(gpus, std::vector<double>(o.reps));
  std::vector<std::vector<std::vector<double>>> phases(gpus, std::vector<std::vector<double>>(4));
  std::vector<double> local;
  std::vector<unsigned long long> checks(4 * gpus, 0);  // per rank: descents, sum after, sum before
  std::vector<Key> edges(2 * gpus);  // per rank: first, last key
  std::vector<tilesort::nccl::sort_report> reports(gpus);
  std::vector<std::string> errors(gpus);
  spin_barrier sync(gpus);

  auto rank_body = [&](int rank) {
    // Every rank reaches every barrier, also after an error (which ends its work).
    bool ok = true;
    auto step = [&](auto&& f) {
      if (!ok) return;
      try {
        f();
      } catch (const failure& e) {
        errors[rank] = e.what;
        ok = false;
      }
    };
    cudaStream_t stream = nullptr;
    Key *keys_in = nullptr, *keys = nullptr;
    value_type *values_in = nullptr, *values = nullptr;
    void *temp = nullptr, *a2a_in = nullptr, *a2a_out = nullptr;
    unsigned long long* check = nullptr;
    std::size_t temp_bytes = 0;
    cudaEvent_t ev[5] = {};
    tilesort::nccl::phase_events events;
    step([&] {
      BENCH_CUDA(cudaSetDevice(rank));
      BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      const std::size_t n = std::size_t(std::max<std::int64_t>(n_local, 1));
      BENCH_CUDA(cudaMalloc(&keys_in, n * sizeof(Key)));
      BENCH_CUDA(cudaMalloc(&keys, n * sizeof(Key)));
      if (pairs) {
        BENCH_CUDA(cudaMalloc(&values_in, n * sizeof(value_type)));
        BENCH_CUDA(cudaMalloc(&values, n * sizeof(value_type)));
      }
      if (gpus > 1) {  // NCCL's own all-to-all of the same items (keys and values: item_bytes each)
        BENCH_CUDA(cudaMalloc(&a2a_in, n * item_bytes));
        BENCH_CUDA(cudaMalloc(&a2a_out, n * item_bytes));
      }
      BENCH_CUDA(cudaMalloc(&check, 4 * sizeof(unsigned long long)));
      BENCH_CUDA(cudaMemsetAsync(check, 0, 4 * sizeof(unsigned long long), stream));
      make_items<<<2048, 256, 0, stream>>>(keys_in, values_in, n_local, mix(std::uint64_t(rank) + 977 * n_local));
      inspect_items<<<2048, 256, 0, stream>>>(keys_in, values_in, n_local, check + 2);
      if constexpr (pairs)
        BENCH_CUDA(tilesort::nccl::sort_pairs(nullptr, temp_bytes, keys, keys, values, values, n_local, comms[rank]));
      else
        BENCH_CUDA(tilesort::nccl::sort_keys(nullptr, temp_bytes, keys, keys, n_local, comms[rank]));
      BENCH_CUDA(cudaMalloc(&temp, temp_bytes));
      for (auto& e : ev) BENCH_CUDA(cudaEventCreate(&e));
      events = {ev[0], ev[1], ev[2], ev[3], ev[4]};
      BENCH_CUDA(cudaStreamSynchronize(stream));
    });
    auto restore = [&] {
      BENCH_CUDA(cudaMemcpyAsync(keys, keys_in, n_local * sizeof(Key), cudaMemcpyDeviceToDevice, stream));
      if (pairs)
        BENCH_CUDA(cudaMemcpyAsync(values, values_in, n_local * sizeof(value_type), cudaMemcpyDeviceToDevice, stream));
      BENCH_CUDA(cudaStreamSynchronize(stream));
    };
    // The distributed sort, timed.
    for (int rep = 0; rep < reps; ++rep) {
      step(restore);
      sync.wait();
      const auto start = std::chrono::steady_clock::now();
      step([&] {
        tilesort::nccl::sort_options so;
        so.events = &events;
        so.report = &reports[rank];
        so.timeout_ms = 120000;  // a failed peer ends the run instead of hanging it
        if constexpr (pairs)
          BENCH_CUDA(tilesort::nccl::sort_pairs(temp, temp_bytes, keys, keys, values, values, n_local, comms[rank],
                                                tilesort::less{}, stream, so));
        else
          BENCH_CUDA(tilesort::nccl::sort_keys(temp, temp_bytes, keys, keys, n_local, comms[rank], tilesort::less{},
                                               stream, so));
        BENCH_CUDA(cudaStreamSynchronize(stream));
      });
      wall[rank][rep] = seconds_since(start) * 1e3;
      step([&] {
        if (rep < o.warmup) return;
        for (int p = 0; p < 4; ++p) {
          float ms = 0;
          BENCH_CUDA(cudaEventElapsedTime(&ms, ev[p], ev[p + 1]));
          phases[rank][p].push_back(ms);
        }
      });
      sync.wait();
    }
    // Check the last result.
    step([&] {
      inspect_items<<<2048, 256, 0, stream>>>(keys, values, n_local, check);
      BENCH_CUDA(cudaMemcpyAsync(&checks[4 * rank], check, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
      if (n_local > 0) {
        BENCH_CUDA(cudaMemcpyAsync(&edges[2 * rank], keys, sizeof(Key), cudaMemcpyDeviceToHost, stream));
        BENCH_CUDA(cudaMemcpyAsync(&edges[2 * rank + 1], keys + n_local - 1, sizeof(Key), cudaMemcpyDeviceToHost, stream));
      }
      BENCH_CUDA(cudaStreamSynchronize(stream));
    });
    // NCCL's all-to-all of the same bytes (the counts the sort reported).
    for (int rep = 0; rep < o.warmup + o.reps && gpus > 1; ++rep) {
      sync.wait();
      const auto start = std::chrono::steady_clock::now();
      step([&] {
        const auto& r = reports[rank];
        std::vector<std::int64_t> send_offset(gpus + 1, 0), recv_offset(gpus + 1, 0);
        for (int d = 0; d < gpus; ++d) {
          send_offset[d + 1] = send_offset[d] + r.send_counts[d];
          recv_offset[d + 1] = recv_offset[d] + r.recv_counts[d];
        }
        const char* from = static_cast<const char*>(a2a_in);
        char* to = static_cast<char*>(a2a_out);
        BENCH_NCCL(ncclGroupStart());
        for (int d = 0; d < gpus; ++d) {
          if (d == rank) continue;
          if (r.send_counts[d] > 0)
            BENCH_NCCL(ncclSend(from + send_offset[d] * item_bytes, r.send_counts[d] * item_bytes, ncclUint8, d,
                                comms[rank], stream));
          if (r.recv_counts[d] > 0)
            BENCH_NCCL(ncclRecv(to + recv_offset[d] * item_bytes, r.recv_counts[d] * item_bytes, ncclUint8, d,
                                comms[rank], stream));
        }
        BENCH_NCCL(ncclGroupEnd());
        BENCH_CUDA(cudaStreamSynchronize(stream));
      });
      if (rep >= o.warmup) a2a[rank][rep - o.warmup] = seconds_since(start) * 1e3;
      sync.wait();
    }
    // Our single-GPU sort of n_local keys, on GPU 0 alone (its temp storage fits in ours);
    // on one GPU the distributed call is that sort already.
    if (rank == 0 && gpus > 1) {
      for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        step(restore);
        const auto start = std::chrono::steady_clock::now();
        step([&] {
          std::size_t bytes = temp_bytes;
          if constexpr (pairs)
            BENCH_CUDA(tilesort::sort_pairs(temp, bytes, keys, keys, values, values, n_local, tilesort::less{}, stream));
          else
            BENCH_CUDA(tilesort::sort_keys(temp, bytes, keys, keys, n_local, tilesort::less{}, stream));
          BENCH_CUDA(cudaStreamSynchronize(stream));
        });
        if (rep >= o.warmup) local.push_back(seconds_since(start) * 1e3);
      }
    }
    for (auto& e : ev)
      if (e != nullptr) cudaEventDestroy(e);
    for (void* p : {static_cast<void*>(keys_in), static_cast<void*>(keys), static_cast<void*>(values_in),
                    static_cast<void*>(values), temp, a2a_in, a2a_out, static_cast<void*>(check)})
      if (p != nullptr) cudaFree(p);
    if (stream != nullptr) cudaStreamDestroy(stream);
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < gpus; ++r) threads.emplace_back(rank_body, r);
  for (auto& t : threads) t.join();
  for (int r = 0; r < gpus; ++r)
    if (!errors[r].empty()) throw failure{"rank " + std::to_string(r) + ": " + errors[r]};

  // Slowest rank per repetition, medians.
  std::vector<double> per_rep;
  for (int rep = o.warmup; rep < reps; ++rep) {
    double slowest = 0;
    for (int r = 0; r < gpus; ++r) slowest = std::max(slowest, wall[r][rep]);
    per_rep.push_back(slowest);
  }
  result.ms = median(per_rep);
  result.ms_min = *std::min_element(per_rep.begin(), per_rep.end());
  for (int p = 0; p < 4; ++p) {
    std::vector<double> slowest(o.reps, 0);
    for (int r = 0; r < gpus; ++r)
      for (int i = 0; i < o.reps; ++i) slowest[i] = std::max(slowest[i], phases[r][p][i]);
    result.phase_ms[p] = median(slowest);
  }
  if (gpus > 1) {
    std::vector<double> slowest(o.reps, 0);
    for (int r = 0; r < gpus; ++r)
      for (int i = 0; i < o.reps; ++i) slowest[i] = std::max(slowest[i], a2a[r][i]);
    result.alltoall_ms = median(slowest);
  }
  result.local_ms = gpus > 1 ? median(local) : result.ms;
  for (int r = 0; r < gpus; ++r) {
    std::int64_t sent = 0;
    for (int d = 0; d < gpus; ++d)
      if (d != r) sent += reports[r].send_counts.empty() ? 0 : reports[r].send_counts[d];
    result.exchange_bytes = std::max<std::int64_t>(result.exchange_bytes, sent * std::int64_t(item_bytes));
  }
  result.rounds = reports[0].search_rounds;
  unsigned long long descents = 0, after = 0, before = 0;
  bool edges_ok = true;
  for (int r = 0; r < gpus; ++r) {
    descents += checks[4 * r];
    after += checks[4 * r + 1];
    before += checks[4 * r + 3];
    if (r > 0 && n_local > 0 && edges[2 * r] < edges[2 * r - 1]) edges_ok = false;
  }
  result.verified = descents == 0 && after == before && edges_ok;
  return result;
}

// ------------------------------------------------------------------ output
std::string json_row(const row& r) {
  const double n_total = double(r.n_local) * r.gpus;
  std::ostringstream s;
  s << "{\"type\": \"" << r.type << "\", \"gpus\": " << r.gpus << ", \"n_local\": " << r.n_local
    << ", \"n_total\": " << std::int64_t(n_total) << ", \"ms\": " << r.ms << ", \"ms_min\": " << r.ms_min
    << ", \"gkeys_per_s\": " << n_total / (r.ms * 1e6);
  for (int p = 0; p < 4; ++p) s << ", \"" << phase_names[p] << "_ms\": " << r.phase_ms[p];
  s << ", \"single_gpu_sort_of_shard_ms\": " << r.local_ms << ", \"alltoall_ms\": " << r.alltoall_ms
    << ", \"exchange_bytes\": " << r.exchange_bytes;
  if (r.gpus > 1) {
    s << ", \"exchange_GBps\": " << r.exchange_bytes / (r.phase_ms[2] * 1e6)
      << ", \"alltoall_GBps\": " << r.exchange_bytes / (r.alltoall_ms * 1e6)
      << ", \"exchange_vs_alltoall\": " << r.alltoall_ms / r.phase_ms[2]
      << ", \"total_vs_local_plus_alltoall\": " << r.ms / (r.local_ms + r.alltoall_ms);
  }
  s << ", \"search_rounds\": " << r.rounds << ", \"verified\": " << (r.verified ? "true" : "false") << "}";
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off unless the caller says otherwise
  options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return args[++i];
    };
    if (a == "--gpus") {
      o.gpus.clear();
      for (const auto& g : split(next())) o.gpus.push_back(std::stoi(g));
    } else if (a == "--types") {
      o.types = split(next());
    } else if (a == "--totals") {
      o.totals.clear();
      for (const auto& t : split(next())) o.totals.push_back(parse_count(t));
    } else if (a == "--per-gpu") {
      o.per_gpu = parse_count(next());
    } else if (a == "--reps") {
      o.reps = std::stoi(next());
    } else if (a == "--warmup") {
      o.warmup = std::stoi(next());
    } else if (a == "--json") {
      o.json = next();
    } else if (a == "--quick") {
      o.totals = {std::int64_t(1) << 22, std::int64_t(1) << 23};
      o.per_gpu = std::int64_t(1) << 22;
      o.reps = 2;
    } else {
      std::fprintf(stderr, "unknown option %s (see the top of bench/nccl/main.cu)\n", a.c_str());
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("tilesort-bench-nccl: no CUDA device found, nothing to run.\n");
    return 0;
  }
  if (o.gpus.empty())
    for (int g = 1; g <= devices; g *= 2) o.gpus.push_back(g);
  o.gpus.erase(std::remove_if(o.gpus.begin(), o.gpus.end(), [&](int g) { return g < 1 || g > devices; }), o.gpus.end());
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);

  // The configurations: every total over every GPU count, and the per-GPU size on every GPU count.
  std::set<std::tuple<int, int, std::int64_t>> configs;  // (type index, gpus, n_local)
  for (std::size_t t = 0; t < o.types.size(); ++t) {
    for (int g : o.gpus) {
      for (std::int64_t total : o.totals)
        if (total % g == 0) configs.insert({int(t), g, total / g});
      if (o.per_gpu > 0) configs.insert({int(t), g, o.per_gpu});
    }
  }
  std::map<int, std::vector<ncclComm_t>> comms;
  std::vector<row> rows;
  int failures = 0;
  std::printf("%-8s %4s %12s %9s %9s %8s %8s %8s %8s %9s %9s %8s %6s %s\n", "type", "gpus", "keys/gpu", "ms", "GKeys/s",
              "sort", "split", "xchg", "merge", "1gpu-shard", "nccl-a2a", "a2a/xchg", "ratio", "ok");
  for (const auto& [t, g, n_local] : configs) {
    const std::string& type = o.types[t];
    if (!comms.count(g)) {
      comms[g].resize(g);
      std::vector<int> list(g);
      for (int d = 0; d < g; ++d) list[d] = d;
      const ncclResult_t made = ncclCommInitAll(comms[g].data(), g, list.data());
      if (made != ncclSuccess) {
        std::fprintf(stderr, "ncclCommInitAll(%d): %s\n", g, ncclGetErrorString(made));
        return 1;
      }
    }
    std::fprintf(stderr, "[tilesort-bench-nccl] %s on %d GPU(s), %lld keys per GPU ...\n", type.c_str(), g,
                 static_cast<long long>(n_local));
    try {
      row r;
      if (type == "u32") {
        r = run_config<std::uint32_t, void>(type, g, n_local, o, comms[g]);
      } else if (type == "u64") {
        r = run_config<std::uint64_t, void>(type, g, n_local, o, comms[g]);
      } else if (type == "pairs32") {
        r = run_config<std::uint32_t, std::uint32_t>(type, g, n_local, o, comms[g]);
      } else {
        std::fprintf(stderr, "unknown type %s (u32, u64, pairs32)\n", type.c_str());
        return 2;
      }
      failures += r.verified ? 0 : 1;
      const double n_total = double(n_local) * g;
      std::printf("%-8s %4d %12lld %9.3f %9.3f %8.3f %8.3f %8.3f %8.3f %9.3f %9.3f %8.2f %6.2f %s\n", type.c_str(), g,
                  static_cast<long long>(n_local), r.ms, n_total / (r.ms * 1e6), r.phase_ms[0], r.phase_ms[1],
                  r.phase_ms[2], r.phase_ms[3], r.local_ms, r.alltoall_ms,
                  g > 1 ? r.alltoall_ms / r.phase_ms[2] : 0.0, g > 1 ? r.ms / (r.local_ms + r.alltoall_ms) : 0.0,
                  r.verified ? "ok" : "WRONG");
      std::fflush(stdout);
      rows.push_back(r);
    } catch (const failure& e) {
      std::printf("%-8s %4d %12lld FAILED: %s\n", type.c_str(), g, static_cast<long long>(n_local), e.what.c_str());
      ++failures;
    }
  }

  // Strong scaling: the same total on g GPUs against 1; weak: n per GPU on g GPUs against 1.
  auto find = [&](const std::string& type, int g, std::int64_t n_local) -> const row* {
    for (const row& r : rows)
      if (r.type == type && r.gpus == g && r.n_local == n_local) return &r;
    return nullptr;
  };
  std::vector<std::string> strong, weak;
  std::printf("\nstrong scaling (speedup over the front door sorting the whole array on one GPU):\n");
  for (const auto& type : o.types)
    for (std::int64_t total : o.totals)
      for (int g : o.gpus) {
        const row* one = find(type, 1, total);
        const row* many = total % g == 0 ? find(type, g, total / g) : nullptr;
        if (one == nullptr || many == nullptr || g == 1) continue;
        const double speedup = one->ms / many->ms;
        std::printf("  %-8s 2^%-3d on %d GPUs: %7.3f ms vs %8.3f ms on one: %.2fx\n", type.c_str(),
                    63 - __builtin_clzll(std::uint64_t(total)), g, many->ms, one->ms, speedup);
        std::ostringstream s;
        s << "{\"type\": \"" << type << "\", \"n_total\": " << total << ", \"gpus\": " << g << ", \"ms\": " << many->ms
          << ", \"one_gpu_ms\": " << one->ms << ", \"speedup\": " << speedup << "}";
        strong.push_back(s.str());
      }
  std::printf("weak scaling (%lld keys per GPU; efficiency = time on one GPU / time on g):\n",
              static_cast<long long>(o.per_gpu));
  for (const auto& type : o.types)
    for (int g : o.gpus) {
      const row* one = find(type, 1, o.per_gpu);
      const row* many = find(type, g, o.per_gpu);
      if (one == nullptr || many == nullptr || g == 1) continue;
      const double efficiency = one->ms / many->ms;
      std::printf("  %-8s on %d GPUs: %7.3f ms vs %7.3f ms on one: efficiency %.2f\n", type.c_str(), g, many->ms,
                  one->ms, efficiency);
      std::ostringstream s;
      s << "{\"type\": \"" << type << "\", \"n_local\": " << o.per_gpu << ", \"gpus\": " << g << ", \"ms\": "
        << many->ms << ", \"one_gpu_ms\": " << one->ms << ", \"efficiency\": " << efficiency << "}";
      weak.push_back(s.str());
    }

  if (!o.json.empty()) {
    std::ofstream out(o.json);
    const char* commit = std::getenv("TILESORT_COMMIT");
    out << "{\"benchmark\": \"tilesort-bench-nccl\", \"device\": \"" << prop.name << "\", \"gpus_available\": " << devices
        << ", \"nccl_version\": " << nccl_version << ", \"commit\": \"" << (commit ? commit : "") << "\",\n"
        << " \"reps\": " << o.reps << ", \"warmup\": " << o.warmup << ",\n \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) out << "  " << json_row(rows[i]) << (i + 1 < rows.size() ? ",\n" : "\n");
    out << " ],\n \"strong\": [\n";
    for (std::size_t i = 0; i < strong.size(); ++i) out << "  " << strong[i] << (i + 1 < strong.size() ? ",\n" : "\n");
    out << " ],\n \"weak\": [\n";
    for (std::size_t i = 0; i < weak.size(); ++i) out << "  " << weak[i] << (i + 1 < weak.size() ? ",\n" : "\n");
    out << " ]}\n";
  }
  for (auto& [g, list] : comms)
    for (ncclComm_t c : list) ncclCommDestroy(c);
  return failures == 0 ? 0 : 1;
}
