// Replays fuzz inputs through a fuzz target without libFuzzer: the `fuzz/replay/<name>` tests
// of the normal build (any compiler, sanitizers when the build has them). Arguments are files
// or directories; every regular file of a directory (names starting with '.' skipped, sorted)
// is one input. An exception escaping the target is reported with the input's path and makes
// the exit status 1; a broken property aborts, as under libFuzzer.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(arg)) {
        if (entry.is_regular_file() && entry.path().filename().string().front() != '.') {
          files.push_back(entry.path());
        }
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(arg)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  int failures = 0;
  for (const auto& path : inputs) {
    const std::vector<std::uint8_t> data = read_file(path);
    try {
      // A heap block of exactly the input's size (a vector may have spare capacity), so that
      // ASan flags a read past the end as libFuzzer's own copy would.
      const auto exact = std::make_unique<std::uint8_t[]>(data.size() + (data.empty() ? 1 : 0));
      std::copy(data.begin(), data.end(), exact.get());
      LLVMFuzzerTestOneInput(exact.get(), data.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FAIL %s: uncaught exception: %s\n", path.c_str(), e.what());
      ++failures;
    } catch (...) {
      std::fprintf(stderr, "FAIL %s: uncaught non-standard exception\n", path.c_str());
      ++failures;
    }
  }
  std::printf("replayed %zu inputs, %d failed\n", inputs.size(), failures);
  return failures == 0 ? 0 : 1;
}
