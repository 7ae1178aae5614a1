#pragma once
/// Test fault hook IBSCOPE_FAULT_DISK_FULL=<first>[:<last>]: every file write of the process
/// (rank 0's checkpoint and results file; whatever core/atomic_file.hpp writes) fails with
/// ENOSPC, as on a full disk, from the checkpoint of the job's <first>-th batch of rows through
/// that of its <last>-th; without <last>, until the run has written its results, which then
/// fail too. The failure comes from below the real implementation (core/file_api.hpp), so the
/// checkpoint's retry and the end-of-run report are the production code. With
/// IBSCOPE_FAULT_CRASH_RANK (job/crash_hook.hpp), the crash tests' way to see what a full disk
/// costs (docs/fault-hooks.md); named in the banner and the results like every IBSCOPE_FAULT_*.

#include <memory>
#include <optional>
#include <string_view>

#include "ibscope/core/file_api.hpp"

namespace ibscope::job {

inline constexpr std::string_view kDiskFullHookVariable = "IBSCOPE_FAULT_DISK_FULL";

/// The batches whose checkpoints fail.
struct DiskFullWindow {
  int first = 1;  ///< >= 1
  int last = 0;   ///< >= first, or 0: until the run ends

  bool covers(int batch) const noexcept { return batch >= first && (last == 0 || batch <= last); }
};

/// Parses the variable's value. Throws UsageError naming the variable and the expected form.
DiskFullWindow parse_disk_full_hook(std::string_view value);

/// The hook in force: fills the "disk" when a batch in the window is recorded, frees it after.
class DiskFullHook {
 public:
  explicit DiskFullHook(DiskFullWindow window) : window_(window) {}
  DiskFullHook(const DiskFullHook&) = delete;
  DiskFullHook& operator=(const DiskFullHook&) = delete;

  /// This process's hook; nullptr when the variable is not set. Throws UsageError.
  static std::unique_ptr<DiskFullHook> from_env();

  /// Called with each batch's number before its checkpoint is written.
  void at_batch(int batch);
  bool full() const noexcept { return installed_.has_value(); }

 private:
  class FullDisk : public FileApi {
   public:
    ssize_t write(int fd, const void* data, std::size_t bytes) override;
  };
  DiskFullWindow window_;
  FullDisk full_disk_;
  std::optional<ScopedFileApi> installed_;
};

}  // namespace ibscope::job
