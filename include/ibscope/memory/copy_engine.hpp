#pragma once
/// Asynchronous copies between a memory space and host bounce buffers: the copy half of a staged
/// transfer. A copy is started, gets a ticket, and is polled; copies complete in the order they
/// were started (one CUDA stream; the host engine completes them in order too).

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ibscope::memory {

/// Host memory a transport may send from and receive into: pinned (cudaHostAlloc) for a CUDA
/// engine, ordinary page-aligned memory for the host engine. Move-only.
class BounceBuffer {
 public:
  BounceBuffer() = default;
  BounceBuffer(std::shared_ptr<void> owner, std::byte* data, std::size_t bytes) noexcept
      : owner_(std::move(owner)), data_(data), size_(bytes) {}

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::shared_ptr<void> owner_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  /// Starts copying `bytes` from `src` to `dst` (one of them a bounce buffer); returns its
  /// ticket (increasing from 1).
  virtual std::uint64_t start(void* dst, const void* src, std::size_t bytes) = 0;
  /// True once the copy `ticket` (and every earlier one) has finished. Never blocks.
  virtual bool done(std::uint64_t ticket) = 0;
  /// A bounce buffer of at least `bytes`.
  virtual BounceBuffer allocate_bounce(std::size_t bytes) = 0;
  /// "cuda stream" / "host (deferred memcpy)", for labels and messages.
  virtual const char* name() const noexcept = 0;
};

/// The host stand-in: start() only records the copy; it is carried out, in order, by the first
/// done() that asks for it. A pipeline that used a buffer before its copy reported done would
/// see stale bytes, and the collectives' verification would count them: this is how the staging
/// logic is tested on machines without a GPU (and how `--mem host --mem-path staged` measures
/// what one extra copy per message costs).
std::unique_ptr<CopyEngine> make_host_copy_engine();

}  // namespace ibscope::memory
