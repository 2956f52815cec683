// distributed/nccl_sort/comm.cuh — the distributed sort's use of NCCL: its
// results turned into cudaError_t, the collectives it issues (byte all-gathers,
// a 64-bit sum reduce-scatter, the all-to-all of keys and values as grouped
// ncclSend / ncclRecv), and the host's wait for the stream that keeps
// watching the communicator, so that a peer's failure reported by NCCL (or a
// deadline) ends the wait instead of hanging it.
//
// Non-blocking communicators (ncclConfig_t::blocking = 0) work: a call that
// answers ncclInProgress is followed until NCCL reports its outcome.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace tilesort {
namespace nccl {
namespace detail {

/// NCCL's result as a cudaError_t: invalid arguments or usage ->
/// cudaErrorInvalidValue; an unhandled CUDA error -> that error; any other
/// failure (system, internal, remote) -> cudaErrorUnknown.
inline cudaError_t to_cuda_error(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return cudaSuccess;
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return cudaErrorInvalidValue;
    case ncclUnhandledCudaError: {
      const cudaError_t cuda = cudaPeekAtLastError();
      return cuda != cudaSuccess ? cuda : cudaErrorUnknown;
    }
    default:
      return cudaErrorUnknown;
  }
}

// Where the first NCCL failure of one call is recorded (the caller's
// sort_options::nccl_result, if given), and the deadline of its host waits.
struct comm_context {
  ncclComm_t comm;
  ncclResult_t* result;     // may be null
  std::int64_t timeout_ms;  // 0: no deadline

  cudaError_t fail(ncclResult_t r) const {
    if (result != nullptr && *result == ncclSuccess) *result = r;
    return to_cuda_error(r);
  }

  // The outcome of an NCCL call; ncclInProgress (non-blocking communicators)
  // is followed until it settles.
  cudaError_t check(ncclResult_t r) const {
    while (r == ncclInProgress) {
      if (ncclCommGetAsyncError(comm, &r) != ncclSuccess) r = ncclInternalError;
      if (r == ncclInProgress) std::this_thread::yield();
    }
    return r == ncclSuccess ? cudaSuccess : fail(r);
  }

  // Blocks the host until `stream` has done what is enqueued on it. Meanwhile
  // it polls the communicator: an asynchronous NCCL error (a peer gone, a
  // network failure) returns that error, and so does the deadline
  // (cudaErrorTimeout); the stream's work is left as it is then, for the
  // caller to abort (distributed/nccl_sort.cuh says how).
  cudaError_t wait(cudaStream_t stream) const {
    cudaEvent_t done = nullptr;
    cudaError_t error = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    if (error != cudaSuccess) return error;
    error = cudaEventRecord(done, stream);
    const auto start = std::chrono::steady_clock::now();
    while (error == cudaSuccess) {
      const cudaError_t state = cudaEventQuery(done);
      if (state == cudaSuccess) break;
      if (state != cudaErrorNotReady) {
        error = state;
        break;
      }
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(comm, &async) != ncclSuccess) async = ncclInternalError;
      if (async != ncclSuccess && async != ncclInProgress) {
        error = fail(async);
        break;
      }
      if (timeout_ms > 0 &&
          std::chrono::steady_clock::now() - start > std::chrono::milliseconds(timeout_ms)) {
        error = cudaErrorTimeout;
        break;
      }
      std::this_thread::yield();
    }
    cudaEventDestroy(done);
    // The polls' "not ready" is no error: leave no trace of it for the next launch check.
    if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
    return error;
  }

  // Each rank's `bytes` bytes, gathered in rank order into `recv`
  // (`send` may be recv + rank * bytes: in place).
  cudaError_t all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) const {
    return check(ncclAllGather(send, recv, bytes, ncclUint8, comm, stream));
  }

  // recv[i] = the sum over ranks of their send[rank * count + i], for this rank's block.
  cudaError_t reduce_scatter_sum(const std::int64_t* send, std::int64_t* recv, std::size_t count,
                                 cudaStream_t stream) const {
    return check(ncclReduceScatter(send, recv, count, ncclInt64, ncclSum, comm, stream));
  }
};

// One all-to-all: to every other rank d, send_count[d] items of `item_bytes`
// from send + send_offset[d]; from every other rank s, recv_count[s] items
// into recv + recv_offset[s]. Empty messages are skipped (both sides know
// the same counts). The own rank's share is left to the caller.
struct exchange_part {
  const void* send;
  void* recv;
  std::size_t item_bytes;
};

inline cudaError_t all_to_all(const comm_context& c, int ranks, int me, const exchange_part* parts, int part_count,
                              const std::vector<std::int64_t>& send_count, const std::vector<std::int64_t>& send_offset,
                              const std::vector<std::int64_t>& recv_count, const std::vector<std::int64_t>& recv_offset,
                              cudaStream_t stream) {
  cudaError_t error = c.check(ncclGroupStart());
  if (error != cudaSuccess) return error;
  ncclResult_t first = ncclSuccess;
  for (int step = 1; step < ranks && first == ncclSuccess; ++step) {
    // Pairwise order (send to me + step, receive from me - step) spreads the
    // first messages over every link.
    const int to = (me + step) % ranks;
    const int from = (me - step + ranks) % ranks;
    for (int part = 0; part < part_count && first == ncclSuccess; ++part) {
      const exchange_part& x = parts[part];
      if (send_count[to] > 0)
        first = ncclSend(static_cast<const char*>(x.send) + std::size_t(send_offset[to]) * x.item_bytes,
                         std::size_t(send_count[to]) * x.item_bytes, ncclUint8, to, c.comm, stream);
      if (first == ncclSuccess && recv_count[from] > 0)
        first = ncclRecv(static_cast<char*>(x.recv) + std::size_t(recv_offset[from]) * x.item_bytes,
                         std::size_t(recv_count[from]) * x.item_bytes, ncclUint8, from, c.comm, stream);
    }
  }
  const ncclResult_t ended = ncclGroupEnd();  // always closes the group, also after a failed call in it
  if (first != ncclSuccess) return c.fail(first);
  return c.check(ended);
}

}  // namespace detail
}  // namespace nccl
}  // namespace tilesort
