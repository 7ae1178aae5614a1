#include "ibscope/cli/list_args.hpp"

#include <sstream>

namespace ibscope::cli {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  if (out.empty()) out.push_back(s);
  return out;
}

}  // namespace ibscope::cli
