#include "ibscope/topo/rdma_sysfs.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <string>

namespace ibscope::topo {

std::string sysfs_first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

PortState parse_port_state(std::string_view text) noexcept {
  if (const auto colon = text.find(": "); colon != std::string_view::npos) {
    text.remove_prefix(colon + 2);  // sysfs: "4: ACTIVE"
  }
  std::array<char, 32> buffer{};
  if (text.size() > buffer.size()) return PortState::kUnknown;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    buffer[i] = c == ' ' ? '_' : static_cast<char>(std::toupper(c));
  }
  const std::string_view word(buffer.data(), text.size());
  if (word == "ACTIVE") return PortState::kActive;
  if (word == "DOWN") return PortState::kDown;
  if (word == "INIT") return PortState::kInit;
  if (word == "ARMED") return PortState::kArmed;
  if (word == "ACTIVE_DEFER") return PortState::kActiveDefer;
  if (word == "NOP" || word == "NO_STATE_CHANGE_(NOP)") return PortState::kNop;
  return PortState::kUnknown;
}

std::string_view name_of(PortState state) noexcept {
  switch (state) {
    case PortState::kUnknown:
      return "UNKNOWN";
    case PortState::kNop:
      return "NOP";
    case PortState::kDown:
      return "DOWN";
    case PortState::kInit:
      return "INIT";
    case PortState::kArmed:
      return "ARMED";
    case PortState::kActive:
      return "ACTIVE";
    case PortState::kActiveDefer:
      return "ACTIVE_DEFER";
  }
  return "UNKNOWN";
}

RdmaSysfs::RdmaSysfs(fs::path sysfs_root)
    : class_dir_(std::move(sysfs_root) / "class/infiniband") {}

std::vector<std::string> RdmaSysfs::device_names() const { return entries(class_dir_); }

bool RdmaSysfs::has_devices() const {
  std::error_code ec;
  const fs::directory_iterator it(class_dir_, ec);
  return !ec && it != fs::directory_iterator();
}

fs::path RdmaSysfs::parent_device(std::string_view device) const {
  return class_dir_ / device / "device";
}

std::string RdmaSysfs::port_attribute(std::string_view device, int port,
                                      std::string_view name) const {
  const std::string line =
      sysfs_first_line(class_dir_ / device / "ports" / std::to_string(port) / name);
  const auto colon = line.find(": ");  // "4: ACTIVE", "3: Disabled"
  return colon == std::string::npos ? line : line.substr(colon + 2);
}

PortState RdmaSysfs::port_state(std::string_view device, int port) const {
  return parse_port_state(port_attribute(device, port, "state"));
}

std::string RdmaSysfs::phys_state(std::string_view device, int port) const {
  return port_attribute(device, port, "phys_state");
}

std::string RdmaSysfs::netdev(std::string_view device) const {
  // RoCE: the netdev of GID 0; InfiniBand: the IPoIB interface of the PCI function.
  const std::string ndev = sysfs_first_line(class_dir_ / device / "ports/1/gid_attrs/ndevs/0");
  if (!ndev.empty()) return ndev;
  const auto names = entries(class_dir_ / device / "device/net");
  return names.empty() ? std::string() : names.front();
}

}  // namespace ibscope::topo
