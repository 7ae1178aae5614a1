#include "ibscope/collectives/harness/verify.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace ibscope {
namespace {

// Largest integer every partial sum must stay below to be exact in the type.
double exact_integer_limit(DataType type) {
  switch (type) {
    case DataType::kBFloat16:
      return 256;
    case DataType::kFloat16:
      return 2048;
    case DataType::kFloat32:
      return 16777216;
    default:
      return 1e15;
  }
}

// Min/max inputs range over [-30, 30]; 61 is prime so ranks get distinct sequences.
constexpr int kMinMaxPeriod = 61;

void store(DataType type, double v, std::byte* out) {
  switch (type) {
    case DataType::kFloat32: {
      const float x = static_cast<float>(v);
      std::memcpy(out, &x, 4);
      break;
    }
    case DataType::kFloat64:
      std::memcpy(out, &v, 8);
      break;
    case DataType::kInt32: {
      const auto x = static_cast<std::int32_t>(v);
      std::memcpy(out, &x, 4);
      break;
    }
    case DataType::kInt64: {
      const auto x = static_cast<std::int64_t>(v);
      std::memcpy(out, &x, 8);
      break;
    }
    case DataType::kFloat16: {
      const auto x = float_to_half(static_cast<float>(v));
      std::memcpy(out, &x, 2);
      break;
    }
    case DataType::kBFloat16: {
      const auto x = float_to_bf16(static_cast<float>(v));
      std::memcpy(out, &x, 2);
      break;
    }
  }
}

}  // namespace

VerifiablePattern::VerifiablePattern(DataType type, ReduceOp op, int nranks)
    : type_(type), op_(op), nranks_(std::max(1, nranks)) {
  if (op == ReduceOp::kSum) {
    // Inputs 1..modulus: every partial sum <= nranks * modulus stays exact.
    const double limit = exact_integer_limit(type);
    modulus_ = static_cast<int>(std::clamp(limit / nranks_, 1.0, 4.0));
    period_ = static_cast<std::size_t>(modulus_);
  } else {
    modulus_ = kMinMaxPeriod;
    period_ = kMinMaxPeriod;
  }
  std::vector<double> rows(2 * period_);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = expected(i % period_);
  expected_rows_ = typed_row(rows);
}

double VerifiablePattern::input(int rank, std::size_t i) const {
  if (op_ == ReduceOp::kSum) {
    // Beyond the exact range (bf16 with > 256 ranks) the extra ranks contribute zero.
    if (static_cast<double>(rank) >= exact_integer_limit(type_)) return 0;
    return 1.0 + static_cast<double>((i + 3 * static_cast<std::size_t>(rank)) %
                                     static_cast<std::size_t>(modulus_));
  }
  return static_cast<double>((7 * i + 13 * static_cast<std::size_t>(rank)) % kMinMaxPeriod) - 30.0;
}

double VerifiablePattern::expected(std::size_t i) const {
  // Inputs are periodic in the rank too (period modulus_), so at most one period is summed.
  const int distinct = std::min(nranks_, modulus_);
  if (op_ == ReduceOp::kSum) {
    double total = 0;
    for (int r = 0; r < nranks_; ++r) total += input(r, i);
    return total;
  }
  double best = input(0, i);
  for (int r = 1; r < distinct; ++r) {
    best = op_ == ReduceOp::kMin ? std::min(best, input(r, i)) : std::max(best, input(r, i));
  }
  return best;
}

std::vector<std::byte> VerifiablePattern::typed_row(const std::vector<double>& values) const {
  const std::size_t es = size_of(type_);
  std::vector<std::byte> row(values.size() * es);
  for (std::size_t i = 0; i < values.size(); ++i) store(type_, values[i], row.data() + i * es);
  return row;
}

std::vector<std::byte> VerifiablePattern::input_rows(int rank) const {
  std::vector<double> values(2 * period_);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = input(rank, i % period_);
  return typed_row(values);
}

void VerifiablePattern::fill_input(int rank, void* buffer, std::size_t count,
                                   std::size_t first_index) const {
  const auto rows = input_rows(rank);
  const std::size_t es = size_of(type_);
  const std::byte* row = rows.data() + (first_index % period_) * es;
  const std::size_t row_bytes = period_ * es;
  auto* out = static_cast<std::byte*>(buffer);
  const std::size_t total = count * es;
  for (std::size_t done = 0; done < total; done += row_bytes) {
    std::memcpy(out + done, row, std::min(row_bytes, total - done));
  }
}

void VerifiablePattern::fill_poison(void* buffer, std::size_t count) const {
  // -1000 is outside every input range and every possible result.
  const std::vector<double> values(1, -1000.0);
  const auto row = typed_row(values);
  auto* out = static_cast<std::byte*>(buffer);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(out + i * row.size(), row.data(), row.size());
}

std::size_t VerifiablePattern::count_wrong(const void* buffer, std::size_t count,
                                           std::size_t first_index) const {
  return count_mismatch(expected_rows_, buffer, count, first_index);
}

std::size_t VerifiablePattern::count_wrong_input(int rank, const void* buffer, std::size_t count,
                                                 std::size_t first_index) const {
  return count_mismatch(input_rows(rank), buffer, count, first_index);
}

std::size_t VerifiablePattern::count_mismatch(const std::vector<std::byte>& rows,
                                              const void* buffer, std::size_t count,
                                              std::size_t first_index) const {
  // One period at a time with memcmp; element by element only inside a period that differs.
  const std::size_t es = size_of(type_);
  const std::size_t row_bytes = period_ * es;
  const std::byte* row = rows.data() + (first_index % period_) * es;
  const auto* in = static_cast<const std::byte*>(buffer);
  const std::size_t total = count * es;
  std::size_t wrong = 0;
  for (std::size_t done = 0; done < total; done += row_bytes) {
    const std::size_t n = std::min(row_bytes, total - done);
    if (std::memcmp(in + done, row, n) == 0) continue;
    for (std::size_t e = 0; e < n; e += es) {
      wrong += std::memcmp(in + done + e, row + e, es) != 0 ? 1 : 0;
    }
  }
  return wrong;
}

}  // namespace ibscope
