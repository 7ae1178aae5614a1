#include <cstring>
#include <deque>

#include "ibscope/core/aligned_buffer.hpp"
#include "ibscope/memory/copy_engine.hpp"

namespace ibscope::memory {
namespace {

class HostCopyEngine final : public CopyEngine {
 public:
  std::uint64_t start(void* dst, const void* src, std::size_t bytes) override {
    pending_.push_back({dst, src, bytes});
    return ++started_;
  }
  bool done(std::uint64_t ticket) override {
    while (finished_ < ticket && !pending_.empty()) {
      const Copy& c = pending_.front();
      if (c.bytes > 0) std::memcpy(c.dst, c.src, c.bytes);
      pending_.pop_front();
      ++finished_;
    }
    return finished_ >= ticket;
  }
  BounceBuffer allocate_bounce(std::size_t bytes) override {
    auto owner = std::make_shared<AlignedBuffer>(bytes);
    std::byte* data = owner->data();
    return BounceBuffer(std::move(owner), data, bytes);
  }
  const char* name() const noexcept override { return "host (deferred memcpy)"; }

 private:
  struct Copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  std::deque<Copy> pending_;
  std::uint64_t started_ = 0, finished_ = 0;
};

}  // namespace

std::unique_ptr<CopyEngine> make_host_copy_engine() { return std::make_unique<HostCopyEngine>(); }

}  // namespace ibscope::memory
