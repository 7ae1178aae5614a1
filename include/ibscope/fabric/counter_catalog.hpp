#pragma once
/// Every NIC counter ibscope reads, what kind of evidence it is and how wide it is: the one
/// catalog (docs/counters.md is its prose and a unit test holds the two together). Counters
/// come from four sources:
///   ib_port: <sysfs>/class/infiniband/<dev>/ports/<p>/counters/ (the PMA port counters, any
///            driver that has them: mlx5, mlx4, hfi1, ...; rxe has none);
///   hw:      <dev>/hw_counters/ and <dev>/ports/<p>/hw_counters/ (the driver's own: mlx5, rxe);
///   netdev:  <sysfs>/class/net/<if>/statistics/ and carrier_changes (any interface);
///   tcp:     <proc>/net/snmp and <proc>/net/netstat (the network namespace's TCP).
/// A counter the catalog does not know is kept raw, of kind kOther.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ibscope::fabric {

/// What a counter's growth says about a link.
enum class CounterKind {
  kErrors,      ///< corrupted, lost or retransmitted traffic: an erroring link fails accept
  kCongestion,  ///< waiting, marks and congestion notifications: reported with its share
  kFlaps,       ///< the link went down (and came back): a flap
  kTraffic,     ///< bytes and packets moved (rail balance, shares)
  kOther,       ///< known but neither (e.g. local operation errors), or unknown: kept raw
};

enum class CounterSource { kIbPort, kHw, kNetdev, kTcp };

/// How a counter behaves at its limit: a 64-bit counter never reaches it; a 32-bit one that
/// wraps starts again at 0; a saturating one (the IB PMA's error counters, 4 to 32 bits) stays
/// at its maximum, so growth past it is unknown.
enum class CounterLimit { kWraps, kSaturates };

struct CounterSpec {
  std::string_view name;
  CounterSource source;
  CounterKind kind;
  int width_bits = 64;
  CounterLimit limit = CounterLimit::kWraps;
  /// Bytes per unit for traffic counters (port_xmit_data counts 4-octet words); 0: not bytes.
  std::uint32_t unit_bytes = 0;
  std::string_view driver;   ///< "" for every driver of the source (ib_port, netdev, tcp)
  std::string_view meaning;  ///< one line, for docs/counters.md and the report
};

/// The catalog, in docs/counters.md's order.
std::span<const CounterSpec> counter_catalog() noexcept;

/// The spec of a counter read from `source` on a device of `driver` ("mlx5", "rxe", ...; the
/// device name's prefix before its index); empty when unknown (kept raw, kind kOther).
std::optional<CounterSpec> find_counter(CounterSource source, std::string_view driver,
                                        std::string_view name) noexcept;

std::string_view name_of(CounterKind kind) noexcept;
std::string_view name_of(CounterSource source) noexcept;
std::optional<CounterKind> counter_kind_named(std::string_view name) noexcept;
std::optional<CounterSource> counter_source_named(std::string_view name) noexcept;

/// "mlx5_2" -> "mlx5", "rxe0" -> "rxe", "hfi1_0" -> "hfi1", "irdma1" -> "irdma".
std::string_view driver_of_device(std::string_view device) noexcept;

}  // namespace ibscope::fabric
