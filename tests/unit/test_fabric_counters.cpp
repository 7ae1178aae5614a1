// NIC counters (fabric/): the catalog's classification per driver, deltas with wraps,
// saturation and resets, NICs appearing and vanishing, the reader over a sysfs tree laid out as
// a ConnectX (mlx5, RoCE) host's and as a Soft-RoCE one's (file names from the kernel's
// Documentation/ABI/stable/sysfs-class-infiniband and the drivers' counter tables; values
// synthetic), the wire round trip, and the reader on this machine's own /sys and /proc.

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/temp_dir.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/fabric/counter_wire.hpp"
#include "ibscope/fabric/counters.hpp"

namespace fs = std::filesystem;
using namespace ibscope;
using namespace ibscope::fabric;

namespace {

void write_counter_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

// A RoCE ConnectX host: mlx5_2 port 1 over ens1f0np0, plus a plain interface.
void make_mlx5_tree(const fs::path& root, std::uint64_t symbol_errors, std::uint64_t cnps,
                    std::uint64_t xmit_words, std::uint64_t carrier_changes) {
  const fs::path port = root / "class/infiniband/mlx5_2/ports/1";
  write_counter_file(port / "state", "4: ACTIVE");
  write_counter_file(port / "gid_attrs/ndevs/0", "ens1f0np0");
  write_counter_file(port / "counters/symbol_error", std::to_string(symbol_errors));
  write_counter_file(port / "counters/port_rcv_errors", "3");
  write_counter_file(port / "counters/link_downed", "1");
  write_counter_file(port / "counters/port_xmit_wait", "100");
  write_counter_file(port / "counters/port_xmit_data", std::to_string(xmit_words));
  write_counter_file(port / "counters/port_rcv_data", "1000");
  write_counter_file(port / "hw_counters/np_cnp_sent", std::to_string(cnps));
  write_counter_file(port / "hw_counters/out_of_sequence", "0");
  write_counter_file(port / "hw_counters/some_future_counter", "7");
  const fs::path net = root / "class/net/ens1f0np0";
  write_counter_file(net / "statistics/rx_bytes", "5000");
  write_counter_file(net / "statistics/tx_bytes", "6000");
  write_counter_file(net / "statistics/rx_crc_errors", "0");
  write_counter_file(net / "carrier_changes", std::to_string(carrier_changes));
  write_counter_file(root / "class/net/eno1/statistics/rx_bytes", "1");  // not an RDMA port
}

const CounterDelta* find_delta(const NicDelta& d, std::string_view name) {
  for (const auto& c : d.counters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("counter catalog: kinds per driver and source", "[fabric]") {
  CHECK(find_counter(CounterSource::kIbPort, "mlx5", "symbol_error")->kind == CounterKind::kErrors);
  CHECK(find_counter(CounterSource::kIbPort, "hfi1", "port_xmit_wait")->kind ==
        CounterKind::kCongestion);
  CHECK(find_counter(CounterSource::kIbPort, "mlx5", "link_downed")->kind == CounterKind::kFlaps);
  CHECK(find_counter(CounterSource::kHw, "mlx5", "np_cnp_sent")->kind == CounterKind::kCongestion);
  CHECK(find_counter(CounterSource::kHw, "mlx5", "out_of_sequence")->kind == CounterKind::kErrors);
  CHECK(find_counter(CounterSource::kHw, "rxe", "retry_exceeded_err")->kind ==
        CounterKind::kErrors);
  CHECK(find_counter(CounterSource::kHw, "rxe", "link_downed")->kind == CounterKind::kFlaps);
  CHECK(find_counter(CounterSource::kHw, "rxe", "sent_pkts")->kind == CounterKind::kTraffic);
  CHECK(find_counter(CounterSource::kNetdev, "netdev", "carrier_changes")->kind ==
        CounterKind::kFlaps);
  CHECK(find_counter(CounterSource::kTcp, "tcp", "RetransSegs")->kind == CounterKind::kErrors);
  // A driver's counter is not another driver's.
  CHECK_FALSE(find_counter(CounterSource::kHw, "rxe", "np_cnp_sent"));
  CHECK_FALSE(find_counter(CounterSource::kHw, "mlx5", "retry_exceeded_err"));
  CHECK(driver_of_device("mlx5_2") == "mlx5");
  CHECK(driver_of_device("rxe0") == "rxe");
  CHECK(driver_of_device("hfi1_0") == "hfi1");
  CHECK(driver_of_device("irdma1") == "irdma");
  // Every entry is unique per (source, driver, name) and has a meaning.
  std::set<std::string> seen;
  for (const CounterSpec& s : counter_catalog()) {
    INFO(s.name);
    CHECK(seen.insert(fmt::format("{}/{}/{}", name_of(s.source), s.driver, s.name)).second);
    CHECK_FALSE(s.meaning.empty());
    CHECK(counter_kind_named(name_of(s.kind)) == s.kind);
  }
}

TEST_CASE("counter deltas: 32-bit wraps, saturation and resets", "[fabric]") {
  const CounterSpec data = *find_counter(CounterSource::kIbPort, "mlx5", "port_xmit_data");
  CHECK(counter_delta(data, 100, 250).delta == 150);
  // A data counter read from a 32-bit PMA wrapped.
  const CounterDelta wrapped = counter_delta(data, 0xFFFFFF00u, 0x10u);
  CHECK(wrapped.delta == 0x100u + 0x10u);
  CHECK_FALSE(wrapped.reset);
  // A 64-bit counter that went back was cleared.
  const CounterDelta cleared = counter_delta(data, 5'000'000'000ull, 40);
  CHECK(cleared.reset);
  CHECK(cleared.delta == 40);
  const CounterSpec netdev_errors = *find_counter(CounterSource::kNetdev, "netdev", "rx_errors");
  const CounterDelta small_reset = counter_delta(netdev_errors, 5, 0);
  CHECK(small_reset.reset);
  CHECK(small_reset.delta == 0);
  // A 16-bit saturating error counter at its maximum grew by at least the difference.
  const CounterSpec symbol = *find_counter(CounterSource::kIbPort, "mlx5", "symbol_error");
  const CounterDelta sat = counter_delta(symbol, 65000, 65535);
  CHECK(sat.delta == 535);
  CHECK(sat.saturated);
  CHECK_FALSE(counter_delta(symbol, 1, 2).saturated);
}

TEST_CASE("counter reader: a ConnectX RoCE host's tree", "[fabric]") {
  test::TempDir dir;
  make_mlx5_tree(dir.path(), 10, 0, 1000, 2);
  const CounterReader reader({.sysfs_root = dir.path(), .proc_root = dir.path(), .tcp = false});
  const CounterSnapshot before = reader.read();
  REQUIRE(before.nics.size() == 1);  // the RDMA port only: eno1 is no RDMA port
  CHECK(before.nics[0].nic == "mlx5_2:1");
  CHECK(before.nics[0].driver == "mlx5");
  CHECK(before.nics[0].netdev == "ens1f0np0");

  make_mlx5_tree(dir.path(), 27, 40, 1000 + 256, 4);
  const CounterSnapshot after = reader.read();
  const auto deltas = counter_deltas(before, after);
  REQUIRE(deltas.size() == 1);
  const NicDelta& d = deltas[0];
  CHECK(d.sum(CounterKind::kErrors) == 17);
  CHECK(d.sum(CounterKind::kCongestion) == 40);
  CHECK(d.sum(CounterKind::kFlaps) == 2);  // carrier_changes +2: one flap
  CHECK(d.traffic_bytes() == 256 * 4);     // port_xmit_data counts 4-octet words
  CHECK(d.describe(CounterKind::kErrors) == "symbol_error +17");
  REQUIRE(find_delta(d, "np_cnp_sent"));
  CHECK(find_delta(d, "np_cnp_sent")->source == CounterSource::kHw);
  CHECK_FALSE(find_delta(d, "port_rcv_errors"));  // did not move: not kept
}

TEST_CASE("counter reader: an unknown counter is kept raw, of kind other", "[fabric]") {
  test::TempDir dir;
  make_mlx5_tree(dir.path(), 0, 0, 0, 0);
  const CounterReader reader({.sysfs_root = dir.path(), .proc_root = dir.path(), .tcp = false});
  const CounterSnapshot before = reader.read();
  write_counter_file(dir.path() / "class/infiniband/mlx5_2/ports/1/hw_counters/some_future_counter",
                     "9");
  const auto deltas = counter_deltas(before, reader.read());
  REQUIRE(deltas.size() == 1);
  REQUIRE(find_delta(deltas[0], "some_future_counter"));
  CHECK(find_delta(deltas[0], "some_future_counter")->kind == CounterKind::kOther);
  CHECK(find_delta(deltas[0], "some_future_counter")->delta == 2);
}

TEST_CASE("counter deltas: a NIC appearing or vanishing between readings", "[fabric]") {
  CounterSnapshot a, b;
  a.time_s = 1;
  b.time_s = 3;
  a.nics.push_back({"mlx5_0:1", "mlx5", "", "", {{CounterSource::kIbPort, "symbol_error", 1}}});
  b.nics.push_back({"mlx5_1:1", "mlx5", "", "", {{CounterSource::kIbPort, "symbol_error", 9}}});
  const auto d = counter_deltas(a, b);
  REQUIRE(d.size() == 2);
  CHECK(d[0].nic == "mlx5_1:1");
  CHECK(d[0].appeared);
  CHECK(d[0].counters.empty());
  CHECK(d[1].nic == "mlx5_0:1");
  CHECK(d[1].vanished);
  CHECK(d[1].interval_s == Approx(2.0));
}

TEST_CASE("counter reader: a Soft-RoCE host's tree and its TCP", "[fabric]") {
  test::TempDir dir;
  auto tree = [&](std::uint64_t retries, std::uint64_t retrans) {
    const fs::path dev = dir.path() / "class/infiniband/rxe0";
    write_counter_file(dev / "ports/1/state", "4: ACTIVE");
    write_counter_file(dev / "ports/1/gid_attrs/ndevs/0", "rxe-a");
    write_counter_file(dev / "ports/1/hw_counters/completer_retry_err", std::to_string(retries));
    write_counter_file(dev / "ports/1/hw_counters/sent_pkts", "10");
    write_counter_file(dir.path() / "class/net/rxe-a/statistics/tx_bytes", "1");
    write_counter_file(dir.path() / "net/snmp",
                       "Ip: Forwarding\nIp: 1\nTcp: RtoAlgorithm RetransSegs OutSegs\nTcp: 1 " +
                           std::to_string(retrans) + " 500");
    // IpExt: follows TcpExt: in /proc/net/netstat; CE marks received are congestion.
    write_counter_file(dir.path() / "net/netstat",
                       "TcpExt: TCPTimeouts\nTcpExt: 2\nIpExt: InNoRoutes InCEPkts\nIpExt: 0 " +
                           std::to_string(retrans * 10));
  };
  tree(0, 4);
  const CounterReader reader({.sysfs_root = dir.path(), .proc_root = dir.path(), .tcp = true});
  const CounterSnapshot before = reader.read();
  tree(5, 9);
  const auto d = counter_deltas(before, reader.read());
  REQUIRE(d.size() == 2);
  CHECK(d[0].nic == "rxe0:1");
  CHECK(d[0].describe(CounterKind::kErrors) == "completer_retry_err +5");
  CHECK(d[1].nic == "tcp");
  CHECK(d[1].describe(CounterKind::kErrors) == "RetransSegs +5");
  CHECK(d[1].describe(CounterKind::kCongestion) == "InCEPkts +50");
}

TEST_CASE("counter deltas cross the wire unchanged", "[fabric]") {
  NicDelta d;
  d.nic = "mlx5_2:1";
  d.driver = "mlx5";
  d.interval_s = 0.25;
  d.scope = "net:[4026531840]@boot";
  d.counters.push_back({CounterSource::kIbPort, "symbol_error", CounterKind::kErrors, 17, true});
  d.counters.push_back({CounterSource::kHw, "np_cnp_sent", CounterKind::kCongestion, 3});
  NicDelta gone;
  gone.nic = "eth1";
  gone.driver = "netdev";
  gone.vanished = true;
  const std::vector<NicDelta> sent{d, gone};
  CHECK(decode_deltas(encode_deltas(sent)) == sent);
  CHECK(decode_deltas("").empty());
  CHECK_THROWS_AS(decode_deltas("C\thw\tx\t1\t\n"), RemoteError);  // no NIC line first
  CHECK_THROWS_AS(decode_deltas("N\tmlx5_0:1\tmlx5\tabc\t\n"), RemoteError);
  CHECK_THROWS_AS(decode_deltas("N\tmlx5_0:1\tmlx5\t1\t\t\nC\tbogus\tx\t1\t\n"), RemoteError);
  CHECK(decode_deltas("N\tmlx5_0:1\tmlx5\t1\t\t\n").size() == 1);
}

TEST_CASE("counter reader: this machine's interfaces and TCP", "[fabric]") {
  const CounterReader reader;
  const CounterSnapshot snap = reader.read();
  // Every Linux machine has a namespace TCP table; loopback is never read.
  bool tcp = false;
  for (const auto& n : snap.nics) {
    CHECK(n.nic != "lo");
    tcp = tcp || n.nic == "tcp";
  }
  CHECK(tcp);
  for (const auto& n : snap.nics) {
    if (n.nic == "tcp") CHECK(n.scope.rfind("net:[", 0) == 0);  // the namespace and the boot
  }
}

TEST_CASE("docs/counters.md lists every counter of the catalog with its kind", "[fabric][docs]") {
  // The repository's docs/, from the results seeds' folder (tests/fuzz/corpus/results).
  const fs::path doc = fs::path(IBSCOPE_RESULTS_SEEDS) / "../../../../docs/counters.md";
  std::ifstream in(doc);
  REQUIRE(in);
  std::set<std::string> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) == 0) rows.insert(line);
  }
  for (const CounterSpec& s : counter_catalog()) {
    const std::string start = fmt::format("| `{}` | {} |", s.name, name_of(s.kind));
    INFO(start);
    CHECK(std::any_of(rows.begin(), rows.end(),
                      [&](const std::string& r) { return r.rfind(start, 0) == 0; }));
  }
}
