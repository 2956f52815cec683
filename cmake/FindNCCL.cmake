# FindNCCL — NCCL's header and library, for the tilesort::nccl target.
#
#   find_package(NCCL)                 # NCCL_ROOT (variable or environment): an install prefix
#
# Searched, in order: NCCL_ROOT; the CUDA toolkit (which may ship NCCL, as
# CUDA 13's does); the system's default paths. A pip wheel's folder works as
# NCCL_ROOT too (nvidia/nccl: include/nccl.h, lib/libnccl.so.2, no
# unversioned link), e.g.
#   -DNCCL_ROOT=$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))")
# Defines NCCL_FOUND, NCCL_INCLUDE_DIRS, NCCL_LIBRARIES, NCCL_VERSION and the
# imported target NCCL::NCCL.
find_package(CUDAToolkit QUIET)

set(_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT})
if(CUDAToolkit_FOUND)
  list(APPEND _nccl_hints ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
endif()

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
  HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${_part} ([0-9]+).*" "\\1" _nccl_${_part} "${_nccl_version_lines}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND)
  set(NCCL_INCLUDE_DIRS ${NCCL_INCLUDE_DIR})
  set(NCCL_LIBRARIES ${NCCL_LIBRARY})
  if(NOT TARGET NCCL::NCCL)
    add_library(NCCL::NCCL UNKNOWN IMPORTED)
    set_target_properties(NCCL::NCCL PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}")
    # The toolkit's include folder is nvcc's already: adding it again (as a
    # system folder) could reorder the toolkit's own headers.
    if(NOT NCCL_INCLUDE_DIR IN_LIST CUDAToolkit_INCLUDE_DIRS)
      set_target_properties(NCCL::NCCL PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
    endif()
  endif()
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
