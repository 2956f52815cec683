// module.cpp — the nanobind module tilesort._ext: thin functions over raw
// device pointers (Python ints), sizes, the key's order and a stream handle.
// Everything about arrays (dtypes, shapes, allocation, the caller's stream)
// lives in the Python layer (tilesort/_core.py); this module only checks
// that the library accepted the call and turns its error code into a
// RuntimeError.
//
//   from tilesort import _ext
//   need = _ext.sort(_ext.ROWS, 4, ord("i"), 0, False, kin, kout, 0, 0, n, 1024, 0, 0, 0, 0, stream)
//   _ext.sort(_ext.ROWS, 4, ord("i"), 0, False, kin, kout, 0, 0, n, 1024, 0, 0, temp, need, stream)
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

// Returns the temp bytes the call needs when temp is 0 (size query), else 0
// after launching the sort on `stream`.
std::size_t sort(int algo, int key_bytes, int kind, std::uint64_t inf_bits, bool descending, std::uintptr_t keys_in,
                 std::uintptr_t keys_out, std::uintptr_t values_in, std::uintptr_t values_out, std::int64_t n,
                 std::int64_t row_length, std::uintptr_t offsets, std::int64_t segments, std::uintptr_t temp,
                 std::size_t temp_bytes, std::uintptr_t stream) {
  if (algo < 0 || algo > 3) throw nb::value_error("tilesort: unknown algorithm code");
  if (key_bytes != 4 && key_bytes != 8)
    throw nb::value_error("tilesort: the extension sorts keys of 4 or 8 bytes (the layer widens narrower ones)");
  if (values_in == 0 || values_out == 0)
    throw nb::value_error("tilesort: the extension sorts pairs (8-byte payloads) only");
  tilesort_py::sort_call call{};
  call.algo = static_cast<algorithm>(algo);
  call.keys_in = pointer<const void>(keys_in);
  call.keys_out = pointer<void>(keys_out);
  call.values_in = pointer<const void>(values_in);
  call.values_out = pointer<void>(values_out);
  call.n = n;
  call.row_length = row_length;
  call.offsets = pointer<const std::int64_t>(offsets);
  call.segments = segments;
  call.kind = static_cast<char>(kind);
  call.inf_bits = inf_bits;
  call.descending = descending;
  call.temp = pointer<void>(temp);
  call.stream = pointer<CUstream_st>(stream);
  check(tilesort_py::run_sort(key_bytes, call, temp_bytes), "sort");
  return temp == 0 ? temp_bytes : 0;
}

}  // namespace

NB_MODULE(_ext, m) {
  m.doc() = "tilesort's CUDA extension: raw-pointer sorts used by the tilesort package";
  m.attr("MERGE") = static_cast<int>(algorithm::merge);
  m.attr("LOCALITY") = static_cast<int>(algorithm::locality);
  m.attr("ROWS") = static_cast<int>(algorithm::rows);
  m.attr("OFFSETS") = static_cast<int>(algorithm::offsets);
  m.def("sort", &sort, nb::arg("algo"), nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"),
        nb::arg("descending"), nb::arg("keys_in"), nb::arg("keys_out"), nb::arg("values_in"), nb::arg("values_out"),
        nb::arg("n"), nb::arg("row_length"), nb::arg("offsets"), nb::arg("segments"), nb::arg("temp"),
        nb::arg("temp_bytes"), nb::arg("stream"),
        "Sort (temp != 0) or size (temp == 0: returns the temp bytes needed) one call.");
  m.def(
      "write_ranks",
      [](int key_bytes, int kind, std::uint64_t inf_bits, bool descending, std::uintptr_t keys, std::uintptr_t ranks,
         std::int64_t n, std::uintptr_t stream) {
        check(tilesort_py::write_ranks(key_bytes, static_cast<char>(kind), inf_bits, descending,
                                       pointer<const void>(keys), pointer<void>(ranks), n,
                                       pointer<CUstream_st>(stream)),
              "write_ranks");
      },
      nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"), nb::arg("descending"), nb::arg("keys"),
      nb::arg("ranks"), nb::arg("n"), nb::arg("stream"),
      "ranks[i] = the dtype order's rank of keys[i] (4 or 8 bytes) for i < n, on the stream.");
  m.def(
      "fill_row_index",
      [](std::uintptr_t values, std::int64_t n, std::int64_t row_length, std::uintptr_t stream) {
        check(tilesort_py::fill_row_index(pointer<std::uint64_t>(values), n, row_length, pointer<CUstream_st>(stream)),
              "fill_row_index");
      },
      nb::arg("values"), nb::arg("n"), nb::arg("row_length"), nb::arg("stream"),
      "values[i] = i % row_length (uint64) for i < n, on the stream.");
  m.def(
      "order_rank",
      [](int key_bytes, int kind, std::uint64_t inf_bits, bool descending, std::uint64_t bits) {
        return tilesort_py::order_rank(key_bytes, static_cast<char>(kind), inf_bits, descending, bits);
      },
      nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"), nb::arg("descending"), nb::arg("bits"),
      "The rank dtype_order gives one key's bits (host side; for tests of the order).");
  m.def(
      "cuda_runtime_version",
      [] {
        int version = 0;
        check(cudaRuntimeGetVersion(&version), "cudaRuntimeGetVersion");
        return version;
      },
      "The CUDA runtime version the extension was built against and runs with.");
}
