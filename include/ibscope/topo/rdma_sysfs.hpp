#pragma once
/// The kernel's RDMA devices as sysfs shows them (<root>/class/infiniband/<device>/...): the one
/// reader of that tree, and the one typed port state. A root other than "/sys" reads a fake
/// tree (tests) or another host's copy. Nothing here throws: what is missing reads as empty.
/// Port states: topo/port_state.hpp.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/topo/port_state.hpp"

namespace ibscope::topo {

/// A sysfs attribute's first line, trailing newline and blanks removed; empty when unreadable.
std::string sysfs_first_line(const std::filesystem::path& path);

class RdmaSysfs {
 public:
  explicit RdmaSysfs(std::filesystem::path sysfs_root = "/sys");

  /// <root>/class/infiniband.
  const std::filesystem::path& class_dir() const noexcept { return class_dir_; }
  /// The devices the kernel lists, sorted; empty when the class is missing (no RDMA core
  /// modules) or empty (no devices).
  std::vector<std::string> device_names() const;
  bool has_devices() const;
  /// <class>/<device>/device: the parent device (absent for software devices such as rxe).
  std::filesystem::path parent_device(std::string_view device) const;
  /// A port attribute's first line, sysfs's "N: " prefix removed ("4: ACTIVE" -> "ACTIVE");
  /// empty when unreadable.
  std::string port_attribute(std::string_view device, int port, std::string_view name) const;
  /// ports/<port>/state; kUnknown when unreadable.
  PortState port_state(std::string_view device, int port) const;
  /// ports/<port>/phys_state without its number ("LinkUp", "Disabled"); empty when unreadable.
  std::string phys_state(std::string_view device, int port) const;
  /// The network interface of a device: RoCE's netdev of port 1's GID 0, else the first
  /// interface of the parent PCI function (IPoIB); empty when none.
  std::string netdev(std::string_view device) const;

 private:
  std::filesystem::path class_dir_;
};

}  // namespace ibscope::topo
