// The CUDA runtime module in a build without CUDA (-DIBSCOPE_CUDA=OFF, or no toolkit at
// configure time; cmake/Cuda.cmake): every entry point exists so that callers need no #ifdef,
// and each one that would touch a GPU throws UsageError saying how to get a CUDA build.
// Objects can only be empty here, so their destructors and moves have nothing to free.

#include <utility>

#include "ibscope/core/error.hpp"
#include "ibscope/gpu/cuda.hpp"

namespace ibscope::gpu {
namespace {

[[noreturn]] void unavailable(const char* what) {
  throw UsageError(std::string(what) +
                   ": this ibscope was built without CUDA (no CUDA toolkit at configure time, or "
                   "-DIBSCOPE_CUDA=OFF); rebuild with the CUDA toolkit installed "
                   "(-DIBSCOPE_CUDA=ON) for --mem cuda");
}

}  // namespace

bool built_with_cuda() noexcept { return false; }

std::string runtime_version() { return {}; }

int device_count() { unavailable("CUDA device count"); }

DeviceInfo device_info(int /*ordinal*/) { unavailable("CUDA device info"); }

std::optional<std::uint64_t> current_device_free_bytes() noexcept { return std::nullopt; }

std::optional<int> device_by_pci_bus_id(const std::string& /*pci_bus_id*/) {
  unavailable("CUDA device lookup by PCI bus id");
}

void set_device(int /*ordinal*/) { unavailable("cudaSetDevice"); }

bool is_device_pointer(const void* /*ptr*/) noexcept { return false; }

DeviceMemory::DeviceMemory(std::size_t /*bytes*/, int /*device*/) {
  unavailable("CUDA device memory");
}
DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      device_(std::exchange(other.device_, -1)) {}
DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  device_ = std::exchange(other.device_, -1);
  return *this;
}
DeviceMemory::~DeviceMemory() = default;

PinnedHostMemory::PinnedHostMemory(std::size_t /*bytes*/) {
  unavailable("CUDA pinned host memory");
}
PinnedHostMemory::PinnedHostMemory(PinnedHostMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
PinnedHostMemory& PinnedHostMemory::operator=(PinnedHostMemory&& other) noexcept {
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  return *this;
}
PinnedHostMemory::~PinnedHostMemory() = default;

Stream::Stream() { unavailable("CUDA stream"); }
Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
Stream& Stream::operator=(Stream&& other) noexcept {
  stream_ = std::exchange(other.stream_, nullptr);
  return *this;
}
Stream::~Stream() = default;
void Stream::synchronize() { unavailable("CUDA stream synchronize"); }

Event::Event() { unavailable("CUDA event"); }
Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
Event& Event::operator=(Event&& other) noexcept {
  event_ = std::exchange(other.event_, nullptr);
  return *this;
}
Event::~Event() = default;
void Event::record(Stream& /*stream*/) { unavailable("CUDA event record"); }
bool Event::ready() { unavailable("CUDA event query"); }
void Event::synchronize() { unavailable("CUDA event synchronize"); }

void copy_async(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/, Stream& /*stream*/) {
  unavailable("CUDA copy");
}
void copy(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/) { unavailable("CUDA copy"); }

void reduce_async(DataType /*type*/, ReduceOp /*op*/, void* /*dst*/, const void* /*a*/,
                  const void* /*b*/, std::size_t /*count*/, Stream& /*stream*/) {
  unavailable("CUDA reduction kernel");
}

std::optional<DmabufHandle> export_dmabuf(const void* /*ptr*/, std::size_t /*bytes*/,
                                          std::string& /*why_not*/) {
  unavailable("dma-buf export of CUDA memory");
}

}  // namespace ibscope::gpu
