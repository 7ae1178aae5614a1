#pragma once
// Line helpers shared by the test executables (unit, tsan, netns): header-only, so the
// ThreadSanitizer build, which compiles only the threaded parts, can use them too.

#include <sstream>
#include <string>
#include <vector>

namespace ibscope::test {

/// The lines of `text` that contain `needle`.
inline std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

}  // namespace ibscope::test
