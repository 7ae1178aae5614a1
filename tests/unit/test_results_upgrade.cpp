// Results files of schema version 1 are read by upgrading them to version 2 (src/results/
// upgrade.cpp): the collective rows' time changed meaning (issue 21, docs/methodology.md).
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "ibscope/results/loader.hpp"
#include "ibscope/results/schema.hpp"
#include "ibscope/results/writer.hpp"

namespace results = ibscope::results;
using nlohmann::json;

namespace {

std::string seed_text(const std::string& name) {
  std::ifstream in(std::string(IBSCOPE_RESULTS_SEEDS) + "/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("results upgrade: a version 1 all-reduce file reads with its time kept and labelled",
          "[results]") {
  const std::string text = seed_text("allreduce.json");  // written by ibscope before issue 21
  const json v1 = json::parse(text);
  REQUIRE(v1["schema_version"] == 1);
  const results::Document doc = results::parse(text, "allreduce.json");
  CHECK(doc.schema_version == results::kSupportedSchemaVersion);
  REQUIRE(doc.collectives.rows.size() == v1["collectives"]["rows"].size());
  for (std::size_t i = 0; i < doc.collectives.rows.size(); ++i) {
    const json& old = v1["collectives"]["rows"][i]["time_us"];
    const ibscope::measure::CollectiveRow& r = doc.collectives.rows[i];
    INFO("row " << i);
    CHECK(r.time_us == old["mean"].get<double>());
    CHECK(r.iteration_us.p50 == old["p50"].get<double>());
    CHECK(r.iteration_us.n == old["n"].get<std::size_t>());
    CHECK(r.iteration_rank == -1);
    CHECK(r.average == ibscope::measure::TimeAverage::kMax);
    CHECK(r.samples_us.size() == r.iteration_us.n);
  }
  REQUIRE_FALSE(doc.warnings.empty());
  CHECK_THAT(doc.warnings.back(), Catch::Contains("schema version 1") &&
                                      Catch::Contains("not nccl-tests' time per call"));
  // Written back, it is a version 2 file that reads the same.
  const std::string again = results::to_text(doc);
  CHECK(json::parse(again)["schema_version"] == 2);
  const results::Document twice = results::parse(again, "again.json");
  CHECK(results::to_text(twice) == again);
}

TEST_CASE("results upgrade: version 1 files that are malformed are still judged by the schema",
          "[results]") {
  json v1 = json::parse(seed_text("allreduce.json"));
  v1["collectives"]["rows"][0]["time_us"].erase("mean");
  const auto rejected = [&] {
    try {
      (void)results::parse(v1.dump(), "old.json");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  }();
  CHECK_THAT(rejected, Catch::StartsWith("old.json: collectives.rows[0].") &&
                           (Catch::Contains("time_us") || Catch::Contains("iteration_us")));
}
