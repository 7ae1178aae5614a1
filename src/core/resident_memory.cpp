#include "ibscope/core/resident_memory.hpp"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace ibscope {

std::optional<std::uint64_t> parse_kib_field(std::string_view text, std::string_view key) {
  std::size_t pos = text.starts_with(key) ? 0 : text.find(std::string("\n") + std::string(key));
  if (pos == std::string_view::npos) return std::nullopt;
  if (text[pos] == '\n') ++pos;
  pos += key.size();
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  std::uint64_t kib = 0;
  const auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), kib);
  if (ec != std::errc() || end == text.data() + pos) return std::nullopt;
  // The kernel always says kB and means KiB.
  if (std::string_view(end, static_cast<std::size_t>(text.data() + text.size() - end))
          .substr(0, 3) != " kB") {
    return std::nullopt;
  }
  if (kib > UINT64_MAX / 1024) return std::nullopt;
  return kib * 1024;
}

std::optional<std::uint64_t> parse_vm_rss_bytes(std::string_view text) {
  return parse_kib_field(text, "VmRSS:");
}

std::string read_proc_text(const char* path) noexcept {
  try {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  } catch (...) {
    return {};
  }
}

std::uint64_t resident_bytes() noexcept {
  return parse_vm_rss_bytes(read_proc_text("/proc/self/status")).value_or(0);
}

}  // namespace ibscope
