// `ibscope topo` against real verbs devices: both rxe devices are listed with port 1 ACTIVE,
// link layer Ethernet, a RoCE v2 GID chosen, a line rate, their netdev, and as virtual devices
// (no PCI function of their own); the console shows them and their GID tables.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mp/process.hpp"
#include "rxe_env.hpp"

namespace rxe = ibscope::test::rxe;
using ibscope::test::make_temp_dir;
using ibscope::test::ProcessResult;
using ibscope::test::run_process;

namespace {

std::string describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") +
         "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

ProcessResult run_ibscope(std::vector<std::string> args) {
  ibscope::test::ProcessSpec spec;
  spec.args = std::move(args);
  spec.limit_s = 120;
  return run_process(spec);
}

const nlohmann::json* find_nic(const nlohmann::json& host, const std::string& name) {
  for (const auto& nic : host["nics"]) {
    if (nic["name"] == name) return &nic;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("topo lists every rxe device with an active RoCE v2 port", "[rxe][topo]") {
  rxe::require_guest();
  const std::string out = make_temp_dir();
  const ProcessResult r = run_ibscope({"topo", "--np", "2", "--format", "json", "--out", out});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const auto& hosts = doc["topology"]["hosts"];
  REQUIRE(hosts.size() == 1);
  const auto& host = hosts[0];
  CHECK(host["ranks"] == nlohmann::json::array({0, 1}));
  CHECK(host["rdma"]["available"] == true);
  CHECK(host["rdma"]["reason"].is_null());

  const auto devices = rxe::devices();
  const auto netdevs = rxe::netdevs();
  const auto addrs = rxe::addrs();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    INFO("device " << devices[i]);
    const nlohmann::json* nic = find_nic(host, devices[i]);
    REQUIRE(nic != nullptr);
    INFO((*nic).dump(1));
    CHECK((*nic)["virtual"] == true);
    CHECK((*nic)["pci_bus_id"].is_null());
    CHECK((*nic)["netdev"] == netdevs[i]);
    CHECK((*nic)["error"].is_null());
    REQUIRE((*nic)["ports"].size() >= 1);
    const auto& port = (*nic)["ports"][0];
    CHECK(port["port"] == 1);
    CHECK(port["state"] == "ACTIVE");
    CHECK(port["link_layer"] == "Ethernet");
    CHECK(port["lanes"].get<int>() >= 1);
    CHECK(port["line_rate_gbit_s"].get<double>() > 0);
    CHECK(port["line_rate_gbyte_s"].get<double>() ==
          Approx(port["line_rate_gbit_s"].get<double>() / 8));
    CHECK(port["active_mtu_bytes"].get<int>() >= 256);
    REQUIRE_FALSE(port["chosen_gid_index"].is_null());
    const int chosen = port["chosen_gid_index"].get<int>();
    CHECK(chosen == rxe::gid_index());
    bool found = false;
    for (const auto& gid : port["gids"]) {
      if (gid["index"] != chosen) continue;
      found = true;
      CHECK(gid["type"] == "RoCE v2");
      CHECK(gid["gid"] == "::ffff:" + addrs[i]);
      CHECK(gid["netdev"] == netdevs[i]);
    }
    CHECK(found);
  }
}

TEST_CASE("topo prints the rxe ports and GID tables on the console", "[rxe][topo]") {
  rxe::require_guest();
  const std::string out = make_temp_dir();
  const ProcessResult r = run_ibscope({"topo", "--np", "1", "--out", out});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# RDMA: no RDMA device") == std::string::npos);
  for (const auto& device : rxe::devices()) {
    CHECK_THAT(r.out, Catch::Contains("\n  " + device + " "));
    CHECK_THAT(r.out, Catch::Contains("# GID table of " + device + " port 1"));
  }
  CHECK_THAT(r.out, Catch::Contains("ACTIVE"));
  CHECK_THAT(r.out, Catch::Contains("Ethernet"));
  CHECK_THAT(r.out, Catch::Contains("RoCE v2"));
}
