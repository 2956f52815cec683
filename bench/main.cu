// bench/main.cu — tilesort-bench's command line and driver.
//
// The parent process never creates a CUDA context. It builds the list of cases
// (names only), starts a worker process (this program with --worker) that runs
// them in order and streams one line per record through a pipe, and prints the
// table, JSON and CSV from those records. If a case crashes the worker (or
// corrupts its CUDA context) or a repetition runs past --timeout, the parent
// records CRASH/TIMEOUT for that case and starts a new worker at the next one,
// so one bad kernel never costs the rest of the run.
//
// Lines on the pipe: H (device header), S i (case i starts), B i what
// (heartbeat: a repetition starts), M ... (a record), D i (case i done), Q (all
// done).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "bench.cuh"

namespace bench {
namespace {

const char* const kFamilies[] = {"warp",   "block",   "segmented", "segments", "merge", "sample",
                                 "bitonic", "locality", "whole",    "radix",    "host"};
const char* const kTypes[] = {"u8",  "u16", "u32",     "i32",        "u64",     "i64",   "f16",   "bf16",
                              "f32", "f64", "pairs32", "pairs32_64", "pairs64", "struct"};
const char* const kDists[] = {"random", "sorted", "reversed", "few",  "nearly", "equal",
                              "zipf",   "bits20", "top1",     "top2", "lowbit"};

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tilesort-bench [options]\n"
               "\n"
               "Times tilesort side by side with CUB, Thrust and std::sort; verifies every repetition.\n"
               "\n"
               "  --quick            the small set the GPU check runs (about 35-40 s on an H100)\n"
               "  --family LIST      warp,block,segmented,segments,merge,sample,bitonic,locality,whole,radix,\n"
               "                     host (default: all, host only where named with --quick;\n"
               "                     segmented = uniform lengths, segments = the general layouts of\n"
               "                     BASELINES.md, host = host-resident arrays, host_sort_*)\n"
               "  --host-budget SIZE family host: the device memory budget in bytes (default 2^32)\n"
               "  --sizes LIST       e.g. 2^20,2^24+1,3*2^20,10^6,1e7,4096 (default: per family)\n"
               "  --types LIST       u8,u16,u32,i32,u64,i64,f16,bf16,f32,f64,pairs32,pairs32_64,pairs64,struct\n"
               "                     (default: per family)\n"
               "  --dist LIST        random,sorted,reversed,few,nearly,equal,zipf,bits20,top1,top2,lowbit\n"
               "                     (default: merge all five, locality nearly/sorted/random,\n"
               "                     other families random)\n"
               "  --cases LIST       only these cases of the selection, numbered as --list\n"
               "                     prints them (e.g. --family segments --cases 18)\n"
               "  --reps N           median of N timed repetitions (default 9; whole: 5)\n"
               "  --warmups N        untimed repetitions first (default 2; whole: 1)\n"
               "  --mode M           lat: from an idle GPU, host launch cost included\n"
               "                     gpu: the stream is held by a spin kernel while the call is\n"
               "                          enqueued, so only GPU time counts\n"
               "                     both: both rows everywhere\n"
               "                     (default: lat, plus gpu rows for n <= 2^16 in merge and bitonic)\n"
               "  --json FILE        write every record as JSON (for bench/plot.py)\n"
               "  --csv FILE         write every record as CSV\n"
               "  --timeout S        a worker that makes no progress for S seconds (a hung\n"
               "                     repetition) is killed; the run goes on after that measurement,\n"
               "                     and skips that implementation from then on (default: 20 with\n"
               "                     --quick, else 120)\n"
               "  --inline           run the cases in this process (no worker; no timeout)\n"
               "  --list             print the selected cases and exit (needs no GPU)\n"
               "  --help\n"
               "\n"
               "Exit status: 0 all verified, 1 a FAIL/ERROR/CRASH/TIMEOUT, 2 usage error or no CUDA device.\n"
               "Testing the recovery paths: TILESORT_BENCH_FAULT=abort@2,trap@3.1,hang@4.0 (case number as in\n"
               "--list, optionally .measurement index within the case) makes the worker fail there on purpose.\n");
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == '\x1f')
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

template <std::size_t N>
bool check_names(const std::vector<std::string>& list, const char* const (&known)[N], const char* what,
                 std::string& error) {
  for (const auto& s : list) {
    bool ok = false;
    for (const char* k : known) ok = ok || s == k;
    if (!ok) {
      error = std::string("unknown ") + what + " '" + s + "'";
      return false;
    }
  }
  return true;
}

bool parse_args(int argc, char** argv, options& opt, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        error = std::string(name) + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--family" || a == "--families") {
      const char* v = value("--family");
      if (!v) return false;
      opt.families = split_list(v);
      if (!check_names(opt.families, kFamilies, "family", error)) return false;
    } else if (a == "--sizes") {
      const char* v = value("--sizes");
      if (!v) return false;
      for (const auto& s : split_list(v)) {
        const std::int64_t n = parse_size(s);
        if (n < 0) {
          error = "bad size '" + s + "'";
          return false;
        }
        opt.sizes.push_back(n);
      }
    } else if (a == "--types") {
      const char* v = value("--types");
      if (!v) return false;
      opt.types = split_list(v);
      if (!check_names(opt.types, kTypes, "type", error)) return false;
    } else if (a == "--dist" || a == "--dists") {
      const char* v = value("--dist");
      if (!v) return false;
      opt.dists = split_list(v);
      if (!check_names(opt.dists, kDists, "distribution", error)) return false;
    } else if (a == "--cases") {
      const char* v = value("--cases");
      if (!v) return false;
      for (const auto& c : split_list(v)) {
        const int number = std::atoi(c.c_str());
        if (number < 1) {
          error = "bad case number '" + c + "' (see --list)";
          return false;
        }
        opt.case_numbers.push_back(number);
      }
    } else if (a == "--reps") {
      const char* v = value("--reps");
      if (!v) return false;
      opt.reps = std::atoi(v);
      opt.reps_given = true;
      if (opt.reps < 1) {
        error = "--reps must be >= 1";
        return false;
      }
    } else if (a == "--host-budget") {
      const char* v = value("--host-budget");
      if (!v) return false;
      const std::int64_t bytes = parse_size(v);
      if (bytes <= 0) {
        error = "bad --host-budget '" + std::string(v) + "' (bytes, e.g. 2^32)";
        return false;
      }
      opt.host_budget = std::size_t(bytes);
    } else if (a == "--warmups") {
      const char* v = value("--warmups");
      if (!v) return false;
      opt.warmups = std::atoi(v);
      if (opt.warmups < 0) {
        error = "--warmups must be >= 0";
        return false;
      }
    } else if (a == "--mode") {
      const char* v = value("--mode");
      if (!v) return false;
      const std::string m = v;
      if (m == "lat") {
        opt.mode = timing_mode::lat;
      } else if (m == "gpu") {
        opt.mode = timing_mode::gpu;
      } else if (m == "both") {
        opt.mode = timing_mode::both;
      } else if (m == "auto") {
        opt.mode = timing_mode::automatic;
      } else {
        error = "--mode is lat, gpu or both";
        return false;
      }
    } else if (a == "--json") {
      const char* v = value("--json");
      if (!v) return false;
      opt.json_path = v;
    } else if (a == "--csv") {
      const char* v = value("--csv");
      if (!v) return false;
      opt.csv_path = v;
    } else if (a == "--timeout") {
      const char* v = value("--timeout");
      if (!v) return false;
      opt.timeout_s = std::atof(v);
      if (!(opt.timeout_s > 0)) {
        error = "--timeout must be > 0";
        return false;
      }
    } else if (a == "--inline") {
      opt.inline_run = true;
    } else if (a == "--list") {
      opt.list_only = true;
    } else if (a == "--worker") {  // internal: --worker FIRST LAST
      if (i + 2 >= argc) {
        error = "--worker needs two values";
        return false;
      }
      opt.worker = true;
      opt.first_case = std::atoi(argv[++i]);
      opt.last_case = std::atoi(argv[++i]);
    } else if (a == "--copy-gbps") {  // internal
      const char* v = value("--copy-gbps");
      if (!v) return false;
      opt.copy_gbps = std::atof(v);
    } else if (a == "--skip-impl") {  // internal, repeated
      const char* v = value("--skip-impl");
      if (!v) return false;
      opt.skip_impls.push_back(v);
    } else if (a == "--resume-skip") {  // internal
      const char* v = value("--resume-skip");
      if (!v) return false;
      opt.resume_skip = std::atoi(v);
    } else if (a == "--result-fd") {  // internal
      const char* v = value("--result-fd");
      if (!v) return false;
      opt.result_fd = std::atoi(v);
    } else {
      error = "unknown option '" + a + "'";
      return false;
    }
  }
  return true;
}

std::vector<bench_case> build_cases(const options& opt) {
  std::vector<bench_case> cases;
  add_tile_cases(opt, cases);
  add_segmented_cases(opt, cases);
  add_segments_general_cases(opt, cases);
  add_merge_cases(opt, cases);
  add_sample_cases(opt, cases);
  add_bitonic_cases(opt, cases);
  add_locality_cases(opt, cases);
  add_whole_cases(opt, cases);
  add_radix_cases(opt, cases);
  add_host_cases(opt, cases);
  if (opt.case_numbers.empty()) return cases;
  std::vector<bench_case> chosen;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (std::find(opt.case_numbers.begin(), opt.case_numbers.end(), int(i + 1)) != opt.case_numbers.end())
      chosen.push_back(cases[i]);
  return chosen;
}

// ------------------------------------------------------------------ worker

// Testing hook for the recovery paths: TILESORT_BENCH_FAULT="abort@2,trap@3.1,hang@4.0"
// makes the worker abort, break its CUDA context, or hang on the GPU at case 2
// (1-based, as --list numbers them) before it starts, at its second
// measurement (0-based call index), and so on. The parent must record CRASH,
// ERROR or TIMEOUT there and go on (inside the case when a measurement died).
struct fault {
  std::string kind;
  int call = -1;  // -1: before the case starts
};
fault fault_for_case(int number) {
  const char* env = std::getenv("TILESORT_BENCH_FAULT");
  if (!env) return {};
  for (const std::string& item : split_list(env)) {
    const auto at = item.find('@');
    if (at == std::string::npos || std::atoi(item.c_str() + at + 1) != number) continue;
    const auto dot = item.find('.', at);
    return {item.substr(0, at), dot == std::string::npos ? -1 : std::atoi(item.c_str() + dot + 1)};
  }
  return {};
}

int run_worker(const options& opt, const std::vector<bench_case>& cases, int first, int last, const line_sink& sink) {
  std::unique_ptr<harness> h;
  try {
    h = std::make_unique<harness>(opt, sink);
    h->fill_device_info();
    h->info.copy_gbps = opt.copy_gbps > 0 ? opt.copy_gbps : h->measure_copy_gbps();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilesort-bench: cannot use the CUDA device: %s\n", e.what());
    return 2;
  }
  sink(h->info.serialize());
  const int total = int(cases.size());
  for (int i = first; i < last && i < total; ++i) {
    const bench_case& c = cases[i];
    sink("S\x1f" + std::to_string(i));
    std::fprintf(stderr, "[%d/%d] %s %s %s n=%s %s\n", i + 1, total, c.family.c_str(), c.case_name.c_str(),
                 c.type.c_str(), size_name(c.n).c_str(), c.dist.c_str());
    std::fflush(stderr);
    h->case_index = i;
    h->family = c.family;
    h->case_name = c.case_name;
    h->type = c.type;
    h->dist_label = c.dist;
    h->n = c.n;
    h->bound.clear();
    h->call_index = 0;
    h->skip_calls = i == first ? opt.resume_skip : 0;
    bool lost = false;
    try {
      const fault f = fault_for_case(i + 1);
      h->fault_kind = f.kind;
      h->fault_call = f.call >= h->skip_calls ? f.call : -1;  // once: not again when resumed past it
      if (!f.kind.empty() && f.call < 0 && h->skip_calls == 0) h->inject_fault(f.kind);
      c.run(*h);
    } catch (const context_lost&) {
      // The broken call is recorded; a new worker goes on inside this case.
      sink("R\x1f" + std::to_string(i) + "\x1f" + std::to_string(h->call_index));
      return 3;
    } catch (const std::exception& e) {
      h->skip_calls = 0;  // this record is new even in a resumed case
      h->report("(case setup)", "tilesort", "ERROR", e.what());
      lost = h->context_broken();
    }
    if (!lost) lost = h->context_broken();
    sink("D\x1f" + std::to_string(i));
    if (lost) return 3;  // the parent starts a new worker at the next case
  }
  sink("Q");
  return 0;
}

// ------------------------------------------------------------------ parent: records, table, files

std::string fmt_gkeys(double g) {
  char b[32];
  if (g <= 0) return "-";
  if (g >= 100)
    std::snprintf(b, sizeof b, "%.0f", g);
  else if (g >= 10)
    std::snprintf(b, sizeof b, "%.1f", g);
  else if (g >= 1)
    std::snprintf(b, sizeof b, "%.2f", g);
  else if (g >= 0.01)
    std::snprintf(b, sizeof b, "%.3f", g);
  else
    std::snprintf(b, sizeof b, "%.2g", g);
  return b;
}

std::string fmt_time(double ms) {
  char b[32];
  if (ms <= 0) return "-";
  if (ms < 1)
    std::snprintf(b, sizeof b, "%.1fus", ms * 1e3);
  else if (ms < 1000)
    std::snprintf(b, sizeof b, "%.3gms", ms);
  else
    std::snprintf(b, sizeof b, "%.3gs", ms * 1e-3);
  return b;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += char(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += char(c);
    }
  }
  return o;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

bool counts_as_failure(const std::string& status) {
  return status == "FAIL" || status == "ERROR" || status == "CRASH" || status == "TIMEOUT";
}

class collector {
 public:
  collector(const options& opt, const std::vector<bench_case>& cases)
      : opt_(opt), cases_(cases), records_(cases.size()), done_(cases.size(), false) {}

  device_info info;
  int headers = 0;
  int current_case = -1;  // started, not done
  int current_call = -1;  // the call of current_case that sent the last heartbeat
  bool current_call_ended = false;
  std::string current_role, current_impl, current_what;
  int resume_case = -1, resume_call = 0;  // a worker asked to be restarted inside a case
  int last_done = -1;
  bool quit = false;

  void reset_worker_state() {
    current_case = current_call = resume_case = -1;
    current_call_ended = false;
    resume_call = 0;
    current_role.clear();
    current_impl.clear();
    current_what.clear();
  }

  void handle(const std::string& line) {
    if (line.empty()) return;
    switch (line[0]) {
      case 'H': {
        device_info d;
        if (device_info::parse(line, d)) {
          if (headers == 0) {
            info = d;
            print_header();
          }
          ++headers;
        }
        break;
      }
      case 'S':
        current_case = std::atoi(line.c_str() + 2);
        current_call = -1;
        current_call_ended = false;
        break;
      case 'B': {  // B case call role impl what
        const auto f = split_fields(line);
        if (f.size() == 6 && std::atoi(f[1].c_str()) == current_case) {
          current_call = std::atoi(f[2].c_str());
          current_call_ended = false;
          current_role = f[3];
          current_impl = f[4];
          current_what = f[5];
        }
        break;
      }
      case 'E': {  // E case call
        const auto f = split_fields(line);
        if (f.size() == 3 && std::atoi(f[1].c_str()) == current_case && std::atoi(f[2].c_str()) == current_call)
          current_call_ended = true;
        break;
      }
      case 'R': {  // R case next-call
        const auto f = split_fields(line);
        if (f.size() == 3) {
          resume_case = std::atoi(f[1].c_str());
          resume_call = std::atoi(f[2].c_str());
        }
        break;
      }
      case 'M': {
        record r;
        if (record::parse(line, r) && r.case_index >= 0 && r.case_index < int(records_.size()))
          records_[r.case_index].push_back(r);
        break;
      }
      case 'D': finish_case(std::atoi(line.c_str() + 2)); break;
      case 'Q': quit = true; break;
      default: break;
    }
  }

  // A measurement the worker could not record itself (it crashed or hung).
  void add_failure(int i, const std::string& status, const std::string& impl, const std::string& role,
                   const std::string& note) {
    const bench_case& c = cases_[i];
    record r;
    r.case_index = i;
    r.family = c.family;
    r.case_name = c.case_name;
    r.type = c.type;
    r.dist = c.dist;
    r.n = c.n;
    r.impl = impl.empty() ? "(case)" : impl;
    r.role = role.empty() ? "tilesort" : role;
    r.mode = "-";
    r.status = status;
    r.note = note;
    records_[i].push_back(r);
  }

  // A case the worker could not finish (crash, timeout, not started).
  void abandon_case(int i, const std::string& status, const std::string& impl, const std::string& note) {
    add_failure(i, status, impl, "tilesort", note);
    finish_case(i);
  }

  void finish_case(int i) {
    if (i < 0 || i >= int(done_.size()) || done_[i]) return;
    done_[i] = true;
    last_done = std::max(last_done, i);
    if (current_case == i) current_case = -1;
    print_case(i);
    write_files();
  }

  void print_header() {
    std::printf("tilesort-bench  %s\n", info.date.c_str());
    std::printf("GPU: %s, %d SMs, sm_%d%d, %.1f GiB, L2 %.0f MiB | driver %s | CUDA runtime %s | CCCL %s\n",
                info.gpu.c_str(), info.sm_count, info.cc_major, info.cc_minor, info.mem_gib, info.l2_mib,
                info.driver.c_str(), info.cuda_runtime.c_str(), info.cccl.c_str());
    std::printf("host: %d threads, %s\n", info.host_threads, info.host_build.c_str());
    std::printf("copy ceiling: %.0f GB/s (cudaMemcpyAsync D2D of 1 GiB, read+write) = %.0f GKeys/s for 4-byte keys, "
                "%.0f for 8-byte keys or 4+4-byte pairs\n",
                info.copy_gbps, info.copy_gbps / 8, info.copy_gbps / 16);
    const char* mode = opt_.mode == timing_mode::lat    ? "lat"
                       : opt_.mode == timing_mode::gpu  ? "gpu"
                       : opt_.mode == timing_mode::both ? "lat and gpu"
                                                        : "lat, plus gpu rows for n <= 2^16 (merge, bitonic)";
    std::printf("timing: %s; %d warm-ups + median of %d (whole: wall clock); input restored and output verified "
                "every repetition\n",
                mode, opt_.warmups, opt_.reps);
    std::printf("\n%-9s %-28s %-8s %-8s %-12s %-4s | %8s %9s | %-42s %8s %9s | %6s | %-34s | %s\n", "family", "case",
                "type", "n", "layout", "mode", "tilesort", "time", "alternative", "GKeys/s", "time", "ratio", "bound",
                "status");
    std::printf("%s\n", std::string(200, '-').c_str());
    std::fflush(stdout);
  }

  void print_row(const bench_case& c, const std::string& mode, const record* ts, const record* alt,
                 bool first_of_mode) {
    std::string status, note;
    auto add_status = [&](const record* r, const char* who) {
      if (!r) return;
      if (r->status != "ok") {
        if (!status.empty()) status += ",";
        status += r->status + "(" + who + ")";
      }
    };
    add_status(ts, "tilesort");
    add_status(alt, "alt");
    if (status.empty()) status = "ok";
    if (ts && first_of_mode && !ts->note.empty()) note = ts->note;
    if (alt && !alt->note.empty()) note += (note.empty() ? "" : " | ") + alt->note;
    std::string ratio = "-";
    if (ts && alt && ts->median_ms > 0 && alt->median_ms > 0) {
      char b[32];
      std::snprintf(b, sizeof b, "%.2f", alt->median_ms / ts->median_ms);
      ratio = b;
    }
    const std::string bound = ts ? ts->bound : (alt ? alt->bound : "");
    std::printf("%-9s %-28s %-8s %-8s %-12s %-4s | %8s %9s | %-42s %8s %9s | %6s | %-34s | %s%s%s\n",
                c.family.c_str(), c.case_name.c_str(), c.type.c_str(), size_name(c.n).c_str(), c.dist.c_str(),
                mode.c_str(), ts ? fmt_gkeys(ts->gkeys()).c_str() : "-", ts ? fmt_time(ts->median_ms).c_str() : "-",
                alt ? alt->impl.c_str() : "-", alt ? fmt_gkeys(alt->gkeys()).c_str() : "-",
                alt ? fmt_time(alt->median_ms).c_str() : "-", ratio.c_str(), bound.c_str(), status.c_str(),
                note.empty() ? "" : "  ", note.c_str());
  }

  void print_case(int i) {
    const bench_case& c = cases_[i];
    const auto& rs = records_[i];
    if (rs.empty()) {
      print_row(c, "-", nullptr, nullptr, true);
      std::fflush(stdout);
      return;
    }
    std::vector<std::string> modes;
    for (const auto& r : rs)
      if (std::find(modes.begin(), modes.end(), r.mode) == modes.end()) modes.push_back(r.mode);
    for (const auto& mode : modes) {
      const record* ts = nullptr;
      std::vector<const record*> others;
      for (const auto& r : rs) {
        if (r.mode != mode) continue;
        if (r.role == "tilesort" && !ts)
          ts = &r;
        else
          others.push_back(&r);
      }
      if (others.empty()) print_row(c, mode, ts, nullptr, true);
      bool first = true;
      for (const record* o : others) {
        print_row(c, mode, ts, o, first);
        first = false;
      }
    }
    std::fflush(stdout);
  }

  const record* tilesort_of(const record& r) const {
    for (const auto& o : records_[r.case_index])
      if (o.role == "tilesort" && o.mode == r.mode) return &o;
    return nullptr;
  }

  void write_files() const {
    if (!opt_.json_path.empty()) write_json(opt_.json_path);
    if (!opt_.csv_path.empty()) write_csv(opt_.csv_path);
  }

  void write_json(const std::string& path) const {
    const std::string tmp = path + ".tmp";
    std::ofstream f(tmp);
    if (!f) return;
    f << "{\n  \"meta\": {\"gpu\": \"" << json_escape(info.gpu) << "\", \"driver\": \"" << json_escape(info.driver)
      << "\", \"cuda_runtime\": \"" << json_escape(info.cuda_runtime) << "\", \"cccl\": \"" << json_escape(info.cccl)
      << "\", \"date\": \"" << json_escape(info.date) << "\", \"sm_count\": " << info.sm_count
      << ", \"compute_capability\": \"" << info.cc_major << "." << info.cc_minor
      << "\", \"host_threads\": " << info.host_threads << ", \"host_build\": \"" << json_escape(info.host_build)
      << "\", \"copy_gbps\": " << num(info.copy_gbps) << ", \"reps\": " << opt_.reps
      << ", \"warmups\": " << opt_.warmups << ", \"quick\": " << (opt_.quick ? "true" : "false")
      << ", \"host_budget\": " << opt_.host_budget << "},\n";
    f << "  \"results\": [";
    bool first = true;
    for (const auto& rs : records_) {
      for (const auto& r : rs) {
        const record* ts = tilesort_of(r);
        f << (first ? "\n    " : ",\n    ");
        first = false;
        f << "{\"family\": \"" << json_escape(r.family) << "\", \"case\": \"" << json_escape(r.case_name)
          << "\", \"type\": \"" << json_escape(r.type) << "\", \"n\": " << r.n << ", \"dist\": \""
          << json_escape(r.dist) << "\", \"impl\": \"" << json_escape(r.impl) << "\", \"role\": \""
          << json_escape(r.role) << "\", \"mode\": \"" << json_escape(r.mode) << "\", \"median_ms\": "
          << num(r.median_ms) << ", \"min_ms\": " << num(r.min_ms) << ", \"max_ms\": " << num(r.max_ms)
          << ", \"reps\": " << r.reps << ", \"gkeys_per_s\": " << num(r.gkeys()) << ", \"status\": \""
          << json_escape(r.status) << "\", \"bound\": \"" << json_escape(r.bound) << "\", \"note\": \""
          << json_escape(r.note) << "\"";
        if (ts && ts != &r && ts->median_ms > 0 && r.median_ms > 0) {
          f << ", \"tilesort_impl\": \"" << json_escape(ts->impl) << "\", \"tilesort_gkeys_per_s\": "
            << num(ts->gkeys()) << ", \"ratio_tilesort_over_this\": " << num(r.median_ms / ts->median_ms);
        }
        f << "}";
      }
    }
    f << "\n  ]\n}\n";
    f.close();
    std::rename(tmp.c_str(), path.c_str());
  }

  void write_csv(const std::string& path) const {
    const std::string tmp = path + ".tmp";
    std::ofstream f(tmp);
    if (!f) return;
    f << "family,case,type,n,dist,impl,role,mode,median_ms,min_ms,max_ms,reps,gkeys_per_s,status,bound,"
         "tilesort_gkeys_per_s,ratio_tilesort_over_this,note\n";
    for (const auto& rs : records_) {
      for (const auto& r : rs) {
        const record* ts = tilesort_of(r);
        const bool paired = ts && ts != &r && ts->median_ms > 0 && r.median_ms > 0;
        f << csv_field(r.family) << ',' << csv_field(r.case_name) << ',' << csv_field(r.type) << ',' << r.n << ','
          << csv_field(r.dist) << ',' << csv_field(r.impl) << ',' << csv_field(r.role) << ',' << csv_field(r.mode)
          << ',' << num(r.median_ms) << ',' << num(r.min_ms) << ',' << num(r.max_ms) << ',' << r.reps << ','
          << num(r.gkeys()) << ',' << csv_field(r.status) << ',' << csv_field(r.bound) << ','
          << (paired ? num(ts->gkeys()) : "") << ',' << (paired ? num(r.median_ms / ts->median_ms) : "") << ','
          << csv_field(r.note) << '\n';
      }
    }
    f.close();
    std::rename(tmp.c_str(), path.c_str());
  }

  // Where the whole-program GPU sort starts to beat each host sort: the
  // smallest n from which tilesort (host->host) wins at every larger size.
  void print_crossovers() const {
    std::map<std::pair<std::string, std::string>, std::map<std::int64_t, std::pair<double, double>>> table;
    for (const auto& rs : records_) {
      for (const auto& r : rs) {
        if (r.family != "whole" || r.case_name != "host->host" || r.role == "tilesort" || r.status != "ok") continue;
        if (r.impl.rfind("std::sort", 0) != 0 && r.impl.rfind("parallel", 0) != 0) continue;
        const record* ts = tilesort_of(r);
        if (!ts || ts->status != "ok") continue;
        table[{r.type, r.impl}][r.n] = {ts->median_ms, r.median_ms};
      }
    }
    for (const auto& [key, by_n] : table) {
      std::int64_t from = -1;
      for (auto it = by_n.rbegin(); it != by_n.rend(); ++it) {
        if (it->second.first < it->second.second)
          from = it->first;
        else
          break;
      }
      if (from < 0)
        std::printf("whole %s: tilesort host->host does not beat %s at the largest size measured\n",
                    key.first.c_str(), key.second.c_str());
      else
        std::printf("whole %s: tilesort host->host beats %s from n = %s on (of the sizes measured)\n",
                    key.first.c_str(), key.second.c_str(), size_name(from).c_str());
    }
  }

  void print_summary() const {
    std::map<std::string, int> counts;
    int measurements = 0, cases_run = 0;
    for (std::size_t i = 0; i < records_.size(); ++i) {
      if (done_[i]) ++cases_run;
      for (const auto& r : records_[i]) {
        ++measurements;
        ++counts[r.status];
      }
    }
    std::printf("\n== summary: %d of %zu cases run, %d measurements:", cases_run, records_.size(), measurements);
    for (const auto& [status, count] : counts) std::printf(" %d %s", count, status.c_str());
    std::printf("\n");
    for (const auto& rs : records_)
      for (const auto& r : rs)
        if (counts_as_failure(r.status))
          std::printf("%s: %s %s %s n=%s %s: %s [%s]: %s\n", r.status.c_str(), r.family.c_str(), r.case_name.c_str(),
                      r.type.c_str(), size_name(r.n).c_str(), r.dist.c_str(), r.impl.c_str(), r.mode.c_str(),
                      r.note.c_str());
    print_crossovers();
    std::printf("== %s\n", failures() ? "FAILURES (exit status 1)" : "all measurements verified");
    std::fflush(stdout);
  }

  int failures() const {
    int f = 0;
    for (const auto& rs : records_)
      for (const auto& r : rs) f += counts_as_failure(r.status);
    return f;
  }

 private:
  const options& opt_;
  const std::vector<bench_case>& cases_;
  std::vector<std::vector<record>> records_;
  std::vector<bool> done_;
};

// ------------------------------------------------------------------ parent: workers

struct worker_process {
  pid_t pid = -1;
  int fd = -1;
};

worker_process spawn_worker(int argc, char** argv, int first, int last, int skip, double copy_gbps,
                            const std::vector<std::string>& hung) {
  worker_process w;
  int fds[2];
  if (pipe(fds) != 0) return w;
  std::vector<std::string> args;
  args.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.insert(args.end(), {"--worker", std::to_string(first), std::to_string(last), "--result-fd", "3"});
  if (skip > 0) args.insert(args.end(), {"--resume-skip", std::to_string(skip)});
  for (const auto& impl : hung) args.insert(args.end(), {"--skip-impl", impl});
  if (copy_gbps > 0) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6f", copy_gbps);
    args.insert(args.end(), {"--copy-gbps", b});
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return w;
  }
  if (pid == 0) {
    // Child: the pipe's write end becomes fd 3; stdout goes to stderr so the
    // table on stdout stays clean.
    const int high = fcntl(fds[1], F_DUPFD, 10);
    close(fds[0]);
    close(fds[1]);
    dup2(high, 3);
    close(high);
    dup2(2, 1);
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    execv("/proc/self/exe", cargs.data());
    execvp(argv[0], cargs.data());
    _exit(127);
  }
  close(fds[1]);
  w.pid = pid;
  w.fd = fds[0];
  return w;
}

std::string describe_exit(int status) {
  char b[96];
  if (WIFSIGNALED(status))
    std::snprintf(b, sizeof b, "worker killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if (WIFEXITED(status))
    std::snprintf(b, sizeof b, "worker exited with status %d", WEXITSTATUS(status));
  else
    std::snprintf(b, sizeof b, "worker ended (status %d)", status);
  return b;
}

int run_parent(int argc, char** argv, const options& opt, const std::vector<bench_case>& cases) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "tilesort-bench: no CUDA device (%s); nothing was run\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 2;
  }
  collector col(opt, cases);
  const int total = int(cases.size());

  if (opt.inline_run) {
    const int rc = run_worker(opt, cases, 0, total, [&](const std::string& line) { col.handle(line); });
    if (rc == 2) return 2;
    for (int i = col.last_done + 1; i < total; ++i)
      col.abandon_case(i, "ERROR", "", "not run: the CUDA context was lost (run without --inline to go on)");
    col.print_summary();
    return col.failures() ? 1 : 0;
  }

  signal(SIGPIPE, SIG_IGN);
  int next = 0, skip = 0;          // the next worker starts at call `skip` of case `next`
  std::vector<std::string> hung;  // implementations that timed out: later workers skip them
  while (next < total) {
    const int headers_before = col.headers;
    worker_process w = spawn_worker(argc, argv, next, total, skip, col.headers ? col.info.copy_gbps : 0, hung);
    if (w.pid < 0) {
      std::fprintf(stderr, "tilesort-bench: cannot start a worker process\n");
      for (int i = next; i < total; ++i) col.abandon_case(i, "ERROR", "", "not run: cannot start a worker process");
      break;
    }
    col.reset_worker_state();
    std::string buffer;
    bool timed_out = false;
    auto last_beat = std::chrono::steady_clock::now();
    char chunk[65536];
    while (true) {
      // Starting a worker (context, copy ceiling) gets a minute more.
      const double budget = opt.timeout_s + (col.headers == headers_before ? 60.0 : 0.0);
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_beat).count();
      const int wait_ms = int(std::max(0.0, (budget - waited) * 1e3));
      pollfd p{w.fd, POLLIN, 0};
      const int ready = poll(&p, 1, std::min(wait_ms, 1000));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        if (wait_ms == 0) {
          kill(w.pid, SIGKILL);
          timed_out = true;
          break;
        }
        continue;
      }
      const ssize_t got = read(w.fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      buffer.append(chunk, std::size_t(got));
      std::size_t start = 0, nl;
      while ((nl = buffer.find('\n', start)) != std::string::npos) {
        col.handle(buffer.substr(start, nl - start));
        start = nl + 1;
      }
      buffer.erase(0, start);
      last_beat = std::chrono::steady_clock::now();
    }
    close(w.fd);
    int wait_status = 0;
    waitpid(w.pid, &wait_status, 0);
    if (col.quit) break;
    if (col.headers == headers_before) {
      // The first worker could not use the device: it said why on stderr.
      if (col.headers == 0 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 2) return 2;
      const std::string why = timed_out ? "worker did not start in time" : describe_exit(wait_status);
      std::fprintf(stderr, "tilesort-bench: %s before running any case; giving up\n", why.c_str());
      for (int i = next; i < total; ++i) col.abandon_case(i, "ERROR", "", "not run: " + why);
      break;
    }
    if (col.resume_case >= 0) {
      // A call broke the CUDA context (its ERROR is recorded): go on inside the case.
      next = col.resume_case;
      skip = col.resume_call;
      std::fprintf(stderr, "tilesort-bench: case %d: CUDA context lost; a new worker goes on with the case's next "
                   "measurement\n", next + 1);
    } else if (col.current_case >= 0) {
      const int c = col.current_case;
      const std::string status = timed_out ? "TIMEOUT" : "CRASH";
      const std::string why = timed_out ? "no progress for " + std::to_string(int(opt.timeout_s)) +
                                              " s (a hung or too slow repetition); the worker was killed"
                                        : describe_exit(wait_status);
      if (col.current_call >= 0) {
        // Record the measurement that died and go on inside the case after it.
        if (col.current_call_ended) {
          col.add_failure(c, status, "(after " + col.current_impl + ")", "alt", why);
        } else {
          col.add_failure(c, status, col.current_impl, col.current_role, why + " during " + col.current_what);
          if (timed_out) hung.push_back(col.current_impl);
        }
        next = c;
        skip = col.current_call + 1;
        std::fprintf(stderr, "tilesort-bench: case %d: %s in %s; a new worker goes on with the case's next "
                     "measurement\n", c + 1, why.c_str(), col.current_impl.c_str());
      } else {
        col.abandon_case(c, status, "(case setup)", why);
        next = c + 1;
        skip = 0;
        std::fprintf(stderr, "tilesort-bench: case %d: %s while setting it up; going on with the next case\n", c + 1,
                     why.c_str());
      }
    } else {
      next = col.last_done + 1;
      skip = 0;
      std::fprintf(stderr, "tilesort-bench: %s; restarting at case %d\n", describe_exit(wait_status).c_str(),
                   next + 1);
    }
  }
  col.print_summary();
  return col.failures() ? 1 : 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  using namespace bench;
  options opt;
  std::string error;
  if (!parse_args(argc, argv, opt, error)) {
    std::fprintf(stderr, "tilesort-bench: %s\n\n", error.c_str());
    usage(stderr);
    return 2;
  }
  if (opt.timeout_s <= 0) opt.timeout_s = opt.quick ? 20 : 120;
  const std::vector<bench_case> cases = build_cases(opt);

  if (opt.worker) {
    const int fd = opt.result_fd;
    const line_sink sink = [fd](const std::string& line) {
      std::string l = line + '\n';
      const char* p = l.data();
      std::size_t left = l.size();
      while (left > 0) {
        const ssize_t w = write(fd, p, left);
        if (w < 0) {
          if (errno == EINTR) continue;
          std::_Exit(4);  // the parent is gone
        }
        p += w;
        left -= std::size_t(w);
      }
    };
    return run_worker(opt, cases, opt.first_case, opt.last_case, sink);
  }

  if (opt.list_only) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& c = cases[i];
      std::printf("%4zu  %-9s %-28s %-8s %-10s %s\n", i + 1, c.family.c_str(), c.case_name.c_str(), c.type.c_str(),
                  size_name(c.n).c_str(), c.dist.c_str());
    }
    std::printf("%zu cases\n", cases.size());
    return 0;
  }
  if (cases.empty()) {
    std::fprintf(stderr, "tilesort-bench: no case matches the options\n");
    return 2;
  }
  return run_parent(argc, argv, opt, cases);
}
