#include "ibscope/job/disk_full_hook.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"

namespace ibscope::job {
namespace {

int parse_batch(std::string_view text, std::string_view value) {
  return parse_hook_integer(kDiskFullHookVariable, value, text, 1,
                            "<first>[:<last>], batches counted from 1");
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

}  // namespace ibscope::job
