#pragma once
/// NIC counters: one reading of a host's NICs (CounterSnapshot), the reader that takes it from
/// the kernel's files, and the growth between two readings (NicDelta) that every measurement
/// carries (docs/counters.md). The reader is the single owner of class/infiniband/*/counters,
/// hw_counters, class/net/*/statistics and /proc/net/{snmp,netstat}. Reading takes ~0.1 ms per
/// NIC: callers read between rows and rounds, never inside a timed region.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ibscope/fabric/counter_catalog.hpp"

namespace ibscope::fabric {

struct CounterValue {
  CounterSource source = CounterSource::kHw;
  std::string name;
  std::uint64_t value = 0;
  bool operator==(const CounterValue&) const = default;
};

/// One NIC port's counters at one moment. nic: "mlx5_2:1" (an RDMA port, with its netdev's
/// statistics), "eth0" (a network interface without RDMA) or "tcp" (the namespace's TCP).
struct NicSample {
  std::string nic;
  std::string driver;  ///< "mlx5", "rxe", "netdev" (an interface), "tcp"
  std::string netdev;  ///< the interface under an RDMA port ("" if none)
  /// What the counters are shared by, where that is wider than the NIC: the TCP entry's network
  /// namespace and boot ("net:[4026531840]@<boot id>"). Two hosts reporting the same scope are
  /// one namespace (emulated hosts on one machine): their TCP counters are not per host.
  std::string scope;
  std::vector<CounterValue> values;
};

struct CounterSnapshot {
  double time_s = 0;  ///< steady_clock seconds when the reading started
  std::vector<NicSample> nics;
};

struct CounterReaderOptions {
  std::filesystem::path sysfs_root = "/sys";
  std::filesystem::path proc_root = "/proc";  ///< its net/ is the reader's network namespace's
  bool tcp = true;                            ///< read the namespace's TCP counters
};

/// Which NICs: every RDMA port (with its interface's statistics) when the host has RDMA
/// devices; else every network interface but loopback; and the namespace's TCP.
class CounterReader {
 public:
  explicit CounterReader(CounterReaderOptions options = {});
  /// Never throws but bad_alloc: what cannot be read is left out (a NIC that vanished).
  CounterSnapshot read() const;

 private:
  CounterReaderOptions options_;
};

struct CounterDelta {
  CounterSource source = CounterSource::kHw;
  std::string name;
  CounterKind kind = CounterKind::kOther;
  std::uint64_t delta = 0;
  bool saturated = false;  ///< a saturating counter at its maximum: grew by at least `delta`
  bool reset = false;      ///< went backwards (cleared): `delta` is its value after the reset
  bool operator==(const CounterDelta&) const = default;
};

/// One NIC's growth between two readings: only the counters that moved.
struct NicDelta {
  std::string host;  ///< filled by whoever knows it (the gather)
  std::string nic, driver;
  std::string scope;  ///< NicSample::scope
  double interval_s = 0;
  bool appeared = false;  ///< absent from the first reading: no deltas
  bool vanished = false;  ///< absent from the second reading: no deltas
  std::vector<CounterDelta> counters;

  std::uint64_t sum(CounterKind kind) const noexcept;
  /// Bytes sent plus received, from the port's data counters or else the interface's.
  std::uint64_t traffic_bytes() const noexcept;
  /// The moved counters of one kind, "symbol_error +17, port_rcv_errors +1,204"; only those
  /// `keep` accepts when given.
  std::string describe(CounterKind kind, bool (*keep)(const CounterDelta&) = nullptr) const;
  bool operator==(const NicDelta&) const = default;
};

/// Sums over NICs (a row's or a link's), per kind: what tables and exports print.
struct CounterTotals {
  std::uint64_t errors = 0, congestion = 0, flaps = 0, traffic_bytes = 0;
};
CounterTotals totals_of(const std::vector<NicDelta>& deltas) noexcept;

/// The sum of two sets of deltas of the same NICs (a link measured in several rows, a run's
/// rows): counters matched by (host, nic, source, name), intervals added, NICs of either kept.
std::vector<NicDelta> add_deltas(std::vector<NicDelta> into, const std::vector<NicDelta>& more);

/// The growth of every NIC between two readings of the same host, in `after`'s order, then the
/// NICs that vanished. Wraps (32-bit counters), saturation and resets are handled per the
/// catalog (counter_catalog.hpp).
std::vector<NicDelta> counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after);

/// One counter's growth from `before` to `after` (both read from the same counter).
CounterDelta counter_delta(const CounterSpec& spec, std::uint64_t before, std::uint64_t after);

}  // namespace ibscope::fabric
