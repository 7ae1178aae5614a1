#include <fmt/format.h>

#include "ibscope/core/error.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::memory {

std::string_view name_of(MemKind kind) noexcept { return kind == MemKind::kHost ? "host" : "cuda"; }

MemKind parse_mem_kind(std::string_view text) {
  if (text == "host" || text == "H") return MemKind::kHost;
  if (text == "cuda" || text == "D" || text == "device") return MemKind::kCuda;
  throw UsageError(fmt::format("--mem '{}': expected host or cuda (or OSU's H / D)", text));
}

std::byte* SpaceBuffer::data() const noexcept {
  return std::visit([](const auto& m) { return m.data(); }, mem_);
}

std::size_t SpaceBuffer::size() const noexcept {
  return std::visit([](const auto& m) { return m.size(); }, mem_);
}

}  // namespace ibscope::memory
