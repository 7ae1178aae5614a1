#include "loopback_json.hpp"

#include <fmt/format.h>

namespace ibscope::results {

using nlohmann::json;

namespace {

json to_json(const LoopbackNic& n) {
  return {{"host", n.host},
          {"nic", n.nic},
          {"port", n.port},
          {"memory", n.memory},
          {"virtual_nic", n.virtual_nic},
          {"data_rate_gbyte_s", n.data_rate_gbyte_s},
          {"pcie_gbyte_s", n.pcie_gbyte_s},
          {"path", n.path},
          {"size_bytes", n.size_bytes},
          {"iterations", n.iterations},
          {"write_gbyte_s", n.write_gbyte_s},
          {"read_gbyte_s", n.read_gbyte_s},
          {"read_lat_us", n.read_lat_us},
          {"elapsed_s", n.elapsed_s},
          {"siblings", n.siblings},
          {"siblings_write_gbyte_s", n.siblings_write_gbyte_s},
          {"siblings_read_gbyte_s", n.siblings_read_gbyte_s},
          {"ceiling_gbyte_s", n.ceiling_gbyte_s},
          {"pass", n.pass},
          {"failures", n.failures},
          {"notes", n.notes},
          {"error", n.error}};
}

LoopbackNic read_nic(const FieldReader& in, const json& j, const std::string& p) {
  LoopbackNic n;
  n.host = in.get<std::string>(j, p, "host");
  n.nic = in.get<std::string>(j, p, "nic");
  n.port = in.get_or<int>(j, p, "port", 1);
  n.memory = in.get_or<std::string>(j, p, "memory", "host");
  n.virtual_nic = in.get_or<bool>(j, p, "virtual_nic", false);
  n.data_rate_gbyte_s = in.number_or_nan_or(j, p, "data_rate_gbyte_s", 0);
  n.pcie_gbyte_s = in.number_or_nan_or(j, p, "pcie_gbyte_s", 0);
  n.path = in.get_or<std::string>(j, p, "path", "");
  n.size_bytes = in.get_or<std::uint64_t>(j, p, "size_bytes", 0);
  n.iterations = in.get_or<int>(j, p, "iterations", 0);
  n.write_gbyte_s = in.number_or_nan_or(j, p, "write_gbyte_s", 0);
  n.read_gbyte_s = in.number_or_nan_or(j, p, "read_gbyte_s", 0);
  n.read_lat_us = in.number_or_nan_or(j, p, "read_lat_us", 0);
  n.elapsed_s = in.number_or_nan_or(j, p, "elapsed_s", 0);
  n.siblings = in.get_or<int>(j, p, "siblings", 0);
  n.siblings_write_gbyte_s = in.number_or_nan_or(j, p, "siblings_write_gbyte_s", 0);
  n.siblings_read_gbyte_s = in.number_or_nan_or(j, p, "siblings_read_gbyte_s", 0);
  n.ceiling_gbyte_s = in.number_or_nan_or(j, p, "ceiling_gbyte_s", 0);
  n.pass = in.get_or<bool>(j, p, "pass", false);
  n.failures = in.get_or<std::vector<std::string>>(j, p, "failures", {});
  n.notes = in.get_or<std::vector<std::string>>(j, p, "notes", {});
  n.error = in.get_or<std::string>(j, p, "error", "");
  return n;
}

}  // namespace

json to_json(const Loopback& l) {
  json nics = json::array();
  for (const auto& n : l.nics) nics.push_back(to_json(n));
  return {{"ran", l.ran},
          {"skipped_reason", l.skipped_reason},
          {"slow_pct", l.slow_pct},
          {"min_fraction", l.min_fraction},
          {"budget_s", l.budget_s},
          {"size_bytes", l.size_bytes},
          {"nics", nics}};
}

Loopback read_loopback(const FieldReader& in, const json& j, const std::string& p) {
  Loopback l;
  l.ran = in.get_or<bool>(j, p, "ran", false);
  l.skipped_reason = in.get_or<std::string>(j, p, "skipped_reason", "");
  l.slow_pct = in.number_or_nan_or(j, p, "slow_pct", 0);
  l.min_fraction = in.number_or_nan_or(j, p, "min_fraction", 0);
  l.budget_s = in.number_or_nan_or(j, p, "budget_s", 0);
  l.size_bytes = in.get_or<std::uint64_t>(j, p, "size_bytes", 0);
  if (j.contains("nics")) {
    const json& a = j["nics"];
    for (std::size_t i = 0; i < a.size(); ++i) {
      l.nics.push_back(read_nic(in, a[i], fmt::format("{}.nics[{}]", p, i)));
    }
  }
  return l;
}

}  // namespace ibscope::results
