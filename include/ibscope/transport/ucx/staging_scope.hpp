#pragma once
/// Undoes a communicator's staging when a scope ends: whatever set_staging() asked for inside the
/// scope (bounce buffers, fragmenting) is reset to plain sends and receives on exit, so that a
/// communicator reused by the next body (`ibscope run`) starts unstaged.

#include "ibscope/transport/ucx/comm.hpp"

namespace ibscope::ucx {

class StagingScope {
 public:
  /// Borrows `comm`, which must outlive the scope. Changes nothing until the scope ends.
  explicit StagingScope(Comm& comm) noexcept : comm_(comm) {}
  /// Resets `comm` to no staging. noexcept: a default StagingConfig has no engine, so
  /// set_staging allocates nothing and cannot throw.
  ~StagingScope() noexcept { comm_.set_staging({}); }
  StagingScope(const StagingScope&) = delete;
  StagingScope& operator=(const StagingScope&) = delete;

 private:
  Comm& comm_;
};

}  // namespace ibscope::ucx
