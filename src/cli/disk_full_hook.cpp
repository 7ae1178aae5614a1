#include "ibscope/cli/disk_full_hook.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "ibscope/core/error.hpp"

namespace ibscope::cli {
namespace {

int parse_batch(std::string_view text, std::string_view value) {
  const std::string s(text);
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || v < 1) {
    throw UsageError(fmt::format("{}='{}': expected <first>[:<last>], batches counted from 1",
                                 kDiskFullHookVariable, value));
  }
  return v;
}

}  // namespace

DiskFullWindow parse_disk_full_hook(std::string_view value) {
  const auto colon = value.find(':');
  DiskFullWindow w;
  w.first = parse_batch(value.substr(0, colon), value);
  if (colon != std::string_view::npos) {
    w.last = parse_batch(value.substr(colon + 1), value);
    if (w.last < w.first) {
      throw UsageError(
          fmt::format("{}='{}': <last> is before <first>", kDiskFullHookVariable, value));
    }
  }
  return w;
}

std::unique_ptr<DiskFullHook> DiskFullHook::from_env() {
  const char* v = std::getenv(std::string(kDiskFullHookVariable).c_str());
  if (v == nullptr) return nullptr;
  return std::make_unique<DiskFullHook>(parse_disk_full_hook(v));
}

void DiskFullHook::at_batch(int batch) {
  if (window_.covers(batch)) {
    if (!installed_) installed_.emplace(full_disk_);
  } else {
    installed_.reset();
  }
}

ssize_t DiskFullHook::FullDisk::write(int, const void*, std::size_t) {
  errno = ENOSPC;
  return -1;
}

}  // namespace ibscope::cli
