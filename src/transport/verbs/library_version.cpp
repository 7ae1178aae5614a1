#include "ibscope/transport/verbs/library_version.hpp"

#include <link.h>

#include <filesystem>
#include <system_error>

namespace ibscope::verbs {

std::optional<std::string> version_from_library_path(std::string_view path) {
  constexpr std::string_view kStem = "libibverbs.so.";
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!name.starts_with(kStem) || name.size() == kStem.size()) return std::nullopt;
  return std::string(name.substr(kStem.size()));
}

namespace {

int find_ibverbs(dl_phdr_info* info, std::size_t, void* out) {
  const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (name.find("/libibverbs.so") == std::string_view::npos) return 0;
  *static_cast<std::string*>(out) = std::string(name);
  return 1;  // found: stop
}

}  // namespace

std::optional<std::string> loaded_library_version() noexcept {
  try {
    std::string loaded;
    ::dl_iterate_phdr(find_ibverbs, &loaded);
    if (loaded.empty()) return std::nullopt;
    // The loader names the object by its soname link (libibverbs.so.1); the file it points to
    // carries the full version.
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(loaded, ec);
    if (const auto v = version_from_library_path(ec ? loaded : real.string())) return v;
    return version_from_library_path(loaded);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace ibscope::verbs
