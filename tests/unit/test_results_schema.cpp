// The results schema (results/schema/, embedded in the binary) is what every loader and
// `ibscope validate` check: each kind of violation is rejected naming the JSON path, and what
// the writers produce passes.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/loopback.hpp"
#include "ibscope/results/schema.hpp"
#include "ibscope/results/writer.hpp"

using nlohmann::json;

namespace {

json written_document() {
  auto doc = ibscope::results::Document::start("allreduce", {"ibscope", "allreduce"});
  ibscope::measure::CollectiveRow row;
  row.collective = ibscope::Collective::kAllreduce;
  row.algorithm = "ring";
  row.type = ibscope::DataType::kFloat32;
  row.op = ibscope::ReduceOp::kSum;
  row.size_bytes = 1024;
  row.count = 256;
  row.ranks = 2;
  row.samples_us = {10.0, 11.0};
  row.iteration_us = ibscope::measure::summarize(row.samples_us);
  row.time_us = 10.5;
  row.wrong = 0;
  row.mem = ibscope::memory::MemKind::kCuda;
  row.mem_path = ibscope::memory::MemPath::kDirect;
  doc.add_row(row);
  doc.tuning = ibscope::collectives::TuningTable{
      .entries = {ibscope::collectives::TuningEntry{
          .collective = "allreduce",
          .ranks = 2,
          .hosts = 1,
          .ranges = {ibscope::collectives::TuningRange{.algorithm = "ring"}}}},
      .source = "this run"};
  doc.environment.ibscope_env =
      std::map<std::string, std::string>{{"IBSCOPE_FAULT_CORRUPT_RANK", "1"}};
  doc.acceptance = ibscope::results::Acceptance{};
  doc.acceptance->pass = true;
  doc.acceptance->fault_hooks = {"IBSCOPE_FAULT_CORRUPT_RANK=1 (every rank)"};
  return json::parse(ibscope::results::to_text(doc));
}

std::string rejection(const json& doc) {
  try {
    (void)ibscope::results::parse(doc.dump(), "f.json");
  } catch (const ibscope::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("results schema: embedded and of the supported version", "[results][schema]") {
  const json schema = json::parse(ibscope::results::schema_text());
  CHECK(schema["properties"]["schema_version"]["const"] ==
        ibscope::results::kSupportedSchemaVersion);
  CHECK(schema["additionalProperties"] == false);
}

TEST_CASE("results schema: what the writer produces passes, GPU rows included",
          "[results][schema]") {
  CHECK(rejection(written_document()) == "accepted");
}

TEST_CASE("results schema: loopback sections, alone and in the preflight, pass and are checked",
          "[results][schema][loopback]") {
  auto doc = ibscope::results::Document::start("probe", {"ibscope", "probe", "loopback"});
  ibscope::results::Loopback loopback;
  loopback.ran = true;
  loopback.slow_pct = 25;
  ibscope::results::LoopbackNic nic;
  nic.host = "h";
  nic.nic = "rxe0";
  nic.write_gbyte_s = 0.05;
  nic.read_gbyte_s = 0.04;
  nic.path = "NUMA 0, no PCIe path (virtual device rxe0 on netdev rxe-a)";
  nic.pass = true;
  loopback.nics.push_back(nic);
  doc.loopback = loopback;
  doc.acceptance = ibscope::results::Acceptance{};
  doc.acceptance->preflight = ibscope::results::AcceptPreflight{};
  doc.acceptance->preflight->loopback = loopback;
  json j = json::parse(ibscope::results::to_text(doc));
  CHECK(rejection(j) == "accepted");
  const ibscope::results::Document back = ibscope::results::parse(j.dump(), "f.json");
  REQUIRE(back.loopback.has_value());
  CHECK(back.loopback->nics.at(0).nic == "rxe0");
  j["loopback"]["nics"][0]["write_gbyte_s"] = "fast";
  CHECK(rejection(j) ==
        "f.json: loopback.nics[0].write_gbyte_s: expected a number or null, got "
        "string");
  j = json::parse(ibscope::results::to_text(doc));
  j["acceptance"]["preflight"]["loopback"]["nics"][0]["speed"] = 1;
  CHECK_THAT(rejection(j), Catch::StartsWith("f.json: acceptance.preflight.loopback.nics[0]"));
}

TEST_CASE("results schema: a wrong type names the JSON path", "[results][schema]") {
  json doc = written_document();
  doc["collectives"]["rows"][0]["busbw_gbps"] = "fast";
  CHECK(rejection(doc) == "f.json: collectives.rows[0].busbw_gbps: expected a number, got string");
  doc = written_document();
  doc["collectives"]["rows"][0]["mem"] = 3;
  CHECK(rejection(doc) ==
        "f.json: collectives.rows[0].mem: unknown value 3 (expected one of \"host\", \"cuda\")");
  doc = written_document();
  doc["collectives"]["rows"][0]["type"] = "fp8";
  CHECK_THAT(rejection(doc), Catch::StartsWith("f.json: collectives.rows[0].type: unknown value "
                                               "\"fp8\" (expected one of \"float\""));
  doc = written_document();
  doc["environment"]["ibscope_env"]["IBSCOPE_FAULT_CORRUPT_RANK"] = 1;
  CHECK(rejection(doc) ==
        "f.json: environment.ibscope_env.IBSCOPE_FAULT_CORRUPT_RANK: expected a string, got "
        "number");
  doc = written_document();
  doc["acceptance"]["fault_hooks"] = "IBSCOPE_FAULT_CORRUPT_RANK=1";
  CHECK(rejection(doc) == "f.json: acceptance.fault_hooks: expected an array, got string");
  doc = written_document();
  doc["tuning"]["entries"][0]["ranges"][0]["max_bytes"] = "all";
  CHECK(rejection(doc) ==
        "f.json: tuning.entries[0].ranges[0].max_bytes: expected an integer or null, got string");
}

TEST_CASE("results schema: an unknown key is rejected, not ignored", "[results][schema]") {
  json doc = written_document();
  doc["collectives"]["rows"][0]["busbw_gbs"] = 1.0;
  CHECK_THAT(rejection(doc),
             Catch::StartsWith("f.json: collectives.rows[0].busbw_gbs: unknown field"));
  doc = written_document();
  doc["colectives"] = json::object();
  CHECK_THAT(rejection(doc), Catch::StartsWith("f.json: colectives: unknown field"));
  doc = written_document();
  doc["acceptance"]["verdict"] = true;
  CHECK_THAT(rejection(doc), Catch::StartsWith("f.json: acceptance.verdict: unknown field"));
  // params, job and environment stay open: they record flags and the environment as found.
  doc = written_document();
  doc["collectives"]["params"]["some_flag"] = 1;
  doc["environment"]["UCX_TLS"] = "rc";
  CHECK(rejection(doc) == "accepted");
}

TEST_CASE("results schema: a missing required field is named", "[results][schema]") {
  json doc = written_document();
  doc["tool"].erase("git_sha");
  CHECK(rejection(doc) == "f.json: tool.git_sha: missing");
  doc = written_document();
  doc["acceptance"].erase("links");
  CHECK(rejection(doc) == "f.json: acceptance.links: missing");
  doc = written_document();
  doc["collectives"]["rows"][0]["iteration_us"].erase("p99");
  CHECK(rejection(doc) == "f.json: collectives.rows[0].iteration_us.p99: missing");
  doc = written_document();
  doc["collectives"]["rows"][0].erase("average");
  CHECK(rejection(doc) == "f.json: collectives.rows[0].average: missing");
}

TEST_CASE("results schema: enums and other versions say what is allowed", "[results][schema]") {
  json doc = written_document();
  doc["collectives"]["rows"][0]["collective"] = "scan";
  CHECK_THAT(rejection(doc), Catch::StartsWith("f.json: collectives.rows[0].collective: unknown "
                                               "value \"scan\" (expected one of"));
  doc = written_document();
  doc["acceptance"]["transport"] = "tcp";
  CHECK_THAT(rejection(doc), Catch::Contains("acceptance.transport") && Catch::Contains("tcp"));
  doc = written_document();
  doc["schema_version"] = 3;
  CHECK(rejection(doc) ==
        "f.json: schema_version: version 3 is not supported (this ibscope reads schema "
        "versions 1 to 2)");
  doc = written_document();
  doc["collectives"]["rows"][0]["average"] = "median";
  CHECK_THAT(rejection(doc), Catch::StartsWith("f.json: collectives.rows[0].average: unknown "
                                               "value \"median\" (expected one of"));
  doc = written_document();  // a version 1 row in a version 2 file
  doc["collectives"]["rows"][0]["time_us"] = doc["collectives"]["rows"][0]["iteration_us"];
  CHECK_THAT(rejection(doc), Catch::StartsWith("f.json: collectives.rows[0].time_us: expected"));
}
