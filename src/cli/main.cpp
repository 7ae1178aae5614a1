#include <fmt/format.h>
#include "ibscope/build_info.hpp"
int main() { fmt::print("ibscope {}\n", ibscope::build::kVersion); }
