// The collective row's columns (results/collective_columns.hpp) against the schema, the single
// source of truth of the file format: every JSON column is a property of the schema's
// collective_row, required exactly when the table says it may not be left out, and every
// property is either a column or one of the structured members the writer keeps.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "ibscope/output/results_csv.hpp"
#include "ibscope/results/collective_columns.hpp"
#include "ibscope/results/document.hpp"
#include "ibscope/results/schema.hpp"

using namespace ibscope;

TEST_CASE("collective columns: the table and the schema's collective_row name the same members",
          "[results][columns]") {
  const auto schema = nlohmann::json::parse(results::schema_text());
  const auto& row = schema.at("$defs").at("collective_row");
  std::set<std::string> properties, required;
  for (const auto& [key, value] : row.at("properties").items()) properties.insert(key);
  for (const auto& key : row.at("required")) required.insert(key.get<std::string>());

  const std::set<std::string> structured{"iteration_us", "samples_us",   "stalls",     "mem",
                                         "mem_path",     "nic_counters", "nic_traffic"};
  std::set<std::string> columns;
  for (const auto& col : results::collective_columns()) {
    const std::string key(col.key);
    INFO(key);
    if (!col.in_json) {
      CHECK(properties.count(key) == 0);
      CHECK(col.in_csv);
      continue;
    }
    columns.insert(key);
    CHECK(properties.count(key) == 1);
    CHECK(required.count(key) == (col.omitted == nullptr ? 1U : 0U));
    CHECK(col.set != nullptr);
  }
  for (const auto& key : properties) {
    INFO(key);
    CHECK((columns.count(key) + structured.count(key)) == 1);
  }
}

TEST_CASE("collective columns: the CSV header lists the CSV columns in table order",
          "[results][columns]") {
  results::Document doc = results::Document::start("allreduce", {});
  measure::CollectiveRow r;
  r.algorithm = "ring";
  r.wrong = 0;
  r.in_place = true;
  r.op = ReduceOp::kSum;
  doc.collectives.rows.push_back(r);
  const std::string csv = output::results_csv(doc);
  INFO(csv);
  CHECK(csv.rfind("section,collective,algorithm,type,op,in_place,size_bytes,count,ranks,time_us,"
                  "average,algbw_gbps,busbw_gbps,wrong,iteration_rank,iteration_us_p50,"
                  "iteration_us_p99,iteration_us_min,iteration_us_max,nic_errors,nic_congestion,"
                  "nic_flaps,nic_traffic_bytes\n",
                  0) == 0);
  CHECK(csv.find("\ncollectives,allreduce,ring,float,sum,1,0,0,0,0.000,avg,0.0000,0.0000,0,0,"
                 "0.000,0.000,0.000,0.000,0,0,0,0\n") != std::string::npos);
}
