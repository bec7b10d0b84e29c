# docs/building.md's install recipe, as a user with a read-only checkout runs it: the library-only preset
# into a build folder outside the checkout, installed into a scratch prefix, then a program built against
# it with pkg-config. Fails if any step fails, or if any of them wrote into the checkout.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(TOUCH ${WORK_DIR}/started)

function(step)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE result
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

step(${CMAKE_COMMAND} --preset library-only -B ${WORK_DIR}/build)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel 2)
step(${CMAKE_COMMAND} --install ${WORK_DIR}/build --prefix ${WORK_DIR}/prefix)

file(GLOB_RECURSE pc_files ${WORK_DIR}/prefix/*/minigrad.pc)
if(NOT pc_files)
  message(FATAL_ERROR "no minigrad.pc installed under ${WORK_DIR}/prefix")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --cflags --libs minigrad OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(flags UNIX_COMMAND "${flags}")
step(c++ ${SOURCE_DIR}/tests/install/consumer/main.cpp -o ${WORK_DIR}/consumer ${flags})
step(${WORK_DIR}/consumer)

# Nothing new or changed in the checkout, outside the build folder this test runs from (BINARY_DIR), the
# data and git's own files.
execute_process(
  COMMAND find ${SOURCE_DIR} ( -path ${BINARY_DIR} -o -path ${SOURCE_DIR}/data -o -path ${SOURCE_DIR}/.git
                               -o -name __pycache__ ) -prune -o -newer ${WORK_DIR}/started -print
  OUTPUT_VARIABLE written OUTPUT_STRIP_TRAILING_WHITESPACE)
if(written)
  message(FATAL_ERROR "the install recipe wrote into the checkout:\n${written}")
endif()
