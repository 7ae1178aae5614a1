#pragma once
/// Element-wise reduction kernels on host memory: dst[i] = a[i] op b[i]. dst may be the same
/// buffer as a or b (not a partial overlap). Half and bfloat16 are computed in float and
/// rounded once per step (round to nearest even), as GPU collectives do.

#include <cstddef>

#include "ibscope/core/datatype.hpp"

namespace ibscope {

void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
            std::size_t count) noexcept;

}  // namespace ibscope
