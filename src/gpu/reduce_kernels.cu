// Element-wise reduction kernels on device memory: dst[i] = a[i] op b[i], for every DataType x
// ReduceOp (6 x 3 instantiations of one template). The results must equal the host kernels in
// src/core/reduce.cpp bit for bit (tests/gpu/test_cuda_kernels.cpp compares them), so:
//   - integer sums wrap (computed unsigned), like the host;
//   - min/max are the host's `a < b ? a : b` / `a > b ? a : b`, not fminf/fmaxf, so ties
//     (+0/-0) and NaN pick the same operand;
//   - half and bfloat16 are widened to float, combined, and rounded once to nearest even; a
//     NaN result is written as the host writes it (quiet NaN, sign kept);
//   - no fast-math: float adds keep denormals, as on the host.
// Cost: one pass, reading 2 x count x size and writing count x size bytes; memory bound.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "reduce_kernels.hpp"

namespace ibscope::gpu::detail {
namespace {

constexpr unsigned kThreadsPerBlock = 256;
// Enough resident blocks for any current GPU (H200: 132 SMs x 8 blocks of 256); the loop is
// grid-stride, so larger inputs only mean more iterations per thread.
constexpr std::size_t kMaxBlocks = 2048;
constexpr std::size_t kVectorBytes = 16;

// How a type is stored and in which type it is combined.
template <typename T>
struct Plain {
  using Storage = T;
  using Compute = T;
  __device__ static T load(T x) { return x; }
  __device__ static T store(T x) { return x; }
};

struct Half {
  using Storage = std::uint16_t;
  using Compute = float;
  __device__ static float load(std::uint16_t x) { return __half2float(__ushort_as_half(x)); }
  __device__ static std::uint16_t store(float f) {
    if (isnan(f)) {  // the host's float_to_half: sign | quiet NaN
      return static_cast<std::uint16_t>(((__float_as_uint(f) >> 16) & 0x8000u) | 0x7e00u);
    }
    return __half_as_ushort(__float2half_rn(f));
  }
};

struct BFloat16 {
  using Storage = std::uint16_t;
  using Compute = float;
  __device__ static float load(std::uint16_t x) {
    return __bfloat162float(__ushort_as_bfloat16(x));
  }
  __device__ static std::uint16_t store(float f) {
    if (isnan(f)) {  // the host's float_to_bf16: top half, quiet bit set
      return static_cast<std::uint16_t>((__float_as_uint(f) >> 16) | 0x40u);
    }
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
  }
};

template <ReduceOp Op, typename V>
__device__ __forceinline__ V combine(V x, V y) {
  if constexpr (Op == ReduceOp::kSum) {
    if constexpr (std::is_integral_v<V>) {
      using U = std::make_unsigned_t<V>;
      return static_cast<V>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
    } else {
      return x + y;
    }
  } else if constexpr (Op == ReduceOp::kMin) {
    return x < y ? x : y;
  } else {
    return x > y ? x : y;
  }
}

template <typename S>
struct alignas(kVectorBytes) Pack {
  static constexpr std::size_t kCount = kVectorBytes / sizeof(S);
  S v[kCount];
};

template <typename C, ReduceOp Op>
__device__ __forceinline__ typename C::Storage apply(typename C::Storage x, typename C::Storage y) {
  return C::store(combine<Op>(C::load(x), C::load(y)));
}

// dst may be a or b: every element is read before it is written, by the same thread.
// The first `packs` x Pack::kCount elements go through 16-byte loads and stores (the host
// passes packs = 0 unless all three pointers are 16-byte aligned); the rest one by one.
template <typename C, ReduceOp Op>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_kernel(typename C::Storage* dst, const typename C::Storage* a,
                  const typename C::Storage* b, std::size_t count, std::size_t packs) {
  using S = typename C::Storage;
  using P = Pack<S>;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const P* pa = reinterpret_cast<const P*>(a);
  const P* pb = reinterpret_cast<const P*>(b);
  P* pd = reinterpret_cast<P*>(dst);
  for (std::size_t i = first; i < packs; i += stride) {
    const P x = pa[i];
    const P y = pb[i];
    P r;
#pragma unroll
    for (std::size_t k = 0; k < P::kCount; ++k) r.v[k] = apply<C, Op>(x.v[k], y.v[k]);
    pd[i] = r;
  }
  for (std::size_t i = packs * P::kCount + first; i < count; i += stride) {
    dst[i] = apply<C, Op>(a[i], b[i]);
  }
}

bool aligned(const void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) % kVectorBytes == 0;
}

template <typename C, ReduceOp Op>
void launch(void* dst, const void* a, const void* b, std::size_t count, cudaStream_t stream) {
  using S = typename C::Storage;
  const std::size_t packs = aligned(dst) && aligned(a) && aligned(b) ? count / Pack<S>::kCount : 0;
  const std::size_t items = packs > 0 ? packs : count;
  std::size_t blocks = (items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  reduce_kernel<C, Op><<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(
      static_cast<S*>(dst), static_cast<const S*>(a), static_cast<const S*>(b), count, packs);
}

template <typename C>
void launch_op(ReduceOp op, void* dst, const void* a, const void* b, std::size_t count,
               cudaStream_t stream) {
  switch (op) {
    case ReduceOp::kSum:
      return launch<C, ReduceOp::kSum>(dst, a, b, count, stream);
    case ReduceOp::kMin:
      return launch<C, ReduceOp::kMin>(dst, a, b, count, stream);
    case ReduceOp::kMax:
      return launch<C, ReduceOp::kMax>(dst, a, b, count, stream);
  }
}

}  // namespace

cudaError_t launch_reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
                          std::size_t count, cudaStream_t stream) noexcept {
  switch (type) {
    case DataType::kFloat32:
      launch_op<Plain<float>>(op, dst, a, b, count, stream);
      break;
    case DataType::kFloat64:
      launch_op<Plain<double>>(op, dst, a, b, count, stream);
      break;
    case DataType::kInt32:
      launch_op<Plain<std::int32_t>>(op, dst, a, b, count, stream);
      break;
    case DataType::kInt64:
      launch_op<Plain<std::int64_t>>(op, dst, a, b, count, stream);
      break;
    case DataType::kFloat16:
      launch_op<Half>(op, dst, a, b, count, stream);
      break;
    case DataType::kBFloat16:
      launch_op<BFloat16>(op, dst, a, b, count, stream);
      break;
  }
  return cudaGetLastError();
}

}  // namespace ibscope::gpu::detail
