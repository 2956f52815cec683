# The CUDA architectures when the caller gives none (include before project()):
# the GPU that is here, or sm_90 (Hopper) so a machine without a GPU, such as
# CI, still compiles every kernel.
#   include(${CMAKE_CURRENT_LIST_DIR}/cmake/tilesort_cuda_arch.cmake)
#   project(tilesort LANGUAGES CXX CUDA)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE tilesort_smi OUTPUT_QUIET ERROR_QUIET)
  if(tilesort_smi EQUAL 0)
    set(CMAKE_CUDA_ARCHITECTURES native)
  else()
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
endif()
