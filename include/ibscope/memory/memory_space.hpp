#pragma once
/// Where a measurement's buffers live (host or CUDA device memory) and the few operations the
/// collectives need on them: allocate, reduce, copy within the space, and copy to and from host
/// memory (for filling and verifying). One interface, so that an algorithm's code is the same
/// for host and GPU buffers; which one runs is chosen once per sweep (--mem).

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "ibscope/core/aligned_buffer.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "ibscope/memory/mem_kind.hpp"
#include "ibscope/memory/shm_segment.hpp"

namespace ibscope::memory {

class CopyEngine;

/// Memory of one space: host (page-aligned, touched; or a shared segment that the ranks of one
/// host map, transport/intra_host) or device (cudaMalloc). Move-only.
class SpaceBuffer {
 public:
  SpaceBuffer() = default;
  explicit SpaceBuffer(AlignedBuffer host) noexcept : mem_(std::move(host)) {}
  explicit SpaceBuffer(gpu::DeviceMemory device) noexcept : mem_(std::move(device)) {}
  explicit SpaceBuffer(ShmSegment shared) noexcept : mem_(std::move(shared)) {}

  std::byte* data() const noexcept;
  std::size_t size() const noexcept;

 private:
  std::variant<AlignedBuffer, gpu::DeviceMemory, ShmSegment> mem_;
};

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;

  virtual MemKind kind() const noexcept = 0;
  /// "host", or "cuda:0 (NVIDIA H200, 0000:17:00.0)".
  virtual std::string describe() const = 0;

  /// `bytes` of this space's memory (0 allowed). Throws naming the size when it cannot.
  virtual SpaceBuffer allocate(std::size_t bytes) = 0;
  /// dst[i] = a[i] op b[i], all three in this space; complete on return.
  virtual void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
                      std::size_t count) = 0;
  /// Copies within this space (non-overlapping); complete on return.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  /// Copies between this space and ordinary host memory; complete on return.
  virtual void to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void from_host(void* dst, const void* host_src, std::size_t bytes) = 0;

  /// An engine that copies between this space and pinned host bounce buffers asynchronously:
  /// what a staged transfer (transport/ucx/staged_transfer) moves messages with.
  virtual std::unique_ptr<CopyEngine> make_copy_engine() = 0;
};

/// Host memory; reductions by the host kernels (core/reduce).
std::shared_ptr<MemorySpace> host_space();

/// Device memory on CUDA device `ordinal` (made current for this thread), reductions by CUDA
/// kernels on the space's stream. Throws what gpu:: throws: UsageError in a build without
/// CUDA, Error(kSystem) naming the call when there is no driver or device.
std::shared_ptr<MemorySpace> make_cuda_space(int ordinal);

}  // namespace ibscope::memory
