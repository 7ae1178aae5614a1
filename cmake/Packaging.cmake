# Install rules, the man page, the CMake package config and the .deb:
#   cmake --install build/release --prefix /opt/ibscope
#   cd build/release && cpack -G DEB
# A consumer: find_package(ibscope REQUIRED) and target_link_libraries(app PRIVATE ibscope::lib).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The man page, written by the binary just built from its own CLI (`ibscope help-man`), so it
# says what --help says.
set(IBSCOPE_MAN_PAGE ${PROJECT_BINARY_DIR}/man/ibscope.1)
add_custom_command(
  OUTPUT ${IBSCOPE_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
          $<TARGET_FILE:ibscope> help-man -o ${IBSCOPE_MAN_PAGE}
  DEPENDS ibscope
  COMMENT "Generating the man page ibscope.1 from the CLI"
  VERBATIM)
add_custom_target(ibscope_man ALL DEPENDS ${IBSCOPE_MAN_PAGE})

set(IBSCOPE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ibscope)
install(TARGETS ibscope ibscope_lib EXPORT ibscopeTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# `cmake --install --strip` (and cpack, CPACK_STRIP_FILES) strips the binary; the static
# library keeps its symbols but loses its debug info (200+ MB of it in RelWithDebInfo).
if(CMAKE_STRIP)
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
        \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:ibscope_lib>\")
    endif()")
endif()
# Public headers only: the generated build_info.hpp is included by sources, never by them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ibscope DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ibscopeTargets NAMESPACE ibscope:: DESTINATION ${IBSCOPE_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ibscopeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ibscopeConfig.cmake
                              INSTALL_DESTINATION ${IBSCOPE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ibscopeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ibscopeConfig.cmake
              ${PROJECT_BINARY_DIR}/ibscopeConfigVersion.cmake
        DESTINATION ${IBSCOPE_CMAKE_DIR})
install(FILES ${IBSCOPE_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DOCDIR})
# results/ is also where runs write by default: only the schema's documentation is installed.
install(FILES ${PROJECT_SOURCE_DIR}/results/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/results)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/results/schema DESTINATION ${CMAKE_INSTALL_DOCDIR}/results)
# The reference baselines (public figures with their sources; also compiled into the binary).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/results/baselines
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ibscope)

# ---- .deb (cpack -G DEB) ----------------------------------------------------------------------
set(IBSCOPE_PACKAGE_CONTACT "ibscope maintainers <ibscope-maintainers@example.org>"
    CACHE STRING "Maintainer of the .deb (Name <email>)")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ibscope)
set(CPACK_PACKAGE_VENDOR ibscope)
set(CPACK_PACKAGE_CONTACT "${IBSCOPE_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "ibscope measures point-to-point latency and bandwidth, collectives (all-reduce, "
    "reduce-scatter, all-gather, broadcast) over UCX and libibverbs RDMA probes between every "
    "pair of nodes under srun or mpirun, accepts a fabric (a verdict per link, NIC and host, "
    "exit status and Prometheus metrics), and models the network's share of a training step. "
    "Includes libibscope (static), its headers and CMake package config.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# Depends from the binary's shared libraries (dpkg-shlibdeps, package dpkg-dev): libucx0,
# libibverbs1, libhwloc15, libsqlite3-0, libfmt9, libpmix2, libstdc++6, libc6 on Debian 12. Without the
# tool, the same list written out for Debian 12.
find_program(IBSCOPE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(IBSCOPE_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libucx0, libibverbs1, libhwloc15, libsqlite3-0, libfmt9, libstdc++6, libc6")
  if(IBSCOPE_HAVE_PMIX)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libpmix2")
  endif()
endif()
# What building against libibscope.a needs (ibscopeConfig.cmake finds them).
string(CONCAT CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libfmt-dev, nlohmann-json3-dev, libcli11-dev, libucx-dev, libibverbs-dev, libhwloc-dev, "
    "libsqlite3-dev, "
    "libpmix-dev, pkg-config")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
include(CPack)
