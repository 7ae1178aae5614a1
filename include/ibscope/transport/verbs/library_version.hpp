#pragma once
/// Which libibverbs this process runs with: the version in the file name of the loaded shared
/// object (rdma-core installs libibverbs.so.1.<abi>.<rdma-core release>.0, e.g.
/// libibverbs.so.1.14.44.0 for rdma-core 44), read from the loader's list of loaded objects,
/// not from the headers ibscope was built against. Recorded in every results file
/// (environment.ibverbs_version) and shown in the report's table of runs.

#include <optional>
#include <string>
#include <string_view>

namespace ibscope::verbs {

/// Pure: the version from a loaded object's resolved path ("/usr/lib/x86_64-linux-gnu/
/// libibverbs.so.1.14.44.0" -> "1.14.44.0"); nullopt for another library, or a name with no
/// version after "libibverbs.so.".
std::optional<std::string> version_from_library_path(std::string_view path);

/// The version of the libibverbs loaded in this process (its path resolved through symlinks),
/// nullopt when none is loaded or its name carries no version. Never throws.
std::optional<std::string> loaded_library_version() noexcept;

}  // namespace ibscope::verbs
