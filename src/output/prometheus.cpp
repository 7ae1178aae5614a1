#include "ibscope/output/prometheus.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "ibscope/core/error.hpp"

namespace ibscope::prometheus {
namespace {

using nlohmann::json;

// Typed access to the acceptance section; a missing or mistyped field is a UsageError naming
// its JSON path, like the results loader's messages.
struct Fields {
  std::string_view source;

  [[noreturn]] void fail(const std::string& path, std::string_view expected) const {
    throw UsageError(fmt::format("{}: {}: expected {}", source, path, expected));
  }
  const json& get(const json& obj, const char* key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(fmt::format("{}.{}", path, key), "a value (missing)");
    return *it;
  }
  double number(const json& obj, const char* key, const std::string& path) const {
    const json& v = get(obj, key, path);
    if (!v.is_number()) fail(fmt::format("{}.{}", path, key), "a number");
    return v.get<double>();
  }
  std::string integer(const json& obj, const char* key, const std::string& path) const {
    const json& v = get(obj, key, path);
    if (!v.is_number_integer()) fail(fmt::format("{}.{}", path, key), "an integer");
    return std::to_string(v.get<long long>());
  }
  std::string text(const json& obj, const char* key, const std::string& path) const {
    const json& v = get(obj, key, path);
    if (!v.is_string()) fail(fmt::format("{}.{}", path, key), "a string");
    return v.get<std::string>();
  }
  double flag(const json& obj, const char* key, const std::string& path) const {
    const json& v = get(obj, key, path);
    if (!v.is_boolean()) fail(fmt::format("{}.{}", path, key), "true or false");
    return v.get<bool>() ? 1.0 : 0.0;
  }
  // An array that may be absent or null (sections older files or skipped phases lack).
  const json* optional_array(const json& obj, const char* key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    if (!it->is_array()) fail(fmt::format("{}.{}", path, key), "an array");
    return &*it;
  }
  const json& array(const json& obj, const char* key, const std::string& path) const {
    const json& v = get(obj, key, path);
    if (!v.is_array()) fail(fmt::format("{}.{}", path, key), "an array");
    return v;
  }
};

Family family(std::string name, std::string help) {
  Family f;
  f.name = std::move(name);
  f.help = std::move(help);
  return f;
}

// Returns how many links failed.
double link_metrics(const json& links, const Fields& f, std::vector<Family>& out) {
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
  for (std::size_t i = 0; i < links.size(); ++i) {
    const json& l = links[i];
    const std::string p = fmt::format("acceptance.links[{}]", i);
    if (!l.is_object()) f.fail(p, "an object");
    const std::vector<std::pair<std::string, std::string>> labels = {
        {"rank_a", f.integer(l, "rank_a", p)}, {"rank_b", f.integer(l, "rank_b", p)},
        {"host_a", f.text(l, "host_a", p)},    {"host_b", f.text(l, "host_b", p)},
        {"nic_a", f.text(l, "nic_a", p)},      {"nic_b", f.text(l, "nic_b", p)}};
    bw.samples.push_back({labels, f.number(l, "measured_gbps", p)});
    const double expected_gbps = f.number(l, "expected_gbps", p);
    if (expected_gbps > 0) {  // 0: no rate known (UCX over TCP without --expect-gbps)
      expected.samples.push_back({labels, expected_gbps});
      fraction.samples.push_back({labels, f.number(l, "fraction_of_expected", p)});
    }
    const double latency_us = f.number(l, "latency_us", p);
    if (latency_us > 0) latency.samples.push_back({labels, latency_us});
    pass.samples.push_back({labels, f.flag(l, "pass", p)});
  }
  double failed = 0;
  for (const auto& s : pass.samples) failed += 1 - s.value;
  for (auto* fam : {&bw, &expected, &fraction, &latency, &pass}) out.push_back(std::move(*fam));
  return failed;
}

// Returns how many hosts failed.
double host_metrics(const json& hosts, const Fields& f, std::vector<Family>& out) {
  Family pass = family("ibscope_host_pass", "1 when every link of the host passed, 0 otherwise");
  Family culprit = family("ibscope_host_culprit",
                          "1 when every one of the host's links (at least 2) failed: the host "
                          "is the slow one");
  double failed = 0;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const json& h = hosts[i];
    const std::string p = fmt::format("acceptance.hosts[{}]", i);
    if (!h.is_object()) f.fail(p, "an object");
    const std::vector<std::pair<std::string, std::string>> labels = {
        {"host", f.text(h, "host", p)}};
    const double ok = f.flag(h, "pass", p);
    failed += 1 - ok;
    pass.samples.push_back({labels, ok});
    culprit.samples.push_back({labels, f.flag(h, "culprit", p)});
  }
  out.push_back(std::move(pass));
  out.push_back(std::move(culprit));
  return failed;
}

void nic_metrics(const json* nics, const Fields& f, std::vector<Family>& out) {
  if (nics == nullptr) return;
  Family pass = family("ibscope_nic_pass", "1 when every link of the NIC passed, 0 otherwise");
  for (std::size_t i = 0; i < nics->size(); ++i) {
    const json& n = (*nics)[i];
    const std::string p = fmt::format("acceptance.nics[{}]", i);
    if (!n.is_object()) f.fail(p, "an object");
    pass.samples.push_back(
        {{{"host", f.text(n, "host", p)}, {"nic", f.text(n, "nic", p)}}, f.flag(n, "pass", p)});
  }
  out.push_back(std::move(pass));
}

void straggler_metrics(const json& a, const Fields& f, std::vector<Family>& out) {
  const auto it = a.find("stragglers");
  if (it == a.end() || it->is_null()) return;  // --skip-allreduce
  const std::string p = "acceptance.stragglers";
  if (!it->is_object()) f.fail(p, "an object or null");
  const json& s = *it;
  std::string straggler;  // rank, or "" when none
  const json& named = f.get(s, "straggler", p);
  if (named.is_object()) {
    straggler = f.integer(named, "rank", p + ".straggler");
  } else if (!named.is_null()) {
    f.fail(p + ".straggler", "an object or null");
  }
  Family fam = family("ibscope_straggler",
                      "1 for the rank that arrived last at the all-reduce consistently (everybody "
                      "waits for it), 0 for the others");
  const json& ranks = f.array(s, "ranks", p);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const json& r = ranks[i];
    const std::string rp = fmt::format("{}.ranks[{}]", p, i);
    if (!r.is_object()) f.fail(rp, "an object");
    const std::string rank = f.integer(r, "rank", rp);
    fam.samples.push_back(
        {{{"rank", rank}, {"host", f.text(r, "host", rp)}}, rank == straggler ? 1.0 : 0.0});
  }
  out.push_back(std::move(fam));
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

std::vector<Family> acceptance_metrics(const nlohmann::json& a, double timestamp_s,
                                       std::string_view source) {
  const Fields f{source};
  const std::string p = "acceptance";
  if (!a.is_object()) f.fail(p, "an object");
  std::vector<Family> out;
  Family pass = family("ibscope_accept_pass",
                       "1 when the last acceptance run passed (exit status 0), 0 when it failed");
  pass.samples.push_back({{{"transport", f.text(a, "transport", p)}}, f.flag(a, "pass", p)});
  out.push_back(std::move(pass));
  Family when = family("ibscope_accept_timestamp_seconds",
                       "When the last acceptance run ended (Unix time): alert when it gets old");
  when.samples.push_back({{}, timestamp_s});
  out.push_back(std::move(when));

  const json& links = f.array(a, "links", p);
  Family n_links = family("ibscope_accept_links", "Links between two hosts that were judged");
  n_links.samples.push_back({{}, static_cast<double>(links.size())});
  out.push_back(std::move(n_links));
  const double failed_links = link_metrics(links, f, out);
  Family n_failed = family("ibscope_accept_failed_links", "Links that failed");
  n_failed.samples.push_back({{}, failed_links});
  out.push_back(std::move(n_failed));

  const double failed_hosts = host_metrics(f.array(a, "hosts", p), f, out);
  Family n_hosts = family("ibscope_accept_failed_hosts", "Hosts with at least one failed link");
  n_hosts.samples.push_back({{}, failed_hosts});
  out.push_back(std::move(n_hosts));
  nic_metrics(f.optional_array(a, "nics", p), f, out);

  const auto ar = a.find("allreduce");
  if (ar != a.end() && ar->is_object()) {
    Family wrong = family("ibscope_accept_allreduce_wrong",
                          "Wrong elements summed over the verified all-reduce sweep (must be 0)");
    wrong.samples.push_back({{}, f.number(*ar, "wrong", p + ".allreduce")});
    out.push_back(std::move(wrong));
  }
  straggler_metrics(a, f, out);
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

}  // namespace ibscope::prometheus
