#pragma once
/// An owned, loaded hwloc topology of this host (hwloc.h stays out of public headers).

#include <string>

#include "ibscope/core/handle.hpp"

struct hwloc_topology;
struct hwloc_bitmap_s;

namespace ibscope::topo {

void destroy_topology(hwloc_topology* topology) noexcept;

class HwlocTopology {
 public:
  enum class Io { kNone, kImportant };

  /// Loads the topology; with Io::kImportant also the PCI devices, bridges and OS devices that
  /// matter (NICs, GPUs, storage: HWLOC_TYPE_FILTER_KEEP_IMPORTANT). Throws SystemError.
  static HwlocTopology load(Io io);
  /// Loads an XML export (`lstopo --of xml`) instead of this host, e.g. in tests. Throws
  /// SystemError.
  static HwlocTopology load_xml(const std::string& path, Io io);

  hwloc_topology* get() const noexcept { return handle_.get(); }

 private:
  static HwlocTopology load_from(const std::string* xml, Io io);
  explicit HwlocTopology(hwloc_topology* topology) noexcept : handle_(topology) {}
  Handle<hwloc_topology*, destroy_topology> handle_;
};

/// A CPU or NUMA set as a list of OS indexes: "0-15,32-47" ("" on failure).
std::string bitmap_list(const hwloc_bitmap_s* set);

}  // namespace ibscope::topo
