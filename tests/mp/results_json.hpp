#pragma once
// Loads the results file a test run wrote: checked by ibscope's own validating loader (schema
// and typed document), then returned as JSON for the test to inspect field by field.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ibscope/results/loader.hpp"
#include "process.hpp"

namespace ibscope::test {

inline nlohmann::json load_run_results(const ProcessResult& r) {
  const std::string path = results_path(r);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  REQUIRE(!path.empty());
  (void)results::load(path);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

inline std::string describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (TIMED OUT)" : "") +
         "\n--- stdout ---\n" + r.out + "\n--- stderr ---\n" + r.err;
}

/// Whether the kernel of this host lists RDMA devices (tests of the no-device path skip).
inline bool host_has_rdma_devices() {
  std::error_code ec;
  return std::filesystem::directory_iterator("/sys/class/infiniband", ec) !=
         std::filesystem::directory_iterator();
}

}  // namespace ibscope::test
