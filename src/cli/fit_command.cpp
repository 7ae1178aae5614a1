#include "ibscope/cli/offline_commands.hpp"

#include "ibscope/core/error.hpp"

namespace ibscope::cli {

// Placeholder while issue 6 is built: the subcommand exists and says it is not available yet.
OfflineCommand add_fit_command(CLI::App& app) {
  auto* sub = app.add_subcommand("fit", "(not available yet: issue 6)");
  return {sub, [] () -> int { throw UsageError("ibscope fit: not available in this build yet"); }};
}

}  // namespace ibscope::cli
