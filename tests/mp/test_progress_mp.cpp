// The progress line as a user sees it: drawn on a terminal (a pseudo-terminal from script(1)),
// also through the local launcher; never in pipes or logs, nor with --quiet.

#include <catch2/catch.hpp>
#include <sstream>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {

// Runs ibscope ARGS under script(1), which gives it a pseudo-terminal as stdout and stderr.
ProcessResult run_on_terminal(const std::string& args) {
  return run_process(
      {{"-qec", ibscope_binary() + " " + args, "/dev/null"}, {}, 120, "/usr/bin/script"});
}

constexpr const char* kErase = "\r\x1b[2K";

}  // namespace

TEST_CASE("the progress line is drawn on a terminal, also through the local launcher",
          "[mp][progress]") {
  const std::string out = make_temp_dir();
  for (const char* np : {"1", "2"}) {
    INFO("--np " << np);
    const auto r = run_on_terminal(std::string("allreduce --np ") + np +
                                   " -A ring,rd -e 64K -n 5 --out " + out);
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find(std::string(kErase) + "[1/") != std::string::npos);
    CHECK(r.out.find("allreduce rd float sum 64 KiB") != std::string::npos);
    // Every table row starts on a clean line: what stays visible after the line's last erase
    // is the row alone, never glued to a progress text.
    std::istringstream lines(r.out);
    int rows = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.find("float    sum") == std::string::npos) continue;
      ++rows;
      const auto erase = line.rfind("\x1b[2K");
      const std::string visible = erase == std::string::npos ? line : line.substr(erase + 4);
      INFO(visible);
      CHECK(visible.find("%]") == std::string::npos);
      CHECK(visible.find("float    sum") != std::string::npos);
    }
    CHECK(rows > 0);
  }
  const auto quiet = run_on_terminal("allreduce --np 2 -A ring -e 64K -n 5 -q --out " + out);
  INFO(describe(quiet));
  REQUIRE(quiet.exit_code == 0);
  CHECK(quiet.out.find(kErase) == std::string::npos);
}

TEST_CASE("no progress line in pipes", "[mp][progress]") {
  const auto r = run_process(
      {{"allreduce", "--np", "2", "-A", "ring", "-e", "64K", "-n", "5", "--out", make_temp_dir()},
       {},
       120,
       ""});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\x1b[") == std::string::npos);
  CHECK(r.err.find("\x1b[") == std::string::npos);
}
