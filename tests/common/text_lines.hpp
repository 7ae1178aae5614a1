#pragma once
// Line helpers shared by the test executables (unit, tsan, netns): header-only, so the
// ThreadSanitizer build, which compiles only the threaded parts, can use them too.

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace ibscope::test {

/// Every line of `text`, without the newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The whole content of the file at `path`, read as bytes; "" when it cannot be opened.
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

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
