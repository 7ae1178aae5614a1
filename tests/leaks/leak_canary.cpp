// A process that loses one allocation on purpose. check_main_commands.sh runs it first, with the
// same ASan/LSan settings and preloads as the commands, and requires LeakSanitizer to report it:
// a setting that blinds the leak check makes the test fail instead of pass.
#include <fmt/core.h>

#include <cstring>

int main() {
  constexpr std::size_t kLostBytes = 4096;
  char* volatile lost = new char[kLostBytes];
  std::memset(lost, 1, kLostBytes);
  lost = nullptr;  // the only pointer to the block: LeakSanitizer must call it a direct leak
  fmt::print("leak_canary: dropped the only pointer to {} bytes\n", kLostBytes);
  return 0;
}
