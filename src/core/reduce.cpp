#include "ibscope/core/reduce.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace ibscope {
namespace {

// Plain loops over contiguous arrays: compiled with -O3 (see src/CMakeLists.txt) they vectorise.
// Integer sums wrap (computed unsigned) instead of overflowing: timed in-place iterations keep
// summing the same buffer, and signed overflow would be undefined behaviour.
template <typename T>
T add(T x, T y) noexcept {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
  } else {
    return x + y;
  }
}

template <typename T>
void reduce_typed(ReduceOp op, T* dst, const T* a, const T* b, std::size_t n) noexcept {
  switch (op) {
    case ReduceOp::kSum:
      for (std::size_t i = 0; i < n; ++i) dst[i] = add(a[i], b[i]);
      break;
    case ReduceOp::kMin:
      for (std::size_t i = 0; i < n; ++i) dst[i] = a[i] < b[i] ? a[i] : b[i];
      break;
    case ReduceOp::kMax:
      for (std::size_t i = 0; i < n; ++i) dst[i] = a[i] > b[i] ? a[i] : b[i];
      break;
  }
}

template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
void reduce_16bit(ReduceOp op, std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b,
                  std::size_t n) noexcept {
  constexpr std::size_t kBlock = 256;
  float fa[kBlock], fb[kBlock];
  for (std::size_t base = 0; base < n; base += kBlock) {
    const std::size_t m = std::min(kBlock, n - base);
    for (std::size_t i = 0; i < m; ++i) {
      fa[i] = ToFloat(a[base + i]);
      fb[i] = ToFloat(b[base + i]);
    }
    reduce_typed(op, fa, fa, fb, m);
    for (std::size_t i = 0; i < m; ++i) dst[base + i] = FromFloat(fa[i]);
  }
}

}  // namespace

void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
            std::size_t count) noexcept {
  switch (type) {
    case DataType::kFloat32:
      return reduce_typed(op, static_cast<float*>(dst), static_cast<const float*>(a),
                          static_cast<const float*>(b), count);
    case DataType::kFloat64:
      return reduce_typed(op, static_cast<double*>(dst), static_cast<const double*>(a),
                          static_cast<const double*>(b), count);
    case DataType::kInt32:
      return reduce_typed(op, static_cast<std::int32_t*>(dst), static_cast<const std::int32_t*>(a),
                          static_cast<const std::int32_t*>(b), count);
    case DataType::kInt64:
      return reduce_typed(op, static_cast<std::int64_t*>(dst), static_cast<const std::int64_t*>(a),
                          static_cast<const std::int64_t*>(b), count);
    case DataType::kFloat16:
      return reduce_16bit<half_to_float, float_to_half>(
          op, static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(a),
          static_cast<const std::uint16_t*>(b), count);
    case DataType::kBFloat16:
      return reduce_16bit<bf16_to_float, float_to_bf16>(
          op, static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(a),
          static_cast<const std::uint16_t*>(b), count);
  }
}

}  // namespace ibscope
