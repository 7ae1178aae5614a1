// Binding the process to a NUMA node (what `ibscope probe` does for its NIC's node): binding to
// the node hwloc reports for this host works and is reported; impossible requests warn and
// leave the process as it was. The test restores the affinity and memory policy it changes.

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/numa_binding.hpp"

using namespace ibscope::topo;

namespace {

// Linux <linux/mempolicy.h> values, without depending on libnuma's headers.
constexpr int kMpolDefault = 0;
constexpr int kMpolBind = 2;
constexpr int kMpolLocal = 5;

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
std::set<int> parse_list(const std::string& text) {
  std::set<int> cpus;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const auto dash = part.find('-');
    const int lo = std::stoi(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return cpus;
}

std::set<int> affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  std::set<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.insert(c);
  }
  return cpus;
}

// Puts back the affinity and memory policy the test process had.
class RestoreBinding {
 public:
  RestoreBinding() {
    CPU_ZERO(&saved_);
    sched_getaffinity(0, sizeof(saved_), &saved_);
  }
  ~RestoreBinding() {
    sched_setaffinity(0, sizeof(saved_), &saved_);
    syscall(SYS_set_mempolicy, kMpolDefault, nullptr, 0);
  }
  RestoreBinding(const RestoreBinding&) = delete;
  RestoreBinding& operator=(const RestoreBinding&) = delete;

 private:
  cpu_set_t saved_;
};

}  // namespace

TEST_CASE("Binding to the NUMA node hwloc reports for this host works and is reported",
          "[topo][binding]") {
  const HostTopology here = discover_host_topology("here");
  REQUIRE_FALSE(here.numa_nodes.empty());
  const NumaNode& node = here.numa_nodes.front();
  const RestoreBinding restore;

  const BindResult r = bind_to_numa_node(node.os_index);
  INFO(r.message);
  CHECK(r.bound);
  CHECK(r.cpus_bound);
  CHECK(r.memory_bound);
  CHECK(r.numa_node == node.os_index);
  CHECK(r.cpus == node.cpus);
  CHECK(r.message == "bound to NUMA node " + std::to_string(node.os_index) + " (CPUs " + node.cpus +
                         ", memory on node " + std::to_string(node.os_index) + ")");
  CHECK(affinity() == parse_list(node.cpus));

  int mode = -1;
  unsigned long mask[16] = {};
  REQUIRE(syscall(SYS_get_mempolicy, &mode, mask, sizeof(mask) * 8, nullptr, 0) == 0);
  if (here.numa_nodes.size() == 1) {
    // Binding to every node is no restriction: hwloc sets the local (or default) policy.
    CHECK((mode == kMpolBind || mode == kMpolLocal || mode == kMpolDefault));
  } else {
    CHECK(mode == kMpolBind);
    CHECK((mask[node.os_index / 64] >> (node.os_index % 64) & 1UL) == 1UL);
  }
}

TEST_CASE("Binding to an unknown or absent NUMA node warns and binds nothing", "[topo][binding]") {
  const RestoreBinding restore;
  const auto before = affinity();
  for (int node : {-1, 4095}) {
    const BindResult r = bind_to_numa_node(node);
    INFO(r.message);
    CHECK_FALSE(r.bound);
    CHECK_FALSE(r.cpus_bound);
    CHECK_FALSE(r.memory_bound);
    CHECK(r.message.find("not bound") != std::string::npos);
  }
  const BindResult r = bind_to_rdma_device_numa_node("no_such_device0");
  CHECK_FALSE(r.bound);
  CHECK(r.message.find("no_such_device0") != std::string::npos);
  CHECK(affinity() == before);
}
