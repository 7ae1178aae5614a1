// The command line as a user meets it: usage errors exit 2 with one clear line and start no
// ranks; help and version work.

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {}  // namespace

TEST_CASE("usage errors exit 2 with a clear message", "[mp][cli]") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"allreduce", "--bogus"}, "--bogus"},
      {{"allreduce", "-b", "1M", "-e", "1K"}, "inverted sweep"},
      {{"allreduce", "-b", "12Q"}, "unknown unit"},
      {{"allreduce", "-d", "float17"}, "unknown type 'float17'"},
      {{"allreduce", "-o", "prod"}, "unknown reduction 'prod'"},
      {{"allreduce", "-A", "magic"}, "unknown algorithm 'magic'"},
      {{"allreduce", "-f", "1"}, "must be > 1"},
      {{"allreduce", "-e", "1T"}, "limit"},
      {{"allreduce", "--timeout", "soon"}, "invalid duration"},
      {{"p2p", "--tests", "latency,speed"}, "unknown test 'speed'"},
      {{"p2p", "--pairs", "some"}, "'some'"},
      {{}, "subcommand"},
      // A mistyped command is named, with the nearest one; --help after it is no way out.
      {{"allreduc", "--np", "2"}, "unknown command 'allreduc' (did you mean 'allreduce'?)"},
      {{"allreduc", "--help"}, "unknown command 'allreduc' (did you mean 'allreduce'?)"},
      {{"foo"}, "unknown command 'foo'; 'ibscope --help' lists the commands"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.out.find("busbw") == std::string::npos);  // nothing was measured
  }
}

TEST_CASE("validate accepts a real results file and rejects broken ones", "[mp][cli]") {
  const std::string dir = make_temp_dir();
  const auto ok =
      run_process({{"allreduce", "--np", "1", "--sizes", "64", "-n", "1", "--out", dir}, {}, 60});
  INFO(describe(ok));
  REQUIRE(ok.exit_code == 0);
  const std::string path = results_path(ok);
  const auto v = run_cli({"validate", path});
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("valid ibscope results") != std::string::npos);

  const std::string bad = dir + "/broken.json";
  std::ofstream(bad) << "{\"schema_version\": 1, \"tool\": ";
  const auto b = run_cli({"validate", bad});
  INFO(describe(b));
  CHECK(b.exit_code == 2);
  CHECK(b.err.find("not valid JSON") != std::string::npos);
}

TEST_CASE("validate rejects schema violations naming the JSON path", "[mp][cli]") {
  const std::string dir = make_temp_dir();
  const auto ok =
      run_process({{"allreduce", "--np", "1", "--sizes", "64", "-n", "1", "--out", dir}, {}, 60});
  INFO(describe(ok));
  REQUIRE(ok.exit_code == 0);
  std::ifstream in(results_path(ok));
  const nlohmann::json good = nlohmann::json::parse(in);
  struct Case {
    std::string name;
    void (*mutate)(nlohmann::json&);
    std::string message;
  };
  const std::vector<Case> cases = {
      {"type",
       [](nlohmann::json& d) { d.at("collectives").at("rows").at(0)["busbw_gbps"] = "fast"; },
       "collectives.rows[0].busbw_gbps: expected a number, got string"},
      {"unknown",
       [](nlohmann::json& d) { d.at("collectives").at("rows").at(0)["busbw_gbs"] = 1.0; },
       "collectives.rows[0].busbw_gbs: unknown field"},
      {"missing", [](nlohmann::json& d) { d.at("tool").erase("git_sha"); },
       "tool.git_sha: missing"},
      {"version", [](nlohmann::json& d) { d["schema_version"] = 3; },
       "schema_version: version 3 is not supported (this ibscope reads schema versions 1 to 2)"},
  };
  for (const auto& c : cases) {
    nlohmann::json doc = good;
    c.mutate(doc);
    const std::string bad = dir + "/" + c.name + ".json";
    std::ofstream(bad) << doc.dump(1);
    const auto b = run_cli({"validate", bad});
    INFO(c.name << ": " << describe(b));
    CHECK(b.exit_code == 2);
    CHECK(b.err.find(bad + ": " + c.message) != std::string::npos);
  }
}

TEST_CASE("help and version", "[mp][cli]") {
  const auto h = run_cli({"allreduce", "--help"});
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("--minbytes") != std::string::npos);
  const auto v = run_cli({"--version"});
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("ibscope") != std::string::npos);
}

TEST_CASE("format csv prints the rows and writes a csv beside the json", "[mp][cli]") {
  const std::string dir = make_temp_dir();
  const auto r = run_process(
      {{"allreduce", "--np", "2", "--sizes", "64,1K", "-n", "1", "--format", "csv", "--out", dir},
       {},
       60});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("section,collective,algorithm") == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1 + 2 * 2);
  CHECK(r.err.find("# csv: ") != std::string::npos);
  load_run_results(r);  // the JSON is written and valid too
}
