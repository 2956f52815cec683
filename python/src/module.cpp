// module.cpp — the nanobind module tilesort._ext: thin functions over raw
// device pointers (Python ints), sizes, the key's order and a stream handle.
// Everything about arrays (dtypes, shapes, allocation, the caller's stream)
// lives in the Python layer (tilesort/_core.py); this module only checks
// that the call is well formed and turns the library's error code into a
// RuntimeError. One Python sort is one `sort` call (a sort_job: prologue,
// library sort, epilogue), plus a size query the layer remembers per shape.
//
//   from tilesort import _ext
//   args = (_ext.ROWS, 4, ord("i"), 0, False, True, kin, kout, 0, idx, True, n, 1024, 0, 0)
//   need = _ext.sort(*args, 0, 0, stream)       # size query
//   _ext.sort(*args, temp, need, stream)
#include <nanobind/nanobind.h>

#include <cstdint>
#include <stdexcept>
#include <string>

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

// Returns the temp bytes the job needs when temp is 0 (size query), else 0
// after launching it on `stream`.
std::size_t sort(int algo, int key_bytes, int kind, std::uint64_t inf_bits, bool descending, bool rank_floats,
                 std::uintptr_t keys_in, std::uintptr_t keys_out, std::uintptr_t values_in, std::uintptr_t values_out,
                 bool index_payload, std::int64_t n, std::int64_t row_length, std::uintptr_t offsets,
                 std::int64_t segments, std::uintptr_t temp, std::size_t temp_bytes, std::uintptr_t stream) {
  if (algo < 0 || algo > 3) throw nb::value_error("tilesort: unknown algorithm code");
  if (key_bytes != 1 && key_bytes != 2 && key_bytes != 4 && key_bytes != 8)
    throw nb::value_error("tilesort: keys are 1, 2, 4 or 8 bytes");
  if (values_out == 0 || (!index_payload && values_in == 0))
    throw nb::value_error("tilesort: the extension sorts pairs (8-byte payloads or the index payload) only");
  tilesort_py::sort_job job{};
  job.algo = static_cast<algorithm>(algo);
  job.key_bytes = key_bytes;
  job.kind = static_cast<char>(kind);
  job.inf_bits = inf_bits;
  job.descending = descending;
  job.rank_floats = rank_floats;
  job.keys_in = pointer<const void>(keys_in);
  job.keys_out = pointer<void>(keys_out);
  job.values_in = pointer<const void>(values_in);
  job.values_out = pointer<void>(values_out);
  job.index_payload = index_payload;
  job.n = n;
  job.row_length = row_length;
  job.offsets = pointer<const std::int64_t>(offsets);
  job.segments = segments;
  job.temp = pointer<void>(temp);
  job.stream = pointer<CUstream_st>(stream);
  check(tilesort_py::run_job(job, temp_bytes), "sort");
  return temp == 0 ? temp_bytes : 0;
}

}  // namespace

NB_MODULE(_ext, m) {
  m.doc() = "tilesort's CUDA extension: raw-pointer sorts used by the tilesort package";
  m.attr("FRONT") = static_cast<int>(algorithm::front);
  m.attr("LOCALITY") = static_cast<int>(algorithm::locality);
  m.attr("ROWS") = static_cast<int>(algorithm::rows);
  m.attr("OFFSETS") = static_cast<int>(algorithm::offsets);
  m.def("sort", &sort, nb::arg("algo"), nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"),
        nb::arg("descending"), nb::arg("rank_floats"), nb::arg("keys_in"), nb::arg("keys_out"), nb::arg("values_in"),
        nb::arg("values_out"), nb::arg("index_payload"), nb::arg("n"), nb::arg("row_length"), nb::arg("offsets"),
        nb::arg("segments"), nb::arg("temp"), nb::arg("temp_bytes"), nb::arg("stream"),
        "Run one sort job (temp != 0) or size it (temp == 0: returns the temp bytes needed); keys_out 0: "
        "keys not wanted; index_payload: values_out receives the positions (see src/sort_call.h).");
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
  m.def(
      "cuda_runtime_version",
      [] {
        int version = 0;
        check(cudaRuntimeGetVersion(&version), "cudaRuntimeGetVersion");
        return version;
      },
      "The CUDA runtime version the extension was built against and runs with.");
}
