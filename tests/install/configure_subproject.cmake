# Configures tests/install/subproject both ways (FetchContent, add_subdirectory) against the sources at
# SOURCE_DIR in WORK_DIR, and fails if either fails, or registers a test of minigrad's. Configuring is what
# tells which targets minigrad adds; the libraries built are those the install test builds.
file(REMOVE_RECURSE ${WORK_DIR})
foreach(way fetch_content add_subdirectory)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/subproject -B ${WORK_DIR}/${way}
            -DMINIGRAD_SOURCE_DIR=${SOURCE_DIR} -DWAY=${way}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${way}: configuring failed\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/${way} -N OUTPUT_VARIABLE listed)
  if(NOT listed MATCHES "Total Tests: 1\n")
    message(FATAL_ERROR "${way}: the project should register its one test, not minigrad's:\n${listed}")
  endif()
  message("${way}: minigrad's libraries alone, and the project's one test")
endforeach()
