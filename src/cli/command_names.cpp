#include "ibscope/cli/command_names.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <numeric>

#include "ibscope/core/error.hpp"

namespace ibscope::cli {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(std::string_view typed,
                                        std::span<const std::string> names) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& name : names) {
    const std::size_t d = edit_distance(typed, name);
    const bool near =
        (d <= 2 && 2 * d < typed.size()) || (!typed.empty() && name.starts_with(typed));
    if (near && (!best || d < best_distance)) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    for (const std::string& alias : sub->get_aliases()) names.push_back(alias);
  }
  return names;
}

void check_command_name(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1] == nullptr) return;
  const std::string_view typed = argv[1];
  if (typed.empty() || typed.front() == '-') return;
  const std::vector<std::string> names = command_names(app);
  if (std::find(names.begin(), names.end(), typed) != names.end()) return;
  const auto nearest = nearest_name(typed, names);
  throw UsageError(fmt::format("unknown command '{}'{}; 'ibscope --help' lists the commands", typed,
                               nearest ? fmt::format(" (did you mean '{}'?)", *nearest) : ""));
}

}  // namespace ibscope::cli
