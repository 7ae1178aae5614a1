#pragma once
/// How every `ibscope` subcommand registers: a function adds the subcommand and its flags to the
/// CLI and returns a Command, which app.cpp runs when that subcommand is the one parsed. The
/// flags live where the function put them (its closure, or flags shared by the job commands).

#include <CLI/CLI.hpp>
#include <functional>

namespace ibscope::cli {

struct Command {
  CLI::App* app = nullptr;
  /// Runs the command after parsing; returns the exit status. Throws ibscope::Error.
  std::function<int()> run;
};

}  // namespace ibscope::cli
