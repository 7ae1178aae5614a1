#include "ibscope/output/results_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ibscope/core/error.hpp"
#include "ibscope/output/results_document.hpp"
#include "ibscope/topo/topology_json.hpp"

namespace ibscope {
namespace {

using nlohmann::json;

enum class Kind {
  kString,
  kNumber,
  kInteger,
  kBool,
  kObject,
  kArray,
  kNullableInteger,
  kNullableObject,
  kNullableString
};

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::kString:
      return "a string";
    case Kind::kNumber:
      return "a number";
    case Kind::kInteger:
      return "an integer";
    case Kind::kBool:
      return "true or false";
    case Kind::kObject:
      return "an object";
    case Kind::kArray:
      return "an array";
    case Kind::kNullableInteger:
      return "an integer or null";
    case Kind::kNullableObject:
      return "an object or null";
    case Kind::kNullableString:
      return "a string or null";
  }
  return "?";
}

bool matches(const json& v, Kind k) {
  switch (k) {
    case Kind::kString:
      return v.is_string();
    case Kind::kNumber:
      return v.is_number();
    case Kind::kInteger:
      return v.is_number_integer();
    case Kind::kBool:
      return v.is_boolean();
    case Kind::kObject:
      return v.is_object();
    case Kind::kArray:
      return v.is_array();
    case Kind::kNullableInteger:
      return v.is_null() || v.is_number_integer();
    case Kind::kNullableObject:
      return v.is_null() || v.is_object();
    case Kind::kNullableString:
      return v.is_null() || v.is_string();
  }
  return false;
}

class Validator {
 public:
  explicit Validator(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError(fmt::format("{}: {}: {}", source_, where.empty() ? "<top>" : where, what));
  }

  const json& field(const json& obj, const std::string& where, const char* name, Kind k) const {
    const std::string path = where.empty() ? name : fmt::format("{}.{}", where, name);
    if (!obj.is_object()) fail(where, "expected an object");
    const auto it = obj.find(name);
    if (it == obj.end()) fail(path, "missing");
    if (!matches(*it, k))
      fail(path, fmt::format("expected {}, got {}", kind_name(k), it->type_name()));
    return *it;
  }

  void stats(const json& obj, const std::string& where) const {
    field(obj, where, "n", Kind::kInteger);
    for (const char* f : {"min", "p50", "p99", "max", "mean", "sd"}) {
      const double v = field(obj, where, f, Kind::kNumber).get<double>();
      if (v < 0) fail(fmt::format("{}.{}", where, f), "negative time");
    }
  }

  void samples(const json& obj, const std::string& where) const {
    const json& s = field(obj, where, "samples_us", Kind::kArray);
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!s[i].is_number()) fail(fmt::format("{}.samples_us[{}]", where, i), "expected a number");
    }
  }

  void collective_row(const json& r, const std::string& where) const {
    for (const char* f : {"collective", "algorithm", "type", "op"})
      field(r, where, f, Kind::kString);
    field(r, where, "in_place", Kind::kBool);
    field(r, where, "size_bytes", Kind::kInteger);
    field(r, where, "count", Kind::kInteger);
    field(r, where, "ranks", Kind::kInteger);
    stats(field(r, where, "time_us", Kind::kObject), where + ".time_us");
    field(r, where, "algbw_gbps", Kind::kNumber);
    field(r, where, "busbw_gbps", Kind::kNumber);
    field(r, where, "wrong", Kind::kNullableInteger);
    samples(r, where);
    optional_mem(r, where);
  }

  // "mem" and "mem_path" (GPU buffers) are optional: absent means host memory.
  void optional_mem(const json& r, const std::string& where) const {
    for (const char* f : {"mem", "mem_path"}) {
      if (r.contains(f)) field(r, where, f, Kind::kString);
    }
  }

  void p2p_row(const json& r, const std::string& where) const {
    const std::string test = field(r, where, "test", Kind::kString).get<std::string>();
    if (test != "latency" && test != "bw" && test != "bibw") {
      fail(where + ".test", fmt::format("unknown test '{}' (latency, bw, bibw)", test));
    }
    field(r, where, "rank_a", Kind::kInteger);
    field(r, where, "rank_b", Kind::kInteger);
    field(r, where, "host_a", Kind::kString);
    field(r, where, "host_b", Kind::kString);
    field(r, where, "size_bytes", Kind::kInteger);
    field(r, where, "window", Kind::kInteger);
    stats(field(r, where, "time_us", Kind::kObject), where + ".time_us");
    for (const char* f : {"bw_gbps", "peak_bw_gbps", "msg_rate_mps"})
      field(r, where, f, Kind::kNumber);
    field(r, where, "transports", Kind::kString);
    samples(r, where);
    optional_mem(r, where);
  }

  void probe_row(const json& r, const std::string& where) const {
    const std::string test = field(r, where, "test", Kind::kString).get<std::string>();
    static constexpr const char* kTests[] = {"write_bw", "write_lat", "read_bw",
                                             "read_lat", "send_bw",   "send_lat"};
    if (std::find(std::begin(kTests), std::end(kTests), test) == std::end(kTests)) {
      fail(where + ".test", fmt::format("unknown probe '{}'", test));
    }
    for (const char* f : {"rank_a", "rank_b", "size_bytes", "iterations", "qps", "tx_depth",
                          "mtu_bytes", "inline_bytes", "gid_index_a", "gid_index_b"}) {
      field(r, where, f, Kind::kInteger);
    }
    for (const char* f : {"host_a", "host_b", "device_a", "device_b"}) {
      field(r, where, f, Kind::kString);
    }
    field(r, where, "bidirectional", Kind::kBool);
    stats(field(r, where, "time_us", Kind::kObject), where + ".time_us");
    for (const char* f : {"line_rate_gbit", "bw_gbps", "peak_bw_gbps", "msg_rate_mps"}) {
      if (field(r, where, f, Kind::kNumber).get<double>() < 0) {
        fail(fmt::format("{}.{}", where, f), "negative");
      }
    }
    samples(r, where);
  }

  void probe_section(const json& doc) const {
    if (!doc.contains("probes")) return;  // only probe runs have it
    const json& s = field(doc, "", "probes", Kind::kObject);
    field(s, "probes", "params", Kind::kObject);
    const json& rows = field(s, "probes", "rows", Kind::kArray);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      probe_row(rows[i], fmt::format("probes.rows[{}]", i));
    }
  }

  // Written by `ibscope soak`; optional, so files without it stay valid.
  void soak_section(const json& doc) const {
    if (!doc.contains("soak")) return;
    const json& s = field(doc, "", "soak", Kind::kObject);
    field(s, "soak", "params", Kind::kObject);
    const json& windows = field(s, "soak", "windows", Kind::kArray);
    for (std::size_t i = 0; i < windows.size(); ++i) {
      const std::string where = fmt::format("soak.windows[{}]", i);
      const json& w = windows[i];
      field(w, where, "index", Kind::kInteger);
      field(w, where, "start_s", Kind::kNumber);
      field(w, where, "end_s", Kind::kNumber);
      const json& rss = field(w, where, "rss_bytes", Kind::kArray);
      for (std::size_t r = 0; r < rss.size(); ++r) {
        if (!rss[r].is_number_unsigned()) {
          fail(fmt::format("{}.rss_bytes[{}]", where, r), "expected a non-negative integer");
        }
      }
      const json& cases = field(w, where, "cases", Kind::kArray);
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const std::string cw = fmt::format("{}.cases[{}]", where, c);
        for (const char* f : {"algorithm", "type", "op"}) field(cases[c], cw, f, Kind::kString);
        field(cases[c], cw, "size_bytes", Kind::kInteger);
        field(cases[c], cw, "iterations", Kind::kInteger);
        stats(field(cases[c], cw, "time_us", Kind::kObject), cw + ".time_us");
        field(cases[c], cw, "algbw_gbps", Kind::kNumber);
        field(cases[c], cw, "busbw_gbps", Kind::kNumber);
        field(cases[c], cw, "wrong", Kind::kInteger);
      }
    }
    const json& summary = field(s, "soak", "summary", Kind::kNullableObject);
    if (summary.is_null()) return;  // a soak that did not finish
    field(summary, "soak.summary", "pass", Kind::kBool);
    field(summary, "soak.summary", "wrong", Kind::kInteger);
    field(summary, "soak.summary", "windows", Kind::kInteger);
    field(summary, "soak.summary", "rss_growth_bytes", Kind::kArray);
    field(summary, "soak.summary", "reasons", Kind::kArray);
    const json& cases = field(summary, "soak.summary", "cases", Kind::kArray);
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const std::string cw = fmt::format("soak.summary.cases[{}]", c);
      field(cases[c], cw, "algorithm", Kind::kString);
      field(cases[c], cw, "size_bytes", Kind::kInteger);
      for (const char* f :
           {"first_p50_us", "last_p50_us", "p50_ratio", "p50_trend_per_hour", "first_busbw_gbps",
            "last_busbw_gbps", "busbw_ratio", "busbw_trend_per_hour"}) {
        field(cases[c], cw, f, Kind::kNumber);
      }
    }
  }

  void section(const json& doc, const char* name, bool collective) const {
    const json& s = field(doc, "", name, Kind::kObject);
    field(s, name, "params", Kind::kObject);
    const json& rows = field(s, name, "rows", Kind::kArray);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string where = fmt::format("{}.rows[{}]", name, i);
      if (collective)
        collective_row(rows[i], where);
      else
        p2p_row(rows[i], where);
    }
  }

  void document(const json& doc) const {
    if (!doc.is_object()) fail("", "expected a JSON object at the top level");
    const json& v = field(doc, "", "schema_version", Kind::kInteger);
    // Compared as JSON numbers: get<int>() would narrow 4294967297 to 1 and accept it.
    if (v != kResultsSchemaVersion) {
      fail("schema_version", fmt::format("version {} is not supported (this ibscope reads {})",
                                         v.dump(), kResultsSchemaVersion));
    }
    const json& tool = field(doc, "", "tool", Kind::kObject);
    if (field(tool, "tool", "name", Kind::kString).get<std::string>() != "ibscope") {
      fail("tool.name", "not an ibscope results file");
    }
    field(tool, "tool", "version", Kind::kString);
    field(tool, "tool", "git_sha", Kind::kString);
    const json& cmd = field(doc, "", "command", Kind::kObject);
    field(cmd, "command", "subcommand", Kind::kString);
    field(cmd, "command", "argv", Kind::kArray);
    field(doc, "", "started_utc", Kind::kString);
    field(doc, "", "finished_utc", Kind::kNullableString);
    field(doc, "", "complete", Kind::kBool);
    field(doc, "", "error", Kind::kNullableObject);
    field(doc, "", "job", Kind::kObject);
    field(doc, "", "environment", Kind::kObject);
    field(doc, "", "warnings", Kind::kArray);
    // Written by `ibscope topo`; the topology reader checks every field it needs.
    if (doc.contains("topology")) topo::topology_from_section_json(doc["topology"], source_);
    section(doc, "collectives", true);
    section(doc, "p2p", false);
    probe_section(doc);
    soak_section(doc);
  }

 private:
  std::string_view source_;
};

}  // namespace

void validate_results(const nlohmann::json& doc, std::string_view source) {
  Validator(source).document(doc);
}

nlohmann::json load_results(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(
        fmt::format("{}: cannot open results file: {}", path.string(), std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_results(text.str(), path.string());
}

nlohmann::json parse_results(std::string_view text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not valid JSON (byte {}): {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number too large for a double (1e400).
    throw UsageError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  validate_results(doc, source);
  return doc;
}

TuningTable load_tuning(const std::filesystem::path& path) {
  const auto doc = load_results(path);
  if (!doc.contains("tuning") || doc["tuning"].is_null()) {
    throw UsageError(
        fmt::format("--tuning {}: this results file has no tuning table (one is "
                    "written by a sweep of several algorithms, e.g. -A all)",
                    path.string()));
  }
  return tuning_from_json(doc["tuning"], path.string());
}

}  // namespace ibscope
