// Host topology: JSON round trip (what ranks send and what the results file keeps), one entry
// per host, the console/CSV formatting of rates and paths, and the results validator.

#include <catch2/catch.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ibscope/core/error.hpp"
#include "ibscope/output/results_csv.hpp"
#include "ibscope/output/topology_table.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/writer.hpp"
#include "ibscope/topo/host_merge.hpp"
#include "results/topology_json.hpp"

using namespace ibscope;
using namespace ibscope::topo;
using namespace ibscope::results;  // the topology section's JSON (private to src/results/)
using nlohmann::json;

namespace {

HostTopology sample_host(const std::string& name, int rank) {
  HostTopology h;
  h.host = name;
  h.ranks = {rank};
  h.packages = 2;
  h.cores = 64;
  h.pus = 128;
  h.numa_nodes = {{0, "0-31,64-95", 64, 512ull << 30}, {1, "32-63,96-127", 64, 512ull << 30}};
  h.rdma_available = true;
  Nic ib;
  ib.name = "mlx5_0";
  ib.netdev = "ib0";
  ib.pci_bus_id = "0000:04:00.0";
  ib.pcie_path = {"0000:[00-1f]", {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}};
  ib.numa_node = 0;
  ib.pcie_link_gbyte_s = 31.5;
  NicPort p;
  p.port = 1;
  p.state = "ACTIVE";
  p.link_layer = "InfiniBand";
  p.lanes = 4;
  p.speed = "HDR";
  p.lane_rate_gbit_s = 50;
  p.line_rate_gbit_s = 200;
  p.data_rate_gbit_s = 200;
  p.active_mtu_bytes = 4096;
  p.max_mtu_bytes = 4096;
  p.lid = 17;
  p.gids = {{0, "fe80::1", "IB", ""}};
  p.chosen_gid_index = 0;
  ib.ports = {p};
  Nic rxe;
  rxe.name = "rxe0";
  rxe.is_virtual = true;
  rxe.netdev = "veth0";
  NicPort r;
  r.state = "ACTIVE";
  r.link_layer = "Ethernet";
  r.lanes = 1;
  r.speed = "FDR10";
  r.lane_rate_gbit_s = r.line_rate_gbit_s = r.data_rate_gbit_s = 10;
  r.active_mtu_bytes = 1024;
  r.max_mtu_bytes = 4096;
  r.gids = {{0, "fe80::a", "RoCE v2", "veth0"}, {1, "::ffff:192.0.2.1", "RoCE v2", "veth0"}};
  r.chosen_gid_index = 1;
  rxe.ports = {r};
  Nic broken;
  broken.name = "hfi1_0";
  broken.pci_bus_id = "0000:81:00.0";
  broken.numa_node = 1;
  broken.error = "libibverbs cannot open it (no user-space provider)";
  h.nics = {ib, broken, rxe};
  Gpu g;
  g.pci_bus_id = "0000:03:00.0";
  g.vendor_id = 0x10de;
  g.device_id = 0x2335;
  g.name = "NVIDIA H200";
  g.os_devices = {"cuda0"};
  g.pcie_path = {"0000:[00-1f]", {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}};
  g.numa_node = 0;
  h.gpus = {g};
  h.gpu_nic = compute_gpu_nic_distances(h);
  h.notes = {"a note"};
  return h;
}

}  // namespace

TEST_CASE("Host topology survives a JSON round trip", "[topo][json]") {
  const HostTopology h = sample_host("node01", 3);
  const json j = to_json(h);
  CHECK(host_topology_from_json(j, "test") == h);
  // Through text too, as it crosses the bootstrap.
  CHECK(host_topology_from_json(json::parse(j.dump()), "test") == h);
  const auto section = topology_section_json({h, sample_host("node02", 4)});
  const auto back = topology_from_section_json(section, "test");
  REQUIRE(back.size() == 2);
  CHECK(back[1].host == "node02");
}

TEST_CASE("Topology JSON says unknown as null and rates with their units", "[topo][json]") {
  const json j = to_json(sample_host("node01", 0));
  const json& ib = j["nics"][0];
  CHECK(ib["numa_node"] == 0);
  CHECK(ib["pcie_path"]["bridges"].size() == 3);
  CHECK(ib["ports"][0]["line_rate_gbit_s"] == 200.0);
  CHECK(ib["ports"][0]["line_rate_gbyte_s"] == 25.0);
  CHECK(ib["ports"][0]["data_rate_gbyte_s"] == 25.0);
  CHECK(ib["ports"][0]["gids"][0]["netdev"].is_null());
  const json& broken = j["nics"][1];
  CHECK(broken["ports"].empty());
  CHECK(broken["error"].is_string());
  CHECK(broken["pcie_path"]["host_bridge"].is_null());
  const json& rxe = j["nics"][2];
  CHECK(rxe["virtual"] == true);
  CHECK(rxe["pci_bus_id"].is_null());
  CHECK(rxe["numa_node"].is_null());
  CHECK(rxe["ports"][0]["chosen_gid_index"] == 1);
  CHECK(rxe["ports"][0]["gids"][1]["type"] == "RoCE v2");
  CHECK(j["gpus"][0]["vendor_id"] == "0x10de");
  CHECK(j["gpu_nic"][0] == json{{"gpu", "0000:03:00.0"}, {"nic", "mlx5_0"}, {"class", "PIX"}});
  CHECK(j["gpu_nic"][1]["class"] == "SYS");
  CHECK(j["gpu_nic"][2]["class"] == "?");
  CHECK(j["rdma"] == json{{"available", true}, {"reason", nullptr}});
}

TEST_CASE("Malformed topology JSON is rejected with the field's path", "[topo][json]") {
  const json good = to_json(sample_host("node01", 0));
  struct Case {
    std::function<void(json&)> damage;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j.erase("numa_nodes"); }, "src: host.numa_nodes: missing"},
      {[](json& j) { j["pus"] = "many"; }, "src: host.pus: unexpected string"},
      {[](json& j) { j["nics"][0]["ports"][0]["lanes"] = true; }, "host.nics[0].ports[0].lanes"},
      {[](json& j) { j["nics"][2]["ports"][0]["gids"][1].erase("type"); },
       "host.nics[2].ports[0].gids[1].type: missing"},
      {[](json& j) { j["gpus"][0]["vendor_id"] = "0xnvidia"; }, "not a 16-bit hex id"},
      {[](json& j) { j["gpu_nic"][0]["class"] = "NV12"; }, "unknown class 'NV12'"},
      {[](json& j) { j["rdma"] = 1; }, "host.rdma: expected an object"},
      // Found by tests/fuzz: integers were converted with nlohmann's plain cast (1e36 to
      // uint64 is undefined behaviour, 4294967297 read as int 1, 70000 as lid 4464).
      {[](json& j) { j["numa_nodes"][0]["memory_bytes"] = 1.2e36; },
       "memory_bytes: expected an integer in 0..18446744073709551615, got 1.2e+36"},
      {[](json& j) { j["pus"] = 4294967297; }, "host.pus: expected an integer in"},
      {[](json& j) { j["pus"] = 2.5; }, "host.pus: expected an integer in"},
      {[](json& j) { j["nics"][0]["ports"][0]["lid"] = 70000; },
       "lid: expected an integer in 0..65535"},
      {[](json& j) {
         j["ranks"] = json::array({0, 1e30});
       },
       "host.ranks[1]: expected an int"},
  };
  for (const auto& c : cases) {
    json bad = good;
    c.damage(bad);
    INFO(c.message);
    try {
      (void)host_topology_from_json(bad, "src");
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_THAT(e.what(), Catch::Contains(c.message));
    }
  }
}

TEST_CASE("Ranks on one host become one entry with every rank", "[topo][merge]") {
  std::vector<HostTopology> per_rank = {sample_host("b", 2), sample_host("a", 1),
                                        sample_host("b", 0), sample_host("a", 3),
                                        sample_host("c", 4)};
  const auto hosts = merge_by_host(per_rank);
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].host == "b");  // ordered by each host's lowest rank
  CHECK(hosts[0].ranks == std::vector<int>{0, 2});
  CHECK(hosts[1].host == "a");
  CHECK(hosts[1].ranks == std::vector<int>{1, 3});
  CHECK(hosts[2].ranks == std::vector<int>{4});
  CHECK(hosts[0].notes == std::vector<std::string>{"a note"});
  CHECK(merge_by_host({}).empty());
}

TEST_CASE("A rank that sees a different topology on the same host is noted", "[topo][merge]") {
  HostTopology odd = sample_host("a", 5);
  odd.numa_nodes.pop_back();
  const auto hosts = merge_by_host({sample_host("a", 0), odd, sample_host("a", 1)});
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0].ranks == std::vector<int>{0, 1, 5});
  CHECK(hosts[0].numa_nodes.size() == 2);  // rank 0's view
  REQUIRE(hosts[0].notes.size() == 2);
  CHECK_THAT(hosts[0].notes[1], Catch::Contains("rank(s) 5") && Catch::Contains("rank 0's"));
}

TEST_CASE("Rates and paths are formatted for the console", "[topo][format]") {
  CHECK(output::format_rate(100) == "100");
  CHECK(output::format_rate(12.5) == "12.5");
  CHECK(output::format_rate(56.25) == "56.25");
  CHECK(output::format_rate(14.0625 * 4 * 64 / 66 / 8) == "6.818");
  CHECK(output::format_rate(0.125) == "0.125");
  CHECK(output::format_rate(0) == "-");
  CHECK(output::format_width_speed(4, "EDR") == "4x EDR");
  CHECK(output::format_width_speed(0, "unknown(0)") == "-");
  CHECK(output::format_pcie_path({"0000:[00-1f]", {"0000:00:01.0"}}, "0000:01:00.0") ==
        "0000:[00-1f] > 0000:00:01.0 > 0000:01:00.0");
  CHECK(output::format_pcie_path({"0000:[00-1f]", {}}, "") == "0000:[00-1f]");
  CHECK(output::format_pcie_path({}, "") == "virtual");
  CHECK(output::format_rank_list({0, 1, 2, 3, 5, 7, 8}) == "0-3,5,7,8");
  CHECK(output::format_rank_list({4}) == "4");
  CHECK(output::format_rank_list({}) == "");
}

TEST_CASE("The console table shows ports GIDs GPUs and the distance matrix", "[topo][format]") {
  HostTopology h = sample_host("node01", 0);
  h.ranks = {0, 1};
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  REQUIRE(out != nullptr);
  output::print_topology(out, {h});
  std::fclose(out);
  const std::string text(buffer, size);
  std::free(buffer);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("# host node01 (ranks 0,1): 2 package(s), 64 cores, 128 PUs"));
  CHECK_THAT(text, Catch::Contains("0-31,64-95"));
  CHECK_THAT(text, Catch::Contains("line(Gb/s)"));
  CHECK_THAT(text, Catch::Contains("line(GB/s)"));
  CHECK_THAT(text, Catch::Contains("4x HDR"));
  CHECK_THAT(text, Catch::Contains("0000:[00-1f] > 0000:00:01.0 > 0000:01:00.0 > 0000:02:01.0 > "
                                   "0000:04:00.0"));
  CHECK_THAT(text, Catch::Contains("virtual (netdev veth0)"));
  CHECK_THAT(text, Catch::Contains("error: libibverbs cannot open it"));
  CHECK_THAT(text, Catch::Contains("# GID table of rxe0 port 1"));
  CHECK_THAT(text, Catch::Contains("*    1  RoCE v2  ::ffff:192.0.2.1"));
  CHECK_THAT(text, Catch::Contains("NVIDIA H200 (cuda0)"));
  CHECK_THAT(text, Catch::Contains("# GPU<->NIC"));
  CHECK_THAT(text, Catch::Contains("PIX"));
  CHECK_THAT(text, Catch::Contains("# note: a note"));
  CHECK(text.find("RDMA: no RDMA device") == std::string::npos);
}

TEST_CASE("Topology CSV has one line per port and one per failed NIC or empty host",
          "[topo][format]") {
  HostTopology none;
  none.host = "bare";
  none.ranks = {1};
  none.rdma_reason = "no RDMA device on this host";
  const std::string csv = output::topology_csv({sample_host("node01", 0), none});
  std::istringstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 1 + 3 + 1);
  const auto fields = [](const std::string& l) { return std::count(l.begin(), l.end(), ',') + 1; };
  for (const auto& l : lines) CHECK(fields(l) == fields(lines[0]));
  CHECK(lines[0].rfind("section,host,device,", 0) == 0);
  CHECK(lines[1] ==
        "topology,node01,mlx5_0,0,ib0,0000:04:00.0,0,1,ACTIVE,InfiniBand,4,HDR,200.0000,25.0000,"
        "25.0000,4096,0,");
  CHECK_THAT(lines[2], Catch::EndsWith("libibverbs cannot open it (no user-space provider)"));
  CHECK_THAT(lines[4], Catch::StartsWith("topology,bare,") &&
                           Catch::EndsWith("no RDMA device: no RDMA device on this host"));
  CHECK(output::topology_csv({}).empty());
}

TEST_CASE("The results validator checks the topology section", "[topo][results]") {
  auto doc = Document::start("topo", {"ibscope", "topo"});
  doc.topology = std::vector<HostTopology>{sample_host("node01", 0)};
  json j = json::parse(to_text(doc));
  CHECK_NOTHROW(parse(j.dump(), "f.json"));
  j["topology"]["hosts"][0]["nics"][0]["ports"][0].erase("state");
  try {
    (void)parse(j.dump(), "f.json");
    FAIL("accepted");
  } catch (const UsageError& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("f.json: topology.hosts[0].nics[0].ports[0].state: missing"));
  }
  // The CSV of a topo run carries the ports.
  CHECK_THAT(output::results_csv(doc), Catch::Contains("topology,node01,mlx5_0"));
}
