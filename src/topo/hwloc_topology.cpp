#include "ibscope/topo/hwloc_topology.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "ibscope/core/error.hpp"

namespace ibscope::topo {

void destroy_topology(hwloc_topology* topology) noexcept { hwloc_topology_destroy(topology); }

HwlocTopology HwlocTopology::load_from(const std::string* xml, Io io) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw SystemError("hwloc_topology_init", errno);
  HwlocTopology topology(raw);
  if (xml != nullptr && hwloc_topology_set_xml(raw, xml->c_str()) != 0) {
    throw SystemError(fmt::format("hwloc cannot read the XML topology {}", *xml), errno);
  }
  if (io == Io::kImportant &&
      hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    throw SystemError("hwloc_topology_set_io_types_filter", errno);
  }
  if (hwloc_topology_load(raw) != 0) throw SystemError("hwloc_topology_load", errno);
  return topology;
}

HwlocTopology HwlocTopology::load(Io io) { return load_from(nullptr, io); }

HwlocTopology HwlocTopology::load_xml(const std::string& path, Io io) {
  return load_from(&path, io);
}

std::string bitmap_list(const hwloc_bitmap_s* set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return {};
  const std::unique_ptr<char, decltype(&std::free)> owned(text, &std::free);
  return text;
}

}  // namespace ibscope::topo
