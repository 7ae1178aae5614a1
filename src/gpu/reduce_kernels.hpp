#pragma once
// Private to src/gpu: the one entry point into reduce_kernels.cu, so that the host code
// (cuda_runtime.cpp, g++) formats errors and the nvcc-compiled file stays small.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "ibscope/core/datatype.hpp"

namespace ibscope::gpu::detail {

/// Enqueues dst[i] = a[i] op b[i] for i < count on `stream` (count > 0). Returns the launch's
/// status (cudaGetLastError), cudaSuccess when enqueued.
cudaError_t launch_reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
                          std::size_t count, cudaStream_t stream) noexcept;

}  // namespace ibscope::gpu::detail
