// Atomic files (core/atomic_file.hpp) are durable: after the new name is linked (a results file)
// or renamed into place (a checkpoint, a textfile), the folder is fsynced, so that a crash of
// the host cannot lose the name of a file already reported written. Observed and failed below
// the real implementation, through core/file_api.hpp.

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "common/temp_dir.hpp"
#include "common/text_lines.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/file_api.hpp"

namespace {

namespace fs = std::filesystem;

// One fsync of a folder, as the FileApi saw it.
struct FolderFsync {
  ino_t inode = 0;
  std::vector<std::string> names;  ///< the folder's entries at the time of the call
};

// Records every fsync of a folder (fstat says the descriptor is one) and lets it through, or
// fails it with `fail_errno`.
class FolderFsyncSpy : public ibscope::FileApi {
 public:
  explicit FolderFsyncSpy(fs::path folder, int fail_errno = 0)
      : folder_(std::move(folder)), fail_errno_(fail_errno) {}

  int fsync(int fd) override {
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    if (!S_ISDIR(st.st_mode)) return FileApi::fsync(fd);
    FolderFsync seen{st.st_ino, {}};
    for (const auto& e : fs::directory_iterator(folder_)) {
      seen.names.push_back(e.path().filename().string());
    }
    std::sort(seen.names.begin(), seen.names.end());
    calls.push_back(std::move(seen));
    if (fail_errno_ != 0) {
      errno = fail_errno_;
      return -1;
    }
    return FileApi::fsync(fd);
  }

  std::vector<FolderFsync> calls;

 private:
  fs::path folder_;
  int fail_errno_;
};

ino_t inode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_ino;
}

}  // namespace

TEST_CASE("atomic files: the folder is fsynced once the new name is in it", "[atomic]") {
  ibscope::test::TempDir dir;
  FolderFsyncSpy spy(dir.path());
  ibscope::ScopedFileApi installed(spy);

  // A results file: link() of the flushed temp file, then the folder.
  ibscope::write_file_exclusive(dir.path() / "run.json", "{}\n");
  REQUIRE(spy.calls.size() == 1);
  CHECK(spy.calls[0].inode == inode_of(dir.path()));
  // Called after the link and after the temp name is gone: both are on disk.
  CHECK(spy.calls[0].names == std::vector<std::string>{"run.json"});

  // A replaced file (checkpoint, textfile): after the rename, the folder.
  ibscope::write_file_replacing(dir.path() / "run.json.partial", "1\n");
  ibscope::write_file_replacing(dir.path() / "run.json.partial", "2\n");
  REQUIRE(spy.calls.size() == 3);  // one per file written
  CHECK(spy.calls.back().inode == inode_of(dir.path()));
  CHECK(spy.calls.back().names == std::vector<std::string>{"run.json", "run.json.partial"});
  CHECK(ibscope::test::read_text_file(dir.path() / "run.json.partial") == "2\n");
}

TEST_CASE("atomic files: a folder that cannot be fsynced is a SystemError naming it", "[atomic]") {
  ibscope::test::TempDir dir;
  FolderFsyncSpy failing(dir.path(), EIO);
  ibscope::ScopedFileApi installed(failing);

  try {
    ibscope::write_file_exclusive(dir.path() / "run.json", "{}\n");
    FAIL("an unflushed folder went unreported");
  } catch (const ibscope::SystemError& e) {
    CHECK(e.errno_value() == EIO);
    CHECK_THAT(e.what(),
               Catch::Contains("folder " + dir.path().string()) && Catch::Contains("run.json"));
  }
  // Not reported written, so not left there either: a retry (another name) is safe.
  CHECK(fs::is_empty(dir.path()));

  try {
    ibscope::write_file_replacing(dir.path() / "metrics.prom", "x 1\n");
    FAIL("an unflushed folder went unreported");
  } catch (const ibscope::SystemError& e) {
    CHECK(e.errno_value() == EIO);
    CHECK_THAT(e.what(), Catch::Contains("folder " + dir.path().string()));
  }
}

TEST_CASE("atomic files: a file system that cannot fsync folders writes all the same", "[atomic]") {
  ibscope::test::TempDir dir;
  FolderFsyncSpy unsupported(dir.path(), EINVAL);  // as some FUSE file systems answer
  ibscope::ScopedFileApi installed(unsupported);
  ibscope::write_file_exclusive(dir.path() / "run.json", "{}\n");
  CHECK(unsupported.calls.size() == 1);
  CHECK(ibscope::test::read_text_file(dir.path() / "run.json") == "{}\n");
}
