#pragma once
/// A results document's rows as CSV (`--format csv`): a header per section, one line per row,
/// raw samples omitted; the topology's hosts and NICs last.

#include <filesystem>
#include <string>

#include "ibscope/results/document.hpp"

namespace ibscope::output {

std::string results_csv(const results::Document& doc);
/// results_csv() written beside the results file (same name, .csv), exclusively. Returns the
/// path. Throws SystemError.
std::filesystem::path write_results_csv(const results::Document& doc,
                                        const std::filesystem::path& json_path);

}  // namespace ibscope::output
