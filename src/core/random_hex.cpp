#include "ibscope/core/random_hex.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>

#include "ibscope/core/error.hpp"

namespace ibscope {

std::string random_hex(std::size_t n) {
  std::string hex;
  while (hex.size() < n) {
    unsigned char raw[16];
    std::size_t got = 0;
    while (got < sizeof(raw)) {
      const ssize_t r = ::getrandom(raw + got, sizeof(raw) - got, 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        throw SystemError("getrandom", errno);
      }
      got += static_cast<std::size_t>(r);
    }
    for (unsigned char b : raw) hex += fmt::format("{:02x}", b);
  }
  hex.resize(n);
  return hex;
}

}  // namespace ibscope
