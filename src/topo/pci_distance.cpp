#include "ibscope/topo/pci_distance.hpp"

#include <algorithm>
#include <array>

namespace ibscope::topo {
namespace {

constexpr std::array<std::pair<PathClass, std::string_view>, 6> kNames = {{
    {PathClass::kPix, "PIX"},
    {PathClass::kPxb, "PXB"},
    {PathClass::kPhb, "PHB"},
    {PathClass::kNode, "NODE"},
    {PathClass::kSys, "SYS"},
    {PathClass::kUnknown, "?"},
}};

}  // namespace

std::string_view to_string(PathClass c) noexcept {
  for (const auto& [value, name] : kNames) {
    if (value == c) return name;
  }
  return "?";
}

std::optional<PathClass> path_class_from_string(std::string_view text) noexcept {
  for (const auto& [value, name] : kNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

PathClass classify(const PciLocation& a, const PciLocation& b) {
  if (!a.path.empty() && a.path.host_bridge == b.path.host_bridge) {
    const auto& pa = a.path.bridges;
    const auto& pb = b.path.bridges;
    const auto mismatch = std::mismatch(pa.begin(), pa.end(), pb.begin(), pb.end());
    const auto common = static_cast<std::size_t>(mismatch.first - pa.begin());
    // Paths that meet only at the host bridge go through the root complex.
    if (common == 0) return PathClass::kPhb;
    // Below the bridge where they meet (a switch's upstream port), one more bridge on each side
    // is that switch's downstream port: still one switch. Anything deeper is another switch.
    const std::size_t below_a = pa.size() - common;
    const std::size_t below_b = pb.size() - common;
    return below_a <= 1 && below_b <= 1 ? PathClass::kPix : PathClass::kPxb;
  }
  if (a.numa_node < 0 || b.numa_node < 0) return PathClass::kUnknown;
  return a.numa_node == b.numa_node ? PathClass::kNode : PathClass::kSys;
}

}  // namespace ibscope::topo
