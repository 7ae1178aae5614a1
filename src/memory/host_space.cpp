#include <cstring>

#include "ibscope/core/reduce.hpp"
#include "ibscope/memory/copy_engine.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::memory {
namespace {

class HostSpace final : public MemorySpace {
 public:
  MemKind kind() const noexcept override { return MemKind::kHost; }
  std::string describe() const override { return "host"; }
  SpaceBuffer allocate(std::size_t bytes) override { return SpaceBuffer(AlignedBuffer(bytes)); }
  void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
              std::size_t count) override {
    ibscope::reduce(type, op, dst, a, b, count);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void to_host(void* host_dst, const void* src, std::size_t bytes) override {
    copy(host_dst, src, bytes);
  }
  void from_host(void* dst, const void* host_src, std::size_t bytes) override {
    copy(dst, host_src, bytes);
  }
  std::unique_ptr<CopyEngine> make_copy_engine() override { return make_host_copy_engine(); }
};

}  // namespace

std::shared_ptr<MemorySpace> host_space() {
  static const std::shared_ptr<MemorySpace> space = std::make_shared<HostSpace>();
  return space;
}

}  // namespace ibscope::memory
