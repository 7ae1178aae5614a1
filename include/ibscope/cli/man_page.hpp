#pragma once
/// The man page, generated from the CLI itself so that it says what --help says: `ibscope
/// help-man` prints it, the build writes it to ibscope.1 (installed to share/man/man1).

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace ibscope::cli {

/// man(7) roff for `app`: NAME and DESCRIPTION from its description, SYNOPSIS, OPTIONS (its
/// own), COMMANDS (every subcommand not hidden: description, aliases, positionals and options
/// with their types and defaults, and its footer's examples), EXAMPLES (the app's footer),
/// EXIT STATUS (the "Exit status:" paragraph that ends the app's and each subcommand's
/// footer), SEE ALSO. `version` goes into the title line ("ibscope 0.1.0").
std::string man_page(const CLI::App& app, std::string_view version);

/// Text escaped for roff: backslashes, minus signs, and a leading '.' or '\''.
std::string roff_escape(std::string_view text);

}  // namespace ibscope::cli
