#pragma once
/// Subcommands that need no job (no ranks, never the network; model/, output/): `ibscope
/// fit`, `ibscope predict`, `ibscope model`, `ibscope report`, `ibscope compare`, `ibscope
/// history`, `ibscope export-prometheus`, `ibscope baseline`
/// (acceptance results as Prometheus metrics) and the hidden `ibscope help-man` (the man
/// page, from this same CLI). Each adds itself to the CLI and returns what to run when it was
/// chosen (cli/command.hpp); its flags live in the returned closure.

#include <CLI/CLI.hpp>

#include "ibscope/cli/command.hpp"

namespace ibscope::cli {

Command add_fit_command(CLI::App& app);      ///< src/cli/fit_command.cpp
Command add_predict_command(CLI::App& app);  ///< src/cli/predict_command.cpp
Command add_model_command(CLI::App& app);    ///< src/cli/model_command.cpp
Command add_report_command(CLI::App& app);   ///< src/cli/report_command.cpp
Command add_compare_command(CLI::App& app);  ///< src/cli/compare_command.cpp
Command add_history_command(CLI::App& app);  ///< src/cli/history_command.cpp
/// src/cli/baseline_command.cpp: a baseline of several results files (docs/baselines.md)
Command add_baseline_command(CLI::App& app);
/// src/cli/export_prometheus_command.cpp
Command add_export_prometheus_command(CLI::App& app);
/// src/cli/man_page.cpp: prints (or -o writes) the man page of `app`, walked when it runs, so
/// every subcommand is in it; hidden from --help.
Command add_man_command(CLI::App& app);

}  // namespace ibscope::cli
