#include "ibscope/model/fit_export.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "ibscope/collectives/collective.hpp"

namespace ibscope::model {
namespace {

// A bandwidth of 0 means the slope was 0 (time did not grow with size): unresolved, null.
nlohmann::json gbps_or_null(double gbps) {
  return gbps > 0 && std::isfinite(gbps) ? nlohmann::json(gbps) : nlohmann::json(nullptr);
}

nlohmann::json link_json(const LinkParams& l) {
  return {{"alpha_us", l.alpha_s * 1e6},
          {"bw_eff_gbps", gbps_or_null(l.bw_eff_gbps)},
          {"gamma_folded", l.gamma_folded},
          {"r2", l.r2}};
}

nlohmann::json fit_json(const CurveFit& f) {
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& s : f.segments) {
    nlohmann::json j = {{"min_bytes", s.min_bytes},
                        {"max_bytes", s.max_bytes},
                        {"points", s.last - s.first + 1},
                        {"alpha_us", s.alpha_s * 1e6},
                        {"bw_gbps", gbps_or_null(s.bw_gbps)},
                        {"r2", s.r2},
                        {"max_abs_residual_pct", s.max_abs_residual_pct}};
    if (s.link) j["link"] = link_json(*s.link);
    if (!s.note.empty()) j["note"] = s.note;
    segments.push_back(std::move(j));
  }
  nlohmann::json series = nlohmann::json::array();
  for (std::size_t i = 0; i < f.bytes.size(); ++i) {
    series.push_back({{"size_bytes", f.bytes[i]},
                      {"measured_us", f.measured_s[i] * 1e6},
                      {"fitted_us", f.fitted_s[i] * 1e6},
                      {"residual_pct", f.residual_pct[i]}});
  }
  return {{"points", f.bytes.size()},
          {"min_bytes", f.bytes.front()},
          {"max_bytes", f.bytes.back()},
          {"r2", f.r2},
          {"max_abs_residual_pct", f.max_abs_residual_pct},
          {"criterion", f.criterion},
          {"segments", std::move(segments)},
          {"series", std::move(series)}};
}

std::string csv_line(const std::string& id, const std::string& source, const CurveFit& f,
                     std::size_t i) {
  return fmt::format("{},{},{:.0f},{:.6g},{:.6g},{:.4g}\n", id, source, f.bytes[i],
                     f.measured_s[i] * 1e6, f.fitted_s[i] * 1e6, f.residual_pct[i]);
}

}  // namespace

std::string fit_document_text(const FitReport& report) {
  nlohmann::json curves = nlohmann::json::array();
  for (const auto& c : report.curves) {
    nlohmann::json j = {{"id", c.key.id()},
                        {"source", c.source},
                        {"collective", c.key.collective},
                        {"algorithm", c.key.algorithm},
                        {"transport", c.key.transport},
                        {"ranks", c.key.ranks},
                        {"hosts", c.key.hosts},
                        {"in_place", c.key.in_place},
                        {"type", c.key.type},
                        {"op", c.key.op},
                        {"dropped_rows", c.dropped_rows},
                        {"fit", fit_json(c.fit)}};
    if (c.key.root >= 0) j["root"] = c.key.root;
    if (!c.link_note.empty()) j["link_note"] = c.link_note;
    curves.push_back(std::move(j));
  }
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : report.links) {
    links.push_back({{"id", l.id()},
                     {"source", l.source},
                     {"kind", l.kind},
                     {"test", l.test},
                     {"rank_a", l.rank_a},
                     {"rank_b", l.rank_b},
                     {"host_a", l.host_a},
                     {"host_b", l.host_b},
                     {"transport", l.transport},
                     {"fitted", l.fitted},
                     {"alpha_us", l.alpha_us},
                     {"bw_gbps", gbps_or_null(l.bw_gbps)},
                     {"fit", fit_json(l.fit)}});
  }
  const nlohmann::json doc = {{"kind", "ibscope-fit"},       {"schema_version", kFitSchemaVersion},
                              {"statistic", "p50"},          {"sources", report.sources},
                              {"curves", std::move(curves)}, {"links", std::move(links)},
                              {"notes", report.notes}};
  return doc.dump(2) + "\n";
}

std::string series_csv(const FitReport& report) {
  std::string out = "curve_id,source,size_bytes,measured_us,fitted_us,residual_pct\n";
  for (const auto& c : report.curves) {
    for (std::size_t i = 0; i < c.fit.bytes.size(); ++i)
      out += csv_line(c.key.id(), c.source, c.fit, i);
  }
  for (const auto& l : report.links) {
    for (std::size_t i = 0; i < l.fit.bytes.size(); ++i)
      out += csv_line(l.id(), l.source, l.fit, i);
  }
  return out;
}

std::optional<std::string> nccl_collective(std::string_view collective) {
  const auto c = collective_named(collective);
  if (!c || collectives::descriptor_of(*c).nccl_name.empty()) return std::nullopt;
  return std::string(collectives::descriptor_of(*c).nccl_name);
}

std::optional<std::string> nccl_algorithm(std::string_view algorithm) {
  for (const auto& d : collectives::descriptors()) {
    for (const auto& a : collectives::algorithms_for(d.id)) {
      if (a.name == algorithm && !a.caps.nccl_name.empty()) return std::string(a.caps.nccl_name);
    }
  }
  return std::nullopt;
}

NcclCsv nccl_tuner_csv(const FitReport& report) {
  NcclCsv csv;
  csv.text =
      "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,"
      "cost_metric,bandwidth_gbps,latency_us\n";
  for (const auto& c : report.curves) {
    const auto coll = nccl_collective(c.key.collective);
    const auto algo = nccl_algorithm(c.key.algorithm);
    if (!coll || !algo) {
      csv.notes.push_back(fmt::format("{}: not in the NCCL tuner CSV: NCCL has no {} '{}'",
                                      c.key.id(), coll ? "algorithm" : "collective",
                                      coll ? c.key.algorithm : c.key.collective));
      continue;
    }
    for (std::size_t i = 0; i < c.fit.bytes.size(); ++i) {
      const double t_us = c.fit.fitted_s[i] * 1e6;
      if (!(t_us > 0)) continue;  // a fit through zero at this size says nothing usable
      csv.text += fmt::format("{},{:.0f},{},simple,-1,{},{},-1,-1,{:.6g},{:.6g},{:.6g}\n", *coll,
                              c.fit.bytes[i], *algo, c.key.hosts, c.key.ranks, t_us,
                              c.fit.bytes[i] / (t_us * 1e3), t_us);
    }
  }
  return csv;
}

}  // namespace ibscope::model
