// Results file: write, read back, never overwrite, and reject malformed files with a message
// that names the file and the JSON path.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/temp_dir.hpp"
#include "common/text_lines.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/file_api.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/output/results_csv.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/results_file.hpp"
#include "ibscope/results/writer.hpp"

namespace fs = std::filesystem;
using ibscope::test::TempDir;
using nlohmann::json;

namespace {

std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

std::size_t fields_in(const std::string& csv_line) {
  return static_cast<std::size_t>(std::count(csv_line.begin(), csv_line.end(), ',')) + 1;
}

ibscope::measure::CollectiveRow sample_collective_row() {
  ibscope::measure::CollectiveRow row;
  row.collective = ibscope::Collective::kAllreduce;
  row.algorithm = "ring";
  row.type = ibscope::DataType::kFloat32;
  row.op = ibscope::ReduceOp::kSum;
  row.in_place = true;
  row.size_bytes = 1 << 20;
  row.count = (1 << 20) / 4;
  row.ranks = 8;
  row.samples_us = {10.5, 12.0, 11.25};
  row.iteration_us = ibscope::measure::summarize(row.samples_us);
  row.iteration_rank = 5;
  row.time_us = 11.2;
  row.average = ibscope::measure::TimeAverage::kMean;
  row.algbw_gbps = 93.5;
  row.busbw_gbps = 163.625;
  row.wrong = 0;
  return row;
}

ibscope::measure::P2pRow sample_p2p_row() {
  ibscope::measure::P2pRow row;
  row.test = "bw";
  row.rank_a = 0;
  row.rank_b = 3;
  row.host_a = "node-a";
  row.host_b = "node-b";
  row.size_bytes = 4096;
  row.window = 64;
  row.samples_us = {20.0, 22.0};
  row.time_us = ibscope::measure::summarize(row.samples_us);
  row.bw_gbps = 12.5;
  row.peak_bw_gbps = 13.25;
  row.msg_rate_mps = 3.0;
  row.transports = "rc_mlx5/mlx5_0:1";
  return row;
}

namespace results = ibscope::results;

results::Document sample_document() {
  auto doc = results::Document::start("allreduce", {"ibscope", "allreduce", "-b", "8", "-e", "1M"});
  doc.add_warning("debug build");
  doc.collectives.params = results::CollectiveParams{};
  doc.collectives.params->iters = 20;
  doc.collectives.params->warmup_iters = 5;
  doc.job.ranks = 8;
  doc.environment.ucx_env["UCX_TLS"] = "rc";
  doc.environment.ibscope_env =
      std::map<std::string, std::string>{{"IBSCOPE_FAULT_DELAY_RANK", "2:4000"}};
  doc.add_row(sample_collective_row());
  doc.add_row(sample_p2p_row());
  return doc;
}

// The file as JSON, after the loader accepted it.
json load_json(const fs::path& path) {
  (void)results::load(path);
  return json::parse(ibscope::test::read_text_file(path));
}

json as_json(const results::Document& doc) { return json::parse(results::to_text(doc)); }

// Writes `doc` to a file in `dir` and expects results::load to reject it with a message that
// contains the file name and every one of `needles`.
void expect_rejected(const fs::path& dir, const std::string& name, const std::string& text,
                     const std::vector<std::string>& needles) {
  const fs::path file = dir / name;
  write_text(file, text);
  INFO("case " << name);
  try {
    results::load(file);
    FAIL("accepted " << name);
  } catch (const ibscope::UsageError& e) {
    const std::string what = e.what();
    INFO("message: " << what);
    CHECK(what.find(file.string()) != std::string::npos);
    for (const auto& needle : needles) {
      INFO("missing: " << needle);
      CHECK(what.find(needle) != std::string::npos);
    }
    CHECK(e.kind() == ibscope::ErrorKind::kUsage);
  }
}

void expect_rejected(const fs::path& dir, const std::string& name,
                     const std::function<void(json&)>& mutate,
                     const std::vector<std::string>& needles) {
  json doc = as_json(sample_document());
  mutate(doc);
  expect_rejected(dir, name, doc.dump(1), needles);
}

}  // namespace

TEST_CASE("results: written file loads back with every field", "[results]") {
  TempDir tmp;
  results::Document doc = sample_document();
  const fs::path path = results::write(doc, tmp.path() / "nested" / "dir");  // created on demand
  REQUIRE(fs::exists(path));
  CHECK(path.parent_path() == tmp.path() / "nested" / "dir");
  const std::string name = path.filename().string();
  CHECK(name.rfind("ibscope-allreduce-", 0) == 0);
  CHECK(path.extension() == ".json");

  const json j = load_json(path);
  CHECK(j["schema_version"] == results::kSupportedSchemaVersion);
  CHECK(j["tool"]["name"] == "ibscope");
  CHECK(j["command"]["subcommand"] == "allreduce");
  CHECK(j["command"]["argv"] == json::array({"ibscope", "allreduce", "-b", "8", "-e", "1M"}));
  CHECK(j["complete"] == true);
  CHECK(j["error"].is_null());
  CHECK(j["finished_utc"].is_string());
  CHECK(j["started_utc"].get<std::string>().size() == 20);  // 2026-12-02T13:45:07Z
  CHECK(j["warnings"] == json::array({"debug build"}));
  CHECK(j["collectives"]["params"]["iters"] == 20);
  CHECK(j["job"]["ranks"] == 8);
  CHECK(j["environment"]["ucx_env"]["UCX_TLS"] == "rc");
  CHECK(j["environment"]["ibscope_env"]["IBSCOPE_FAULT_DELAY_RANK"] == "2:4000");

  REQUIRE(j["collectives"]["rows"].size() == 1);
  const json& c = j["collectives"]["rows"][0];
  const auto want_c = sample_collective_row();
  CHECK(c["collective"] == "allreduce");
  CHECK(c["algorithm"] == "ring");
  CHECK(c["type"] == "float");
  CHECK(c["op"] == "sum");
  CHECK(c["in_place"] == true);
  CHECK(c["size_bytes"] == want_c.size_bytes);
  CHECK(c["count"] == want_c.count);
  CHECK(c["ranks"] == 8);
  CHECK(c["time_us"] == 11.2);
  CHECK(c["average"] == "avg");
  CHECK(c["iteration_rank"] == 5);
  CHECK(c["iteration_us"]["n"] == 3);
  CHECK(c["iteration_us"]["min"] == 10.5);
  CHECK(c["iteration_us"]["max"] == 12.0);
  CHECK(c["iteration_us"]["p50"] == 11.25);
  CHECK(c["iteration_us"]["mean"].get<double>() == Approx(want_c.iteration_us.mean));
  CHECK(c["iteration_us"]["sd"].get<double>() == Approx(want_c.iteration_us.sd));
  CHECK(c["algbw_gbps"] == 93.5);
  CHECK(c["busbw_gbps"] == 163.625);
  CHECK(c["wrong"] == 0);
  CHECK(c["samples_us"] == json::array({10.5, 12.0, 11.25}));

  REQUIRE(j["p2p"]["rows"].size() == 1);
  const json& p = j["p2p"]["rows"][0];
  CHECK(p["test"] == "bw");
  CHECK(p["rank_a"] == 0);
  CHECK(p["rank_b"] == 3);
  CHECK(p["host_a"] == "node-a");
  CHECK(p["host_b"] == "node-b");
  CHECK(p["size_bytes"] == 4096);
  CHECK(p["window"] == 64);
  CHECK(p["time_us"]["p50"] == 21.0);
  CHECK(p["bw_gbps"] == 12.5);
  CHECK(p["peak_bw_gbps"] == 13.25);
  CHECK(p["msg_rate_mps"] == 3.0);
  CHECK(p["transports"] == "rc_mlx5/mlx5_0:1");
  CHECK(p["samples_us"] == json::array({20.0, 22.0}));

  // What was written is what the document holds, and it reads back to the same document.
  CHECK(j == as_json(doc));
  CHECK(as_json(results::load(path)) == j);
}

TEST_CASE("results: a failed run without a verification count still loads", "[results]") {
  TempDir tmp;
  auto doc = results::Document::start("p2p", {"ibscope", "p2p"});
  auto row = sample_collective_row();
  row.wrong.reset();  // -c 0
  doc.add_row(row);
  doc.fail("timeout", "rank 3 never arrived");
  const json j = load_json(results::write(doc, tmp.path()));
  CHECK(j["complete"] == false);
  CHECK(j["error"]["kind"] == "timeout");
  CHECK(j["error"]["message"] == "rank 3 never arrived");
  CHECK(j["collectives"]["rows"][0]["wrong"].is_null());
  CHECK(j["p2p"]["rows"].empty());
}

TEST_CASE("results: writing twice gives two files and no temp files", "[results]") {
  TempDir tmp;
  results::Document doc = sample_document();
  const fs::path first = results::write(doc, tmp.path());
  const fs::path second = results::write(doc, tmp.path());
  CHECK(first != second);
  CHECK(fs::exists(first));
  CHECK(fs::exists(second));
  const auto names = list_dir(tmp.path());
  CHECK(names.size() == 2);
  for (const auto& n : names) {
    CHECK(n.rfind("ibscope-allreduce-", 0) == 0);
    CHECK(n.find(".tmp") == std::string::npos);
  }
  results::load(first);
  results::load(second);
}

TEST_CASE("results: write_file_exclusive never replaces an existing file", "[results]") {
  TempDir tmp;
  const fs::path target = tmp.path() / "out.json";
  ibscope::write_file_exclusive(target, "first\n");
  CHECK(ibscope::test::read_text_file(target) == "first\n");
  try {
    ibscope::write_file_exclusive(target, "second\n");
    FAIL("overwrote an existing file");
  } catch (const ibscope::SystemError& e) {
    CHECK(e.errno_value() == EEXIST);
    CHECK(e.kind() == ibscope::ErrorKind::kSystem);
    CHECK(std::string(e.what()).find("out.json") != std::string::npos);
  }
  CHECK(ibscope::test::read_text_file(target) == "first\n");
  CHECK(list_dir(tmp.path()) == std::vector<std::string>{"out.json"});

  // Empty content is a valid (empty) file.
  ibscope::write_file_exclusive(tmp.path() / "empty", "");
  CHECK(fs::file_size(tmp.path() / "empty") == 0);

  // A missing folder is a SystemError, not a crash, and leaves nothing behind.
  CHECK_THROWS_AS(ibscope::write_file_exclusive(tmp.path() / "missing" / "x.json", "x"),
                  ibscope::SystemError);
  CHECK(list_dir(tmp.path()) == std::vector<std::string>{"empty", "out.json"});
}

TEST_CASE("results: write_csv has a header and one line per row", "[results]") {
  TempDir tmp;
  results::Document doc = sample_document();
  auto second = sample_collective_row();
  second.size_bytes = 2 << 20;
  second.wrong.reset();
  doc.add_row(second);
  const fs::path json_path = results::write(doc, tmp.path());
  const fs::path csv_path = ibscope::output::write_results_csv(doc, json_path);
  CHECK(csv_path.parent_path() == json_path.parent_path());
  CHECK(csv_path.stem() == json_path.stem());
  CHECK(csv_path.extension() == ".csv");

  const auto lines = ibscope::test::lines_of(ibscope::test::read_text_file(csv_path));
  REQUIRE(lines.size() == 5);  // collective header + 2 rows, p2p header + 1 row
  CHECK(lines[0].rfind("section,collective,algorithm,type,op,", 0) == 0);
  CHECK(lines[1].rfind("collectives,allreduce,ring,float,sum,1,1048576,262144,8,", 0) == 0);
  const auto field = [&](const std::string& line, const std::string& column) {
    const auto split = [](const std::string& l) {
      std::vector<std::string> out(1);
      for (char ch : l) {
        if (ch == ',') {
          out.emplace_back();
        } else {
          out.back().push_back(ch);
        }
      }
      return out;
    };
    const auto names = split(lines[0]);
    const auto at = std::find(names.begin(), names.end(), column);
    REQUIRE(at != names.end());
    return split(line).at(static_cast<std::size_t>(at - names.begin()));
  };
  CHECK(field(lines[1], "wrong") == "0");
  CHECK(field(lines[1], "time_us") == "11.200");  // nccl-tests' time, not a percentile
  CHECK(field(lines[1], "average") == "avg");
  CHECK(field(lines[1], "iteration_rank") == "5");
  CHECK(field(lines[1], "iteration_us_p50") == "11.250");
  CHECK(lines[2].rfind("collectives,allreduce,ring,float,sum,1,2097152,", 0) == 0);
  CHECK(field(lines[2], "wrong").empty());  // wrong unknown: empty field
  CHECK(fields_in(lines[1]) == fields_in(lines[0]));
  CHECK(fields_in(lines[2]) == fields_in(lines[0]));
  CHECK(lines[3].rfind("section,test,rank_a,rank_b,", 0) == 0);
  CHECK(lines[4].rfind("p2p,bw,0,3,node-a,node-b,4096,64,", 0) == 0);
  CHECK(fields_in(lines[4]) == fields_in(lines[3]));

  // The CSV is never overwritten either.
  CHECK_THROWS_AS(ibscope::output::write_results_csv(doc, json_path), ibscope::SystemError);

  // Only one section: one header.
  TempDir tmp2;
  auto p2p_only = results::Document::start("p2p", {"ibscope", "p2p"});
  p2p_only.add_row(sample_p2p_row());
  p2p_only.add_row(sample_p2p_row());
  const auto p2p_lines = ibscope::test::lines_of(ibscope::test::read_text_file(
      ibscope::output::write_results_csv(p2p_only, results::write(p2p_only, tmp2.path()))));
  REQUIRE(p2p_lines.size() == 3);
  CHECK(p2p_lines[0].rfind("section,test,", 0) == 0);
}

TEST_CASE("results: the loader rejects malformed files naming file and JSON path", "[results]") {
  TempDir tmp;
  const fs::path dir = tmp.path();

  expect_rejected(dir, "text.json", std::string("this is not { json"), {"not valid JSON"});
  expect_rejected(dir, "empty.json", std::string(""), {"not valid JSON"});
  expect_rejected(dir, "array.json", std::string("[1, 2, 3]"), {"object"});
  expect_rejected(dir, "no-version.json", [](json& d) { d.erase("schema_version"); },
                  {"schema_version", "missing"});
  expect_rejected(dir, "version-999.json", [](json& d) { d["schema_version"] = 999; },
                  {"schema_version", "999"});
  expect_rejected(dir, "version-string.json", [](json& d) { d["schema_version"] = "1"; },
                  {"schema_version", "expected an integer"});
  expect_rejected(dir, "other-tool.json", [](json& d) { d["tool"]["name"] = "nccl-tests"; },
                  {"tool.name"});
  expect_rejected(dir, "p50-string.json",
                  [](json& d) { d["collectives"]["rows"][0]["iteration_us"]["p50"] = "fast"; },
                  {"collectives.rows[0].iteration_us.p50", "expected a number", "string"});
  expect_rejected(dir, "no-busbw.json",
                  [](json& d) { d["collectives"]["rows"][0].erase("busbw_gbps"); },
                  {"collectives.rows[0].busbw_gbps", "missing"});
  expect_rejected(dir, "sample-string.json",
                  [](json& d) { d["collectives"]["rows"][0]["samples_us"][1] = "12"; },
                  {"collectives.rows[0].samples_us[1]", "number"});
  expect_rejected(dir, "p2p-test.json", [](json& d) { d["p2p"]["rows"][0]["test"] = "alltoall"; },
                  {"p2p.rows[0].test", "alltoall"});
  expect_rejected(dir, "negative-time.json",
                  [](json& d) { d["collectives"]["rows"][0]["iteration_us"]["min"] = -1.0; },
                  {"collectives.rows[0].iteration_us.min", "negative"});
  expect_rejected(dir, "negative-p2p-time.json",
                  [](json& d) { d["p2p"]["rows"][0]["time_us"]["mean"] = -3; },
                  {"p2p.rows[0].time_us.mean", "negative"});
  expect_rejected(dir, "rows-object.json", [](json& d) { d["p2p"]["rows"] = json::object(); },
                  {"p2p.rows", "expected an array"});
  expect_rejected(dir, "wrong-float.json",
                  [](json& d) { d["collectives"]["rows"][0]["wrong"] = 0.5; },
                  {"collectives.rows[0].wrong"});
  expect_rejected(dir, "nan-bw.json", [](json& d) { d["p2p"]["rows"][0]["bw_gbps"] = nullptr; },
                  {"p2p.rows[0].bw_gbps", "null"});
}

TEST_CASE("results: schema_version is compared exactly and not truncated", "[results]") {
  TempDir tmp;
  // 2^32 + 1 would read as 1 if narrowed to int.
  expect_rejected(tmp.path(), "version-huge.json",
                  [](json& d) { d["schema_version"] = 4294967297ULL; },
                  {"schema_version", "4294967297"});
  expect_rejected(tmp.path(), "version-negative.json",
                  [](json& d) { d["schema_version"] = -4294967295LL; }, {"schema_version"});
}

TEST_CASE("results: a missing file is a usage error naming it", "[results]") {
  TempDir tmp;
  const fs::path missing = tmp.path() / "does-not-exist.json";
  CHECK_THROWS_AS(results::load(missing), ibscope::UsageError);
  CHECK_THROWS_WITH(results::load(missing),
                    Catch::Contains(missing.string()) && Catch::Contains("cannot open"));
}

TEST_CASE("results: parse names the source", "[results]") {
  json doc = as_json(sample_document());
  CHECK_NOTHROW(results::parse(doc.dump(), "memory"));
  doc["collectives"]["rows"][0]["ranks"] = "eight";
  CHECK_THROWS_WITH(results::parse(doc.dump(), "memory"),
                    Catch::StartsWith("memory: collectives.rows[0].ranks: expected an integer"));
}

// Found by tests/fuzz: a number too large for a double makes nlohmann throw out_of_range, not
// parse_error, which escaped the loader as an untyped exception (regressions/results/).
TEST_CASE("results loader: a number too large for a double is a UsageError", "[results]") {
  try {
    results::parse(R"({"schema_version": 1e400})", "big.json");
    FAIL("no exception");
  } catch (const ibscope::UsageError& e) {
    CHECK(std::string(e.what()).find("big.json: not valid JSON") == 0);
  }
}

TEST_CASE("results: acceptance and soak sections read back to the same document", "[results]") {
  results::Document doc = sample_document();
  results::Acceptance a;
  a.pass = false;
  a.transport = results::AcceptTransport::kVerbs;
  a.thresholds = results::AcceptThresholds{.min_fraction = 0.9, .retests = 2};
  a.expect_line_gbit = 400;
  a.preflight = results::AcceptPreflight{.pass = true, .link_layer = "InfiniBand"};
  a.preflight->findings.push_back({"h1", "mlx5_0", false, "MTU 2048 below 4096"});
  a.links.push_back(results::AcceptLink{.rank_a = 0,
                                        .rank_b = 1,
                                        .host_a = "h0",
                                        .host_b = "h1",
                                        .measured_gbps = 11.5,
                                        .expected_gbps = std::nan(""),
                                        .pass = false,
                                        .reason = "below expected"});
  a.hosts.push_back(results::AcceptHost{"h1", 1, 1, false, false, "slow"});
  a.nics.push_back(results::AcceptNic{"h1", "mlx5_0:1", 1, 1, false, false});
  a.allreduce = results::AcceptAllreduce{4, 0};
  a.stragglers = results::Stragglers{.clock_uncertainty_us = 3.5};
  a.stragglers->ranks.push_back({.rank = 1, .host = "h1", .iterations = 20});
  a.stragglers->rows.push_back({"ring", 1024, false, {{0.0, 12.5}, {0.0, std::nan("")}}});
  a.stragglers->straggler = results::NamedStraggler{1, "h1"};
  a.fault_hooks = {"IBSCOPE_FAULT_DELAY_RANK=1:4000 (every rank)"};
  doc.acceptance = a;
  results::Soak soak;
  soak.params.duration_s = 60;
  soak.params.sizes_bytes = {4096, 4 << 20};
  ibscope::measure::SoakWindow w;
  w.index = 1;
  w.rss_bytes = {1 << 20};
  w.cases.push_back({.algorithm = "ring", .type = "float", .op = "sum", .size_bytes = 4096});
  soak.windows.push_back(w);
  soak.summary = ibscope::measure::SoakSummary{};
  soak.summary->reasons = {"drift"};
  doc.soak = soak;

  TempDir tmp;
  const fs::path path = results::write(doc, tmp.path());
  const results::Document back = results::load(path);
  CHECK(as_json(back) == as_json(doc));
  REQUIRE(back.acceptance);
  CHECK(std::isnan(back.acceptance->links[0].expected_gbps));  // null in the file
  CHECK(back.acceptance->transport == results::AcceptTransport::kVerbs);
  CHECK(std::isnan(back.acceptance->stragglers->rows[0].arrival_us[1][1]));
  CHECK(back.acceptance->stragglers->straggler->host == "h1");
  CHECK(back.acceptance->fault_hooks ==
        std::vector<std::string>{"IBSCOPE_FAULT_DELAY_RANK=1:4000 (every rank)"});
  CHECK(back.environment.ibscope_env == doc.environment.ibscope_env);
  REQUIRE(back.soak);
  CHECK(back.soak->windows.size() == 1);
  CHECK(back.soak->summary->reasons == std::vector<std::string>{"drift"});
  CHECK(json::parse(ibscope::test::read_text_file(path))["acceptance"]["links"][0]["expected_gbps"]
            .is_null());
}

TEST_CASE("a checkpoint holds every row added so far and is a loadable incomplete run",
          "[results][checkpoint]") {
  TempDir dir;
  auto doc = sample_document();
  auto file = results::ResultsFile::reserve(doc, dir.path() / "out");
  CHECK(file.checkpoint_path().string() == file.path().string() + ".partial");
  file.checkpoint(doc);
  doc.add_row(sample_collective_row());
  file.checkpoint(doc);  // replaced, not a second file
  CHECK(list_dir(dir.path() / "out") ==
        std::vector<std::string>{file.checkpoint_path().filename().string()});
  const json j = load_json(file.checkpoint_path());
  CHECK_FALSE(j["complete"].get<bool>());
  CHECK(j["finished_utc"].is_null());
  CHECK(j["error"]["kind"] == "unfinished");
  CHECK(j["collectives"]["rows"].size() == 2);
  CHECK(j["p2p"]["rows"].size() == 1);
  CHECK_THAT(j["error"]["message"].get<std::string>(),
             Catch::Contains("holds the 3 rows measured until") &&
                 Catch::Contains("ibscope recover " + file.checkpoint_path().string()));
  // The document itself is untouched: the run is still going.
  CHECK(doc.complete);
  CHECK_FALSE(doc.error.has_value());
}

TEST_CASE("writing the results file removes the checkpoint and never overwrites",
          "[results][checkpoint]") {
  TempDir dir;
  auto doc = sample_document();
  auto file = results::ResultsFile::reserve(doc, dir.path());
  file.checkpoint(doc);
  const fs::path written = file.write(doc);
  CHECK(written == file.path());
  CHECK(list_dir(dir.path()) == std::vector<std::string>{written.filename().string()});
  CHECK(load_json(written)["complete"].get<bool>());
  // The reserved name taken meanwhile: the second write goes to a fresh name.
  const fs::path again = file.write(doc);
  CHECK(again != written);
  CHECK(list_dir(dir.path()).size() == 2);
}

TEST_CASE("recover makes a results file of a checkpoint and refuses everything else",
          "[results][checkpoint]") {
  TempDir dir;
  auto doc = sample_document();
  auto file = results::ResultsFile::reserve(doc, dir.path());
  file.checkpoint(doc);
  const results::Recovered r = results::recover(file.checkpoint_path(), {});
  CHECK(r.path == file.path());
  CHECK(r.rows == 2);
  const json j = load_json(r.path);
  CHECK_FALSE(j["complete"].get<bool>());
  CHECK(j["error"]["kind"] == "unfinished");
  CHECK_THAT(j["error"]["message"].get<std::string>(),
             Catch::StartsWith("recovered by `ibscope recover` from the checkpoint ") &&
                 !Catch::Contains("`ibscope recover /"));
  CHECK(fs::exists(file.checkpoint_path()));  // kept
  // Twice: the results file exists, nothing is overwritten.
  try {
    (void)results::recover(file.checkpoint_path(), {});
    FAIL("recovered twice");
  } catch (const ibscope::SystemError& e) {
    CHECK(e.errno_value() == EEXIST);
    CHECK_THAT(e.what(), Catch::Contains("exists already"));
  }
  // Into another folder.
  const results::Recovered elsewhere = results::recover(file.checkpoint_path(), dir.path() / "o");
  CHECK(elsewhere.path == dir.path() / "o" / file.path().filename());
  // A results file is not a checkpoint, recovered or complete, whatever its name.
  CHECK_THROWS_WITH(results::recover(r.path, dir.path() / "p"),
                    Catch::Contains("is not an ibscope checkpoint: a checkpoint's name ends in"));
  const fs::path complete = results::write(doc, dir.path() / "c");
  const fs::path renamed = complete.string() + ".partial";
  fs::rename(complete, renamed);
  CHECK_THROWS_WITH(
      results::recover(renamed, dir.path() / "q"),
      Catch::Contains("is not an ibscope checkpoint (a checkpoint has complete=false"));
}

TEST_CASE("recover names its results file <name>.json whatever the checkpoint is called",
          "[results][checkpoint][recover]") {
  TempDir dir;
  auto doc = sample_document();
  auto file = results::ResultsFile::reserve(doc, dir.path());
  file.checkpoint(doc);
  // A checkpoint someone renamed x.partial recovers to x.json, not to a file without .json.
  fs::rename(file.checkpoint_path(), dir.path() / "x.partial");
  const results::Recovered r = results::recover(dir.path() / "x.partial", dir.path() / "out");
  CHECK(r.path == dir.path() / "out" / "x.json");
  CHECK(load_json(r.path)["error"]["kind"] == "unfinished");

  CHECK(results::recovered_path("r/ibscope-allreduce-20261207T040032Z-000de8.json.partial", "o") ==
        fs::path("o/ibscope-allreduce-20261207T040032Z-000de8.json"));
  CHECK(results::recovered_path("x.json.partial", "") == fs::path("x.json"));
  CHECK(results::recovered_path("r/x.partial", "r") == fs::path("r/x.json"));
  CHECK_THROWS_AS(results::recovered_path("r/x.json", "r"), ibscope::UsageError);
  CHECK_THROWS_AS(results::recovered_path("r/.partial", "r"), ibscope::UsageError);
}

TEST_CASE("recover refuses the checkpoint of a run whose rank 0 holds its lock",
          "[results][checkpoint][recover]") {
  TempDir dir;
  auto doc = sample_document();
  auto file = results::ResultsFile::reserve(doc, dir.path());
  file.lock("pid 4242 on node017");
  file.checkpoint(doc);
  CHECK(file.lock_path().string() == file.path().string() + ".lock");
  CHECK_THAT(load_json(file.checkpoint_path())["error"]["message"].get<std::string>(),
             Catch::StartsWith("rank 0 (pid 4242 on node017) had not written its results file "
                               "yet: this checkpoint holds the 2 rows measured until"));
  try {
    (void)results::recover(file.checkpoint_path(), {});
    FAIL("recovered the checkpoint of a live run");
  } catch (const ibscope::UsageError& e) {
    CHECK_THAT(e.what(), Catch::Contains("a run that is still going: rank 0 (pid 4242 on node017) "
                                         "of the run that writes " +
                                         file.path().filename().string() + " holds its lock " +
                                         file.lock_path().string()));
  }
  CHECK_FALSE(fs::exists(file.path()));
  // The run ends: its results file, nothing else.
  const fs::path written = file.write(doc);
  CHECK(list_dir(dir.path()) == std::vector<std::string>{written.filename().string()});

  // A lock file that nobody holds (a killed rank 0 left it) blocks nothing; recover removes it.
  auto killed = results::ResultsFile::reserve(doc, dir.path() / "k");
  killed.checkpoint(doc);
  write_text(killed.lock_path(), "rank 0 (pid 1 on gone)\n");
  CHECK(results::recover(killed.checkpoint_path(), {}).path == killed.path());
  CHECK_FALSE(fs::exists(killed.lock_path()));
}

namespace {

// A file system with no room for a new name: link() fails (the results file), rename() works.
class NoRoomForLinks : public ibscope::FileApi {
 public:
  int link(const char*, const char*) override {
    errno = ENOSPC;
    return -1;
  }
};

// A full disk: every write() fails.
class NoRoomForWrites : public ibscope::FileApi {
 public:
  ssize_t write(int, const void*, std::size_t) override {
    errno = ENOSPC;
    return -1;
  }
};

}  // namespace

TEST_CASE("a results file that cannot be written leaves a checkpoint that says so",
          "[results][checkpoint]") {
  TempDir dir;
  auto doc = sample_document();
  auto file = results::ResultsFile::reserve(doc, dir.path());
  file.lock("pid 4242 on node017");
  file.checkpoint(doc);                  // 2 rows
  doc.add_row(sample_collective_row());  // the last batch: 3 rows
  const std::string checkpoint = file.checkpoint_path().string();

  SECTION("the checkpoint can still be replaced: it holds every row and says why") {
    NoRoomForLinks no_room;
    ibscope::ScopedFileApi installed(no_room);
    try {
      (void)file.write(doc);
      FAIL("wrote on a full disk");
    } catch (const ibscope::SystemError& e) {
      CHECK(e.errno_value() == ENOSPC);
      CHECK_THAT(e.what(), Catch::StartsWith("cannot write the results file " +
                                             file.path().string() + ": No space left on device") &&
                               Catch::Contains("all 3 rows are in the checkpoint " + checkpoint +
                                               ", which says so: `ibscope recover " + checkpoint));
    }
    const json j = load_json(checkpoint);
    CHECK(j["collectives"]["rows"].size() == 2);
    const std::string message = j["error"]["message"].get<std::string>();
    CHECK_THAT(message, Catch::StartsWith("rank 0 (pid 4242 on node017) ended the run at ") &&
                            Catch::Contains("(complete) but could not write its results file " +
                                            file.path().string() + " (No space left on device)") &&
                            Catch::Contains("holds all 3 rows"));
    CHECK_THAT(message, !Catch::Contains("killed") && !Catch::Contains("crashed"));
  }
  SECTION("nor the checkpoint: the error says what the older one holds") {
    NoRoomForWrites full;
    ibscope::ScopedFileApi installed(full);
    try {
      (void)file.write(doc);
      FAIL("wrote on a full disk");
    } catch (const ibscope::SystemError& e) {
      CHECK(e.errno_value() == ENOSPC);
      CHECK_THAT(e.what(),
                 Catch::Contains("the checkpoint " + checkpoint +
                                 " could not be updated either (No space left on device): it "
                                 "holds the 2 rows measured until ") &&
                     Catch::Contains(", of 3;"));
    }
    const json j = load_json(checkpoint);
    CHECK(j["collectives"]["rows"].size() == 1);
    CHECK_THAT(j["error"]["message"].get<std::string>(),
               Catch::Contains("had not written its results file yet"));
  }
  CHECK(list_dir(dir.path()) ==
        std::vector<std::string>{file.lock_path().filename().string(),
                                 file.checkpoint_path().filename().string()});
}
