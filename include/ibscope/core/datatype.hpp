#pragma once
/// Element types and reduction operators (the vocabulary of element arithmetic shared by the
/// host and GPU kernels, the memory spaces and the collectives), with their nccl-tests names.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ibscope {

enum class DataType { kFloat32, kFloat64, kInt32, kInt64, kFloat16, kBFloat16 };
enum class ReduceOp { kSum, kMin, kMax };

std::size_t size_of(DataType type) noexcept;
/// "float", "double", "int32", "int64", "half", "bfloat16" (nccl-tests spelling).
std::string_view name_of(DataType type) noexcept;
std::string_view name_of(ReduceOp op) noexcept;

/// Accepts the nccl-tests names and common aliases (fp32, f32, float32, fp16, bf16, ...).
/// Throws UsageError listing the valid names.
DataType parse_data_type(std::string_view text);
ReduceOp parse_reduce_op(std::string_view text);

/// All types / ops, for "-d all" and exhaustive tests.
inline constexpr DataType kAllDataTypes[] = {DataType::kFloat32, DataType::kFloat64,
                                             DataType::kInt32,   DataType::kInt64,
                                             DataType::kFloat16, DataType::kBFloat16};
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax};

/// IEEE half and bfloat16 conversions (round to nearest even).
float half_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_half(float f) noexcept;
float bf16_to_float(std::uint16_t b) noexcept;
std::uint16_t float_to_bf16(float f) noexcept;

}  // namespace ibscope
