#include <fmt/format.h>

#include "document_json.hpp"
#include "field_reader.hpp"
#include "nic_counters_json.hpp"
#include "section_json.hpp"

namespace ibscope::results {
namespace {

using nlohmann::json;
using results::to_json;  // Stats (document_json.hpp), beside this file's own overloads

json to_json(const measure::SoakThresholds& t) {
  return {{"max_rss_growth_bytes", t.max_rss_growth_bytes}, {"max_drift", t.max_drift}};
}

json to_json(const SoakParams& p) {
  json j = to_json(static_cast<const CollectiveSetup&>(p));
  j["sizes_bytes"] = p.sizes_bytes;
  j["in_place"] = p.in_place;
  j["verify_every_iteration"] = p.verify_every_iteration;
  j["duration_s"] = p.duration_s;
  j["window_s"] = p.window_s;
  j["thresholds"] = to_json(p.thresholds);
  return j;
}

// Params are an open object in files of every version: absent keys take defaults.
SoakParams read_params(const FieldReader& in, const json& j, const std::string& p) {
  SoakParams o;
  read_collective_setup(in, j, p, o);
  o.sizes_bytes = in.get_or<std::vector<std::uint64_t>>(j, p, "sizes_bytes", {});
  o.in_place = in.get_or<bool>(j, p, "in_place", false);
  o.verify_every_iteration = in.get_or<bool>(j, p, "verify_every_iteration", true);
  o.duration_s = in.get_or<double>(j, p, "duration_s", 0);
  o.window_s = in.get_or<double>(j, p, "window_s", 0);
  if (j.contains("thresholds")) {
    const std::string tp = p + ".thresholds";
    const json& t = j["thresholds"];
    o.thresholds.max_rss_growth_bytes =
        in.get_or<std::uint64_t>(t, tp, "max_rss_growth_bytes", o.thresholds.max_rss_growth_bytes);
    o.thresholds.max_drift = in.get_or<double>(t, tp, "max_drift", o.thresholds.max_drift);
  }
  return o;
}

json to_json(const RssSummary& r) {
  return {{"ranks", r.ranks},
          {"min_bytes", r.min_bytes},
          {"p50_bytes", r.p50_bytes},
          {"max_bytes", r.max_bytes},
          {"max_rank", r.max_rank}};
}

RssSummary read_rss_summary(const FieldReader& in, const json& j, const std::string& p) {
  return RssSummary{.ranks = in.get<int>(j, p, "ranks"),
                    .min_bytes = in.get<std::uint64_t>(j, p, "min_bytes"),
                    .p50_bytes = in.get<std::uint64_t>(j, p, "p50_bytes"),
                    .max_bytes = in.get<std::uint64_t>(j, p, "max_bytes"),
                    .max_rank = in.get<int>(j, p, "max_rank")};
}

// `rss` non-null: the window's per-rank RSS is written as this summary (rss_bytes empty).
json to_json(const measure::SoakWindow& w, const RssSummary* rss) {
  json cases = json::array();
  for (const auto& c : w.cases) {
    cases.push_back({{"algorithm", c.algorithm},
                     {"type", c.type},
                     {"op", c.op},
                     {"size_bytes", c.size_bytes},
                     {"iterations", c.iterations},
                     {"time_us", to_json(c.time_us)},
                     {"algbw_gbps", c.algbw_gbps},
                     {"busbw_gbps", c.busbw_gbps},
                     {"wrong", c.wrong}});
  }
  json j = {{"index", w.index},
            {"start_s", w.start_s},
            {"end_s", w.end_s},
            {"rss_bytes", w.rss_bytes},
            {"cases", cases}};
  if (rss != nullptr) {
    j["rss_bytes"] = json::array();
    j["rss_summary"] = to_json(*rss);
  }
  put_nic_counters(j, w.nic_counters, rss != nullptr);  // summarised with the RSS at scale
  return j;
}

measure::SoakWindow read_window(const FieldReader& in, const json& j, const std::string& p) {
  measure::SoakWindow w;
  w.index = in.get<int>(j, p, "index");
  w.start_s = in.get<double>(j, p, "start_s");
  w.end_s = in.get<double>(j, p, "end_s");
  w.rss_bytes = in.get<std::vector<std::uint64_t>>(j, p, "rss_bytes");
  w.nic_counters = read_nic_counters(in, j, p);
  const json& cases = in.at(j, p, "cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string cp = fmt::format("{}.cases[{}]", p, i);
    const json& c = cases[i];
    measure::SoakCaseWindow k;
    k.algorithm = in.get<std::string>(c, cp, "algorithm");
    k.type = in.get<std::string>(c, cp, "type");
    k.op = in.get<std::string>(c, cp, "op");
    k.size_bytes = in.get<std::uint64_t>(c, cp, "size_bytes");
    k.iterations = in.get<std::uint64_t>(c, cp, "iterations");
    k.time_us = read_stats(in, in.at(c, cp, "time_us"), cp + ".time_us");
    k.algbw_gbps = in.get<double>(c, cp, "algbw_gbps");
    k.busbw_gbps = in.get<double>(c, cp, "busbw_gbps");
    k.wrong = in.get<std::uint64_t>(c, cp, "wrong");
    w.cases.push_back(std::move(k));
  }
  return w;
}

json to_json(const measure::SoakSummary& s) {
  json cases = json::array();
  for (const auto& c : s.cases) {
    cases.push_back({{"algorithm", c.algorithm},
                     {"type", c.type},
                     {"op", c.op},
                     {"size_bytes", c.size_bytes},
                     {"first_window", c.first_window},
                     {"last_window", c.last_window},
                     {"first_p50_us", c.first_p50_us},
                     {"last_p50_us", c.last_p50_us},
                     {"p50_ratio", c.p50_ratio},
                     {"p50_trend_per_hour", c.p50_trend_per_hour},
                     {"first_busbw_gbps", c.first_busbw_gbps},
                     {"last_busbw_gbps", c.last_busbw_gbps},
                     {"busbw_ratio", c.busbw_ratio},
                     {"busbw_trend_per_hour", c.busbw_trend_per_hour}});
  }
  return {{"windows", s.windows}, {"steady_windows", s.steady_windows},
          {"cases", cases},       {"rss_growth_bytes", s.rss_growth_bytes},
          {"wrong", s.wrong},     {"pass", s.pass},
          {"reasons", s.reasons}};
}

measure::SoakSummary read_summary(const FieldReader& in, const json& j, const std::string& p) {
  measure::SoakSummary s;
  s.windows = in.get<int>(j, p, "windows");
  s.steady_windows = in.get_or<int>(j, p, "steady_windows", 0);
  const json& cases = in.at(j, p, "cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string cp = fmt::format("{}.cases[{}]", p, i);
    const json& c = cases[i];
    measure::SoakCaseDrift d;
    d.algorithm = in.get<std::string>(c, cp, "algorithm");
    d.type = in.get_or<std::string>(c, cp, "type", "");
    d.op = in.get_or<std::string>(c, cp, "op", "");
    d.size_bytes = in.get<std::uint64_t>(c, cp, "size_bytes");
    d.first_window = in.get_or<int>(c, cp, "first_window", 0);
    d.last_window = in.get_or<int>(c, cp, "last_window", 0);
    d.first_p50_us = in.number_or_nan(c, cp, "first_p50_us");
    d.last_p50_us = in.number_or_nan(c, cp, "last_p50_us");
    d.p50_ratio = in.number_or_nan(c, cp, "p50_ratio");
    d.p50_trend_per_hour = in.number_or_nan(c, cp, "p50_trend_per_hour");
    d.first_busbw_gbps = in.number_or_nan(c, cp, "first_busbw_gbps");
    d.last_busbw_gbps = in.number_or_nan(c, cp, "last_busbw_gbps");
    d.busbw_ratio = in.number_or_nan(c, cp, "busbw_ratio");
    d.busbw_trend_per_hour = in.number_or_nan(c, cp, "busbw_trend_per_hour");
    s.cases.push_back(std::move(d));
  }
  s.rss_growth_bytes = in.get<std::vector<std::int64_t>>(j, p, "rss_growth_bytes");
  s.wrong = in.get<std::uint64_t>(j, p, "wrong");
  s.pass = in.get<bool>(j, p, "pass");
  s.reasons = in.get<std::vector<std::string>>(j, p, "reasons");
  return s;
}

}  // namespace

json to_json(const Soak& s, bool keep_rank_samples) {
  json windows = json::array();
  for (std::size_t i = 0; i < s.windows.size(); ++i) {
    const measure::SoakWindow& w = s.windows[i];
    // ranks x windows: a day's soak of 10,752 ranks would be ~10^7 numbers; one summary per
    // window instead (the summary's rss_growth_bytes keeps each rank's growth, once).
    if (i < s.window_rss.size()) {
      windows.push_back(to_json(w, &s.window_rss[i]));
    } else if (summarise_ranks(w.rss_bytes.size(), keep_rank_samples)) {
      const RssSummary rss = summarise_rss(w.rss_bytes);
      windows.push_back(to_json(w, &rss));
    } else {
      windows.push_back(to_json(w, nullptr));
    }
  }
  return {{"params", to_json(s.params)},
          {"windows", windows},
          {"summary", s.summary ? to_json(*s.summary) : json(nullptr)}};
}

Soak soak_from_json(const json& j, std::string_view source) {
  const FieldReader in(source);
  Soak s;
  s.params = read_params(in, in.at(j, "soak", "params"), "soak.params");
  const json& windows = in.at(j, "soak", "windows");
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const std::string p = fmt::format("soak.windows[{}]", i);
    s.windows.push_back(read_window(in, windows[i], p));
    if (windows[i].contains("rss_summary")) {
      s.window_rss.push_back(read_rss_summary(in, windows[i]["rss_summary"], p + ".rss_summary"));
    }
  }
  if (!s.window_rss.empty() && s.window_rss.size() != s.windows.size()) {
    in.fail("soak.windows", "rss_summary in some windows only: every window has one or none");
  }
  if (const json& summary = in.at(j, "soak", "summary"); !summary.is_null()) {
    s.summary = read_summary(in, summary, "soak.summary");
  }
  return s;
}

}  // namespace ibscope::results
