// GPU tests for distributed/nccl_sort.cuh, tilesort::nccl::sort_keys /
// sort_pairs, on every GPU of the machine (2 to 8; skipped with a message
// below 2, except the one-rank case):
//  * one process, one thread per rank (ncclCommInitAll), with 2..G ranks;
//  * G processes: the binary starts itself G times (posix_spawn of
//    /proc/self/exe, gtest filter NcclSortProcessWorker.*), rank 0 writes the
//    ncclUniqueId to a file the others read, each builds its communicator
//    with ncclCommInitRank.
// Every case builds the whole input on every rank from one seed (shards cut
// from one global array), so each rank checks its own output against the
// slice of std::stable_sort of the concatenated input: exact keys and
// values (values are the items' global positions, which proves stability
// and that values travelled with their keys), and the shard size kept.
// Inputs: random, sorted, reversed, all equal, few distinct, skew (each
// rank's keys all belong to another rank), empty shards, shards of different
// sizes, pairs, a user comparator with observable stability, in place, the
// allocating overload. Errors: a null pointer, n_local < 0, too little temp
// storage or another key type on one rank returns cudaErrorInvalidValue on
// every rank, with nothing written, and the communicator still works.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tilesort/distributed/nccl_sort.cuh>

#include "common/test_util.cuh"

extern char** environ;

namespace {

using namespace tilesort_test;

constexpr std::int64_t wait_ms = 120000;  // sort_options::timeout_ms: a hang fails the test instead

int gpu_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

// NVLink multicast stays off (it can take a shared host's GPUs down); set
// before the first communicator, inherited by the worker processes.
void keep_multicast_off() { setenv("NCCL_NVLS_ENABLE", "0", 0); }

#define REQUIRE_GPUS(count)                                                                           \
  do {                                                                                                \
    if (gpu_count() < (count))                                                                        \
      GTEST_SKIP() << "fewer than " << (count) << " CUDA devices: GPU test skipped (the distributed " \
                   << "sort needs one GPU per rank; run scripts/gpu-check.sh nccl on a multi-GPU machine)"; \
  } while (0)

// ------------------------------------------------------------------ cases
// A case: the global input (keys; values are global positions) and its cut into shards.
enum class layout { even, uneven, empty_shards, skew };

std::vector<std::int64_t> shard_sizes(layout l, int ranks, std::int64_t per_rank) {
  std::vector<std::int64_t> sizes(ranks, per_rank);
  if (l == layout::uneven)
    for (int r = 0; r < ranks; ++r) sizes[r] = per_rank / (r + 1) + 17 * r + (r % 2 == 0 ? 3 : 0);
  if (l == layout::empty_shards)
    for (int r = 0; r < ranks; r += 2) sizes[r] = 0;  // rank 0, 2, ... hold nothing
  return sizes;
}

template <typename Key, typename Compare>
std::vector<Key> global_keys(layout l, distribution d, const std::vector<std::int64_t>& sizes, std::uint64_t seed,
                             Compare comp) {
  std::int64_t total = 0;
  for (std::int64_t s : sizes) total += s;
  std::vector<Key> keys = make_keys<Key>(std::size_t(total), d, seed, comp);
  if (l == layout::skew) {
    // Shard r gets the block of sorted keys that belongs to rank p-1-r:
    // every key must leave its rank.
    std::stable_sort(keys.begin(), keys.end(), comp);
    std::vector<Key> skewed;
    std::int64_t end = total;
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      skewed.insert(skewed.end(), keys.begin() + (end - sizes[r]), keys.begin() + end);
      end -= sizes[r];
    }
    keys = skewed;
  }
  return keys;
}

struct case_options {
  bool in_place = false;
  bool allocating = false;  // the overload without temp storage
};

// Sort this rank's shard of `keys` (values: global positions when Pairs) and
// check it against the slice of the global stable sort.
template <typename Key, bool Pairs, typename Compare>
void sort_and_check(int rank, ncclComm_t comm, const std::vector<Key>& keys, const std::vector<std::int64_t>& sizes,
                    Compare comp, case_options how) {
  using Value = std::uint32_t;
  const int ranks = static_cast<int>(sizes.size());
  std::int64_t offset = 0;
  for (int r = 0; r < rank; ++r) offset += sizes[r];
  const std::int64_t n = sizes[rank];
  const std::vector<Key> shard(keys.begin() + offset, keys.begin() + offset + n);
  std::vector<Value> shard_values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) shard_values[i] = static_cast<Value>(offset + i);

  cudaStream_t stream;
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  device_buffer<Key> keys_in(shard), keys_out(static_cast<std::size_t>(n));
  device_buffer<Value> values_in(shard_values), values_out(static_cast<std::size_t>(n));
  if (n > 0) keys_out.poison();
  Key* out = how.in_place ? keys_in.data() : keys_out.data();
  Value* vout = how.in_place ? values_in.data() : values_out.data();
  tilesort::nccl::sort_report report;
  tilesort::nccl::sort_options options;
  options.timeout_ms = wait_ms;
  options.report = &report;
  // The two-phase call (temp_bytes 0 and no temp: the allocating overload).
  auto sort = [&](void* temp, std::size_t& bytes) {
    if constexpr (Pairs) {
      return how.allocating ? tilesort::nccl::sort_pairs(keys_in.data(), out, values_in.data(), vout, n, comm, comp,
                                                         stream, options)
                            : tilesort::nccl::sort_pairs(temp, bytes, keys_in.data(), out, values_in.data(), vout, n,
                                                         comm, comp, stream, options);
    } else {
      return how.allocating ? tilesort::nccl::sort_keys(keys_in.data(), out, n, comm, comp, stream, options)
                            : tilesort::nccl::sort_keys(temp, bytes, keys_in.data(), out, n, comm, comp, stream, options);
    }
  };
  cudaError_t error = cudaSuccess;
  std::size_t bytes = 0;
  if (!how.allocating) {
    ASSERT_EQ(cudaSuccess, sort(nullptr, bytes)) << "size query";
    device_buffer<unsigned char> temp(bytes);
    error = sort(temp.data(), bytes);
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));  // (before temp goes)
  } else {
    error = sort(nullptr, bytes);
  }
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
  ASSERT_EQ(cudaSuccess, error) << "rank " << rank << ": " << cudaGetErrorString(error);
  EXPECT_EQ(ranks, report.ranks);

  // The reference: the global stable sort, with global positions riding along.
  std::vector<std::int64_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = std::int64_t(i);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return comp(keys[a], keys[b]); });
  const std::vector<Key> got = how.in_place ? keys_in.download() : keys_out.download();
  const std::vector<Value> got_values = how.in_place ? values_in.download() : values_out.download();
  ASSERT_EQ(std::size_t(n), got.size());  // the shard keeps its size
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t expected = order[offset + i];
    ASSERT_TRUE(bytes_equal(keys[expected], got[i])) << "rank " << rank << ": key " << i << " of " << n
                                                     << " differs from the global stable sort";
    if (Pairs) ASSERT_EQ(Value(expected), got_values[i]) << "rank " << rank << ": value " << i << " of " << n;
  }
  cudaStreamDestroy(stream);
}

// ------------------------------------------------------------------ one process, a thread per rank
// Communicators over devices 0..ranks-1, made once per rank count.
const std::vector<ncclComm_t>& communicators(int ranks) {
  static std::map<int, std::vector<ncclComm_t>> made;
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  auto& comms = made[ranks];
  if (comms.empty()) {
    keep_multicast_off();
    comms.resize(ranks);
    std::vector<int> devices(ranks);
    for (int r = 0; r < ranks; ++r) devices[r] = r;
    const ncclResult_t result = ncclCommInitAll(comms.data(), ranks, devices.data());
    EXPECT_EQ(ncclSuccess, result) << ncclGetErrorString(result);
  }
  return comms;
}

// Runs body(rank, comm) on one thread per rank, each with its device current.
void on_every_rank(int ranks, const std::function<void(int, ncclComm_t)>& body) {
  const auto& comms = communicators(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      EXPECT_EQ(cudaSuccess, cudaSetDevice(r));
      body(r, comms[r]);
    });
  }
  for (auto& t : threads) t.join();
}

// The rank counts a machine allows: 2 .. its GPUs (at most 8).
std::vector<int> rank_counts() {
  std::vector<int> counts;
  for (int r = 2; r <= std::min(gpu_count(), 8); ++r) counts.push_back(r);
  return counts;
}

template <typename Key, bool Pairs, typename Compare = typename comparator_for<Key>::type>
void check_case(layout l, distribution d, std::int64_t per_rank, case_options how = {}) {
  for (int ranks : rank_counts()) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(::testing::Message() << ranks << " ranks, " << name(d) << ", " << per_rank << " per rank, seed " << seed);
    const auto sizes = shard_sizes(l, ranks, per_rank);
    const auto keys = global_keys<Key>(l, d, sizes, seed, Compare{});
    on_every_rank(ranks, [&](int rank, ncclComm_t comm) {
      sort_and_check<Key, Pairs>(rank, comm, keys, sizes, Compare{}, how);
    });
  }
}

TEST(NcclSort, KeysOfEveryDistribution) {
  REQUIRE_GPUS(2);
  for (distribution d : {distribution::random, distribution::sorted, distribution::reversed, distribution::all_equal,
                         distribution::few_distinct})
    check_case<std::uint32_t, false>(layout::even, d, 100003);
}

TEST(NcclSort, SeveralSearchRounds) {
  REQUIRE_GPUS(2);
  // Past the first round's reach (2^17 probes for 2 ranks): two or three rounds.
  check_case<std::uint32_t, false>(layout::even, distribution::random, (std::int64_t(1) << 19) + 3);
  check_case<std::uint64_t, false>(layout::uneven, distribution::few_distinct, (std::int64_t(1) << 18) + 1);
}

TEST(NcclSort, ShardLayouts) {
  REQUIRE_GPUS(2);
  // Skew: every key must leave its rank. Empty shards on every other rank,
  // shards of different sizes, nothing anywhere, one key per rank.
  for (layout l : {layout::skew, layout::empty_shards, layout::uneven})
    check_case<std::uint32_t, false>(l, distribution::random, 50001);
  for (std::int64_t per_rank : {0, 1}) check_case<std::uint32_t, false>(layout::even, distribution::random, per_rank);
}

TEST(NcclSort, PairsAndUserKeysAreStable) {
  REQUIRE_GPUS(2);
  // Values are global positions: they prove stability and that they travelled with their keys.
  check_case<std::uint32_t, true>(layout::skew, distribution::few_distinct, 50001);
  check_case<std::uint32_t, true>(layout::uneven, distribution::few_distinct, 200001);
  check_case<std::uint32_t, true>(layout::even, distribution::all_equal, 30000);
  // user_key orders by `major` alone: the order of equal keys shows in `minor`.
  check_case<user_key, false>(layout::uneven, distribution::few_distinct, 90001);
  check_case<user_key, false>(layout::even, distribution::random, 90001);
  // In place, and the allocating overload.
  check_case<std::uint32_t, true>(layout::even, distribution::random, 40000, {true, false});
  check_case<std::uint64_t, false>(layout::uneven, distribution::random, 40000, {false, true});
}

TEST(NcclSort, OneRankIsTheLocalSort) {
  REQUIRE_GPUS(1);
  const std::uint64_t seed = fresh_seed();
  const std::vector<std::int64_t> sizes = {12345};
  const auto keys = global_keys<std::uint32_t>(layout::even, distribution::random, sizes, seed, tilesort::less{});
  const auto& comms = communicators(1);
  ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  sort_and_check<std::uint32_t, true>(0, comms[0], keys, sizes, tilesort::less{}, {});
}

// ------------------------------------------------------------------ errors
enum class fault { null_keys, negative_count, small_temp, other_key_type };

// Rank `bad` makes `f`; every rank must return cudaErrorInvalidValue with its
// output untouched. Then the same communicators sort correctly.
void check_fault(int ranks, int bad, fault f) {
  on_every_rank(ranks, [&](int rank, ncclComm_t comm) {
    cudaStream_t stream;
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const std::int64_t n = 1000;
    const bool wide = f == fault::other_key_type && rank == bad;
    device_buffer<std::uint64_t> keys_in(make_keys<std::uint64_t>(n, distribution::random, 7 + rank));
    device_buffer<std::uint64_t> keys_out(n);
    keys_out.poison();
    const auto before = keys_out.download();
    tilesort::nccl::sort_options options;
    options.timeout_ms = wait_ms;
    std::size_t bytes = 0;
    cudaError_t error;
    if (wide) {
      ASSERT_EQ(cudaSuccess, tilesort::nccl::sort_keys(nullptr, bytes, keys_in.data(), keys_out.data(), n, comm));
      device_buffer<unsigned char> temp(bytes);
      error = tilesort::nccl::sort_keys(temp.data(), bytes, keys_in.data(), keys_out.data(), n, comm, tilesort::less{},
                                        stream, options);
    } else {
      auto* in = reinterpret_cast<const std::uint32_t*>(keys_in.data());
      auto* out = reinterpret_cast<std::uint32_t*>(keys_out.data());
      ASSERT_EQ(cudaSuccess, tilesort::nccl::sort_keys(nullptr, bytes, in, out, n, comm));
      device_buffer<unsigned char> temp(bytes);
      std::int64_t count = n;
      if (rank == bad && f == fault::null_keys) in = nullptr;
      if (rank == bad && f == fault::negative_count) count = -1;
      if (rank == bad && f == fault::small_temp) bytes -= 1;
      error = tilesort::nccl::sort_keys(temp.data(), bytes, in, out, count, comm, tilesort::less{}, stream, options);
    }
    EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
    EXPECT_EQ(cudaErrorInvalidValue, error) << "rank " << rank;
    EXPECT_EQ(before, keys_out.download()) << "rank " << rank << ": output written after an error";
    cudaStreamDestroy(stream);
  });
}

TEST(NcclSortErrors, OneBadRankFailsEveryRankWithoutHanging) {
  REQUIRE_GPUS(2);
  for (int ranks : rank_counts()) {
    for (fault f : {fault::null_keys, fault::negative_count, fault::small_temp, fault::other_key_type}) {
      SCOPED_TRACE(::testing::Message() << ranks << " ranks, fault " << int(f));
      check_fault(ranks, ranks - 1, f);
      check_fault(ranks, 0, f);
    }
    // The communicators still work.
    const std::vector<std::int64_t> sizes(ranks, 5000);
    const auto keys = global_keys<std::uint32_t>(layout::even, distribution::random, sizes, 3, tilesort::less{});
    on_every_rank(ranks, [&](int rank, ncclComm_t comm) {
      sort_and_check<std::uint32_t, false>(rank, comm, keys, sizes, tilesort::less{}, {});
    });
  }
}

TEST(NcclSortErrors, NullCommunicatorIsRejectedLocally) {
  std::size_t bytes = 0;
  EXPECT_EQ(cudaErrorInvalidValue,
            tilesort::nccl::sort_keys<std::uint32_t>(nullptr, bytes, nullptr, nullptr, 0, ncclComm_t{}));
}

// ------------------------------------------------------------------ one process per rank
// The worker's side: TILESORT_NCCL_WORKER=rank, _RANKS, _ID_FILE, _SEED set by the parent.
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

TEST(NcclSortProcessWorker, SortsItsShard) {
  if (std::getenv("TILESORT_NCCL_WORKER") == nullptr)
    GTEST_SKIP() << "worker of NcclSortProcesses.OneProcessPerRank (runs only as its child)";
  const int rank = std::stoi(env_or("TILESORT_NCCL_WORKER", "0"));
  const int ranks = std::stoi(env_or("TILESORT_NCCL_WORKER_RANKS", "2"));
  const std::string id_file = env_or("TILESORT_NCCL_WORKER_ID_FILE", "");
  const std::uint64_t seed = std::stoull(env_or("TILESORT_NCCL_WORKER_SEED", "1"));
  ASSERT_EQ(cudaSuccess, cudaSetDevice(rank));
  keep_multicast_off();
  ncclUniqueId id;
  if (rank == 0) {
    ASSERT_EQ(ncclSuccess, ncclGetUniqueId(&id));
    const std::string partial = id_file + ".partial";
    std::ofstream(partial, std::ios::binary).write(reinterpret_cast<const char*>(&id), sizeof(id));
    ASSERT_EQ(0, std::rename(partial.c_str(), id_file.c_str()));  // the others never read half an id
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::ifstream in;
    while (!(in = std::ifstream(id_file, std::ios::binary)).is_open()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no ncclUniqueId from rank 0 in " << id_file;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    in.read(reinterpret_cast<char*>(&id), sizeof(id));
    ASSERT_TRUE(in.good());
  }
  ncclComm_t comm;
  ASSERT_EQ(ncclSuccess, ncclCommInitRank(&comm, ranks, id, rank));
  {
    const auto sizes = shard_sizes(layout::uneven, ranks, 150001);
    const auto keys = global_keys<std::uint32_t>(layout::uneven, distribution::random, sizes, seed, tilesort::less{});
    sort_and_check<std::uint32_t, true>(rank, comm, keys, sizes, tilesort::less{}, {});
  }
  {
    const auto sizes = shard_sizes(layout::skew, ranks, 60000);
    const auto keys = global_keys<user_key>(layout::skew, distribution::few_distinct, sizes, seed + 1, user_key_less{});
    sort_and_check<user_key, false>(rank, comm, keys, sizes, user_key_less{}, {});
  }
  {
    const auto sizes = shard_sizes(layout::even, ranks, (std::int64_t(1) << 18) + 5);
    const auto keys = global_keys<std::uint64_t>(layout::even, distribution::few_distinct, sizes, seed + 2,
                                                 tilesort::less{});
    sort_and_check<std::uint64_t, false>(rank, comm, keys, sizes, tilesort::less{}, {true, false});
  }
  // A bad last rank: every process returns the error, none hangs.
  {
    const std::int64_t n = 100;
    device_buffer<std::uint32_t> keys(make_keys<std::uint32_t>(n, distribution::random, seed + rank));
    std::size_t bytes = 0;
    ASSERT_EQ(cudaSuccess, tilesort::nccl::sort_keys(nullptr, bytes, keys.data(), keys.data(), n, comm));
    device_buffer<unsigned char> temp(bytes);
    tilesort::nccl::sort_options options;
    options.timeout_ms = wait_ms;
    const std::uint32_t* in = rank == ranks - 1 ? nullptr : keys.data();
    EXPECT_EQ(cudaErrorInvalidValue,
              tilesort::nccl::sort_keys(temp.data(), bytes, in, keys.data(), n, comm, tilesort::less{}, 0, options));
  }
  EXPECT_EQ(ncclSuccess, ncclCommDestroy(comm));
}

// The parent's side: one worker process per GPU (at most 8), their output in
// files beside the id file; each must exit 0 within four minutes.
TEST(NcclSortProcesses, OneProcessPerRank) {
  REQUIRE_GPUS(2);
  const int ranks = std::min(gpu_count(), 8);
  char dir_template[] = "/tmp/tilesort-nccl-XXXXXX";
  ASSERT_NE(nullptr, mkdtemp(dir_template));
  const std::string dir = dir_template;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(::testing::Message() << ranks << " processes, seed " << seed << ", logs in " << dir);
  keep_multicast_off();
  std::vector<pid_t> pids(ranks, -1);
  for (int rank = 0; rank < ranks; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back("TILESORT_NCCL_WORKER=" + std::to_string(rank));
    env.push_back("TILESORT_NCCL_WORKER_RANKS=" + std::to_string(ranks));
    env.push_back("TILESORT_NCCL_WORKER_ID_FILE=" + dir + "/nccl-id");
    env.push_back("TILESORT_NCCL_WORKER_SEED=" + std::to_string(seed));
    std::vector<char*> envp;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe = "/proc/self/exe", filter = "--gtest_filter=NcclSortProcessWorker.*";
    char* argv[] = {exe.data(), filter.data(), nullptr};
    const std::string log = dir + "/rank" + std::to_string(rank) + ".log";
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    ASSERT_EQ(0, posix_spawn(&pids[rank], exe.c_str(), &files, nullptr, argv, envp.data())) << "rank " << rank;
    posix_spawn_file_actions_destroy(&files);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  std::vector<int> status(ranks, -1);
  int running = ranks;
  while (running > 0) {
    for (int rank = 0; rank < ranks; ++rank) {
      if (pids[rank] < 0) continue;
      int s = 0;
      if (waitpid(pids[rank], &s, WNOHANG) == pids[rank]) {
        status[rank] = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
        pids[rank] = -1;
        --running;
      }
    }
    if (running > 0 && std::chrono::steady_clock::now() > deadline) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL);
      ADD_FAILURE() << "worker processes still running after 4 minutes: killed";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (int rank = 0; rank < ranks; ++rank) {
    std::ifstream in(dir + "/rank" + std::to_string(rank) + ".log");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(0, status[rank]) << "rank " << rank << " failed; its output:\n" << text.str();
    EXPECT_NE(std::string::npos, text.str().find("[  PASSED  ] 1 test")) << "rank " << rank << " ran no test";
  }
}

}  // namespace
