// The model and predict documents (model/documents.hpp) as text: what `ibscope model --json`
// and `ibscope predict --json` write. The bytes are pinned (a predict document in full, the
// model document's key order and its nulls), since scripts read these files.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/model/documents.hpp"
#include "ibscope/model/workload.hpp"

using namespace ibscope::model;

namespace {

Tier tier(double latency_s, double bw_gbps, int links, std::string source) {
  return Tier{latency_s, bw_gbps, links, std::move(source)};
}

std::vector<std::string> keys(const nlohmann::ordered_json& j) {
  std::vector<std::string> out;
  for (const auto& [key, value] : j.items()) out.push_back(key);
  return out;
}

}  // namespace

TEST_CASE("predict document: keys sorted, nulls where nothing was compared, 2-space indent",
          "[model][documents]") {
  const std::vector<PredictedTiers> tiers = {
      {"ring", tier(0, 25, 8, "given"), tier(1e-6, 400, 1, "fitted: a.json"), 0}};
  const std::vector<PredictedRow> rows = {{.collective = "allreduce",
                                           .algorithm = "ring",
                                           .size_bytes = 1024,
                                           .ranks = 16,
                                           .nodes = 2,
                                           .predicted_us = 1.5,
                                           .algbw_gbps = 2.5,
                                           .busbw_gbps = 4.6875,
                                           .measured_us = std::nullopt,
                                           .error_pct = std::nullopt},
                                          {.collective = "allreduce",
                                           .algorithm = "ring",
                                           .size_bytes = 2048,
                                           .ranks = 16,
                                           .nodes = 2,
                                           .predicted_us = 2,
                                           .algbw_gbps = 0.5,
                                           .busbw_gbps = 0.9375,
                                           .measured_us = 2.5,
                                           .error_pct = -20}};
  const std::string text = predict_document_text({"a.json"}, {}, 2, 8, tiers, rows);
  CHECK(text == R"({
  "compare_files": [],
  "fit_files": [
    "a.json"
  ],
  "gpus_per_node": 8,
  "kind": "ibscope-predict",
  "nodes": 2,
  "rows": [
    {
      "algbw_gbps": 2.5,
      "algorithm": "ring",
      "busbw_gbps": 4.6875,
      "collective": "allreduce",
      "error_pct": null,
      "measured_us": null,
      "nodes": 2,
      "predicted_us": 1.5,
      "ranks": 16,
      "size_bytes": 1024
    },
    {
      "algbw_gbps": 0.5,
      "algorithm": "ring",
      "busbw_gbps": 0.9375,
      "collective": "allreduce",
      "error_pct": -20.0,
      "measured_us": 2.5,
      "nodes": 2,
      "predicted_us": 2.0,
      "ranks": 16,
      "size_bytes": 2048
    }
  ],
  "schema_version": 1,
  "tiers": [
    {
      "algorithm": "ring",
      "gamma_s_per_byte": 0.0,
      "inter": {
        "bw_gbps": 25.0,
        "latency_us": 0.0,
        "links_per_node": 8,
        "source": "given"
      },
      "intra": {
        "bw_gbps": 400.0,
        "latency_us": 1.0,
        "links_per_node": 1,
        "source": "fitted: a.json"
      }
    }
  ]
}
)");
}

TEST_CASE("model document: keys in the documented order, the workload in its file format",
          "[model][documents]") {
  const Workload w = preset("llama2-7b");
  ClusterNetwork cluster;
  cluster.nodes = w.nodes();
  cluster.gpus_per_node = w.gpus_per_node;
  cluster.inter = tier(5e-6, 25, 8, "given");
  cluster.intra = tier(2e-6, 300, 1, "given");
  StepBreakdown s;
  s.microbatches = 4;
  s.step_s = 1.5;
  s.dp_buckets = 3;  // mfu left empty: null

  SECTION("no what-if, one node: an empty list and a null sensitivity") {
    const std::string text = model_document_text(w, cluster, s, {}, std::nullopt);
    REQUIRE(text.ends_with("}\n"));
    CHECK(text.starts_with("{\n  \"kind\": \"ibscope-model\",\n  \"schema_version\": 1,\n"));
    const auto doc = nlohmann::ordered_json::parse(text);
    CHECK(keys(doc) == std::vector<std::string>{"kind", "schema_version", "workload", "cluster",
                                                "breakdown", "what_if", "sensitivity"});
    // The embedded workload is the workload file, byte for byte at its own indent.
    CHECK(doc["workload"].dump(2) == workload_json_text(w));
    CHECK(keys(doc["cluster"]) ==
          std::vector<std::string>{"nodes", "gpus_per_node", "inter", "intra", "gamma_s_per_byte"});
    CHECK(keys(doc["cluster"]["inter"]) ==
          std::vector<std::string>{"latency_us", "bw_gbps", "links_per_node", "source"});
    CHECK(doc["cluster"]["inter"]["latency_us"].get<double>() == Approx(5));
    const auto b = keys(doc["breakdown"]);
    REQUIRE(b.size() == 17);
    CHECK(b.front() == "microbatches");
    CHECK(b.back() == "mfu");
    CHECK(doc["breakdown"]["mfu"].is_null());
    CHECK(doc["breakdown"]["step_s"] == 1.5);
    CHECK(doc["what_if"] == nlohmann::ordered_json::array());
    CHECK(doc["sensitivity"].is_null());
  }

  SECTION("a what-if and a sensitivity") {
    WhatIfResult r;
    r.label = "inter-bw=2";
    r.workload = w;
    r.workload.dp *= 2;
    r.changed = s;
    r.changed.mfu = 0.5;
    r.change_pct = -12.5;
    const Sensitivity sens{
        .inter_bw_gbps = 25, .step_s = 1.5, .ds_dbw_s_per_gbps = -0.25, .elasticity = -0.5};
    const auto doc = nlohmann::ordered_json::parse(model_document_text(w, cluster, s, {r}, sens));
    REQUIRE(doc["what_if"].size() == 1);
    const auto& wi = doc["what_if"][0];
    CHECK(keys(wi) == std::vector<std::string>{"what_if", "workload", "changed", "change_pct"});
    CHECK(wi["workload"].dump(2) == workload_json_text(r.workload));
    CHECK(wi["changed"]["mfu"] == 0.5);
    CHECK(wi["change_pct"] == -12.5);
    CHECK(keys(doc["sensitivity"]) ==
          std::vector<std::string>{"inter_bw_gbps", "ds_dbw_s_per_gbps", "elasticity"});
    CHECK(doc["sensitivity"]["elasticity"] == -0.5);
  }

  SECTION("a calibration and a scaling curve come last") {
    ScaleRow row;
    row.nodes = 4;
    row.workload = w;
    row.workload.dp = 32;
    row.step = s;
    row.efficiency = 0.875;
    const CalibrationRecord cal{"step", 1.5, 0.42, 0.25};
    const auto doc = nlohmann::ordered_json::parse(
        model_document_text(w, cluster, s, {}, std::nullopt, cal, {row}));
    CHECK(keys(doc) == std::vector<std::string>{"kind", "schema_version", "workload", "cluster",
                                                "breakdown", "what_if", "sensitivity",
                                                "calibration", "scaling"});
    CHECK(keys(doc["calibration"]) == std::vector<std::string>{"kind", "seconds",
                                                               "achieved_fraction",
                                                               "compute_s_per_microbatch"});
    CHECK(doc["calibration"]["achieved_fraction"] == 0.42);
    REQUIRE(doc["scaling"].size() == 1);
    CHECK(keys(doc["scaling"][0]) == std::vector<std::string>{"nodes", "gpus", "tp", "pp", "dp",
                                                              "vp", "global_batch", "breakdown",
                                                              "efficiency"});
    CHECK(doc["scaling"][0]["gpus"] == 32);
    CHECK(doc["scaling"][0]["efficiency"] == 0.875);
  }
}
