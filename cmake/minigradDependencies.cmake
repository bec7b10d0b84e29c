# The libraries minigrad's own targets link against. Used both when building minigrad and, from the
# installed package config, when another project does find_package(minigrad).

# OpenBLAS through its cblas interface. Debian's libopenblas-dev comes in three builds (pthread, OpenMP,
# serial), each in its own folder. minigrad makes every BLAS call on one thread and splits large products
# between its own threads (tensor/threads.h, tensor/matmul.cpp). It prefers the OpenMP build, the one
# the PyTorch comparisons are given (docs/performance.md): a call made with the calling thread's OpenMP
# thread count at 1 starts no thread, where the pthread build starts its pool when it loads. The chosen
# library's folder goes into the executables' run path, so the system-wide libopenblas.so.0 alternative
# (often the pthread build) is not used.
set(MINIGRAD_OPENBLAS_VARIANT_DIRS
  /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
  /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
find_library(MINIGRAD_OPENBLAS_LIBRARY NAMES openblas PATHS ${MINIGRAD_OPENBLAS_VARIANT_DIRS} NO_DEFAULT_PATH)
find_path(MINIGRAD_CBLAS_INCLUDE_DIR cblas.h PATHS ${MINIGRAD_OPENBLAS_VARIANT_DIRS} NO_DEFAULT_PATH)
if(NOT MINIGRAD_OPENBLAS_LIBRARY OR NOT MINIGRAD_CBLAS_INCLUDE_DIR)
  message(STATUS "minigrad: OpenBLAS's OpenMP build not found (Debian: libopenblas-openmp-dev); using the "
                 "default OpenBLAS")
  find_path(MINIGRAD_CBLAS_INCLUDE_DIR cblas.h
    PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
    PATH_SUFFIXES openblas)
  find_library(MINIGRAD_OPENBLAS_LIBRARY NAMES openblas)
endif()
if(NOT MINIGRAD_CBLAS_INCLUDE_DIR OR NOT MINIGRAD_OPENBLAS_LIBRARY)
  message(FATAL_ERROR
    "minigrad needs OpenBLAS and its cblas.h, which were not found.\n"
    "On Debian or Ubuntu: apt-get install libopenblas-dev libopenblas-openmp-dev")
endif()
if(NOT TARGET minigrad::openblas)
  add_library(minigrad::openblas SHARED IMPORTED)
  set_target_properties(minigrad::openblas PROPERTIES
    IMPORTED_LOCATION "${MINIGRAD_OPENBLAS_LIBRARY}"
    IMPORTED_NO_SONAME OFF
    INTERFACE_INCLUDE_DIRECTORIES "${MINIGRAD_CBLAS_INCLUDE_DIR}")
  # Executables find this exact build at run time, not whichever the system alternative points to.
  get_filename_component(MINIGRAD_OPENBLAS_DIR "${MINIGRAD_OPENBLAS_LIBRARY}" REALPATH)
  get_filename_component(MINIGRAD_OPENBLAS_DIR "${MINIGRAD_OPENBLAS_DIR}" DIRECTORY)
  set_property(TARGET minigrad::openblas PROPERTY INTERFACE_LINK_OPTIONS "LINKER:-rpath,${MINIGRAD_OPENBLAS_DIR}")
endif()

# std::thread for minigrad's thread pool.
find_package(Threads REQUIRED)

# OpenMP: `#pragma omp simd` (loops the compiler may vectorize in any order, sums among them), and the
# calling thread's OpenMP thread count, which OpenBLAS's OpenMP build reads at every call. minigrad runs
# no OpenMP parallel region of its own. GCC ships it; for Clang: libomp-dev.
find_package(OpenMP COMPONENTS CXX)
if(NOT OpenMP_CXX_FOUND)
  message(FATAL_ERROR
    "minigrad needs OpenMP. It comes with g++; with clang on Debian: apt-get install libomp-dev")
endif()

# nlohmann-json reads and writes safetensors headers (Debian: nlohmann-json3-dev).
find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  message(FATAL_ERROR "minigrad needs nlohmann-json for safetensors files: apt-get install nlohmann-json3-dev")
endif()
