#include "ibscope/model/documents.hpp"

#include <nlohmann/json.hpp>

#include "workload_json.hpp"

namespace ibscope::model {
namespace {

using ordered = nlohmann::ordered_json;

ordered breakdown_json(const StepBreakdown& s) {
  ordered j = {{"microbatches", s.microbatches},
               {"bubble_fraction", s.bubble_fraction},
               {"compute_s", s.compute_s},
               {"tp_s", s.tp_s},
               {"pp_s", s.pp_s},
               {"bubble_s", s.bubble_s},
               {"dp_total_s", s.dp_total_s},
               {"dp_exposed_s", s.dp_exposed_s},
               {"step_s", s.step_s},
               {"network_s", s.network_s},
               {"network_share", s.network_share},
               {"tokens_per_s_per_gpu", s.tokens_per_s_per_gpu},
               {"model_flops", s.model_flops},
               {"hardware_flops", s.hardware_flops},
               {"dp_bytes_per_gpu", s.dp_bytes_per_gpu},
               {"dp_buckets", s.dp_buckets}};
  j["mfu"] = s.mfu ? ordered(*s.mfu) : ordered(nullptr);
  if (s.ep_bytes > 0) {  // a mixture-of-experts workload; dense ones keep their keys
    j["ep_s"] = s.ep_s;
    j["ep_bytes"] = s.ep_bytes;
    j["ep_calls"] = s.ep_calls;
    j["ep_unpriced"] = s.ep_unpriced ? ordered(*s.ep_unpriced) : ordered(nullptr);
  }
  return j;
}

template <typename Json>
Json tier_json(const Tier& t) {
  return Json{{"latency_us", t.latency_s * 1e6},
              {"bw_gbps", t.bw_gbps},
              {"links_per_node", t.links_per_node},
              {"source", t.source}};
}

}  // namespace

std::string model_document_text(const Workload& w, const ClusterNetwork& cluster,
                                const StepBreakdown& breakdown,
                                const std::vector<WhatIfResult>& what_ifs,
                                const std::optional<Sensitivity>& sensitivity,
                                const std::optional<CalibrationRecord>& calibration,
                                const std::vector<ScaleRow>& scaling) {
  ordered wj = ordered::array();
  for (const auto& r : what_ifs) {
    wj.push_back({{"what_if", r.label},
                  {"workload", to_json(r.workload)},
                  {"changed", breakdown_json(r.changed)},
                  {"change_pct", r.change_pct}});
  }
  ordered sj = nullptr;
  if (sensitivity) {
    sj = {{"inter_bw_gbps", sensitivity->inter_bw_gbps},
          {"ds_dbw_s_per_gbps", sensitivity->ds_dbw_s_per_gbps},
          {"elasticity", sensitivity->elasticity}};
  }
  ordered doc = {{"kind", "ibscope-model"},
                 {"schema_version", 1},
                 {"workload", to_json(w)},
                 {"cluster",
                  {{"nodes", cluster.nodes},
                   {"gpus_per_node", cluster.gpus_per_node},
                   {"inter", tier_json<ordered>(cluster.inter)},
                   {"intra", tier_json<ordered>(cluster.intra)},
                   {"gamma_s_per_byte", cluster.gamma_s_per_byte}}},
                 {"breakdown", breakdown_json(breakdown)},
                 {"what_if", wj},
                 {"sensitivity", sj}};
  // All-to-all tiers only when fitted: documents without them keep their keys.
  if (cluster.alltoall_inter) {
    doc["cluster"]["alltoall_inter"] = tier_json<ordered>(*cluster.alltoall_inter);
  }
  if (cluster.alltoall_intra) {
    doc["cluster"]["alltoall_intra"] = tier_json<ordered>(*cluster.alltoall_intra);
  }
  if (calibration) {
    doc["calibration"] = {{"kind", calibration->kind},
                          {"seconds", calibration->seconds},
                          {"achieved_fraction", calibration->achieved_fraction},
                          {"compute_s_per_microbatch", calibration->compute_s_per_microbatch}};
  }
  if (!scaling.empty()) {
    ordered rows = ordered::array();
    for (const ScaleRow& r : scaling) {
      rows.push_back({{"nodes", r.nodes},
                      {"gpus", r.workload.gpus()},
                      {"tp", r.workload.tp},
                      {"pp", r.workload.pp},
                      {"dp", r.workload.dp},
                      {"vp", r.workload.vp},
                      {"global_batch", r.workload.global_batch},
                      {"breakdown", breakdown_json(r.step)},
                      {"efficiency", r.efficiency}});
    }
    doc["scaling"] = rows;
  }
  return doc.dump(2) + "\n";
}

std::string predict_document_text(const std::vector<std::string>& fit_files,
                                  const std::vector<std::string>& compare_files, int nodes,
                                  int gpus_per_node, const std::vector<PredictedTiers>& tiers,
                                  const std::vector<PredictedRow>& rows) {
  using nlohmann::json;
  json tj = json::array();
  for (const auto& t : tiers) {
    tj.push_back({{"algorithm", t.algorithm},
                  {"inter", tier_json<json>(t.inter)},
                  {"intra", tier_json<json>(t.intra)},
                  {"gamma_s_per_byte", t.gamma_s_per_byte}});
  }
  json rj = json::array();
  for (const auto& r : rows) {
    rj.push_back({{"collective", r.collective},
                  {"algorithm", r.algorithm},
                  {"size_bytes", r.size_bytes},
                  {"ranks", r.ranks},
                  {"nodes", r.nodes},
                  {"predicted_us", r.predicted_us},
                  {"algbw_gbps", r.algbw_gbps},
                  {"busbw_gbps", r.busbw_gbps},
                  {"measured_us", r.measured_us ? json(*r.measured_us) : json(nullptr)},
                  {"error_pct", r.error_pct ? json(*r.error_pct) : json(nullptr)}});
  }
  const json doc = {{"kind", "ibscope-predict"},
                    {"schema_version", 1},
                    {"fit_files", fit_files},
                    {"compare_files", compare_files},
                    {"nodes", nodes},
                    {"gpus_per_node", gpus_per_node},
                    {"tiers", tj},
                    {"rows", rj}};
  return doc.dump(2) + "\n";
}

}  // namespace ibscope::model
