#pragma once
/// A mistyped command (`ibscope allreduc`): named as unknown, the nearest command suggested, exit
/// 2, before CLI11 parses anything (it would say "A subcommand is required", and print the main
/// help with exit 0 for `ibscope allreduc --help`). Pure, apart from the CLI11 app it reads.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace ibscope::cli {

/// Levenshtein distance (insertions, deletions, substitutions; each costs 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The name among `names` nearest to `typed`, when it is near enough to be a typo: at most 2
/// edits and fewer than half of `typed`'s length, or `typed` a prefix of it; the first on a tie.
std::optional<std::string> nearest_name(std::string_view typed, std::span<const std::string> names);

/// Every subcommand's name and alias of `app`.
std::vector<std::string> command_names(const CLI::App& app);

/// Throws UsageError "unknown command 'allreduc' (did you mean 'allreduce'? ...)" when argv[1]
/// is not an option and not a command of `app`; nothing otherwise.
void check_command_name(const CLI::App& app, int argc, char** argv);

}  // namespace ibscope::cli
