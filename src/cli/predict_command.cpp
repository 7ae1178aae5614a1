#include "ibscope/cli/offline_commands.hpp"

#include "ibscope/core/error.hpp"

namespace ibscope::cli {

// Placeholder while issue 6 is built: the subcommand exists and says it is not available yet.
OfflineCommand add_predict_command(CLI::App& app) {
  auto* sub = app.add_subcommand("predict", "(not available yet: issue 6)");
  return {sub, [] () -> int { throw UsageError("ibscope predict: not available in this build yet"); }};
}

}  // namespace ibscope::cli
