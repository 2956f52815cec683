// detail/uninitialized_array.cuh — raw storage for N values of T, for the
// shared-memory arrays of the block sorts: shared memory runs no constructors,
// so key types with non-trivial default constructors still work.
#pragma once

#include "config.cuh"

namespace tilesort::detail {

template <typename T, int N>
struct uninitialized_array {
  alignas(T) unsigned char bytes[N * sizeof(T)];
  TILESORT_HD T& operator[](int i) { return reinterpret_cast<T*>(bytes)[i]; }
  TILESORT_HD const T& operator[](int i) const { return reinterpret_cast<const T*>(bytes)[i]; }
};

}  // namespace tilesort::detail
