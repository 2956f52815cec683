// module.cpp — the nanobind module tilesort._ext: one typed sort job
// (SortJob: raw device pointers as Python ints, sizes, the key's order, the
// algorithm as the Algorithm enum, which nanobind checks) run or sized on a
// stream handle. Everything about arrays (dtypes, shapes, allocation, the
// caller's stream) lives in the Python layer (tilesort/_core.py); this
// module only checks that the job is well formed and turns the library's
// error code into a RuntimeError. One Python sort is one `sort` call (a
// sort_job: prologue, library sort, epilogue), plus a size query the layer
// remembers per shape. `host_sort` sorts keys in host memory (numpy
// arrays, CPU tensors) through the library's host sort. Also what the
// extension was built with (version, runtime, architectures) and the facts
// of the current device that decide whether its GPU code runs there
// (tilesort/_device.py).
//
//   from tilesort import _ext
//   job = _ext.SortJob(algo=_ext.Algorithm.ROWS, key_bytes=4, kind="i", keys_in=kin, keys_out=kout,
//                      values_out=idx, index_payload=True, n=n, row_length=1024)
//   need = _ext.sort(job, temp=0, temp_bytes=0, stream=stream)   # size query
//   _ext.sort(job, temp=temp, temp_bytes=need, stream=stream)
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <tilesort/version.cuh>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "build_info.h"
#include "host_call.h"
#include "sort_call.h"

namespace nb = nanobind;
using tilesort_py::algorithm;

namespace {

void check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  (void)cudaGetLastError();  // do not leave a non-sticky error for the caller's next CUDA call
  throw std::runtime_error(std::string("tilesort: ") + what + " failed: " + cudaGetErrorName(error) + " (" +
                           cudaGetErrorString(error) + ")");
}

template <typename T>
T* pointer(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// What Python fills in (SortJob's keyword arguments, in this order): sort_job
// with device pointers as integers and the dtype kind as a one-letter string.
struct job_request {
  algorithm algo = algorithm::front;
  int key_bytes = 0;
  std::string kind = "u";  // 'u', 'i' or 'f' (see dtype_order.cuh)
  std::uintptr_t keys_in = 0;
  std::uintptr_t values_out = 0;
  std::int64_t n = 0;
  std::uint64_t inf_bits = 0;  // 'f': bits of +inf in the key's width
  bool descending = false;
  bool rank_floats = true;
  std::uintptr_t keys_out = 0;  // 0: keys not wanted
  std::uintptr_t values_in = 0;
  bool index_payload = false;
  std::int64_t row_length = 0;  // rows
  std::uintptr_t offsets = 0;   // offsets: device array of segments + 1 int64 entries
  std::int64_t segments = 0;    // offsets
  std::int64_t row_stride = 0;  // rows with the index payload: > 1, rows along another dim (sort_call.h)
};

// The algorithms a Python job may name (row_positions is chosen inside run_job).
bool job_algorithm(algorithm algo) {
  return algo == algorithm::front || algo == algorithm::locality || algo == algorithm::rows ||
         algo == algorithm::offsets;
}

tilesort_py::sort_job make_job(const job_request& request, std::uintptr_t temp, std::uintptr_t stream) {
  if (!job_algorithm(request.algo)) throw nb::value_error("tilesort: a job is FRONT, LOCALITY, ROWS or OFFSETS");
  const int key_bytes = request.key_bytes;
  if (key_bytes != 1 && key_bytes != 2 && key_bytes != 4 && key_bytes != 8)
    throw nb::value_error("tilesort: keys are 1, 2, 4 or 8 bytes");
  if (request.kind != "u" && request.kind != "i" && request.kind != "f")
    throw nb::value_error("tilesort: kind is 'u', 'i' or 'f'");
  if (request.values_out == 0 || (!request.index_payload && request.values_in == 0))
    throw nb::value_error("tilesort: the extension sorts pairs (8-byte payloads or the index payload) only");
  tilesort_py::sort_job job{};
  job.algo = request.algo;
  job.key_bytes = key_bytes;
  job.kind = request.kind[0];
  job.inf_bits = request.inf_bits;
  job.descending = request.descending;
  job.rank_floats = request.rank_floats;
  job.keys_in = pointer<const void>(request.keys_in);
  job.keys_out = pointer<void>(request.keys_out);
  job.values_in = pointer<const void>(request.values_in);
  job.values_out = pointer<void>(request.values_out);
  job.index_payload = request.index_payload;
  job.n = request.n;
  job.row_length = request.row_length;
  job.offsets = pointer<const std::int64_t>(request.offsets);
  job.segments = request.segments;
  job.row_stride = request.row_stride;
  job.temp = pointer<void>(temp);
  job.stream = pointer<CUstream_st>(stream);
  return job;
}

// Returns the temp bytes the job needs when temp is 0 (size query), else 0
// after launching it on `stream`.
std::size_t sort(const job_request& request, std::uintptr_t temp, std::size_t temp_bytes, std::uintptr_t stream) {
  check(tilesort_py::run_job(make_job(request, temp, stream), temp_bytes), "sort");
  return temp == 0 ? temp_bytes : 0;
}

// Whether a job of rows along another dim (row_stride > 1) sorts them where
// they lie: its size query, false where it is not supported (the caller
// then moves the dim last).
bool sorts_in_place_of_rows(const job_request& request) {
  std::size_t temp_bytes = 0;
  const cudaError_t error = tilesort_py::run_job(make_job(request, 0, 0), temp_bytes);
  if (error == cudaErrorNotSupported) return false;
  check(error, "size query");
  return true;
}

// The host sort of n keys (host memory, key_bytes each) with their int64
// positions, in place, the GIL released meanwhile; `progress` (None or a
// callable(done_bytes, total_bytes)) is called with the GIL held. A budget
// too small is a ValueError, other failures a RuntimeError; an exception
// from `progress` stops its calls and is raised as a RuntimeError after the
// sort.
void host_sort(std::uintptr_t keys, std::uintptr_t positions, std::int64_t n, int key_bytes, const std::string& kind,
               std::uint64_t inf_bits, bool descending, std::size_t budget, nb::object progress) {
  if (key_bytes != 4 && key_bytes != 8)
    throw nb::value_error("tilesort: host keys are 4 or 8 bytes (narrower ones are widened to 4 bytes first)");
  if (kind != "u" && kind != "i" && kind != "f") throw nb::value_error("tilesort: kind is 'u', 'i' or 'f'");
  tilesort_py::host_call call{pointer<void>(keys), pointer<std::int64_t>(positions), n, kind[0], inf_bits,
                              descending, budget, {}};
  std::string progress_error;
  if (!progress.is_none()) {
    call.progress = [&progress, &progress_error](std::size_t done, std::size_t total) {
      nb::gil_scoped_acquire gil;
      if (!progress_error.empty()) return;
      try {
        progress(done, total);
      } catch (const nb::python_error& e) {
        progress_error = e.what();
      }
    };
  }
  cudaError_t error = cudaSuccess;
  {
    nb::gil_scoped_release release;
    error = tilesort_py::run_host_sort(key_bytes, call);
  }
  if (error == cudaErrorInvalidValue)
    throw nb::value_error("tilesort: the host sort rejected the call (cudaErrorInvalidValue): the device memory "
                          "budget is too small for this many keys");
  check(error, "host sort");
  if (!progress_error.empty()) throw std::runtime_error("tilesort: the progress callback failed: " + progress_error);
}

// The current device and driver as tilesort/_device.py reads them; never
// throws: what a failing call could not find stays empty or zero, and the
// first error is the probe's.
nb::dict device_facts() {
  int driver = 0, device = -1, major = 0, minor = 0;
  (void)cudaDriverGetVersion(&driver);  // 0 where there is no driver
  cudaDeviceProp properties{};
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess) error = cudaGetDeviceProperties(&properties, device);
  if (error == cudaSuccess) {
    major = properties.major;
    minor = properties.minor;
    error = tilesort_py::load_probe_kernel();
  }
  (void)cudaGetLastError();
  nb::dict facts;
  facts["device"] = device;
  facts["name"] = std::string(properties.name);
  facts["capability"] = nb::make_tuple(major, minor);
  facts["driver"] = driver;
  facts["runtime"] = CUDART_VERSION;
  facts["probe"] = std::string(cudaGetErrorName(error));
  return facts;
}

}  // namespace

NB_MODULE(_ext, m) {
  m.doc() = "tilesort's CUDA extension: raw-pointer sorts used by the tilesort package";
  nb::enum_<algorithm>(m, "Algorithm", "What a sort job sorts (src/sort_call.h)")
      .value("FRONT", algorithm::front, "one array: the front door sort_pairs")
      .value("LOCALITY", algorithm::locality, "one nearly sorted array: locality_sort_pairs")
      .value("ROWS", algorithm::rows, "uniform rows of row_length keys")
      .value("OFFSETS", algorithm::offsets, "segments given by CSR offsets (segments + 1 int64 entries)");
  nb::class_<job_request>(m, "SortJob", "One sort job: device pointers as ints, sizes, the key order (src/sort_call.h)")
      .def(
          "__init__",
          [](job_request* self, algorithm algo, int key_bytes, std::string kind, std::uintptr_t keys_in,
             std::uintptr_t values_out, std::int64_t n, std::uint64_t inf_bits, bool descending, bool rank_floats,
             std::uintptr_t keys_out, std::uintptr_t values_in, bool index_payload, std::int64_t row_length,
             std::uintptr_t offsets, std::int64_t segments, std::int64_t row_stride) {
            new (self) job_request{algo,      key_bytes,     std::move(kind), keys_in,  values_out,
                                   n,         inf_bits,      descending,      rank_floats, keys_out,
                                   values_in, index_payload, row_length,      offsets,  segments,
                                   row_stride};
          },
          nb::kw_only(), nb::arg("algo"), nb::arg("key_bytes"), nb::arg("kind"), nb::arg("keys_in"),
          nb::arg("values_out"), nb::arg("n"), nb::arg("inf_bits") = 0, nb::arg("descending") = false,
          nb::arg("rank_floats") = true, nb::arg("keys_out") = 0, nb::arg("values_in") = 0,
          nb::arg("index_payload") = false, nb::arg("row_length") = 0, nb::arg("offsets") = 0,
          nb::arg("segments") = 0, nb::arg("row_stride") = 0)
      .def_rw("algo", &job_request::algo)
      .def_rw("key_bytes", &job_request::key_bytes)
      .def_rw("kind", &job_request::kind)
      .def_rw("inf_bits", &job_request::inf_bits)
      .def_rw("descending", &job_request::descending)
      .def_rw("rank_floats", &job_request::rank_floats)
      .def_rw("keys_in", &job_request::keys_in)
      .def_rw("keys_out", &job_request::keys_out)
      .def_rw("values_in", &job_request::values_in)
      .def_rw("values_out", &job_request::values_out)
      .def_rw("index_payload", &job_request::index_payload)
      .def_rw("n", &job_request::n)
      .def_rw("row_length", &job_request::row_length)
      .def_rw("offsets", &job_request::offsets)
      .def_rw("segments", &job_request::segments)
      .def_rw("row_stride", &job_request::row_stride);
  m.def("sort", &sort, nb::arg("job"), nb::kw_only(), nb::arg("temp"), nb::arg("temp_bytes"), nb::arg("stream"),
        "Run one sort job (temp != 0) or size it (temp == 0: returns the temp bytes needed); keys_out 0: "
        "keys not wanted; index_payload: values_out receives the positions (see src/sort_call.h).");
  m.def("sorts_in_place_of_rows", &sorts_in_place_of_rows, nb::arg("job"),
        "Whether a ROWS job with the index payload and row_stride > 1 (rows along another dim of a contiguous "
        "array) sorts them where they lie (a size query: pointers are not read); false: move the dim last.");
  m.def(
      "order_rank",
      [](int key_bytes, int kind, std::uint64_t inf_bits, bool descending, std::uint64_t bits) {
        return tilesort_py::order_rank(key_bytes, static_cast<char>(kind), inf_bits, descending, bits);
      },
      nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"), nb::arg("descending"), nb::arg("bits"),
      "The rank dtype_order gives one key's bits (host side; for tests of the order).");
  m.def(
      "order_unrank",
      [](int key_bytes, int kind, std::uint64_t inf_bits, bool descending, std::uint64_t rank) {
        return tilesort_py::order_unrank(key_bytes, static_cast<char>(kind), inf_bits, descending, rank);
      },
      nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"), nb::arg("descending"), nb::arg("rank"),
      "The key bits of a rank that is not shared (host side; for tests of the order).");
  m.def(
      "order_shared",
      [](int key_bytes, int kind, std::uint64_t inf_bits, bool descending, std::uint64_t rank) {
        return tilesort_py::order_shared(key_bytes, static_cast<char>(kind), inf_bits, descending, rank);
      },
      nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"), nb::arg("descending"), nb::arg("rank"),
      "Whether several keys share the rank: floating zero and NaN (host side; for tests of the order).");
  m.def("host_sort", &host_sort, nb::arg("keys"), nb::arg("positions"), nb::arg("n"), nb::arg("key_bytes"),
        nb::arg("kind"), nb::arg("inf_bits"), nb::arg("descending"), nb::arg("budget"), nb::arg("progress").none(),
        "Sort n keys in host memory (their unsigned bits in the dtype's order) with their int64 positions, in "
        "place, through tilesort::host_sort_pairs in `budget` bytes of device memory (0: the free memory less a "
        "margin); see src/host_call.h.");
  m.def(
      "cuda_runtime_version",
      [] {
        int version = 0;
        check(cudaRuntimeGetVersion(&version), "cudaRuntimeGetVersion");
        return version;
      },
      "The CUDA runtime version the extension was built against and runs with.");
  m.attr("version") = TILESORT_VERSION;
  m.attr("cuda_architectures") = tilesort_py::cuda_architectures();
  m.def("device_facts", &device_facts,
        "The current device and driver: dict(device, name, capability=(major, minor), driver, runtime, probe); "
        "driver and runtime as CUDA versions (13000 = 13.0), probe the error name of loading a kernel built like "
        "every other here ('cudaSuccess' where they run).");
}
