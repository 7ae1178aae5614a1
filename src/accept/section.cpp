#include "section.hpp"

#include <fmt/format.h>

#include <map>

#include "ibscope/core/units.hpp"

namespace ibscope::accept {
namespace {

std::string rate(double gbps) {
  // Links here run from MB/s (shaped test links) to tens of GB/s: pick the unit per figure.
  return gbps >= 1 ? fmt::format("{:.2f} GB/s", gbps) : fmt::format("{:.2f} MB/s", gbps * 1e3);
}

nlohmann::json preflight_json(const Preflight& p) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : p.findings) {
    findings.push_back(
        {{"host", f.host}, {"device", f.device}, {"fatal", f.fatal}, {"message", f.message}});
  }
  return {{"pass", p.pass()},
          {"rdma_everywhere", p.rdma_everywhere},
          {"no_rdma_reason", p.no_rdma_reason},
          {"fabric_data_rate_gbit", p.fabric_data_rate_gbit},
          {"link_layer", p.link_layer},
          {"active_mtu_bytes", p.active_mtu_bytes},
          {"findings", findings}};
}

nlohmann::json thresholds_json(const AcceptOptions& o) {
  return {{"min_fraction", o.thresholds.min_fraction},
          {"mad_k", o.thresholds.mad_k},
          {"mad_floor_fraction", o.thresholds.mad_floor_fraction},
          {"max_latency_ratio", o.thresholds.max_latency_ratio},
          {"retests", o.retests},
          {"straggler_min_last_fraction", o.straggler.min_last_fraction},
          {"straggler_min_late_fraction", o.straggler.min_late_fraction},
          {"straggler_min_late_us", o.straggler.min_late_us}};
}

struct NicVerdict {
  std::string host, nic;
  int links = 0, failed_links = 0;
};

// Links through each NIC (host, device). A NIC whose every link failed is named.
std::vector<NicVerdict> nic_verdicts(const SectionInputs& in) {
  std::map<std::pair<std::string, std::string>, NicVerdict> nics;
  for (std::size_t i = 0; i < in.report.links.size(); ++i) {
    const LinkVerdict& v = in.report.links[i];
    const LinkEvidence& e = in.links.evidence[i];
    for (const auto& [host, nic] :
         {std::pair{v.link.host_a, e.nic_a}, std::pair{v.link.host_b, e.nic_b}}) {
      if (nic.empty()) continue;
      NicVerdict& n = nics[{host, nic}];
      n.host = host;
      n.nic = nic;
      ++n.links;
      if (!v.pass) ++n.failed_links;
    }
  }
  std::vector<NicVerdict> out;
  for (auto& [key, n] : nics) out.push_back(n);
  return out;
}

nlohmann::json stragglers_json(const StragglerReport& s, const std::vector<CollectiveRow>& rows) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : s.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"iterations", r.iterations},
                     {"last_count", r.last_count},
                     {"last_fraction", r.last_fraction},
                     {"median_late_us", r.median_late_us},
                     {"median_late_fraction", r.median_late_fraction}});
  }
  nlohmann::json per_row = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.size() && i < s.lateness_us.size(); ++i) {
    per_row.push_back({{"algorithm", rows[i].algorithm},
                       {"size_bytes", rows[i].size_bytes},
                       {"in_place", rows[i].in_place},
                       {"arrival_us", s.lateness_us[i]}});
  }
  nlohmann::json j = {{"clock_uncertainty_us", s.clock_uncertainty_us},
                      {"ranks", ranks},
                      {"rows", per_row},
                      {"straggler", nullptr},
                      {"reason", s.reason}};
  if (s.straggler) {
    j["straggler"] = {{"rank", *s.straggler},
                      {"host", s.ranks[static_cast<std::size_t>(*s.straggler)].host}};
  }
  return j;
}

}  // namespace

AcceptResult build_section(const SectionInputs& in) {
  AcceptResult out;
  const AcceptReport& report = in.report;
  bool pass = report.pass && in.preflight.pass();

  for (const auto& f : in.preflight.findings) {
    const std::string where =
        f.host.empty() ? "" : fmt::format("{}{}: ", f.host, f.device.empty() ? "" : " " + f.device);
    (f.fatal ? out.failures : out.warnings)
        .push_back(fmt::format("preflight: {}{}", where, f.message));
  }
  for (const auto& note : in.links.notes) out.warnings.push_back(note);

  nlohmann::json links = nlohmann::json::array();
  for (std::size_t i = 0; i < report.links.size(); ++i) {
    const LinkVerdict& v = report.links[i];
    const LinkEvidence& e = in.links.evidence[i];
    links.push_back({{"rank_a", v.link.rank_a},
                     {"rank_b", v.link.rank_b},
                     {"host_a", v.link.host_a},
                     {"host_b", v.link.host_b},
                     {"nic_a", e.nic_a},
                     {"nic_b", e.nic_b},
                     {"measured_gbps", v.link.measured_gbps},
                     {"gbps_a_to_b", e.gbps_a_to_b},
                     {"gbps_b_to_a", e.gbps_b_to_a},
                     {"expected_gbps", v.link.expected_gbps},
                     {"line_rate_gbit", e.line_rate_gbit},
                     {"link_kind", e.link_kind},
                     {"fraction_of_expected", v.fraction_of_expected},
                     {"peers_median_gbps", v.peers_median_gbps},
                     {"latency_us", v.link.latency_us},
                     {"peers_median_latency_us", report.median_latency_us},
                     {"attempts", v.link.attempts},
                     {"transports", e.transports},
                     {"below_expected", v.below_expected},
                     {"outlier", v.outlier},
                     {"slow_latency", v.slow_latency},
                     {"pass", v.pass},
                     {"reason", v.reason}});
  }

  // Console: culprit hosts first (their links are theirs), then the other failed links.
  std::map<std::string, bool> culprit;
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : report.hosts) {
    culprit[h.host] = h.culprit;
    hosts.push_back({{"host", h.host},
                     {"links", h.links},
                     {"failed_links", h.failed_links},
                     {"culprit", h.culprit},
                     {"pass", h.pass},
                     {"reason", h.reason}});
    if (h.culprit) {
      std::vector<double> own;
      for (const auto& v : report.links) {
        if (v.link.host_a == h.host || v.link.host_b == h.host) own.push_back(v.link.measured_gbps);
      }
      out.failures.push_back(fmt::format(
          "host {}: {} (its links' median {}, the fabric's median {}{})", h.host, h.reason,
          rate(median_of(own)), rate(report.median_gbps),
          report.links.empty() || report.links[0].link.expected_gbps <= 0
              ? ""
              : fmt::format(", expected {}", rate(report.links[0].link.expected_gbps))));
    }
  }
  for (const auto& v : report.links) {
    if (v.pass || culprit[v.link.host_a] || culprit[v.link.host_b]) continue;
    out.failures.push_back(fmt::format(
        "link rank {} ({}) <-> rank {} ({}): {}{}", v.link.rank_a, v.link.host_a, v.link.rank_b,
        v.link.host_b, v.reason,
        v.link.attempts > 1 ? fmt::format(" (best of {} attempts)", v.link.attempts) : ""));
  }

  nlohmann::json nics = nlohmann::json::array();
  for (const auto& n : nic_verdicts(in)) {
    const bool nic_culprit = n.links >= 2 && n.failed_links == n.links;
    nics.push_back({{"host", n.host},
                    {"nic", n.nic},
                    {"links", n.links},
                    {"failed_links", n.failed_links},
                    {"culprit", nic_culprit},
                    {"pass", n.failed_links == 0}});
  }

  nlohmann::json section = {{"transport", std::string(to_string(in.transport))},
                            {"thresholds", thresholds_json(in.options)},
                            {"expect_line_gbit", in.options.expect_line_gbit},
                            {"preflight", preflight_json(in.preflight)},
                            {"links", links},
                            {"hosts", hosts},
                            {"nics", nics},
                            {"median_gbps", report.median_gbps},
                            {"mad_gbps", report.mad_gbps},
                            {"median_latency_us", report.median_latency_us},
                            {"retest_rounds", in.retests},
                            {"notes", in.links.notes}};
  if (report.links.empty()) {
    out.warnings.push_back(
        "no link between two hosts was measured (every rank runs on one host): the verdict "
        "covers the all-reduce only; run one rank per host under srun/mpirun");
  }

  if (in.allreduce_rows != nullptr) {
    section["allreduce"] = {{"rows", in.allreduce_rows->size()}, {"wrong", in.allreduce_wrong}};
    if (in.allreduce_wrong > 0) {
      pass = false;
      out.failures.push_back(fmt::format(
          "all-reduce: {} wrong elements in total (data corrupted on some path; see the "
          "collectives rows' #wrong)",
          in.allreduce_wrong));
    }
    for (const auto& r : *in.allreduce_rows) {
      for (const auto& st : r.stalls) {
        out.warnings.push_back(fmt::format("all-reduce {} {}: iteration {} stalled {:.3f} s",
                                           r.algorithm, units::format_size(r.size_bytes),
                                           st.iteration, st.time_us * 1e-6));
      }
    }
  }
  if (in.stragglers) {
    section["stragglers"] = stragglers_json(*in.stragglers, *in.allreduce_rows);
    if (in.stragglers->straggler) {
      pass = false;
      out.failures.push_back("straggler: " + in.stragglers->reason);
    }
  } else {
    section["stragglers"] = nullptr;
  }
  section["pass"] = pass;
  out.pass = pass;
  out.section = std::move(section);
  return out;
}

}  // namespace ibscope::accept
