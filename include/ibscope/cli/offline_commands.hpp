#pragma once
/// Subcommands that read results files only, never the network (model/, output/): `ibscope
/// fit`, `ibscope predict`, `ibscope model`, `ibscope report`. Each adds itself to the CLI and
/// returns what to run when it was chosen; its flags live in the returned closure.

#include <CLI/CLI.hpp>

#include <functional>

namespace ibscope::cli {

struct OfflineCommand {
  CLI::App* app = nullptr;
  /// Runs the command after parsing; returns the exit status. Throws ibscope::Error.
  std::function<int()> run;
};

OfflineCommand add_fit_command(CLI::App& app);      ///< src/cli/fit_command.cpp
OfflineCommand add_predict_command(CLI::App& app);  ///< src/cli/predict_command.cpp
OfflineCommand add_model_command(CLI::App& app);    ///< src/cli/model_command.cpp
OfflineCommand add_report_command(CLI::App& app);   ///< src/cli/report_command.cpp

}  // namespace ibscope::cli
