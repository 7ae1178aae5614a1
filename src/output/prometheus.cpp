#include "ibscope/output/prometheus.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "ibscope/core/error.hpp"

namespace ibscope::output::prometheus {
namespace {

Family family(std::string name, std::string help) {
  Family f;
  f.name = std::move(name);
  f.help = std::move(help);
  return f;
}

// Returns how many links failed.
double link_metrics(const std::vector<results::AcceptLink>& links, std::vector<Family>& out) {
  Family bw = family("ibscope_link_bandwidth_gbps",
                     "Measured payload rate of the link in GB/s (1e9 B/s): its slower direction, "
                     "best attempt");
  Family expected = family("ibscope_link_expected_gbps",
                           "Expected payload rate of the link in GB/s (absent: unknown)");
  Family fraction = family("ibscope_link_fraction_of_expected",
                           "Measured over expected payload rate (absent: no expected rate)");
  Family latency =
      family("ibscope_link_latency_us", "Median half round trip of the link in microseconds");
  Family pass = family("ibscope_link_pass", "1 when the link passed every test, 0 when it failed");
  for (const auto& l : links) {
    const std::vector<std::pair<std::string, std::string>> labels = {
        {"rank_a", std::to_string(l.rank_a)},
        {"rank_b", std::to_string(l.rank_b)},
        {"host_a", l.host_a},
        {"host_b", l.host_b},
        {"nic_a", l.nic_a},
        {"nic_b", l.nic_b}};
    bw.samples.push_back({labels, l.measured_gbps});
    if (l.expected_gbps > 0) {  // 0: no rate known (UCX over TCP without --expect-gbps)
      expected.samples.push_back({labels, l.expected_gbps});
      fraction.samples.push_back({labels, l.fraction_of_expected});
    }
    if (l.latency_us > 0) latency.samples.push_back({labels, l.latency_us});
    pass.samples.push_back({labels, l.pass ? 1.0 : 0.0});
  }
  double failed = 0;
  for (const auto& s : pass.samples) failed += 1 - s.value;
  for (auto* fam : {&bw, &expected, &fraction, &latency, &pass}) out.push_back(std::move(*fam));
  return failed;
}

// Returns how many hosts failed.
double host_metrics(const std::vector<results::AcceptHost>& hosts, std::vector<Family>& out) {
  Family pass = family("ibscope_host_pass", "1 when every link of the host passed, 0 otherwise");
  Family culprit = family("ibscope_host_culprit",
                          "1 when every one of the host's links (at least 2) failed: the host "
                          "is the slow one");
  double failed = 0;
  for (const auto& h : hosts) {
    const std::vector<std::pair<std::string, std::string>> labels = {{"host", h.host}};
    failed += h.pass ? 0 : 1;
    pass.samples.push_back({labels, h.pass ? 1.0 : 0.0});
    culprit.samples.push_back({labels, h.culprit ? 1.0 : 0.0});
  }
  out.push_back(std::move(pass));
  out.push_back(std::move(culprit));
  return failed;
}

void nic_metrics(const std::vector<results::AcceptNic>& nics, std::vector<Family>& out) {
  if (nics.empty()) return;
  Family pass = family("ibscope_nic_pass", "1 when every link of the NIC passed, 0 otherwise");
  for (const auto& n : nics) {
    pass.samples.push_back({{{"host", n.host}, {"nic", n.nic}}, n.pass ? 1.0 : 0.0});
  }
  out.push_back(std::move(pass));
}

void straggler_metrics(const results::Acceptance& a, std::vector<Family>& out) {
  if (!a.stragglers) return;  // --skip-allreduce
  const results::Stragglers& s = *a.stragglers;
  Family fam = family("ibscope_straggler",
                      "1 for the rank that arrived last at the all-reduce consistently (everybody "
                      "waits for it), 0 for the others");
  for (const auto& r : s.ranks) {
    const bool last = s.straggler && s.straggler->rank == r.rank;
    fam.samples.push_back({{{"rank", std::to_string(r.rank)}, {"host", r.host}}, last ? 1.0 : 0.0});
  }
  out.push_back(std::move(fam));
}

// accept --congestion: GPCNet's impact factor per congestor and victim metric.
void congestion_metrics(const results::Acceptance& a, std::vector<Family>& out) {
  if (!a.congestion) return;
  Family pass = family("ibscope_congestion_pass",
                       "1 when no victim metric got worse under a congestor than its limit");
  pass.samples.push_back({{}, a.congestion->pass ? 1.0 : 0.0});
  out.push_back(std::move(pass));
  Family impact = family("ibscope_congestion_impact",
                         "Victims' slowdown under a congestor (GPCNet's impact factor: "
                         "congested/isolated latency, isolated/congested bus bandwidth)");
  for (const auto& i : a.congestion->impacts) {
    if (std::isnan(i.impact)) continue;
    impact.samples.push_back({{{"congestor", i.congestor}, {"metric", i.metric}}, i.impact});
  }
  out.push_back(std::move(impact));
}

// The NIC counters: per link what they judged, per host NIC every counter's growth over the
// all-pairs phase (docs/counters.md).
void counter_metrics(const results::Acceptance& a, std::vector<Family>& out) {
  if (!a.counter_thresholds) return;  // not read
  Family errors = family("ibscope_link_counter_errors",
                         "1 when the link's NIC counters showed errors beyond the thresholds");
  Family flapped = family("ibscope_link_flapped", "1 when a flap counter of the link's NICs grew");
  Family congestion = family("ibscope_link_congestion_percent",
                             "Largest congestion share of the link's NICs, % of events");
  for (const auto& l : a.links) {
    if (l.counters.empty()) continue;
    const std::vector<std::pair<std::string, std::string>> labels = {
        {"rank_a", std::to_string(l.rank_a)},
        {"rank_b", std::to_string(l.rank_b)},
        {"host_a", l.host_a},
        {"host_b", l.host_b}};
    errors.samples.push_back({labels, l.counter_errors ? 1.0 : 0.0});
    flapped.samples.push_back({labels, l.flapped ? 1.0 : 0.0});
    congestion.samples.push_back({labels, l.congestion_pct});
  }
  Family delta = family("ibscope_nic_counter_delta",
                        "Growth of a NIC counter over the all-pairs phase (kind: errors, "
                        "congestion, flaps, traffic, other)");
  for (const auto& n : a.nic_counters) {
    for (const auto& c : n.counters) {
      delta.samples.push_back({{{"host", n.host},
                                {"nic", n.nic},
                                {"source", std::string(fabric::name_of(c.source))},
                                {"counter", c.name},
                                {"kind", std::string(fabric::name_of(c.kind))}},
                               static_cast<double>(c.delta)});
    }
  }
  for (auto* fam : {&errors, &flapped, &congestion, &delta}) out.push_back(std::move(*fam));
}

// Backslash and newline always; the double quote only inside a label value's quotes.
std::string escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// Shortest text that reads back as the same double; integers without a fraction.
std::string format_value(double v) { return fmt::format("{}", v); }

}  // namespace

std::string escape_label_value(std::string_view value) { return escape(value, true); }

std::string escape_help(std::string_view help) { return escape(help, false); }

std::string exposition_text(const std::vector<Family>& families) {
  std::string out;
  for (const auto& fam : families) {
    bool header = false;
    for (const auto& s : fam.samples) {
      if (!std::isfinite(s.value)) continue;
      if (!header) {
        out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", fam.name, escape_help(fam.help),
                           fam.name, fam.type);
        header = true;
      }
      out += fam.name;
      if (!s.labels.empty()) {
        out += '{';
        for (std::size_t i = 0; i < s.labels.size(); ++i) {
          out += fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", s.labels[i].first,
                             escape_label_value(s.labels[i].second));
        }
        out += '}';
      }
      out += fmt::format(" {}\n", format_value(s.value));
    }
  }
  return out;
}

std::vector<Family> acceptance_metrics(const results::Acceptance& a, double timestamp_s) {
  std::vector<Family> out;
  Family pass = family("ibscope_accept_pass",
                       "1 when the last acceptance run passed (exit status 0), 0 when it failed");
  pass.samples.push_back({{{"transport", results::name_of(a.transport)}}, a.pass ? 1.0 : 0.0});
  out.push_back(std::move(pass));
  Family when = family("ibscope_accept_timestamp_seconds",
                       "When the last acceptance run ended (Unix time): alert when it gets old");
  when.samples.push_back({{}, timestamp_s});
  out.push_back(std::move(when));

  Family n_links = family("ibscope_accept_links", "Links between two hosts that were judged");
  n_links.samples.push_back({{}, static_cast<double>(a.links.size())});
  out.push_back(std::move(n_links));
  const double failed_links = link_metrics(a.links, out);
  Family n_failed = family("ibscope_accept_failed_links", "Links that failed");
  n_failed.samples.push_back({{}, failed_links});
  out.push_back(std::move(n_failed));

  const double failed_hosts = host_metrics(a.hosts, out);
  Family n_hosts = family("ibscope_accept_failed_hosts", "Hosts with at least one failed link");
  n_hosts.samples.push_back({{}, failed_hosts});
  out.push_back(std::move(n_hosts));
  nic_metrics(a.nics, out);

  if (a.allreduce) {
    Family wrong = family("ibscope_accept_allreduce_wrong",
                          "Wrong elements summed over the verified all-reduce sweep (must be 0)");
    wrong.samples.push_back({{}, static_cast<double>(a.allreduce->wrong)});
    out.push_back(std::move(wrong));
  }
  straggler_metrics(a, out);
  counter_metrics(a, out);
  congestion_metrics(a, out);
  return out;
}

void check_textfile_path(const std::string& path, std::string_view flag) {
  const std::filesystem::path p(path);
  if (p.extension() != ".prom" || p.stem().empty()) {
    throw UsageError(
        fmt::format("{} {}: node-exporter's textfile collector reads only *.prom "
                    "files; name it e.g. ibscope.prom",
                    flag, path));
  }
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw UsageError(
        fmt::format("{} {}: no folder {} (the collector's "
                    "--collector.textfile.directory)",
                    flag, path, dir.string()));
  }
}

}  // namespace ibscope::output::prometheus
