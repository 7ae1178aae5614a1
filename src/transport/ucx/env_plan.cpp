#include "ibscope/transport/ucx/env_plan.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace ibscope::ucx {

namespace {

bool user_set(const EnvVars& env, const std::string& name) {
  const auto it = env.find(name);
  return it != env.end() && !it->second.empty();
}

}  // namespace

bool tls_names(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

bool tls_allows_ud_verbs(std::string_view tls) {
  if (tls.empty()) return true;
  if (tls.front() == '^') {
    const std::string_view excluded = tls.substr(1);
    return !(tls_names(excluded, "ud_verbs") || tls_names(excluded, "ud") ||
             tls_names(excluded, "ib"));
  }
  for (std::string_view name : {"all", "ib", "ud", "ud_verbs"}) {
    if (tls_names(tls, name)) return true;
  }
  return false;
}

EnvPlan plan_ucx_env(const EnvVars& ucx_env, const std::optional<topo::RailChoice>& rail) {
  EnvPlan plan;
  if (!rail) return plan;
  if (!user_set(ucx_env, "UCX_NET_DEVICES")) {
    std::string devices = rail->device_port();
    if (!rail->netdev.empty()) devices += "," + rail->netdev;
    plan.set["UCX_NET_DEVICES"] = devices;
    plan.notes.push_back(
        fmt::format("UCX_NET_DEVICES={}: this rank's rail, {}", devices, rail->reason));
  }
  if (rail->soft_roce) {
    if (!user_set(ucx_env, "UCX_TLS")) {
      plan.set["UCX_TLS"] = std::string(kSoftRoceTls);
      plan.notes.push_back(fmt::format(
          "UCX_TLS={}: {} is Soft-RoCE (rdma_rxe), where UCX 1.13's ud_verbs stalls between "
          "hosts and aborts in wire-up; rc_verbs carries the data (same-host pairs too, through "
          "rxe's loopback) and tcp the wire-up",
          kSoftRoceTls, rail->nic));
    } else if (tls_allows_ud_verbs(ucx_env.at("UCX_TLS"))) {
      plan.warnings.push_back(fmt::format(
          "UCX_TLS={} lets UCX use ud_verbs on Soft-RoCE device {}: with UCX 1.13 it stalls "
          "between hosts and aborts the ranks in wire-up; unset UCX_TLS (ibscope then uses "
          "^ud_verbs) or add tcp and leave ud_verbs out",
          ucx_env.at("UCX_TLS"), rail->nic));
    }
  }
  return plan;
}

void apply(const EnvPlan& plan) {
  for (const auto& [name, value] : plan.set) ::setenv(name.c_str(), value.c_str(), 0);
}

}  // namespace ibscope::ucx
