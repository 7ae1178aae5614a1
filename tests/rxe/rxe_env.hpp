#pragma once
// What tests/rxe/run_in_guest.sh tells the tests that run in the Soft-RoCE guest, and small
// helpers to run programs there. Every rxe test starts with require_guest(): outside the guest
// the variables are missing and the test fails with a message that says how to run it.
//
// Variables (set by run_in_guest.sh, see tests/rxe/README.md):
//   IBSCOPE_RXE_DEVICES   "rxe0 rxe1"             the verbs devices, port 1 each
//   IBSCOPE_RXE_ADDRS     "192.0.2.1 192.0.2.2"   the IPv4 address of each device's netdev
//   IBSCOPE_RXE_NETDEVS   "rxe-a rxe-b"           each device's netdev (the two veth ends)
//   IBSCOPE_RXE_GID_INDEX "1"                     the RoCE v2 GID of each address

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace ibscope::test::rxe {

inline std::vector<std::string> env_words(const char* name) {
  std::vector<std::string> words;
  const char* value = std::getenv(name);
  std::istringstream in(value != nullptr ? value : "");
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

inline bool in_guest() { return std::getenv("IBSCOPE_RXE_DEVICES") != nullptr; }

/// Fails the current test unless it runs in the guest that run_in_guest.sh prepared.
inline void require_guest() {
  if (!in_guest()) {
    FAIL(
        "IBSCOPE_RXE_DEVICES is not set: this test needs the Soft-RoCE guest; run it with "
        "tests/rxe/run_in_guest.sh -- <this binary>, or `ctest -L rxe`");
  }
  REQUIRE(env_words("IBSCOPE_RXE_DEVICES").size() >= 2);
  REQUIRE(env_words("IBSCOPE_RXE_ADDRS").size() == env_words("IBSCOPE_RXE_DEVICES").size());
  REQUIRE(env_words("IBSCOPE_RXE_NETDEVS").size() == env_words("IBSCOPE_RXE_DEVICES").size());
}

inline std::vector<std::string> devices() { return env_words("IBSCOPE_RXE_DEVICES"); }
inline std::vector<std::string> addrs() { return env_words("IBSCOPE_RXE_ADDRS"); }
inline std::vector<std::string> netdevs() { return env_words("IBSCOPE_RXE_NETDEVS"); }

inline int gid_index() {
  const char* v = std::getenv("IBSCOPE_RXE_GID_INDEX");
  return v != nullptr ? std::atoi(v) : 1;
}

/// Absolute path of `program` found in PATH, or "" (process.hpp's runner does not search).
inline std::string find_in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream in(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(in, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
  }
  return "";
}

}  // namespace ibscope::test::rxe
