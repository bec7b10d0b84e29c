# Installs the build tree at BUILD_DIR into a scratch prefix, then configures, builds and runs the consumer
# project against it: with find_package(minigrad) (and COMPONENTS distributed, when HAS_DISTRIBUTED), and
# with pkg-config. Fails on the first step that fails.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# The headers are under include/minigrad/ only: a consumer's include path gets include/, nothing deeper.
if(NOT EXISTS ${prefix}/include/minigrad/tensor/tensor.h OR EXISTS ${prefix}/include/tensor)
  message(FATAL_ERROR "the headers are not installed under ${prefix}/include/minigrad/")
endif()

# CMake: find_package(minigrad), and the distributed component where minigrad has it.
# A sanitizer build's libraries need the sanitizer runtime in the consumer too.
string(REPLACE ";" " " sanitizer_flags "${SANITIZER_FLAGS}")
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DWITH_DISTRIBUTED=${HAS_DISTRIBUTED}
     "-DCMAKE_CXX_FLAGS=${CXX_FLAGS} ${sanitizer_flags}")
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${WORK_DIR}/build/consumer)
step(${WORK_DIR}/build/test_cube)
# The PyTorch-way program, given a PyTorch encoder layer's weights where PyTorch is installed.
execute_process(COMMAND /usr/bin/python3 ${SOURCE_DIR}/scripts/compare-encoder-layer-with-pytorch.py
                        --write-torch-layer ${WORK_DIR} RESULT_VARIABLE no_torch OUTPUT_QUIET ERROR_QUIET)
if(no_torch EQUAL 0)
  step(${WORK_DIR}/build/pytorch_way ${WORK_DIR})
else()
  step(${WORK_DIR}/build/pytorch_way)
endif()
if(HAS_DISTRIBUTED)
  # Open MPI's plugins leave allocations LeakSanitizer cannot attribute (as in tests/CMakeLists.txt).
  step(${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0 ${WORK_DIR}/build/distributed_consumer)
endif()

# pkg-config: the same program built by one compiler command, with minigrad.pc's flags.
file(GLOB_RECURSE pc_files ${prefix}/*/minigrad.pc)  # lib/pkgconfig, lib64/pkgconfig, ...
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --cflags --libs minigrad OUTPUT_VARIABLE flags RESULT_VARIABLE result
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "pkg-config finds no minigrad.pc in ${pc_dir}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags} ${CXX_FLAGS} ${sanitizer_flags}")
step(c++ ${SOURCE_DIR}/tests/install/consumer/main.cpp -o ${WORK_DIR}/consumer_pkg_config ${flags})
step(${WORK_DIR}/consumer_pkg_config)
if(HAS_DISTRIBUTED)
  execute_process(COMMAND pkg-config --cflags --libs minigrad-distributed OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(flags UNIX_COMMAND "${flags} ${CXX_FLAGS} ${sanitizer_flags}")
  step(c++ ${SOURCE_DIR}/tests/install/consumer/distributed_consumer.cpp -o ${WORK_DIR}/distributed_pkg_config
       ${flags})
  step(${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0 ${WORK_DIR}/distributed_pkg_config)
endif()
