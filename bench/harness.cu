// bench/harness.cu — the non-template half of the harness: option helpers,
// record (de)serialisation, the timing loops, device information and the copy
// ceiling. See bench.cuh for what each piece is for.
#include <cuda/std/version>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench.cuh"

namespace bench {

// ------------------------------------------------------------------ errors

void throw_cuda(cudaError_t code, const char* expr, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  std::ostringstream s;
  s << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ") from " << expr << " at "
    << (base ? base + 1 : file) << ":" << line;
  throw cuda_failure(code, s.str());
}

// ------------------------------------------------------------------ options

namespace {
bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}
}  // namespace

bool options::wants_family(const std::string& f) const { return families.empty() || contains(families, f); }
bool options::wants_type(const std::string& t) const { return types.empty() || contains(types, t); }
bool options::wants_dist(const std::string& d, bool default_on) const {
  return dists.empty() ? default_on : contains(dists, d);
}

std::int64_t pow2(int k) { return std::int64_t(1) << k; }
std::int64_t pow10(int k) {
  std::int64_t v = 1;
  while (k-- > 0) v *= 10;
  return v;
}

namespace {
// One factor: "2^20", "1e6", "4096".
std::int64_t parse_factor(const std::string& f) {
  if (f.empty()) return -1;
  char* end = nullptr;
  const auto caret = f.find('^');
  if (caret != std::string::npos) {
    const long long base = std::strtoll(f.substr(0, caret).c_str(), &end, 10);
    if (*end) return -1;
    const long long exp = std::strtoll(f.substr(caret + 1).c_str(), &end, 10);
    if (*end || base < 1 || exp < 0 || exp > 62) return -1;
    long double v = std::pow((long double)base, (long double)exp);
    if (v > 9.2e18L) return -1;
    return std::int64_t(std::llround(v));
  }
  const auto e = f.find_first_of("eE");
  if (e != std::string::npos) {
    const double v = std::strtod(f.c_str(), &end);
    if (*end || v < 0 || v > 9.2e18) return -1;
    return std::int64_t(std::llround(v));
  }
  const long long v = std::strtoll(f.c_str(), &end, 10);
  if (*end || v < 0) return -1;
  return v;
}
// A product of factors: "3*2^20".
std::int64_t parse_term(const std::string& t) {
  std::int64_t v = 1;
  std::size_t pos = 0;
  while (true) {
    const auto star = t.find('*', pos);
    const std::int64_t f = parse_factor(t.substr(pos, star == std::string::npos ? std::string::npos : star - pos));
    if (f < 0) return -1;
    v *= f;
    if (star == std::string::npos) return v;
    pos = star + 1;
  }
}
}  // namespace

std::int64_t parse_size(const std::string& text) {
  // Sums and differences of terms: "2^24+1", "2^20-3".
  std::int64_t total = 0;
  std::size_t pos = 0;
  int sign = 1;
  while (pos <= text.size()) {
    std::size_t next = text.find_first_of("+-", pos + 1);
    // A '-' or '+' right after 'e' belongs to an exponent.
    while (next != std::string::npos && (text[next - 1] == 'e' || text[next - 1] == 'E'))
      next = text.find_first_of("+-", next + 1);
    const std::int64_t t = parse_term(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (t < 0) return -1;
    total += sign * t;
    if (next == std::string::npos) break;
    sign = text[next] == '-' ? -1 : 1;
    pos = next + 1;
  }
  return total >= 0 ? total : -1;
}

std::string size_name(std::int64_t n) {
  if (n <= 0) return std::to_string(n);
  auto log2_exact = [](std::int64_t v) {
    if (v <= 0 || (v & (v - 1))) return -1;
    int k = 0;
    while (v > 1) v >>= 1, ++k;
    return k;
  };
  if (int k = log2_exact(n); k >= 4) return "2^" + std::to_string(k);
  if (int k = log2_exact(n - 1); k >= 4) return "2^" + std::to_string(k) + "+1";
  if (int k = log2_exact(n + 1); k >= 4) return "2^" + std::to_string(k) + "-1";
  if (n % 3 == 0)
    if (int k = log2_exact(n / 3); k >= 4) return "3*2^" + std::to_string(k);
  for (int k = 1; k <= 18; ++k)
    if (pow10(k) == n) return "10^" + std::to_string(k);
  return std::to_string(n);
}

// ------------------------------------------------------------------ records

namespace {
constexpr char kSep = '\x1f';

std::string clean(std::string s) {
  for (char& c : s)
    if (c == kSep || c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == kSep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}
std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
}  // namespace

std::string record::serialize() const {
  std::ostringstream s;
  s << 'M' << kSep << case_index << kSep << clean(family) << kSep << clean(case_name) << kSep << clean(type) << kSep
    << clean(dist) << kSep << n << kSep << clean(impl) << kSep << clean(role) << kSep << clean(mode) << kSep
    << fmt_double(median_ms) << kSep << fmt_double(min_ms) << kSep << fmt_double(max_ms) << kSep << reps << kSep
    << clean(status) << kSep << clean(note) << kSep << clean(bound);
  return s.str();
}

bool record::parse(const std::string& line, record& r) {
  const auto f = split(line);
  if (f.size() != 17 || f[0] != "M") return false;
  try {
    r.case_index = std::stoi(f[1]);
    r.family = f[2];
    r.case_name = f[3];
    r.type = f[4];
    r.dist = f[5];
    r.n = std::stoll(f[6]);
    r.impl = f[7];
    r.role = f[8];
    r.mode = f[9];
    r.median_ms = std::stod(f[10]);
    r.min_ms = std::stod(f[11]);
    r.max_ms = std::stod(f[12]);
    r.reps = std::stoi(f[13]);
    r.status = f[14];
    r.note = f[15];
    r.bound = f[16];
  } catch (...) {
    return false;
  }
  return true;
}

std::string device_info::serialize() const {
  std::ostringstream s;
  s << 'H' << kSep << clean(gpu) << kSep << clean(driver) << kSep << clean(cuda_runtime) << kSep << clean(cccl)
    << kSep << clean(date) << kSep << clean(host_build) << kSep << sm_count << kSep << cc_major << kSep << cc_minor
    << kSep << host_threads << kSep << fmt_double(mem_gib) << kSep << fmt_double(l2_mib) << kSep
    << fmt_double(copy_gbps);
  return s.str();
}

bool device_info::parse(const std::string& line, device_info& d) {
  const auto f = split(line);
  if (f.size() != 14 || f[0] != "H") return false;
  try {
    d.gpu = f[1];
    d.driver = f[2];
    d.cuda_runtime = f[3];
    d.cccl = f[4];
    d.date = f[5];
    d.host_build = f[6];
    d.sm_count = std::stoi(f[7]);
    d.cc_major = std::stoi(f[8]);
    d.cc_minor = std::stoi(f[9]);
    d.host_threads = std::stoi(f[10]);
    d.mem_gib = std::stod(f[11]);
    d.l2_mib = std::stod(f[12]);
    d.copy_gbps = std::stod(f[13]);
  } catch (...) {
    return false;
  }
  return true;
}

// ------------------------------------------------------------------ keys

bool parse_dist(const std::string& s, dist& out) {
  static const std::pair<const char*, dist> names[] = {{"random", dist::random},
                                                       {"sorted", dist::sorted},
                                                       {"reversed", dist::reversed},
                                                       {"few", dist::few},
                                                       {"nearly", dist::nearly},
                                                       {"equal", dist::equal},
                                                       {"zipf", dist::zipf},
                                                       {"bits20", dist::bits20},
                                                       {"top1", dist::top1},
                                                       {"top2", dist::top2},
                                                       {"lowbit", dist::lowbit}};
  for (const auto& [name, d] : names)
    if (s == name) {
      out = d;
      return true;
    }
  return false;
}

const char* dist_name(dist d) {
  switch (d) {
    case dist::random: return "random";
    case dist::sorted: return "sorted";
    case dist::reversed: return "reversed";
    case dist::few: return "few";
    case dist::nearly: return "nearly";
    case dist::equal: return "equal";
    case dist::zipf: return "zipf";
    case dist::bits20: return "bits20";
    case dist::top1: return "top1";
    case dist::top2: return "top2";
    case dist::lowbit: return "lowbit";
  }
  return "?";
}

std::uint64_t case_seed(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return mix64(h);
}

std::string pass_bound(const harness& h, int passes, double item_bytes) {
  char b[96];
  if (passes > 0) {
    std::snprintf(b, sizeof b, "%d pass%s x %.0f B/key: %.3g GKeys/s", passes, passes == 1 ? "" : "es",
                  2 * item_bytes, h.copy_bound_gkeys(2 * item_bytes * passes));
  } else {
    std::snprintf(b, sizeof b, "copy %.3g GKeys/s", h.copy_bound_gkeys(2 * item_bytes));
  }
  return b;
}

std::string describe_check(const check_totals& t, std::uint64_t expected, bool check_order) {
  std::ostringstream s;
  if (check_order && t.violations) s << t.violations << " keys out of order";
  if (t.fingerprint != expected) {
    if (s.tellp() > 0) s << "; ";
    s << "fingerprint " << std::hex << t.fingerprint << " differs from the input's " << expected << std::dec
      << " (keys or values lost, duplicated or moved between segments)";
  }
  return s.str();
}

// ------------------------------------------------------------------ harness

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

harness::harness(const options& o, line_sink sink) : opt(o), sink_(std::move(sink)) {
  BENCH_CHECK(cudaSetDevice(0));
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  BENCH_CHECK(cudaEventCreate(&start_));
  BENCH_CHECK(cudaEventCreate(&stop_));
  BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_totals), sizeof(check_totals)));
  BENCH_CHECK(cudaMallocHost(reinterpret_cast<void**>(&h_totals), sizeof(check_totals)));
  int sms = 0;
  BENCH_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  info.sm_count = sms;
}

harness::~harness() {
  if (h_totals) cudaFreeHost(h_totals);
  if (d_totals) cudaFree(d_totals);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream) cudaStreamDestroy(stream);
}

int harness::grid_for(std::int64_t items, int threads) const {
  const std::int64_t blocks = (items + threads - 1) / threads;
  const std::int64_t cap = std::int64_t(std::max(info.sm_count, 1)) * 32;
  return int(std::max<std::int64_t>(1, std::min(blocks, cap)));
}

record harness::base_record() const {
  record r;
  r.case_index = case_index;
  r.family = family;
  r.case_name = case_name;
  r.type = type;
  r.dist = dist_label;
  r.n = n;
  r.bound = bound;
  return r;
}

void harness::emit(const record& r) { sink_(r.serialize()); }

void harness::heartbeat(const std::string& role, const std::string& impl, const std::string& what, bool force) {
  const double now =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (!force && now - last_heartbeat_s_ < 0.5) return;
  last_heartbeat_s_ = now;
  sink_(std::string("B") + kSep + std::to_string(case_index) + kSep + std::to_string(call_index - 1) + kSep +
        clean(role) + kSep + clean(impl) + kSep + clean(what));
}

namespace {
// Marks the end of one call (measure, measure_wall, report) for the parent.
struct call_scope {
  harness& h;
  line_sink& sink;
  int index;
  ~call_scope() { sink(std::string("E") + kSep + std::to_string(h.case_index) + kSep + std::to_string(index)); }
};
}  // namespace

void harness::report(const std::string& impl, const std::string& role, const std::string& status,
                     const std::string& note) {
  if (call_index++ < skip_calls) return;
  call_scope scope{*this, sink_, call_index - 1};
  record r = base_record();
  r.impl = impl;
  r.role = role;
  r.mode = "-";
  r.status = status;
  r.note = note;
  emit(r);
}

__global__ void trap_kernel() { __trap(); }

void harness::inject_fault(const std::string& kind) {
  if (kind == "abort") std::abort();
  if (kind == "trap") {
    trap_kernel<<<1, 1, 0, stream>>>();
    cudaStreamSynchronize(stream);
  }
  if (kind == "hang") spin_kernel<<<1, 1, 0, stream>>>(~0ull);  // the case's next synchronisation never returns
}

bool harness::context_broken() {
  const cudaError_t e = cudaDeviceSynchronize();
  cudaGetLastError();
  return e != cudaSuccess;
}

namespace {
void summarise(record& r, std::vector<double> times) {
  r.reps = int(times.size());
  if (times.empty()) return;
  std::sort(times.begin(), times.end());
  const std::size_t m = times.size();
  r.median_ms = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
  r.min_ms = times.front();
  r.max_ms = times.back();
}
std::string join_note(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "; " + b;
}
}  // namespace

bool harness::skipped_after_timeout(const std::string& impl, const std::string& role, const std::string& mode) {
  if (std::find(opt.skip_impls.begin(), opt.skip_impls.end(), impl) == opt.skip_impls.end()) return false;
  record r = base_record();
  r.impl = impl;
  r.role = role;
  r.mode = mode;
  r.status = "SKIP";
  r.note = "not run: it timed out earlier in this run";
  emit(r);
  return true;
}

record harness::measure(const timed_call& c) {
  record last;
  if (call_index++ < skip_calls) return last;
  call_scope scope{*this, sink_, call_index - 1};
  if (skipped_after_timeout(c.impl, c.role, "-")) return last;
  if (call_index - 1 == fault_call) {
    heartbeat(c.role, c.impl, "injected fault", true);
    inject_fault(fault_kind);
  }
  std::vector<std::string> modes;
  switch (opt.mode) {
    case timing_mode::lat: modes = {"lat"}; break;
    case timing_mode::gpu: modes = {"gpu"}; break;
    case timing_mode::both: modes = {"lat", "gpu"}; break;
    case timing_mode::automatic:
      modes = {"lat"};
      if (c.latency_rows && n <= 65536) modes.push_back("gpu");
      break;
  }
  for (const std::string& mode : modes) {
    record r = base_record();
    r.impl = c.impl;
    r.role = c.role;
    r.mode = mode;
    r.note = c.note;
    r.status = "ok";
    std::vector<double> times;
    const bool gpu = mode == "gpu";
    unsigned long long spin_ns = 50000;  // 50 us: longer than enqueueing a few launches
    bool host_waits = false;             // the call waits on the GPU itself: gpu mode can't hide the host
    bool broken = false;
    try {
      const int total = opt.warmups + opt.reps;
      for (int rep = 0; rep < total; ++rep) {
        heartbeat(c.role, c.impl, "[" + mode + "] rep " + std::to_string(rep + 1) + "/" + std::to_string(total),
                  rep == 0 && mode == modes.front());
        cudaGetLastError();
        c.restore();
        BENCH_CHECK(cudaStreamSynchronize(stream));
        if (gpu) {
          spin_kernel<<<1, 1, 0, stream>>>(spin_ns);
          BENCH_CHECK(cudaGetLastError());
        }
        BENCH_CHECK(cudaEventRecord(start_, stream));
        const cudaError_t call_error = c.call(stream);
        const cudaError_t record_error = cudaEventRecord(stop_, stream);
        if (call_error != cudaSuccess) {
          throw cuda_failure(call_error, std::string("the call returned ") + cudaGetErrorName(call_error) + " (" +
                                             cudaGetErrorString(call_error) + ")");
        }
        BENCH_CHECK(record_error);
        BENCH_CHECK(cudaPeekAtLastError());  // a launch error the call did not return
        bool spin_covered = true;
        if (gpu) {
          spin_covered = cudaEventQuery(start_) == cudaErrorNotReady;
          cudaGetLastError();  // a query's "not ready" is not an error
        }
        BENCH_CHECK(cudaEventSynchronize(stop_));
        BENCH_CHECK(cudaGetLastError());
        float ms = 0;
        BENCH_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        std::string why;
        if (!c.verify(why)) {
          r.status = "FAIL";
          r.note = join_note(r.note, "repetition " + std::to_string(rep + 1) + ": " + why);
          break;
        }
        if (gpu && !spin_covered && !host_waits) {
          // The spin ended before the call was enqueued: host time leaked into
          // the measurement. Redo this repetition with a longer spin.
          if (spin_ns < 4000000ull) {
            spin_ns *= 4;
            --rep;
            continue;
          }
          host_waits = true;
          spin_ns = 50000;
          r.note = join_note(r.note, "synchronous call: its gpu-mode time includes host work");
        }
        if (rep >= opt.warmups) times.push_back(ms);
      }
    } catch (const std::exception& e) {
      r.status = "ERROR";
      r.note = join_note(r.note, e.what());
      broken = context_broken();
      if (broken) r.note = join_note(r.note, "CUDA context lost: a new worker goes on with the next measurement");
    }
    summarise(r, std::move(times));
    emit(r);
    if (broken) throw context_lost(r.note);
    last = r;
  }
  return last;
}

record harness::measure_wall(const wall_call& c) {
  if (call_index++ < skip_calls) return record{};
  call_scope scope{*this, sink_, call_index - 1};
  if (skipped_after_timeout(c.impl, c.role, "wall")) return record{};
  if (call_index - 1 == fault_call) {
    heartbeat(c.role, c.impl, "injected fault", true);
    inject_fault(fault_kind);
  }
  record r = base_record();
  r.impl = c.impl;
  r.role = c.role;
  r.mode = "wall";
  r.note = c.note;
  r.status = "ok";
  std::vector<double> times;
  bool broken = false;
  int warmups = c.warmups, total = c.warmups + c.reps;
  try {
    for (int rep = 0; rep < total; ++rep) {
      heartbeat(c.role, c.impl, "[wall] rep " + std::to_string(rep + 1) + "/" + std::to_string(total), rep == 0);
      c.restore();
      const auto t0 = std::chrono::steady_clock::now();
      c.call();
      const auto t1 = std::chrono::steady_clock::now();
      const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      std::string why;
      if (!c.verify(why)) {
        r.status = "FAIL";
        r.note = join_note(r.note, "repetition " + std::to_string(rep + 1) + ": " + why);
        break;
      }
      if (rep < warmups && ms > c.long_run_s * 1e3) {
        // Too slow to repeat often: keep this run and do two more.
        warmups = rep;
        total = rep + 3;
        r.note = join_note(r.note, "long run: 3 repetitions");
      }
      if (rep >= warmups) times.push_back(ms);
    }
  } catch (const std::exception& e) {
    r.status = "ERROR";
    r.note = join_note(r.note, e.what());
    broken = context_broken();
  }
  summarise(r, std::move(times));
  emit(r);
  if (broken) throw context_lost(r.note);
  return r;
}

namespace {
std::string driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(f, line)) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..."
    // "NVRM version: NVIDIA UNIX [Open] Kernel Module [for x86_64]  580.159.04  Release Build ..."
    std::istringstream s(line);
    std::string token;
    while (s >> token) {
      const bool version = !token.empty() && token.find('.') != std::string::npos &&
                           token.find_first_not_of("0123456789.") == std::string::npos;
      if (version) return token;
    }
  }
  int d = 0;
  cudaDriverGetVersion(&d);
  return "CUDA " + std::to_string(d / 1000) + "." + std::to_string(d % 1000 / 10) + " driver";
}
}  // namespace

void harness::fill_device_info() {
  cudaDeviceProp p{};
  BENCH_CHECK(cudaGetDeviceProperties(&p, 0));
  info.gpu = p.name;
  info.sm_count = p.multiProcessorCount;
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  info.mem_gib = double(p.totalGlobalMem) / double(1ull << 30);
  info.l2_mib = double(p.l2CacheSize) / double(1 << 20);
  info.driver = driver_version();
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  info.cuda_runtime = std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10);
#ifdef CCCL_VERSION
  info.cccl = std::to_string(CCCL_VERSION / 1000000) + "." + std::to_string(CCCL_VERSION / 1000 % 1000) + "." +
              std::to_string(CCCL_VERSION % 1000);
#else
  info.cccl = "?";
#endif
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  info.date = date;
#ifdef __OPTIMIZE__
  info.host_build = "host code optimised";
#else
  info.host_build = "HOST CODE UNOPTIMISED (-O0): CPU sort rows are ~3x slow; configure with -DCMAKE_BUILD_TYPE=Release";
#endif
  info.host_threads = int(std::thread::hardware_concurrency());
}

double harness::measure_copy_gbps() {
  heartbeat("ceiling", "cudaMemcpyAsync D2D 1 GiB", "startup", true);
  for (std::size_t bytes : {std::size_t(1) << 30, std::size_t(1) << 28}) {
    try {
      dbuf<unsigned char> a(bytes), b(bytes);
      BENCH_CHECK(cudaMemsetAsync(a.get(), 1, bytes, stream));
      std::vector<double> times;
      for (int rep = 0; rep < 2 + 7; ++rep) {
        BENCH_CHECK(cudaStreamSynchronize(stream));
        BENCH_CHECK(cudaEventRecord(start_, stream));
        BENCH_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream));
        BENCH_CHECK(cudaEventRecord(stop_, stream));
        BENCH_CHECK(cudaEventSynchronize(stop_));
        float ms = 0;
        BENCH_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        if (rep >= 2) times.push_back(ms);
      }
      std::sort(times.begin(), times.end());
      const double ms = times[times.size() / 2];
      return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
    } catch (const cuda_failure& e) {
      if (e.code != cudaErrorMemoryAllocation) throw;
      cudaGetLastError();
    }
  }
  return 0;
}

}  // namespace bench
