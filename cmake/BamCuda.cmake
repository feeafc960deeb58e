# Detects CUDA and CCCL (libcu++).
#
# Results:
#   BAM_HAVE_CUDA          the CUDA language is enabled and CUDA targets are built
#   BAM_CCCL_INCLUDE_DIR   where <cuda/atomic> lives (CUDA 13 keeps it under include/cccl, which
#                          CMake 3.25's CUDA::toolkit does not put on the include path)

set(BAM_HAVE_CUDA OFF)
if(NOT BAM_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    # CMake before 3.26 knows no C++20 flag for nvcc ("requires the language dialect CUDA20");
    # nvcc 12+ takes -std=c++20.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # Relocatable device code: ptxas compiles each device function of a unit once. In whole-
    # program mode it compiled every function a kernel reaches again for each kernel (measured:
    # one gather kernel and the dense path 22 s of ptxas, two kernels 45 s; relocatable, 8.6 s
    # and 9.0 s), so a unit with many kernels over the cache took many minutes. Cold paths are
    # out of line anyway (BAM_NOINLINE); hot paths are inlined by the front end, within a unit.
    if(NOT DEFINED CMAKE_CUDA_SEPARABLE_COMPILATION)
      set(CMAKE_CUDA_SEPARABLE_COMPILATION ON)
    endif()
    set(BAM_HAVE_CUDA ON)
    find_package(CUDAToolkit REQUIRED)
  elseif(BAM_CUDA STREQUAL "ON")
    message(FATAL_ERROR "BAM_CUDA=ON but no CUDA compiler was found; set CMAKE_CUDA_COMPILER")
  endif()
endif()
if(NOT BAM_HAVE_CUDA)
  find_package(CUDAToolkit QUIET)
endif()

set(_bam_cccl_hints "")
foreach(_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
  list(APPEND _bam_cccl_hints "${_dir}/cccl" "${_dir}")
endforeach()
find_path(BAM_CCCL_INCLUDE_DIR cuda/atomic
  HINTS ${_bam_cccl_hints}
  PATHS /usr/local/cuda/include/cccl /usr/local/cuda/include
  NO_DEFAULT_PATH)
if(BAM_CCCL_INCLUDE_DIR)
  message(STATUS "bam: libcu++ found in ${BAM_CCCL_INCLUDE_DIR}: atomics use cuda::atomic_ref")
else()
  message(STATUS "bam: libcu++ not found: atomics use std::atomic_ref (CPU only)")
endif()
message(STATUS "bam: CUDA targets ${BAM_HAVE_CUDA}")
