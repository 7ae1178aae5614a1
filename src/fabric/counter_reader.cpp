#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>

#include "ibscope/fabric/counters.hpp"
#include "ibscope/topo/rdma_sysfs.hpp"

namespace ibscope::fabric {
namespace {

namespace fs = std::filesystem;

// A counter file's value; false when unreadable or not a number (plain read(2): no iostream
// per file, ~40 files per NIC).
bool read_u64(const fs::path& path, std::uint64_t& value) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::array<char, 64> buffer{};
  const ssize_t n = ::read(fd, buffer.data(), buffer.size() - 1);
  ::close(fd);
  if (n <= 0) return false;
  const char* end = buffer.data() + n;
  const auto [ptr, ec] = std::from_chars(buffer.data(), end, value);
  return ec == std::errc() && ptr != buffer.data();
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

void read_dir(const fs::path& dir, CounterSource source, std::vector<CounterValue>& into) {
  for (const std::string& name : entries(dir)) {
    std::uint64_t v = 0;
    if (read_u64(dir / name, v)) into.push_back({source, name, v});
  }
}

void read_netdev(const fs::path& net, const std::string& ifname, std::vector<CounterValue>& into) {
  read_dir(net / ifname / "statistics", CounterSource::kNetdev, into);
  std::uint64_t v = 0;
  if (read_u64(net / ifname / "carrier_changes", v)) {
    into.push_back({CounterSource::kNetdev, "carrier_changes", v});
  }
}

// "Tcp: RtoAlgorithm ... RetransSegs ..." then "Tcp: 1 200 ..." (the files' layout: a header
// line and a value line per protocol).
void read_proc_table(const fs::path& path, std::string_view protocol,
                     std::vector<CounterValue>& into) {
  std::ifstream in(path);
  std::string header, values;
  const std::string prefix = std::string(protocol) + ":";
  while (std::getline(in, header)) {
    if (header.rfind(prefix, 0) != 0) continue;
    if (!std::getline(in, values) || values.rfind(prefix, 0) != 0) return;
    std::istringstream names(header.substr(prefix.size())), numbers(values.substr(prefix.size()));
    std::string name, number;
    while (names >> name && numbers >> number) {
      std::uint64_t v = 0;
      const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
      if (ec == std::errc() && find_counter(CounterSource::kTcp, "tcp", name)) {
        into.push_back({CounterSource::kTcp, name, v});
      }
    }
    return;
  }
}

// The reader's network namespace and boot: "net:[4026531840]@<boot id>"; "" when unreadable.
std::string namespace_scope(const fs::path& proc) {
  std::error_code ec;
  const fs::path ns = fs::read_symlink(proc / "self/ns/net", ec);
  if (ec) return {};
  return ns.string() + "@" + topo::sysfs_first_line(proc / "sys/kernel/random/boot_id");
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

CounterReader::CounterReader(CounterReaderOptions options) : options_(std::move(options)) {}

CounterSnapshot CounterReader::read() const {
  CounterSnapshot snap;
  snap.time_s = now_s();
  const topo::RdmaSysfs rdma(options_.sysfs_root);
  const fs::path net = options_.sysfs_root / "class/net";
  const std::vector<std::string> devices = rdma.device_names();
  for (const std::string& device : devices) {
    const fs::path dev = rdma.class_dir() / device;
    const std::string driver(driver_of_device(device));
    std::vector<CounterValue> device_wide;
    read_dir(dev / "hw_counters", CounterSource::kHw, device_wide);
    const std::string netdev = rdma.netdev(device);
    for (const std::string& port : entries(dev / "ports")) {
      NicSample s;
      s.nic = device + ":" + port;
      s.driver = driver;
      s.netdev = netdev;
      read_dir(dev / "ports" / port / "counters", CounterSource::kIbPort, s.values);
      read_dir(dev / "ports" / port / "hw_counters", CounterSource::kHw, s.values);
      s.values.insert(s.values.end(), device_wide.begin(), device_wide.end());
      if (!netdev.empty()) read_netdev(net, netdev, s.values);
      snap.nics.push_back(std::move(s));
    }
  }
  if (devices.empty()) {
    for (const std::string& ifname : entries(net)) {
      if (ifname == "lo") continue;
      NicSample s;
      s.nic = ifname;
      s.driver = "netdev";
      read_netdev(net, ifname, s.values);
      if (!s.values.empty()) snap.nics.push_back(std::move(s));
    }
  }
  if (options_.tcp) {
    NicSample s;
    s.nic = "tcp";
    s.driver = "tcp";
    s.scope = namespace_scope(options_.proc_root);
    read_proc_table(options_.proc_root / "net/snmp", "Tcp", s.values);
    read_proc_table(options_.proc_root / "net/netstat", "TcpExt", s.values);
    read_proc_table(options_.proc_root / "net/netstat", "IpExt", s.values);
    if (!s.values.empty()) snap.nics.push_back(std::move(s));
  }
  return snap;
}

}  // namespace ibscope::fabric
