# Finds every dependency as an IMPORTED target. A missing one stops configuration with the
# Debian package that provides it.
include(FindPkgConfig)

function(ibscope_missing what package)
  message(FATAL_ERROR
    "ibscope: ${what} not found. Install the Debian package '${package}' "
    "(or run scripts/install-deps.sh, which installs everything).")
endfunction()

find_package(UCX QUIET COMPONENTS ucp uct ucs)
if(NOT UCX_FOUND)
  ibscope_missing("UCX (CMake config ucx-config.cmake)" "libucx-dev")
endif()

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  ibscope_missing("fmt" "libfmt-dev")
endif()

find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  ibscope_missing("nlohmann_json >= 3.10" "nlohmann-json3-dev")
endif()

# valijson (header-only JSON Schema validator): checks results files against results/schema/.
find_path(IBSCOPE_VALIJSON_INCLUDE_DIR valijson/adapters/nlohmann_json_adapter.hpp)
if(NOT IBSCOPE_VALIJSON_INCLUDE_DIR)
  ibscope_missing("valijson (valijson/adapters/nlohmann_json_adapter.hpp)" "libvalijson-dev")
endif()

find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  ibscope_missing("CLI11" "libcli11-dev")
endif()

if(NOT PKG_CONFIG_FOUND)
  ibscope_missing("pkg-config" "pkg-config")
endif()

pkg_check_modules(IBVERBS QUIET IMPORTED_TARGET libibverbs)
if(NOT IBVERBS_FOUND)
  ibscope_missing("libibverbs (pkg-config libibverbs)" "libibverbs-dev")
endif()
add_library(ibscope::ibverbs ALIAS PkgConfig::IBVERBS)

pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc>=2.0)
if(NOT HWLOC_FOUND)
  ibscope_missing("hwloc >= 2 (pkg-config hwloc)" "libhwloc-dev")
endif()
add_library(ibscope::hwloc ALIAS PkgConfig::HWLOC)

# The local history of runs (src/history/, docs/history.md).
pkg_check_modules(SQLITE3 QUIET IMPORTED_TARGET sqlite3>=3.31)
if(NOT SQLITE3_FOUND)
  ibscope_missing("SQLite 3 >= 3.31 (pkg-config sqlite3)" "libsqlite3-dev")
endif()
add_library(ibscope::sqlite3 ALIAS PkgConfig::SQLITE3)

option(IBSCOPE_WITH_PMIX "Use PMIx for bootstrap when the library is available" ON)
set(IBSCOPE_HAVE_PMIX OFF)
if(IBSCOPE_WITH_PMIX)
  pkg_check_modules(PMIX QUIET IMPORTED_TARGET pmix)
  if(PMIX_FOUND)
    set(IBSCOPE_HAVE_PMIX ON)
    add_library(ibscope::pmix ALIAS PkgConfig::PMIX)
  else()
    message(STATUS "ibscope: PMIx not found (Debian package 'libpmix-dev'): "
                   "PMIx bootstrap disabled, TCP store and local launcher remain")
  endif()
endif()

find_package(Threads REQUIRED)

if(IBSCOPE_BUILD_TESTS)
  find_package(Catch2 2.13 QUIET)
  if(NOT Catch2_FOUND)
    ibscope_missing("Catch2 v2.13" "catch2")
  endif()
endif()
