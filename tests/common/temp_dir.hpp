#pragma once
// A fresh directory under the system temp folder for one test, removed with everything in it.

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <system_error>

namespace ibscope::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "ibscope-test-results-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ibscope::test
