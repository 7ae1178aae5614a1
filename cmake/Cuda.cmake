# CUDA support (GPU buffers, reduction kernels): -DIBSCOPE_CUDA=AUTO|ON|OFF.
#   AUTO (default): with CUDA when an nvcc and the CUDA toolkit are found, else without (one
#                   STATUS line says so);
#   ON:             the toolkit is required (configuration stops without it);
#   OFF:            never; gpu/cuda_unavailable.cpp answers every call with a UsageError.
# Sets IBSCOPE_HAVE_CUDA (ON/OFF) for src/, tests/, bench/ and the package config. With CUDA the
# language CUDA is enabled and the target CUDA::cudart_static exists (find_package(CUDAToolkit)).
# nvcc is looked for on PATH, then in $CUDACXX, $CUDA_HOME/bin, $CUDA_PATH/bin and
# /usr/local/cuda/bin, so a clean shell without /usr/local/cuda/bin on PATH still finds it.
include(CheckLanguage)

set(IBSCOPE_CUDA AUTO CACHE STRING "CUDA support: AUTO (if the toolkit is found), ON, OFF")
set_property(CACHE IBSCOPE_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${IBSCOPE_CUDA}" _ibscope_cuda_mode)
if(_ibscope_cuda_mode STREQUAL "TRUE" OR _ibscope_cuda_mode STREQUAL "YES" OR
   _ibscope_cuda_mode STREQUAL "1")
  set(_ibscope_cuda_mode ON)
elseif(_ibscope_cuda_mode STREQUAL "FALSE" OR _ibscope_cuda_mode STREQUAL "NO" OR
       _ibscope_cuda_mode STREQUAL "0")
  set(_ibscope_cuda_mode OFF)
endif()
if(NOT _ibscope_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "ibscope: IBSCOPE_CUDA='${IBSCOPE_CUDA}': valid values are AUTO, ON, OFF")
endif()

set(IBSCOPE_HAVE_CUDA OFF)
set(_ibscope_cuda_why "")
if(NOT _ibscope_cuda_mode STREQUAL "OFF")
  # check_language(CUDA) only looks on PATH and in $CUDACXX: point it at the usual install
  # folders when nvcc is not on PATH.
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(IBSCOPE_NVCC nvcc)
    if(NOT IBSCOPE_NVCC)
      unset(IBSCOPE_NVCC CACHE)
      find_program(IBSCOPE_NVCC nvcc NO_DEFAULT_PATH
                   PATHS "$ENV{CUDA_HOME}/bin" "$ENV{CUDA_PATH}/bin" /usr/local/cuda/bin)
    endif()
    if(IBSCOPE_NVCC)
      set(ENV{CUDACXX} "${IBSCOPE_NVCC}")
    endif()
  endif()
  # Same host compiler as the C++ code: one libstdc++ ABI in the whole library.
  if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX})
    set(ENV{CUDAHOSTCXX} "${CMAKE_CXX_COMPILER}")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # A100 (sm_80) and H100/H200 (sm_90) SASS, plus sm_90 PTX for anything newer.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to build for")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cudart_static)
      set(IBSCOPE_HAVE_CUDA ON)
    else()
      string(CONCAT _ibscope_cuda_why "nvcc ${CMAKE_CUDA_COMPILER} found, but not the CUDA "
                                      "toolkit's libraries (find_package(CUDAToolkit))")
    endif()
  else()
    string(CONCAT _ibscope_cuda_why "no working nvcc (looked at $CUDACXX, PATH, $CUDA_HOME/bin, "
                                    "/usr/local/cuda/bin)")
  endif()
  if(NOT IBSCOPE_HAVE_CUDA)
    if(_ibscope_cuda_mode STREQUAL "ON")
      message(FATAL_ERROR "ibscope: -DIBSCOPE_CUDA=ON but no usable CUDA toolkit: "
                          "${_ibscope_cuda_why}. Install the CUDA toolkit or set "
                          "-DCMAKE_CUDA_COMPILER=/path/to/nvcc (or -DIBSCOPE_CUDA=OFF).")
    endif()
    message(STATUS "ibscope: building without CUDA (${_ibscope_cuda_why}): "
                   "--mem cuda is unavailable; install the CUDA toolkit to enable it")
  endif()
endif()

if(IBSCOPE_HAVE_CUDA)
  # C++17: what the one .cu file needs, and what CMake 3.25 knows how to ask nvcc 13 for (it
  # has no CUDA20 flags for that nvcc).
  if(NOT DEFINED CMAKE_CUDA_STANDARD)
    set(CMAKE_CUDA_STANDARD 17)
  endif()
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  message(STATUS "ibscope: CUDA ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER}), "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}, static cudart")
elseif(_ibscope_cuda_mode STREQUAL "OFF")
  message(STATUS "ibscope: building without CUDA (-DIBSCOPE_CUDA=OFF)")
endif()
