// The baseline document (results/baseline.hpp): JSON both ways, checked against its schema on
// read and on write. No file access here (baseline_file.cpp): the fuzz build links this alone.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "field_reader.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/baseline.hpp"
#include "schema_validator.hpp"

namespace ibscope::results {
namespace {

using nlohmann::json;

json stats_json(const measure::RobustStats& s) {
  return {{"n", s.n},     {"median", s.median}, {"mad", s.mad}, {"spread", s.spread},
          {"p25", s.p25}, {"p75", s.p75},       {"min", s.min}, {"max", s.max}};
}

json hardware_json(const HardwareSignature& h) {
  return {{"nic_model", h.nic_model},
          {"port_speed", h.port_speed},
          {"link_rate_gbit", h.link_rate_gbit},
          {"link_layer", h.link_layer},
          {"gpu_model", h.gpu_model},
          {"hosts", h.hosts},
          {"transport", h.transport}};
}

json to_json(const Baseline& b) {
  json runs = json::array();
  for (const auto& r : b.runs) {
    runs.push_back({{"path", r.path},
                    {"started_utc", r.started_utc},
                    {"subcommand", r.subcommand},
                    {"hardware", hardware_json(r.hardware)}});
  }
  json links = json::array();
  for (const auto& l : b.links) {
    links.push_back({{"host_a", l.host_a},
                     {"host_b", l.host_b},
                     {"nic_a", l.nic_a},
                     {"nic_b", l.nic_b},
                     {"bw_gbps", stats_json(l.bw_gbps)},
                     {"latency_us", stats_json(l.latency_us)}});
  }
  json rows = json::array();
  for (const auto& r : b.rows) {
    rows.push_back({{"collective", r.collective},
                    {"algorithm", r.algorithm},
                    {"type", r.type},
                    {"size_bytes", r.size_bytes},
                    {"ranks", r.ranks},
                    {"busbw_gbps", stats_json(r.busbw_gbps)},
                    {"time_us", stats_json(r.time_us)}});
  }
  json refs = json::array();
  for (const auto& f : b.references) {
    refs.push_back({{"metric", f.metric},
                    {"value_gbps", f.value_gbps},
                    {"source_url", f.source_url},
                    {"source_says", f.source_says}});
  }
  json j = {{"baseline_version", kBaselineVersion},
            {"kind", name_of(b.kind)},
            {"tool", {{"name", "ibscope"}, {"version", b.tool_version}, {"git_sha", b.git_sha}}},
            {"created_utc", b.created_utc},
            {"hardware", hardware_json(b.hardware)},
            {"mixed", b.mixed},
            {"runs", runs},
            {"links", links},
            {"collectives", rows},
            {"references", refs}};
  if (!b.name.empty()) j["name"] = b.name;
  return j;
}

measure::RobustStats stats_from(const FieldReader& r, const json& j, const std::string& path) {
  measure::RobustStats s;
  s.n = r.get<std::size_t>(j, path, "n");
  s.median = r.get<double>(j, path, "median");
  s.mad = r.get<double>(j, path, "mad");
  s.spread = r.get<double>(j, path, "spread");
  s.p25 = r.get<double>(j, path, "p25");
  s.p75 = r.get<double>(j, path, "p75");
  s.min = r.get<double>(j, path, "min");
  s.max = r.get<double>(j, path, "max");
  // What the schema cannot say: the order statistics must be in order.
  if (s.n > 0 && !(s.min <= s.p25 && s.p25 <= s.median && s.median <= s.p75 && s.p75 <= s.max)) {
    r.fail(path, "expected min <= p25 <= median <= p75 <= max");
  }
  return s;
}

HardwareSignature hardware_from(const FieldReader& r, const json& j, const std::string& path) {
  return HardwareSignature{.nic_model = r.get<std::string>(j, path, "nic_model"),
                           .port_speed = r.get<std::string>(j, path, "port_speed"),
                           .link_rate_gbit = r.get<double>(j, path, "link_rate_gbit"),
                           .link_layer = r.get<std::string>(j, path, "link_layer"),
                           .gpu_model = r.get<std::string>(j, path, "gpu_model"),
                           .hosts = r.get<int>(j, path, "hosts"),
                           .transport = r.get<std::string>(j, path, "transport")};
}

Baseline from_json(const json& j, std::string_view source) {
  const FieldReader r(source);
  Baseline b;
  b.kind = j["kind"] == "reference" ? BaselineKind::kReference : BaselineKind::kMeasured;
  b.name = r.get_or<std::string>(j, "", "name", "");
  b.tool_version = r.get<std::string>(j["tool"], "tool", "version");
  b.git_sha = r.get<std::string>(j["tool"], "tool", "git_sha");
  b.created_utc = r.get<std::string>(j, "", "created_utc");
  b.hardware = hardware_from(r, j["hardware"], "hardware");
  b.mixed = r.get<bool>(j, "", "mixed");
  for (std::size_t i = 0; i < j["runs"].size(); ++i) {
    const json& e = j["runs"][i];
    const std::string p = fmt::format("runs[{}]", i);
    b.runs.push_back(BaselineRun{
        r.get<std::string>(e, p, "path"), r.get<std::string>(e, p, "started_utc"),
        r.get<std::string>(e, p, "subcommand"), hardware_from(r, e["hardware"], p + ".hardware")});
  }
  for (std::size_t i = 0; i < j["links"].size(); ++i) {
    const json& e = j["links"][i];
    const std::string p = fmt::format("links[{}]", i);
    b.links.push_back(
        BaselineLink{r.get<std::string>(e, p, "host_a"), r.get<std::string>(e, p, "host_b"),
                     r.get<std::string>(e, p, "nic_a"), r.get<std::string>(e, p, "nic_b"),
                     stats_from(r, e["bw_gbps"], p + ".bw_gbps"),
                     stats_from(r, e["latency_us"], p + ".latency_us")});
    if (b.links.back().bw_gbps.n == 0) r.fail(p + ".bw_gbps.n", "a link needs at least 1 run");
  }
  for (std::size_t i = 0; i < j["collectives"].size(); ++i) {
    const json& e = j["collectives"][i];
    const std::string p = fmt::format("collectives[{}]", i);
    b.rows.push_back(
        BaselineRow{r.get<std::string>(e, p, "collective"), r.get<std::string>(e, p, "algorithm"),
                    r.get<std::string>(e, p, "type"), r.get<std::uint64_t>(e, p, "size_bytes"),
                    r.get<int>(e, p, "ranks"), stats_from(r, e["busbw_gbps"], p + ".busbw_gbps"),
                    stats_from(r, e["time_us"], p + ".time_us")});
  }
  for (std::size_t i = 0; i < j["references"].size(); ++i) {
    const json& e = j["references"][i];
    const std::string p = fmt::format("references[{}]", i);
    b.references.push_back(ReferenceFigure{
        r.get<std::string>(e, p, "metric"), r.get<double>(e, p, "value_gbps"),
        r.get<std::string>(e, p, "source_url"), r.get<std::string>(e, p, "source_says")});
  }
  // A reference is a public figure, a measured baseline holds measurements: never both.
  if (b.kind == BaselineKind::kReference &&
      (!b.links.empty() || !b.rows.empty() || !b.runs.empty())) {
    r.fail("kind", "a reference holds references only (no runs, links or collectives)");
  }
  if (b.kind == BaselineKind::kReference && b.references.empty()) {
    r.fail("references", "a reference needs at least one figure with its source");
  }
  if (b.kind == BaselineKind::kMeasured && !b.references.empty()) {
    r.fail("references", "a measured baseline holds no references (kind \"reference\" does)");
  }
  return b;
}

json checked(std::string_view text, std::string_view source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(fmt::format("{}: not valid JSON (byte {}): {}", source, e.byte, e.what()));
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  validate_baseline_schema(j, source);
  return j;
}

}  // namespace

const char* name_of(BaselineKind kind) noexcept {
  return kind == BaselineKind::kReference ? "reference" : "measured";
}

std::string HardwareSignature::describe() const {
  std::string nic = nic_model.empty() ? "no RDMA NIC" : nic_model;
  if (!port_speed.empty()) nic += " " + port_speed;
  if (link_rate_gbit > 0) nic += fmt::format(" {:g} Gb/s", link_rate_gbit);
  if (!link_layer.empty()) nic += " " + link_layer;
  return fmt::format("{}, {}, {} hosts{}", nic, gpu_model.empty() ? "no GPU" : gpu_model, hosts,
                     transport.empty() ? "" : ", " + transport);
}

std::string baseline_to_text(const Baseline& baseline) {
  const json j = to_json(baseline);
  try {
    validate_baseline_schema(j, "the baseline being written");
  } catch (const UsageError& e) {
    // What this ibscope writes must be what it reads: a mismatch is a defect, not bad input.
    throw Error(ErrorKind::kSystem, fmt::format("internal error: {}", e.what()));
  }
  return j.dump(1) + "\n";
}

Baseline parse_baseline(std::string_view text, std::string_view source) {
  return from_json(checked(text, source), source);
}

}  // namespace ibscope::results
