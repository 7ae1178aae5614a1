#pragma once
/// Random text from the kernel's generator: job tokens, unique file names.

#include <cstddef>
#include <string>

namespace ibscope {

/// `n` random hex digits from getrandom(2). Throws SystemError.
std::string random_hex(std::size_t n);

}  // namespace ibscope
