#include <fmt/format.h>

#include <deque>
#include <vector>

#include "ibscope/memory/copy_engine.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::memory {
namespace {

// Copies on one stream complete in order: an event per copy, polled oldest first.
class CudaCopyEngine final : public CopyEngine {
 public:
  std::uint64_t start(void* dst, const void* src, std::size_t bytes) override {
    gpu::copy_async(dst, src, bytes, stream_);
    gpu::Event event = take_event();
    event.record(stream_);
    in_flight_.push_back(std::move(event));
    return ++started_;
  }
  bool done(std::uint64_t ticket) override {
    while (finished_ < ticket && !in_flight_.empty() && in_flight_.front().ready()) {
      spare_.push_back(std::move(in_flight_.front()));
      in_flight_.pop_front();
      ++finished_;
    }
    return finished_ >= ticket;
  }
  BounceBuffer allocate_bounce(std::size_t bytes) override {
    auto owner = std::make_shared<gpu::PinnedHostMemory>(bytes);
    std::byte* data = owner->data();
    return BounceBuffer(std::move(owner), data, bytes);
  }
  const char* name() const noexcept override { return "cuda stream"; }

 private:
  gpu::Event take_event() {
    if (spare_.empty()) return gpu::Event();
    gpu::Event e = std::move(spare_.back());
    spare_.pop_back();
    return e;
  }
  gpu::Stream stream_;
  std::deque<gpu::Event> in_flight_;
  std::vector<gpu::Event> spare_;
  std::uint64_t started_ = 0, finished_ = 0;
};

class CudaSpace final : public MemorySpace {
 public:
  explicit CudaSpace(int ordinal) : ordinal_((gpu::set_device(ordinal), ordinal)) {
    const gpu::DeviceInfo info = gpu::device_info(ordinal_);
    description_ = fmt::format("cuda:{} ({}, {})", ordinal_, info.name, info.pci_bus_id);
  }
  MemKind kind() const noexcept override { return MemKind::kCuda; }
  std::string describe() const override { return description_; }
  SpaceBuffer allocate(std::size_t bytes) override {
    return SpaceBuffer(gpu::DeviceMemory(bytes, ordinal_));
  }
  void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
              std::size_t count) override {
    gpu::reduce_async(type, op, dst, a, b, count, stream_);
    stream_.synchronize();
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0) gpu::copy(dst, src, bytes);
  }
  void to_host(void* host_dst, const void* src, std::size_t bytes) override {
    copy(host_dst, src, bytes);
  }
  void from_host(void* dst, const void* host_src, std::size_t bytes) override {
    copy(dst, host_src, bytes);
  }
  std::unique_ptr<CopyEngine> make_copy_engine() override {
    gpu::set_device(ordinal_);
    return std::make_unique<CudaCopyEngine>();
  }

 private:
  int ordinal_;
  std::string description_;
  gpu::Stream stream_;
};

}  // namespace

std::shared_ptr<MemorySpace> make_cuda_space(int ordinal) {
  return std::make_shared<CudaSpace>(ordinal);
}

}  // namespace ibscope::memory
