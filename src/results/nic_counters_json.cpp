#include "nic_counters_json.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ibscope::results {
namespace {

using fabric::CounterKind;
using nlohmann::json;

bool moved_beyond_traffic(const fabric::NicDelta& d) {
  if (d.appeared || d.vanished) return true;
  return std::any_of(d.counters.begin(), d.counters.end(),
                     [](const auto& c) { return c.kind != CounterKind::kTraffic; });
}

json nic_json(const fabric::NicDelta& d) {
  json counters = json::array();
  for (const auto& c : d.counters) {
    json e = {{"source", fabric::name_of(c.source)},
              {"name", c.name},
              {"kind", fabric::name_of(c.kind)},
              {"delta", c.delta}};
    if (c.saturated) e["saturated"] = true;
    if (c.reset) e["reset"] = true;
    counters.push_back(std::move(e));
  }
  json j = {{"host", d.host},
            {"nic", d.nic},
            {"driver", d.driver},
            {"interval_s", d.interval_s},
            {"errors", d.sum(CounterKind::kErrors)},
            {"congestion", d.sum(CounterKind::kCongestion)},
            {"flaps", d.sum(CounterKind::kFlaps)},
            {"traffic_bytes", d.traffic_bytes()},
            {"counters", std::move(counters)}};
  if (!d.scope.empty()) j["scope"] = d.scope;
  if (d.appeared) j["appeared"] = true;
  if (d.vanished) j["vanished"] = true;
  return j;
}

}  // namespace

void put_nic_counters(json& row, const std::vector<fabric::NicDelta>& deltas, bool summarise) {
  if (deltas.empty()) return;
  json list = json::array();
  std::vector<std::pair<std::uint64_t, std::string>> traffic;
  for (const auto& d : deltas) {
    if (!summarise || moved_beyond_traffic(d)) {
      list.push_back(nic_json(d));
    } else {
      traffic.emplace_back(d.traffic_bytes(), d.host + ":" + d.nic);
    }
  }
  row["nic_counters"] = std::move(list);
  if (!traffic.empty()) {
    std::sort(traffic.begin(), traffic.end());
    row["nic_traffic"] = {{"nics", traffic.size()},
                          {"min_bytes", traffic.front().first},
                          {"min_nic", traffic.front().second},
                          {"p50_bytes", traffic[traffic.size() / 2].first},
                          {"max_bytes", traffic.back().first},
                          {"max_nic", traffic.back().second}};
  }
}

std::vector<fabric::NicDelta> read_nic_counters(const FieldReader& in, const json& row,
                                                const std::string& path) {
  std::vector<fabric::NicDelta> out;
  if (!row.contains("nic_counters")) return out;
  const json& list = row["nic_counters"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = fmt::format("{}.nic_counters[{}]", path, i);
    fabric::NicDelta d;
    d.host = in.get<std::string>(list[i], p, "host");
    d.nic = in.get<std::string>(list[i], p, "nic");
    d.driver = in.get<std::string>(list[i], p, "driver");
    d.interval_s = in.get<double>(list[i], p, "interval_s");
    d.scope = in.get_or<std::string>(list[i], p, "scope", "");
    d.appeared = in.get_or<bool>(list[i], p, "appeared", false);
    d.vanished = in.get_or<bool>(list[i], p, "vanished", false);
    const json& counters = in.at(list[i], p, "counters");
    for (std::size_t k = 0; k < counters.size(); ++k) {
      const std::string pc = fmt::format("{}.counters[{}]", p, k);
      fabric::CounterDelta c;
      const auto source =
          fabric::counter_source_named(in.get<std::string>(counters[k], pc, "source"));
      const auto kind = fabric::counter_kind_named(in.get<std::string>(counters[k], pc, "kind"));
      if (!source) in.fail(FieldReader::join(pc, "source"), "unknown counter source");
      if (!kind) in.fail(FieldReader::join(pc, "kind"), "unknown counter kind");
      c.source = *source;
      c.kind = *kind;
      c.name = in.get<std::string>(counters[k], pc, "name");
      c.delta = in.get<std::uint64_t>(counters[k], pc, "delta");
      c.saturated = in.get_or<bool>(counters[k], pc, "saturated", false);
      c.reset = in.get_or<bool>(counters[k], pc, "reset", false);
      d.counters.push_back(std::move(c));
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ibscope::results
