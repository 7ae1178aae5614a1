// Acceptance verdicts as Prometheus metrics from real runs: `ibscope accept --prometheus-file`
// on two emulated hosts, `ibscope export-prometheus` of its results file (stdout and -o, which
// replaces atomically), every sample line parseable; bad input exits 2 and writes nothing.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../common/text_lines.hpp"
#include "emulated_hosts.hpp"
#include "results_json.hpp"

using namespace ibscope::test;
namespace fs = std::filesystem;

namespace {

// Every line is a HELP/TYPE comment or a sample the text format 0.0.4 accepts.
void check_exposition(const std::string& text) {
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [0-9eE.+-]+$)");
  std::istringstream in(text);
  int samples = 0;
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    if (line.rfind("# HELP ibscope_", 0) == 0 || line.rfind("# TYPE ibscope_", 0) == 0) continue;
    CHECK(std::regex_match(line, sample));
    ++samples;
  }
  CHECK(samples > 5);
  CHECK(text.ends_with("\n"));
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

// The text without the timestamp sample (accept stamps its own end, export the file's).
std::string without_timestamp(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ibscope_accept_timestamp_seconds ", 0) != 0) out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("accept writes a Prometheus textfile, export-prometheus converts its results",
          "[mp][accept][prometheus]") {
  const std::string dir = make_temp_dir();
  const std::string prom = dir + "/ibscope.prom";
  const auto res = run_emulated_hosts(
      2, {"accept", "--transport", "ucx", "--timeout", "30",   "--expect-gbps",
          "0.01",   "--link-kind", "tcp", "--bw-size", "64K",  "--bw-iters",
          "3",      "--lat-iters", "20",  "-A",        "ring", "--ar-sizes",
          "64K",    "--ar-iters",  "5",   "--out",     dir,    "--prometheus-file",
          prom});
  INFO(describe(res[0]) << "\n" << describe(res[1]));
  // The link passes; on a loaded machine the all-reduce may still name a straggler (exit 1).
  REQUIRE((res[0].exit_code == 0 || res[0].exit_code == 1));
  const std::string from_accept = read_text_file(prom);
  INFO(from_accept);
  check_exposition(from_accept);
  CHECK(from_accept.find(fmt::format("ibscope_accept_pass{{transport=\"ucx\"}} {}\n",
                                     res[0].exit_code == 0 ? 1 : 0)) != std::string::npos);
  const std::string link_pass = line_starting(
      from_accept, "ibscope_link_pass{rank_a=\"0\",rank_b=\"1\",host_a=\"emu0\",host_b=\"emu1\",");
  CHECK(link_pass.ends_with("} 1"));
  CHECK(from_accept.find("ibscope_link_expected_gbps{") != std::string::npos);
  CHECK(from_accept.find("ibscope_host_pass{host=\"emu1\"} 1\n") != std::string::npos);
  CHECK(from_accept.find("ibscope_straggler{rank=\"1\",host=\"emu1\"} ") != std::string::npos);

  const std::string results = results_path(res[0]);
  REQUIRE(!results.empty());
  const auto out = run_process({{"export-prometheus", results}, {}, 30});
  INFO(describe(out));
  REQUIRE(out.exit_code == 0);
  check_exposition(out.out);
  CHECK(without_timestamp(out.out) == without_timestamp(from_accept));

  SECTION("-o replaces the textfile atomically and leaves no temp file") {
    const auto o = run_process({{"export-prometheus", results, "-o", prom}, {}, 30});
    INFO(describe(o));
    CHECK(o.exit_code == 0);
    CHECK(o.out.empty());
    CHECK(read_text_file(prom) == out.out);
    for (const auto& e : fs::directory_iterator(dir)) {
      INFO(e.path());
      CHECK(e.path().filename().string().find(".new.") == std::string::npos);
    }
  }
  SECTION("bad input exits 2 with one line and leaves the textfile as it was") {
    const auto other = run_process(
        {{"allreduce", "--np", "1", "--sizes", "64", "-n", "1", "--out", make_temp_dir()}, {}, 60});
    REQUIRE(other.exit_code == 0);
    const std::string broken = dir + "/broken.json";
    std::ofstream(broken) << "{\"schema_version\": 1, ";
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"export-prometheus", results_path(other), "-o", prom}, "no acceptance section"},
        {{"export-prometheus", results, broken, "-o", prom}, "not valid JSON"},
        {{"export-prometheus", results, "-o", dir + "/ibscope.txt"}, "reads only *.prom"},
        {{"export-prometheus", results, "-o", dir + "/no/such/x.prom"}, "no folder"},
        {{"export-prometheus", dir + "/missing.json"}, "missing.json"},
    };
    for (const auto& [args, message] : cases) {
      const auto r = run_process({args, {}, 30});
      INFO(describe(r));
      CHECK(r.exit_code == 2);
      CHECK(r.err.find(message) != std::string::npos);
      CHECK(r.out.empty());
      CHECK(read_text_file(prom) == from_accept);
    }
    CHECK_FALSE(fs::exists(dir + "/ibscope.txt"));
  }
}

TEST_CASE("accept refuses a bad --prometheus-file before any rank starts",
          "[mp][accept][prometheus]") {
  const std::string dir = make_temp_dir();
  const auto r = run_process(
      {{"accept", "--np", "2", "--out", dir, "--prometheus-file", dir + "/metrics.txt"}, {}, 30});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--prometheus-file") != std::string::npos);
  CHECK(results_path(r).empty());
}
