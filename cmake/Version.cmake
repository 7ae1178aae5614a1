# Records the tool version and the git commit into a generated header.
execute_process(
  COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  OUTPUT_VARIABLE IBSCOPE_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET RESULT_VARIABLE _git_rc)
if(NOT _git_rc EQUAL 0 OR IBSCOPE_GIT_SHA STREQUAL "")
  set(IBSCOPE_GIT_SHA "unknown")
endif()
execute_process(
  COMMAND git status --porcelain --untracked-files=no
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  OUTPUT_VARIABLE _git_dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT _git_dirty STREQUAL "" AND NOT IBSCOPE_GIT_SHA STREQUAL "unknown")
  string(APPEND IBSCOPE_GIT_SHA "-dirty")
endif()
if(IBSCOPE_SANITIZE)
  set(IBSCOPE_SANITIZE_BOOL true)
else()
  set(IBSCOPE_SANITIZE_BOOL false)
endif()
if(IBSCOPE_HAVE_PMIX)
  set(IBSCOPE_HAVE_PMIX_BOOL true)
else()
  set(IBSCOPE_HAVE_PMIX_BOOL false)
endif()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/build_info.hpp.in
               ${CMAKE_CURRENT_BINARY_DIR}/generated/ibscope/build_info.hpp @ONLY)
