#include <fmt/format.h>

#include "accept_patterns_json.hpp"
#include "congestion_json.hpp"
#include "field_reader.hpp"
#include "loopback_json.hpp"
#include "nic_counters_json.hpp"
#include "section_json.hpp"

namespace ibscope::results {
namespace {

using nlohmann::json;

json to_json(const AcceptThresholds& t) {
  return {{"min_fraction", t.min_fraction},
          {"mad_k", t.mad_k},
          {"mad_floor_fraction", t.mad_floor_fraction},
          {"max_latency_ratio", t.max_latency_ratio},
          {"retests", t.retests},
          {"straggler_min_last_fraction", t.straggler_min_last_fraction},
          {"straggler_min_late_fraction", t.straggler_min_late_fraction},
          {"straggler_min_late_us", t.straggler_min_late_us}};
}

AcceptThresholds read_thresholds(const FieldReader& in, const json& j, const std::string& p) {
  AcceptThresholds t;
  t.min_fraction = in.number_or_nan_or(j, p, "min_fraction", 0);
  t.mad_k = in.number_or_nan_or(j, p, "mad_k", 0);
  t.mad_floor_fraction = in.number_or_nan_or(j, p, "mad_floor_fraction", 0);
  t.max_latency_ratio = in.number_or_nan_or(j, p, "max_latency_ratio", 0);
  t.retests = in.get_or<int>(j, p, "retests", 0);
  t.straggler_min_last_fraction = in.number_or_nan_or(j, p, "straggler_min_last_fraction", 0);
  t.straggler_min_late_fraction = in.number_or_nan_or(j, p, "straggler_min_late_fraction", 0);
  t.straggler_min_late_us = in.number_or_nan_or(j, p, "straggler_min_late_us", 0);
  return t;
}

json to_json(const AcceptPreflight& pf) {
  json findings = json::array();
  for (const auto& f : pf.findings) {
    findings.push_back(
        {{"host", f.host}, {"device", f.device}, {"fatal", f.fatal}, {"message", f.message}});
  }
  json j = {{"pass", pf.pass},
            {"rdma_everywhere", pf.rdma_everywhere},
            {"no_rdma_reason", pf.no_rdma_reason},
            {"fabric_data_rate_gbit", pf.fabric_data_rate_gbit},
            {"link_layer", pf.link_layer},
            {"active_mtu_bytes", pf.active_mtu_bytes},
            {"findings", findings}};
  if (pf.loopback) j["loopback"] = to_json(*pf.loopback);
  return j;
}

std::string string_or_empty(const FieldReader& in, const json& j, const std::string& p,
                            const char* key) {
  if (!j.contains(key) || j[key].is_null()) return {};
  return in.get<std::string>(j, p, key);
}

AcceptPreflight read_preflight(const FieldReader& in, const json& j, const std::string& p) {
  AcceptPreflight pf;
  pf.pass = in.get_or<bool>(j, p, "pass", false);
  pf.rdma_everywhere = in.get_or<bool>(j, p, "rdma_everywhere", false);
  pf.no_rdma_reason = string_or_empty(in, j, p, "no_rdma_reason");
  pf.fabric_data_rate_gbit = in.number_or_nan_or(j, p, "fabric_data_rate_gbit", 0);
  pf.link_layer = string_or_empty(in, j, p, "link_layer");
  if (j.contains("active_mtu_bytes") && !j["active_mtu_bytes"].is_null()) {
    pf.active_mtu_bytes = in.get<std::uint32_t>(j, p, "active_mtu_bytes");
  }
  if (j.contains("findings")) {
    const json& a = j["findings"];
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string fp = fmt::format("{}.findings[{}]", p, i);
      pf.findings.push_back(PreflightFinding{
          in.get<std::string>(a[i], fp, "host"), in.get<std::string>(a[i], fp, "device"),
          in.get<bool>(a[i], fp, "fatal"), in.get<std::string>(a[i], fp, "message")});
    }
  }
  if (j.contains("loopback")) pf.loopback = read_loopback(in, j["loopback"], p + ".loopback");
  return pf;
}

json to_json(const AcceptLink& l) {
  json j = {{"rank_a", l.rank_a},
            {"rank_b", l.rank_b},
            {"host_a", l.host_a},
            {"host_b", l.host_b},
            {"nic_a", l.nic_a},
            {"nic_b", l.nic_b},
            {"measured_gbps", l.measured_gbps},
            {"gbps_a_to_b", l.gbps_a_to_b},
            {"gbps_b_to_a", l.gbps_b_to_a},
            {"expected_gbps", l.expected_gbps},
            {"line_rate_gbit", l.line_rate_gbit},
            {"link_kind", l.link_kind},
            {"fraction_of_expected", l.fraction_of_expected},
            {"peers_median_gbps", l.peers_median_gbps},
            {"latency_us", l.latency_us},
            {"peers_median_latency_us", l.peers_median_latency_us},
            {"attempts", l.attempts},
            {"transports", l.transports},
            {"below_expected", l.below_expected},
            {"outlier", l.outlier},
            {"slow_latency", l.slow_latency},
            {"pass", l.pass},
            {"reason", l.reason}};
  if (!l.counters.empty()) {  // counters read: files of runs without them stay as they were
    j["counter_errors"] = l.counter_errors;
    j["flapped"] = l.flapped;
    j["congestion_pct"] = l.congestion_pct;
    j["counters"] = l.counters;
    put_nic_counters(j, l.nic_counters, false);
  }
  if (l.baseline) {
    const AcceptLinkBaseline& b = *l.baseline;
    j["baseline"] = {{"known", b.known},
                     {"median_gbps", b.median_gbps},
                     {"spread_gbps", b.spread_gbps},
                     {"runs", b.runs},
                     {"drop_pct", b.drop_pct},
                     {"below", b.below},
                     {"reference", b.reference},
                     {"reference_gbps", b.reference_gbps},
                     {"reference_drop_pct", b.reference_drop_pct},
                     {"below_reference", b.below_reference}};
  }
  return j;
}

AcceptLink read_link(const FieldReader& in, const json& j, const std::string& p) {
  AcceptLink l;
  l.rank_a = in.get<int>(j, p, "rank_a");
  l.rank_b = in.get<int>(j, p, "rank_b");
  l.host_a = in.get<std::string>(j, p, "host_a");
  l.host_b = in.get<std::string>(j, p, "host_b");
  l.nic_a = in.get_or<std::string>(j, p, "nic_a", "");
  l.nic_b = in.get_or<std::string>(j, p, "nic_b", "");
  l.measured_gbps = in.number_or_nan(j, p, "measured_gbps");
  l.gbps_a_to_b = in.number_or_nan_or(j, p, "gbps_a_to_b", 0);
  l.gbps_b_to_a = in.number_or_nan_or(j, p, "gbps_b_to_a", 0);
  l.expected_gbps = in.number_or_nan(j, p, "expected_gbps");
  l.line_rate_gbit = in.number_or_nan_or(j, p, "line_rate_gbit", 0);
  l.link_kind = in.get_or<std::string>(j, p, "link_kind", "");
  l.fraction_of_expected = in.number_or_nan_or(j, p, "fraction_of_expected", 0);
  l.peers_median_gbps = in.number_or_nan_or(j, p, "peers_median_gbps", 0);
  l.latency_us = in.number_or_nan_or(j, p, "latency_us", 0);
  l.peers_median_latency_us = in.number_or_nan_or(j, p, "peers_median_latency_us", 0);
  l.attempts = in.get_or<int>(j, p, "attempts", 1);
  l.transports = in.get_or<std::string>(j, p, "transports", "");
  l.below_expected = in.get_or<bool>(j, p, "below_expected", false);
  l.outlier = in.get_or<bool>(j, p, "outlier", false);
  l.slow_latency = in.get_or<bool>(j, p, "slow_latency", false);
  l.pass = in.get<bool>(j, p, "pass");
  l.reason = in.get<std::string>(j, p, "reason");
  l.counter_errors = in.get_or<bool>(j, p, "counter_errors", false);
  l.flapped = in.get_or<bool>(j, p, "flapped", false);
  l.congestion_pct = in.get_or<double>(j, p, "congestion_pct", 0.0);
  l.counters = in.get_or<std::string>(j, p, "counters", "");
  l.nic_counters = read_nic_counters(in, j, p);
  if (j.contains("baseline")) {
    const json& b = j["baseline"];
    const std::string bp = p + ".baseline";
    l.baseline =
        AcceptLinkBaseline{.known = in.get<bool>(b, bp, "known"),
                           .median_gbps = in.get<double>(b, bp, "median_gbps"),
                           .spread_gbps = in.get<double>(b, bp, "spread_gbps"),
                           .runs = in.get<int>(b, bp, "runs"),
                           .drop_pct = in.get<double>(b, bp, "drop_pct"),
                           .below = in.get<bool>(b, bp, "below"),
                           .reference = in.get<std::string>(b, bp, "reference"),
                           .reference_gbps = in.get<double>(b, bp, "reference_gbps"),
                           .reference_drop_pct = in.get<double>(b, bp, "reference_drop_pct"),
                           .below_reference = in.get<bool>(b, bp, "below_reference")};
  }
  return l;
}

json to_json(const ArrivalSummary& a) {
  return {{"ranks", a.ranks},
          {"p50_us", a.p50_us},
          {"p99_us", a.p99_us},
          {"max_us", a.max_us},
          {"last_rank", a.last_rank}};
}

json to_json(const Stragglers& s, bool keep_rank_samples) {
  json ranks = json::array();
  for (const auto& r : s.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"iterations", r.iterations},
                     {"last_count", r.last_count},
                     {"last_fraction", r.last_fraction},
                     {"median_late_us", r.median_late_us},
                     {"median_late_fraction", r.median_late_fraction}});
  }
  json rows = json::array();
  for (const auto& r : s.rows) {
    const std::size_t ranks = r.arrival_us.empty() ? 0 : r.arrival_us.front().size();
    json row = {{"algorithm", r.algorithm}, {"size_bytes", r.size_bytes}, {"in_place", r.in_place}};
    // ranks x iterations: a 10,752-rank job would write ~10^5 numbers per row; a summary per
    // iteration instead (and what a summarised file was read with stays as it was).
    const bool summarise = !r.arrivals.empty() || summarise_ranks(ranks, keep_rank_samples);
    if (summarise) {
      row["arrival_us"] = json::array();
      json arrivals = json::array();
      for (const auto& a : r.arrivals.empty() ? summarise_arrivals(r.arrival_us) : r.arrivals) {
        arrivals.push_back(to_json(a));
      }
      row["arrivals"] = std::move(arrivals);
    } else {
      row["arrival_us"] = r.arrival_us;
    }
    rows.push_back(std::move(row));
  }
  json j = {{"clock_uncertainty_us", s.clock_uncertainty_us},
            {"ranks", ranks},
            {"rows", rows},
            {"straggler", nullptr},
            {"reason", s.reason}};
  if (s.straggler) j["straggler"] = {{"rank", s.straggler->rank}, {"host", s.straggler->host}};
  return j;
}

Stragglers read_stragglers(const FieldReader& in, const json& j, const std::string& p) {
  Stragglers s;
  s.clock_uncertainty_us = in.number_or_nan_or(j, p, "clock_uncertainty_us", 0);
  s.reason = in.get_or<std::string>(j, p, "reason", "");
  if (j.contains("ranks")) {
    const json& a = j["ranks"];
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string rp = fmt::format("{}.ranks[{}]", p, i);
      StragglerRank r;
      r.rank = in.get_or<int>(a[i], rp, "rank", 0);
      r.host = in.get_or<std::string>(a[i], rp, "host", "");
      r.iterations = in.get_or<int>(a[i], rp, "iterations", 0);
      r.last_count = in.get_or<int>(a[i], rp, "last_count", 0);
      r.last_fraction = in.number_or_nan_or(a[i], rp, "last_fraction", 0);
      r.median_late_us = in.number_or_nan_or(a[i], rp, "median_late_us", 0);
      r.median_late_fraction = in.number_or_nan_or(a[i], rp, "median_late_fraction", 0);
      s.ranks.push_back(std::move(r));
    }
  }
  if (j.contains("rows")) {
    const json& a = j["rows"];
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string rp = fmt::format("{}.rows[{}]", p, i);
      StragglerRow r;
      r.algorithm = in.get_or<std::string>(a[i], rp, "algorithm", "");
      r.size_bytes = in.get_or<std::uint64_t>(a[i], rp, "size_bytes", 0);
      r.in_place = in.get_or<bool>(a[i], rp, "in_place", false);
      if (a[i].contains("arrival_us")) {
        const json& it = a[i]["arrival_us"];
        for (std::size_t k = 0; k < it.size(); ++k) {
          std::vector<double> per_rank;
          for (std::size_t r2 = 0; r2 < it[k].size(); ++r2) {
            const json& v = it[k][r2];
            per_rank.push_back(
                v.is_null() ? std::numeric_limits<double>::quiet_NaN()
                            : in.as<double>(v, fmt::format("{}.arrival_us[{}][{}]", rp, k, r2)));
          }
          r.arrival_us.push_back(std::move(per_rank));
        }
      }
      if (a[i].contains("arrivals")) {
        const json& it = a[i]["arrivals"];
        for (std::size_t k = 0; k < it.size(); ++k) {
          const std::string ap = fmt::format("{}.arrivals[{}]", rp, k);
          r.arrivals.push_back(ArrivalSummary{.ranks = in.get<int>(it[k], ap, "ranks"),
                                              .p50_us = in.number_or_nan_or(it[k], ap, "p50_us", 0),
                                              .p99_us = in.number_or_nan_or(it[k], ap, "p99_us", 0),
                                              .max_us = in.number_or_nan_or(it[k], ap, "max_us", 0),
                                              .last_rank = in.get<int>(it[k], ap, "last_rank")});
        }
      }
      s.rows.push_back(std::move(r));
    }
  }
  if (j.contains("straggler") && !j["straggler"].is_null()) {
    const json& n = j["straggler"];
    s.straggler = NamedStraggler{in.get_or<int>(n, p + ".straggler", "rank", 0),
                                 in.get_or<std::string>(n, p + ".straggler", "host", "")};
  }
  return s;
}

}  // namespace

const char* name_of(AcceptTransport t) noexcept {
  switch (t) {
    case AcceptTransport::kAuto:
      return "auto";
    case AcceptTransport::kUcx:
      return "ucx";
    case AcceptTransport::kVerbs:
      return "verbs";
  }
  return "?";
}

json to_json(const Acceptance& a, bool keep_rank_samples) {
  json hosts = json::array();
  for (const auto& h : a.hosts) {
    hosts.push_back({{"host", h.host},
                     {"links", h.links},
                     {"failed_links", h.failed_links},
                     {"culprit", h.culprit},
                     {"pass", h.pass},
                     {"reason", h.reason}});
  }
  json nics = json::array();
  for (const auto& n : a.nics) {
    nics.push_back({{"host", n.host},
                    {"nic", n.nic},
                    {"links", n.links},
                    {"failed_links", n.failed_links},
                    {"culprit", n.culprit},
                    {"pass", n.pass}});
  }
  json links = json::array();
  for (const auto& l : a.links) links.push_back(to_json(l));
  json j = {
      {"pass", a.pass},
      {"transport", name_of(a.transport)},
      {"expect_line_gbit", a.expect_line_gbit},
      {"links", links},
      {"hosts", hosts},
      {"nics", nics},
      {"median_gbps", a.median_gbps},
      {"mad_gbps", a.mad_gbps},
      {"median_latency_us", a.median_latency_us},
      {"retest_rounds", a.retest_rounds},
      {"notes", a.notes},
      {"stragglers", a.stragglers ? to_json(*a.stragglers, keep_rank_samples) : json(nullptr)}};
  if (a.thresholds) j["thresholds"] = to_json(*a.thresholds);
  if (a.preflight) j["preflight"] = to_json(*a.preflight);
  if (a.allreduce) j["allreduce"] = {{"rows", a.allreduce->rows}, {"wrong", a.allreduce->wrong}};
  // Only when set: the files of genuine runs stay readable by earlier ibscope builds.
  if (!a.fault_hooks.empty()) j["fault_hooks"] = a.fault_hooks;
  if (a.baseline) {
    const AcceptBaseline& b = *a.baseline;
    j["baseline"] = {{"source", b.source},
                     {"drop_pct", b.drop_pct},
                     {"noise_k", b.noise_k},
                     {"reference", b.reference},
                     {"links_known", b.links_known},
                     {"links_below", b.links_below},
                     {"links_below_reference", b.links_below_reference}};
  }
  if (!a.patterns.empty()) j["patterns"] = to_json(a.patterns);
  if (a.congestion) j["congestion"] = to_json(*a.congestion);
  if (a.counter_thresholds) {
    const AcceptCounterThresholds& t = *a.counter_thresholds;
    j["counter_thresholds"] = {{"max_link_errors", t.max_link_errors},
                               {"max_retransmit_ppm", t.max_retransmit_ppm},
                               {"min_retransmits", t.min_retransmits},
                               {"congestion_finding_pct", t.congestion_finding_pct}};
    put_nic_counters(j, a.nic_counters, false);  // per host NIC: O(hosts x NICs)
  }
  return j;
}

Acceptance acceptance_from_json(const json& j, std::string_view source) {
  const FieldReader in(source);
  const std::string p = "acceptance";
  Acceptance a;
  a.pass = in.get<bool>(j, p, "pass");
  a.transport = in.get<std::string>(j, p, "transport") == "verbs" ? AcceptTransport::kVerbs
                                                                  : AcceptTransport::kUcx;
  if (j.contains("thresholds"))
    a.thresholds = read_thresholds(in, j["thresholds"], p + ".thresholds");
  a.expect_line_gbit = in.number_or_nan_or(j, p, "expect_line_gbit", 0);
  if (j.contains("preflight")) a.preflight = read_preflight(in, j["preflight"], p + ".preflight");
  const json& links = in.at(j, p, "links");
  for (std::size_t i = 0; i < links.size(); ++i) {
    a.links.push_back(read_link(in, links[i], fmt::format("{}.links[{}]", p, i)));
  }
  const json& hosts = in.at(j, p, "hosts");
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string hp = fmt::format("{}.hosts[{}]", p, i);
    a.hosts.push_back(AcceptHost{
        in.get<std::string>(hosts[i], hp, "host"), in.get<int>(hosts[i], hp, "links"),
        in.get<int>(hosts[i], hp, "failed_links"), in.get<bool>(hosts[i], hp, "culprit"),
        in.get<bool>(hosts[i], hp, "pass"), in.get_or<std::string>(hosts[i], hp, "reason", "")});
  }
  if (j.contains("nics")) {
    const json& nics = j["nics"];
    for (std::size_t i = 0; i < nics.size(); ++i) {
      const std::string np = fmt::format("{}.nics[{}]", p, i);
      a.nics.push_back(AcceptNic{
          in.get<std::string>(nics[i], np, "host"), in.get<std::string>(nics[i], np, "nic"),
          in.get<int>(nics[i], np, "links"), in.get<int>(nics[i], np, "failed_links"),
          in.get<bool>(nics[i], np, "culprit"), in.get<bool>(nics[i], np, "pass")});
    }
  }
  a.median_gbps = in.number_or_nan_or(j, p, "median_gbps", 0);
  a.mad_gbps = in.number_or_nan_or(j, p, "mad_gbps", 0);
  a.median_latency_us = in.number_or_nan_or(j, p, "median_latency_us", 0);
  a.retest_rounds = in.get_or<int>(j, p, "retest_rounds", 0);
  a.notes = in.get_or<std::vector<std::string>>(j, p, "notes", {});
  a.fault_hooks = in.get_or<std::vector<std::string>>(j, p, "fault_hooks", {});
  a.patterns = read_accept_patterns(in, j, p);
  if (j.contains("counter_thresholds")) {
    const json& t = j["counter_thresholds"];
    const std::string tp = p + ".counter_thresholds";
    a.counter_thresholds = AcceptCounterThresholds{in.get<std::uint64_t>(t, tp, "max_link_errors"),
                                                   in.get<double>(t, tp, "max_retransmit_ppm"),
                                                   in.get<std::uint64_t>(t, tp, "min_retransmits"),
                                                   in.get<double>(t, tp, "congestion_finding_pct")};
  }
  a.nic_counters = read_nic_counters(in, j, p);
  if (j.contains("allreduce")) {
    a.allreduce = AcceptAllreduce{in.get<std::uint64_t>(j["allreduce"], p + ".allreduce", "rows"),
                                  in.get<std::uint64_t>(j["allreduce"], p + ".allreduce", "wrong")};
  }
  if (j.contains("congestion"))
    a.congestion = read_congestion(in, j["congestion"], p + ".congestion");
  if (j.contains("stragglers") && !j["stragglers"].is_null()) {
    a.stragglers = read_stragglers(in, j["stragglers"], p + ".stragglers");
  }
  if (j.contains("baseline")) {
    const json& b = j["baseline"];
    const std::string bp = p + ".baseline";
    a.baseline = AcceptBaseline{
        in.get<std::string>(b, bp, "source"),       in.get<double>(b, bp, "drop_pct"),
        in.get<double>(b, bp, "noise_k"),           in.get<std::string>(b, bp, "reference"),
        in.get<int>(b, bp, "links_known"),          in.get<int>(b, bp, "links_below"),
        in.get<int>(b, bp, "links_below_reference")};
  }
  return a;
}

}  // namespace ibscope::results
