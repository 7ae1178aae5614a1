#pragma once
/// Where a PCI device sits (the chain of bridges from its host bridge) and how far apart two
/// devices are, in the classes nvidia-smi topo -m prints. Pure; unit-tested for every class.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibscope::topo {

/// The PCIe path of a device: its host bridge (root complex) and the PCI-to-PCI bridges below it
/// (root port, switch upstream and downstream ports), top-down. The device itself is not part
/// of the path.
struct PciePath {
  /// "0000:[00-3f]": PCI domain and the bus range below the host bridge. Empty when the device
  /// has no PCI location (a virtual device such as Soft-RoCE's rxe0 on a veth).
  std::string host_bridge;
  std::vector<std::string> bridges;  ///< bus ids, e.g. "0000:00:01.0", top-down

  bool empty() const noexcept { return host_bridge.empty(); }
  bool operator==(const PciePath&) const = default;
};

/// How traffic between two devices travels, best to worst (nvidia-smi's names):
///   PIX  through at most one PCIe switch (the two paths part below a common bridge and each
///        side has at most one more bridge: the switch's downstream port), or the same device;
///   PXB  through several PCIe bridges, without crossing the host bridge;
///   PHB  through the host bridge (the same root complex, different root ports);
///   NODE between host bridges of the same NUMA node;
///   SYS  across NUMA nodes (the inter-socket link, e.g. UPI/xGMI);
///   kUnknown: one side has no PCI location and no NUMA node to compare.
enum class PathClass { kPix, kPxb, kPhb, kNode, kSys, kUnknown };

/// "PIX", "PXB", "PHB", "NODE", "SYS", "?".
std::string_view to_string(PathClass c) noexcept;
/// The inverse of to_string; nullopt for anything else.
std::optional<PathClass> path_class_from_string(std::string_view text) noexcept;

/// A device's location for classification: its PCIe path and NUMA node (-1: unknown).
struct PciLocation {
  PciePath path;
  int numa_node = -1;
};

/// Classifies the route between two devices. Devices under different host bridges (or one
/// without a PCI location) compare NUMA nodes: equal and known -> NODE, different and both
/// known -> SYS, otherwise kUnknown. Symmetric.
PathClass classify(const PciLocation& a, const PciLocation& b);

}  // namespace ibscope::topo
