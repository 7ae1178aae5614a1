#pragma once
/// Examples and exit status at the end of every subcommand's --help, and so in the man page
/// (cli/man_page.hpp), which is generated from the same CLI. The collectives' examples are
/// their descriptors' (collectives/descriptor.hpp); the text of the other subcommands that
/// app.cpp defines lives in help_footers.cpp; a subcommand that sets its own footer (fit,
/// predict, model, export-prometheus) keeps it and gets an "Exit status:" line if it lacks one.
/// (CLI11 copies the app's footer into each subcommand; that copy is replaced.)

#include <CLI/CLI.hpp>

namespace ibscope::cli {

/// Adds the footers to the subcommands of `app`. Call once, after every subcommand was added.
void add_help_footers(CLI::App& app);

}  // namespace ibscope::cli
