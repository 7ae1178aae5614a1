#pragma once
/// CSV field quoting for every CSV ibscope writes.

#include <string>
#include <string_view>

namespace ibscope::output {

/// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled; any other
/// field is returned as it is.
std::string csv_field(std::string_view s);

}  // namespace ibscope::output
