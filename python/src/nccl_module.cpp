// nccl_module.cpp — the nanobind module tilesort._nccl, behind
// tilesort.distributed: NCCL communicators (made from an ncclUniqueId that
// the Python layer broadcasts over a torch.distributed group) and the
// distributed sort over raw device pointers (Python ints). Calls that wait
// on peers release the GIL. Errors become RuntimeError with the CUDA error,
// NCCL's own result where it has one, and what to do next.
//
//   from tilesort import _nccl
//   uid = _nccl.unique_id()                       # on one rank; broadcast it
//   comm = _nccl.comm_init(uid, world_size, rank)  # on every rank, its device current
//   need = _nccl.sort(comm, 4, ord("f"), 0x7F800000, False, kin, kout, 0, 0, 0, n, 0, 0, stream, 0)
#include <nanobind/nanobind.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "nccl_call.h"

namespace nb = nanobind;

namespace {

ncclComm_t comm_of(std::uintptr_t handle) {
  if (handle == 0) throw nb::value_error("tilesort.distributed: no communicator (handle 0)");
  return reinterpret_cast<ncclComm_t>(handle);
}

void check_nccl(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return;
  throw std::runtime_error(std::string("tilesort.distributed: ") + what + " failed: " + ncclGetErrorString(result));
}

nb::bytes unique_id() {
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  return nb::bytes(id.internal, sizeof(id.internal));
}

std::uintptr_t comm_init(nb::bytes id_bytes, int ranks, int rank) {
  ncclUniqueId id;
  if (id_bytes.size() != sizeof(id.internal)) throw nb::value_error("tilesort.distributed: an ncclUniqueId is 128 bytes");
  std::memcpy(id.internal, id_bytes.c_str(), sizeof(id.internal));
  ncclComm_t comm = nullptr;
  {
    nb::gil_scoped_release quiet;  // waits for every rank of the group
    check_nccl(ncclCommInitRank(&comm, ranks, id, rank), "ncclCommInitRank");
  }
  return reinterpret_cast<std::uintptr_t>(comm);
}

// Returns the temp bytes needed when temp is 0 (size query), else 0 after
// the sort (which waits on the host for its peers twice; the GIL is released).
std::size_t sort(std::uintptr_t comm, int key_bytes, int kind, std::uint64_t inf_bits, bool descending,
                 std::uintptr_t keys_in, std::uintptr_t keys_out, int value_bytes, std::uintptr_t values_in,
                 std::uintptr_t values_out, std::int64_t n, std::uintptr_t temp, std::size_t temp_bytes,
                 std::uintptr_t stream, std::int64_t timeout_ms) {
  if (key_bytes != 4 && key_bytes != 8) throw nb::value_error("tilesort.distributed: keys reach the extension as 4 or 8 bytes");
  if (value_bytes != 0 && value_bytes != 8) throw nb::value_error("tilesort.distributed: payloads reach the extension as 8 bytes");
  ncclResult_t nccl_result = ncclSuccess;
  tilesort_py::nccl_call call{};
  call.comm = comm_of(comm);
  call.key_bytes = key_bytes;
  call.kind = static_cast<char>(kind);
  call.inf_bits = inf_bits;
  call.descending = descending;
  call.keys_in = reinterpret_cast<const void*>(keys_in);
  call.keys_out = reinterpret_cast<void*>(keys_out);
  call.value_bytes = value_bytes;
  call.values_in = reinterpret_cast<const void*>(values_in);
  call.values_out = reinterpret_cast<void*>(values_out);
  call.n = n;
  call.temp = reinterpret_cast<void*>(temp);
  call.stream = reinterpret_cast<cudaStream_t>(stream);
  call.timeout_ms = timeout_ms;
  call.nccl_result = &nccl_result;
  cudaError_t error;
  {
    nb::gil_scoped_release quiet;
    error = tilesort_py::run_nccl_sort(call, temp_bytes);
  }
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    std::string message = std::string("tilesort.distributed.sort failed: ") + cudaGetErrorName(error) + " (" +
                          cudaGetErrorString(error) + ")";
    if (nccl_result != ncclSuccess)
      message += std::string("; NCCL: ") + ncclGetErrorString(nccl_result) +
                 ". The communicator may be inside an unfinished collective: call "
                 "tilesort.distributed.abort(group) on every rank before sorting again";
    else if (error == cudaErrorTimeout)
      message += ": a peer did not answer in time; call tilesort.distributed.abort(group) on every rank";
    else if (error == cudaErrorInvalidValue)
      message += ": a rank's arguments were rejected (every rank of the group sees this error; nothing was written)";
    throw std::runtime_error(message);
  }
  return temp == 0 ? temp_bytes : 0;
}

}  // namespace

NB_MODULE(_nccl, m) {
  m.doc() = "tilesort's NCCL extension: communicators and the distributed sort behind tilesort.distributed";
  m.def("unique_id", &unique_id, "A new ncclUniqueId (128 bytes), to broadcast to the group.");
  m.def("comm_init", &comm_init, nb::arg("unique_id"), nb::arg("ranks"), nb::arg("rank"),
        "ncclCommInitRank on the current device; returns the communicator's handle. Collective over the group.");
  m.def(
      "comm_destroy", [](std::uintptr_t comm) { check_nccl(ncclCommDestroy(comm_of(comm)), "ncclCommDestroy"); },
      nb::arg("comm"), "ncclCommDestroy (after the last sort on it has finished).");
  m.def(
      "comm_abort",
      [](std::uintptr_t comm) {
        nb::gil_scoped_release quiet;
        check_nccl(ncclCommAbort(comm_of(comm)), "ncclCommAbort");
      },
      nb::arg("comm"), "ncclCommAbort: after an NCCL error or a timeout, on every rank.");
  m.def("sort", &sort, nb::arg("comm"), nb::arg("key_bytes"), nb::arg("kind"), nb::arg("inf_bits"),
        nb::arg("descending"), nb::arg("keys_in"), nb::arg("keys_out"), nb::arg("value_bytes"), nb::arg("values_in"),
        nb::arg("values_out"), nb::arg("n"), nb::arg("temp"), nb::arg("temp_bytes"), nb::arg("stream"),
        nb::arg("timeout_ms"),
        "The distributed sort of this rank's shard (temp != 0), or its size query (temp == 0: returns the temp "
        "bytes needed). See src/nccl_call.h.");
}
