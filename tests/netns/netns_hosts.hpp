#pragma once
// Several "hosts" on this machine for tests: network namespaces made by tests/netns/hosts.sh
// under a prefix of their own (removed on scope exit whatever happened), and one ibscope rank
// started inside each host (TCP store bootstrap, UCX over TCP on the host's shaped veth).

#include <functional>
#include <string>
#include <vector>

#include "common/text_lines.hpp"
#include "mp/process.hpp"

namespace ibscope::test {

/// Whether IBSCOPE_NETNS_REQUIRED=1 (CI): then missing namespaces fail instead of skipping.
bool netns_required();

/// Hosts `<prefix>-h0..h{n-1}` joined by a switch, each link shaped to a rate. Move-only; the
/// destructor runs `hosts.sh --prefix P down` (bounded: 60 s).
class NetnsHosts {
 public:
  /// Creates n hosts with links shaped to `rate` (a tc rate, e.g. "200mbit") and
  /// tcp_retries2=5. `tag` makes the prefix unique per test case (the pid is added). Fails the
  /// test (REQUIRE) when hosts.sh fails.
  NetnsHosts(int n, const std::string& rate, const std::string& tag);
  NetnsHosts(NetnsHosts&& o) noexcept;
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;
  NetnsHosts& operator=(NetnsHosts&&) = delete;
  ~NetnsHosts();

  void rate(int host, const std::string& rate) const;
  void link(int host, bool up) const;
  /// Shapes only what `host` sends to `peer` to `rate` (its other traffic keeps the rate it was
  /// made with): an htb whose two classes each hold a tbf (hosts.sh's burst and latency), and a
  /// u32 filter on the peer's address. One direction of one host pair, not the host's whole link.
  void rate_to(int host, int peer, const std::string& rate, const std::string& base_rate) const;
  /// Drops `per_mille` of the TCP packets into and out of `host` (nftables in its namespace,
  /// random per packet: `numgen random mod 1000 < per_mille`); 0 removes the rule.
  void drop_tcp(int host, int per_mille) const;
  /// Emulates a switch that marks ECN at `host`'s port (as RED or DCQCN marking does when the
  /// egress queue builds): TCP on every host asks for ECN (net.ipv4.tcp_ecn=1), every host
  /// sends one frame per packet (gso_max_size 1500), and an nftables rule in the switch marks
  /// Congestion Experienced on the ECN-capable IPv4 frames to `host` beyond `mbit` Mbit/s of
  /// 1514 B frames (nft's byte-rate `limit ... over` never matched on this 6.1 kernel, so the
  /// rule counts frames). Pass the rate `host` is shaped to: the frames above it are those
  /// that queue in front of its port.
  void mark_ce(int host, double mbit) const;

  int size() const noexcept { return n_; }
  std::string host(int i) const { return prefix_ + "-h" + std::to_string(i); }
  std::string device() const { return prefix_ + "-eth"; }
  /// Address of host i (hosts.sh default subnet 10.213.0.0/24: host i is .i+1).
  std::string address(int i) const { return "10.213.0." + std::to_string(i + 1); }
  const std::string& prefix() const noexcept { return prefix_; }

 private:
  void script(const std::vector<std::string>& args) const;
  std::string prefix_;
  int n_ = 0;
};

/// TCP payload goodput of a link shaped to `mbit` Mbit/s (tbf), in GB/s (1e9 B/s): 1448 payload
/// bytes per 1514-byte frame (tests/netns/README.md).
inline double tcp_goodput_gbps(double mbit) { return mbit * 1e6 * 1448.0 / 1514.0 / 8.0 / 1e9; }

/// ibscope ranks on the hosts, `ranks_per_host` on each in blocks (default one): rank i runs
/// `ip netns exec <host i / ranks_per_host> ibscope ARGS` with the TCP store bootstrap (root on
/// host 0), UCX_TLS=tcp on the host's device, IBSCOPE_HOSTNAME=<that host>.
/// `ip netns exec` execs the command itself, so the pid is ibscope's (signals reach it).
class NetnsJob {
 public:
  /// `ranks` ranks on the first hosts (0: ranks_per_host on every host).
  NetnsJob(const NetnsHosts& hosts, std::vector<std::string> args, double limit_s, int ranks = 0,
           int ranks_per_host = 1);

  /// Starts rank r (ranks may be left out: a rank that never starts).
  void start(int rank);
  void start_all();
  int pid(int rank) const { return running_.at(static_cast<std::size_t>(rank)).pid; }
  /// "address:port" of rank 0's store, as the ranks are told in IBSCOPE_ROOT.
  const std::string& root() const noexcept { return root_; }

  /// Waits for every started rank at once (one thread each, so each end time is exact).
  /// Not-started ranks get a default ProcessResult with exit_code -1. `on_end(rank)`, when
  /// given, runs on that rank's waiting thread as soon as it has ended.
  std::vector<ProcessResult> wait_all(const std::function<void(int)>& on_end = {});

  /// Seconds since the steady_clock epoch at which rank r ended (valid after wait_all).
  double ended_at_s(int rank) const { return ended_at_s_.at(static_cast<std::size_t>(rank)); }

 private:
  const NetnsHosts& hosts_;
  std::vector<std::string> args_;
  double limit_s_;
  int per_host_;
  int ranks_;
  std::string root_, token_;
  std::vector<Running> running_;
  std::vector<double> ended_at_s_;
};

/// steady_clock now, in seconds (the clock Running::started_s uses).
double steady_now_s();

}  // namespace ibscope::test
