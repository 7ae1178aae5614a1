# ccache for every C++ compile when it is installed (-DIBSCOPE_CCACHE=OFF to skip it). It pays
# off on a second build of the same sources: another preset's configure, another checkout or
# worktree of this repository, a rebuild after `git checkout`. Paths are hashed relative to the
# source tree (CCACHE_BASEDIR, no working directory in the hash), so two checkouts share hits.
option(IBSCOPE_CCACHE "Compile through ccache when it is installed" ON)
if(IBSCOPE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(IBSCOPE_CCACHE_PROGRAM ccache)
  if(IBSCOPE_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER
        env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        ${IBSCOPE_CCACHE_PROGRAM})
    message(STATUS "ibscope: compiling through ${IBSCOPE_CCACHE_PROGRAM}")
  endif()
endif()
