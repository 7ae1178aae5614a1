#pragma once
/// Comma lists on the command line (--sizes 8,1K,1M; -d float,half; --mem host,cuda): the pure
/// splitting, apart from the CLI11 flag definitions (cli/flags.hpp) so that it can be tested
/// and fuzzed without them.

#include <string>
#include <vector>

namespace ibscope::cli {

/// "a,b,,c" -> {"a", "b", "c"}; a text without items ("", ",,") -> {text}. Never throws but
/// for allocation.
std::vector<std::string> split_list(const std::string& text);

}  // namespace ibscope::cli
