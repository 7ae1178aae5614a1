// The report's context: what was measured where (hosts, NICs, line rates, versions, warnings),
// and the expected line rates drawn on bandwidth charts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ibscope/core/hosts.hpp"
#include "ibscope/model/results_fits.hpp"
#include "ibscope/topo/topology_json.hpp"
#include "report_sections.hpp"

namespace ibscope::report {
namespace {

using nlohmann::json;

// Best-effort reads for display: the loader checked the types of the fields it knows; these
// show "-" for anything absent or unexpected rather than guessing.
std::string text(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return "-";
  const json& v = obj[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number()) return v.dump();
  return "-";
}

bool flag(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_boolean() && obj[key].get<bool>();
}

double number(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return 0;
  return obj[key].get<double>();
}

std::vector<std::string> distinct_hosts(const json& doc) {
  std::vector<std::string> per_rank;
  const json& job = doc["job"];
  if (!job.contains("hosts") || !job["hosts"].is_array()) return per_rank;
  for (const auto& h : job["hosts"]) {
    if (h.is_string()) per_rank.push_back(h.get<std::string>());
  }
  return ibscope::distinct_hosts(per_rank);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

std::string runs_table(const std::vector<ReportFile>& files) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : files) {
    const json& d = f.doc;
    const std::vector<std::string> hosts = distinct_hosts(d);
    rows.push_back({f.label, f.path, text(d["command"], "subcommand"), text(d, "started_utc"),
                    text(d, "complete"), text(d["job"], "ranks"),
                    fmt::format("{}: {}", hosts.size(), join(hosts)), text(d["job"], "bootstrap"),
                    text(d["environment"], "ucx_version"), text(d["environment"], "build"),
                    model::file_transport_label(d), text(d["tool"], "version"),
                    text(d["tool"], "git_sha")});
  }
  return table({"label", "file", "command", "started (UTC)", "complete", "ranks", "hosts",
                "bootstrap", "UCX version", "build", "UCX transports", "ibscope", "git sha"},
               rows);
}

std::string nics_table(const std::vector<ReportFile>& files) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : files) {
    if (f.doc.contains("topology")) {
      for (const auto& h : topo::topology_from_section_json(f.doc["topology"], f.path)) {
        if (h.nics.empty()) {
          rows.push_back({f.label, h.host, "-", "-", "-", "-", "-", "-", "-",
                          h.rdma_available ? "" : h.rdma_reason});
        }
        for (const auto& n : h.nics) {
          if (n.ports.empty())
            rows.push_back({f.label, h.host, n.name, "-", "-", "-", "-", "-", "-", n.error});
          for (const auto& p : n.ports) {
            rows.push_back({f.label, h.host, n.name, std::to_string(p.port), p.state, p.link_layer,
                            fmt::format("{}x {}", p.lanes, p.speed),
                            fmt::format("{:g}", p.line_rate_gbit_s),
                            fmt::format("{:.4g}", p.data_rate_gbyte_s()),
                            n.is_virtual ? "virtual" : n.pci_bus_id});
          }
        }
      }
    }
    const json& env = f.doc["environment"];
    if (env.contains("verbs_ports") && env["verbs_ports"].is_array()) {
      for (const auto& p : env["verbs_ports"]) {
        rows.push_back({f.label, fmt::format("rank {}", text(p, "rank")), text(p, "device"), "-",
                        "-", text(p, "link_layer"), "-", "-",
                        fmt::format("{:.4g}", number(p, "data_rate_gbit") / 8),
                        fmt::format("verbs GID {}", text(p, "gid"))});
      }
    }
  }
  if (rows.empty()) return "";
  return table({"label", "host", "device", "port", "state", "link layer", "width x speed",
                "line rate (Gb/s)", "data rate (GB/s)", "note"},
               rows);
}

std::string acceptance_table(const std::vector<ReportFile>& files) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : files) {
    if (!f.doc.contains("acceptance") || !f.doc["acceptance"].is_object()) continue;
    const json& a = f.doc["acceptance"];
    int links = 0, failed = 0;
    if (a.contains("links") && a["links"].is_array()) {
      for (const auto& l : a["links"]) {
        ++links;
        if (!flag(l, "pass")) ++failed;
      }
    }
    rows.push_back({f.label, flag(a, "pass") ? "PASS" : "FAIL", text(a, "transport"),
                    text(a, "expect_line_gbit"), std::to_string(links), std::to_string(failed),
                    fmt::format("{:.4g}", number(a, "median_gbps")),
                    fmt::format("{:.4g}", number(a, "median_latency_us"))});
  }
  if (rows.empty()) return "";
  return table({"label", "acceptance", "transport", "expected line rate (Gb/s)", "links",
                "failed links", "median link (GB/s)", "median latency (us)"},
               rows);
}

std::string warnings_list(const std::vector<ReportFile>& files) {
  std::string out;
  for (const auto& f : files) {
    for (const auto& w : f.doc["warnings"]) {
      if (w.is_string()) {
        out += fmt::format("<li class=\"warning\">{}{}</li>",
                           xml_escape(files.size() > 1 ? f.label + ": " : std::string()),
                           xml_escape(w.get<std::string>()));
      }
    }
    if (f.doc["error"].is_object()) {
      out += fmt::format("<li class=\"fail\">{}: run failed: {}</li>", xml_escape(f.label),
                         xml_escape(text(f.doc["error"], "message")));
    }
  }
  return out.empty() ? "<p>No warnings.</p>" : "<ul class=\"warnings\">" + out + "</ul>";
}

void add_rate(std::vector<ReferenceLine>& out, double gbyte_s, std::string label) {
  if (!(gbyte_s > 0) || !std::isfinite(gbyte_s)) return;
  for (const auto& r : out) {
    if (std::fabs(r.y - gbyte_s) <= 1e-9 * gbyte_s) return;
  }
  out.push_back({std::move(label), gbyte_s});
}

}  // namespace

std::vector<ReferenceLine> line_rates(const std::vector<ReportFile>& files,
                                      const std::optional<double>& given_gbit) {
  std::vector<ReferenceLine> out;
  if (given_gbit) {
    add_rate(
        out, *given_gbit / 8,
        fmt::format("line rate {:g} Gb/s = {:.4g} GB/s (given)", *given_gbit, *given_gbit / 8));
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    const json& d = files[i].doc;
    const std::string who = files.size() > 1 ? " (" + files[i].label + ")" : "";
    if (d.contains("acceptance") && d["acceptance"].is_object()) {
      const json& a = d["acceptance"];
      double expected = 0;
      if (a.contains("links") && a["links"].is_array()) {
        for (const auto& l : a["links"]) expected = std::max(expected, number(l, "expected_gbps"));
      }
      const double line = number(a, "expect_line_gbit");
      if (expected > 0) {
        add_rate(out, expected,
                 fmt::format("expected payload {:.4g} GB/s (acceptance{}{})", expected,
                             line > 0 ? fmt::format(", line {:g} Gb/s", line) : "", who));
      } else if (line > 0) {
        add_rate(
            out, line / 8,
            fmt::format("line rate {:g} Gb/s = {:.4g} GB/s (acceptance{})", line, line / 8, who));
      }
    }
    if (d.contains("topology")) {
      double best = 0;
      std::string where;
      for (const auto& h : topo::topology_from_section_json(d["topology"], files[i].path)) {
        for (const auto& n : h.nics) {
          for (const auto& p : n.ports) {
            if (p.state == "ACTIVE" && p.data_rate_gbyte_s() > best) {
              best = p.data_rate_gbyte_s();
              where = fmt::format("{} {}:{}", h.host, n.name, p.port);
            }
          }
        }
      }
      add_rate(out, best, fmt::format("port data rate {:.4g} GB/s ({}{})", best, where, who));
    }
    double probe_gbit = 0;
    if (d.contains("probes")) {
      for (const auto& r : d["probes"]["rows"])
        probe_gbit = std::max(probe_gbit, number(r, "line_rate_gbit"));
    }
    if (d["environment"].contains("verbs_ports") && d["environment"]["verbs_ports"].is_array()) {
      for (const auto& p : d["environment"]["verbs_ports"]) {
        probe_gbit = std::max(probe_gbit, number(p, "data_rate_gbit"));
      }
    }
    add_rate(out, probe_gbit / 8,
             fmt::format("verbs port data rate {:g} Gb/s = {:.4g} GB/s{}", probe_gbit,
                         probe_gbit / 8, who));
  }
  return out;
}

Section context_section(const std::vector<ReportFile>& files) {
  Section s{"context", "Context", "", ""};
  s.html = "<h3>Runs</h3>" + runs_table(files);
  const std::string nics = nics_table(files);
  s.html += "<h3>NICs and line rates</h3>";
  s.html += nics.empty() ? paragraph(
                               "No NIC data in these files (written by 'ibscope topo', "
                               "'ibscope accept' and 'ibscope probe').")
                         : nics;
  const std::string accept = acceptance_table(files);
  if (!accept.empty()) s.html += "<h3>Acceptance</h3>" + accept;
  std::string rates;
  for (const auto& r : line_rates(files, std::nullopt))
    rates += "<li>" + xml_escape(r.label) + "</li>";
  s.html += "<h3>Expected rates drawn on bandwidth charts</h3>";
  s.html += rates.empty() ? paragraph("None in the files (give --expect-gbps to draw one).")
                          : "<ul>" + rates + "</ul>";
  s.html += paragraph("libibverbs version: not recorded in results files (schema v1).");
  s.html += "<h3>Warnings</h3>" + warnings_list(files);
  return s;
}

}  // namespace ibscope::report
