// Every results file an mp test makes is checked against the results schema: process.cpp hands
// each "# results: PATH" a finished child printed to this observer, which runs in the test's
// own thread, so a violation fails the test that made the file.

#include <catch2/catch.hpp>
#include <exception>
#include <string>

#include "ibscope/results/loader.hpp"
#include "process.hpp"

namespace ibscope::test {
namespace {

void check_against_schema(const std::string& path) {
  try {
    (void)results::load(path);  // the schema check of `ibscope validate` and every loader
  } catch (const std::exception& e) {
    FAIL_CHECK("results file violates the schema: " << e.what());
  }
}

const bool kInstalled = [] {
  set_results_observer(&check_against_schema);
  return true;
}();

}  // namespace
}  // namespace ibscope::test
