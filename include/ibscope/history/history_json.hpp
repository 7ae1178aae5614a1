#pragma once
/// `ibscope history --json`: the answers of queries.hpp as one JSON document each (an array of
/// objects whose member names carry their units, as the tables' headers do).

#include <string>
#include <vector>

#include "ibscope/history/queries.hpp"

namespace ibscope::history {

std::string to_json(const std::vector<RunRecord>& runs);
std::string to_json(const std::vector<LinkRecord>& links);
std::string to_json(const std::vector<RowRecord>& rows);

}  // namespace ibscope::history
