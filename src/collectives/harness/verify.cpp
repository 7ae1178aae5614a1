#include "ibscope/collectives/harness/verify.hpp"

#include <algorithm>
#include <cstring>

namespace ibscope::collectives {
namespace {

constexpr std::size_t kL = VerifiablePattern::kTableLength;
// Rank r's slices start K r further in the table: K near L x 0.618, so that the offsets of
// neighbouring ranks are far apart and no small rank difference maps onto a small shift.
constexpr std::uint64_t kRankStride = 40503;
constexpr std::uint64_t kTableSalt = 0x1b5f3c6a2d4e8f07ULL;
constexpr std::uint64_t kSeedSalt = 0x6a09e667f3bcc909ULL;
// A slice that differs is compared again in pieces of this many elements before counting
// element by element, so a buffer that is wrong in one place costs little more than a right one.
constexpr std::size_t kPieceElems = 256;

// Largest integer every partial sum must stay at or below to be exact in the type. 2^24 for
// the wide types too: far more distinct values than a check needs, and no int32 overflow.
std::int64_t exact_integer_limit(DataType type) {
  switch (type) {
    case DataType::kBFloat16:
      return 256;
    case DataType::kFloat16:
      return 2048;
    default:
      return std::int64_t{1} << 24;
  }
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Where segment `segment` (elements [segment L, (segment+1) L)) starts in the table.
std::size_t segment_offset(std::size_t segment, std::uint64_t seed) {
  return static_cast<std::size_t>(splitmix64(segment ^ splitmix64(seed ^ kSeedSalt)) % kL);
}

std::size_t rank_shift(int rank) {
  return static_cast<std::size_t>((kRankStride * static_cast<std::uint64_t>(rank)) % kL);
}

// Ranks kL apart share a shift; in a distinct table they differ by their epoch instead, added
// to the value inside its own bucket (see the constructor).
std::int64_t rank_epoch(int rank) { return static_cast<std::int64_t>(rank) / kL; }

// L distinct values in [0, L) in a pseudo-random order (Fisher-Yates on splitmix64).
std::vector<std::int64_t> shuffled_positions() {
  std::vector<std::int64_t> p(kL);
  for (std::size_t x = 0; x < kL; ++x) p[x] = static_cast<std::int64_t>(x);
  std::uint64_t state = kTableSalt;
  for (std::size_t x = kL - 1; x > 0; --x) {
    state = splitmix64(state);
    std::swap(p[x], p[state % (x + 1)]);
  }
  return p;
}

// Calls fn(start, done, n) for each run of element indices [first + done, first + done + n)
// that maps onto table positions start, start+1, ... (start < L, start + n <= 2L).
template <typename Fn>
void for_each_slice(std::size_t count, std::size_t first, std::uint64_t seed, std::size_t shift,
                    Fn&& fn) {
  std::size_t done = 0;
  while (done < count) {
    const std::size_t j = first + done;
    const std::size_t in_segment = j % kL;
    const std::size_t n = std::min(kL - in_segment, count - done);
    fn((in_segment + segment_offset(j / kL, seed) + shift) % kL, done, n);
    done += n;
  }
}

void store(DataType type, std::int64_t value, std::byte* out) {
  const auto f = static_cast<float>(value);  // exact: |value| <= 2^25
  switch (type) {
    case DataType::kFloat32:
      std::memcpy(out, &f, 4);
      break;
    case DataType::kFloat64: {
      const auto x = static_cast<double>(value);
      std::memcpy(out, &x, 8);
      break;
    }
    case DataType::kInt32: {
      const auto x = static_cast<std::int32_t>(value);
      std::memcpy(out, &x, 4);
      break;
    }
    case DataType::kInt64:
      std::memcpy(out, &value, 8);
      break;
    case DataType::kFloat16: {
      const auto x = float_to_half(f);
      std::memcpy(out, &x, 2);
      break;
    }
    case DataType::kBFloat16: {
      const auto x = float_to_bf16(f);
      std::memcpy(out, &x, 2);
      break;
    }
  }
}

// The values written twice, typed: any slice of up to L elements starting below L is contiguous.
std::vector<std::byte> doubled_row(DataType type, const std::vector<std::int64_t>& values) {
  const std::size_t es = size_of(type);
  std::vector<std::byte> row(2 * values.size() * es);
  for (std::size_t i = 0; i < 2 * values.size(); ++i) {
    store(type, values[i % values.size()], row.data() + i * es);
  }
  return row;
}

std::size_t count_differing(const std::byte* got, const std::byte* want, std::size_t n,
                            std::size_t es) {
  if (std::memcmp(got, want, n * es) == 0) return 0;
  std::size_t wrong = 0;
  for (std::size_t p = 0; p < n; p += kPieceElems) {
    const std::size_t m = std::min(kPieceElems, n - p);
    if (std::memcmp(got + p * es, want + p * es, m * es) == 0) continue;
    for (std::size_t e = p; e < p + m; ++e) {
      wrong += std::memcmp(got + e * es, want + e * es, es) != 0 ? 1 : 0;
    }
  }
  return wrong;
}

}  // namespace

VerifiablePattern::VerifiablePattern(DataType type, ReduceOp op, int nranks)
    : type_(type), op_(op), nranks_(std::max(1, nranks)) {
  const std::int64_t limit = exact_integer_limit(type);
  // Sum: p values of at most V add up to at most limit, whatever the order; min/max: any
  // representable integer is exact, so the whole symmetric range is used.
  value_bound_ = op == ReduceOp::kSum ? std::max<std::int64_t>(1, limit / nranks_) : limit - 1;
  // Min/max (and the collectives that do not reduce) in a type with at least L distinct exact
  // integers: a table of L distinct values, one per bucket of `bucket_` consecutive integers,
  // so two different table positions never hold the same value; epoch e = r / L adds e mod
  // bucket_ inside the bucket. A 16-bit type has fewer values than positions: hashed values.
  const std::int64_t range = 2 * value_bound_ + 1;
  bucket_ = op != ReduceOp::kSum && range >= static_cast<std::int64_t>(kL)
                ? range / static_cast<std::int64_t>(kL)
                : 0;
  table_.resize(kL);
  if (bucket_ > 0) {
    const std::vector<std::int64_t> order = shuffled_positions();
    for (std::size_t x = 0; x < kL; ++x) table_[x] = order[x] * bucket_ - value_bound_;
  } else {
    for (std::size_t x = 0; x < kL; ++x) {
      const std::uint64_t h = splitmix64(x ^ kTableSalt);
      if (op == ReduceOp::kSum) {
        table_[x] = 1 + static_cast<std::int64_t>(h % static_cast<std::uint64_t>(value_bound_));
      } else {
        table_[x] = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(range)) - value_bound_;
      }
    }
  }
  // E[x] = reduction over ranks of T[(x + shift(r)) mod L], rank by rank over two contiguous
  // pieces of the table, so the O(p L) loop vectorises.
  expected_.assign(kL, op == ReduceOp::kSum ? 0 : table_[0]);
  bool first = true;
  for (int r = 0; r < nranks_; ++r) {
    if (!contributes(r)) continue;
    const std::size_t s = rank_shift(r);
    const std::int64_t add = epoch_value(r);
    auto combine = [&](std::size_t x0, std::size_t x1, std::size_t t0) {
      for (std::size_t x = x0; x < x1; ++x) {
        const std::int64_t v = table_[t0 + (x - x0)] + add;
        if (op == ReduceOp::kSum)
          expected_[x] += v;
        else if (first)
          expected_[x] = v;
        else if (op == ReduceOp::kMin)
          expected_[x] = std::min(expected_[x], v);
        else
          expected_[x] = std::max(expected_[x], v);
      }
    };
    combine(0, kL - s, s);
    combine(kL - s, kL, 0);
    first = false;
  }
  table_rows_ = doubled_row(type, table_);
  expected_rows_ = doubled_row(type, expected_);
  if (!contributes(nranks_ - 1)) zero_rows_ = doubled_row(type, std::vector<std::int64_t>(kL, 0));
}

bool VerifiablePattern::contributes(int rank) const noexcept {
  // Beyond the exact range (bf16 with > 256 ranks) the extra ranks contribute zero.
  return op_ != ReduceOp::kSum || rank < exact_integer_limit(type_);
}

std::int64_t VerifiablePattern::epoch_value(int rank) const noexcept {
  return bucket_ > 0 ? rank_epoch(rank) % bucket_ : 0;
}

std::int64_t VerifiablePattern::table_at(int rank, std::size_t x) const noexcept {
  return contributes(rank) ? table_[(x + rank_shift(rank)) % kL] + epoch_value(rank) : 0;
}

double VerifiablePattern::input(int rank, std::size_t i, std::uint64_t seed) const {
  const std::size_t x = (i % kL + segment_offset(i / kL, seed)) % kL;
  return static_cast<double>(table_at(rank, x));
}

double VerifiablePattern::expected(std::size_t i, std::uint64_t seed) const {
  const std::size_t x = (i % kL + segment_offset(i / kL, seed)) % kL;
  return static_cast<double>(expected_[x]);
}

const std::byte* VerifiablePattern::input_row(int rank, std::size_t& shift) const {
  if (!contributes(rank)) {
    shift = 0;
    return zero_rows_.data();
  }
  shift = rank_shift(rank);
  const std::int64_t add = epoch_value(rank);
  if (add == 0) return table_rows_.data();
  // Beyond L ranks (min/max, all-gather, broadcast): the table moved inside its buckets.
  auto it = epoch_rows_.find(add);
  if (it == epoch_rows_.end()) {
    std::vector<std::int64_t> moved(table_);
    for (std::int64_t& v : moved) v += add;
    it = epoch_rows_.emplace(add, doubled_row(type_, moved)).first;
  }
  return it->second.data();
}

void VerifiablePattern::fill_from(const std::byte* row, std::size_t shift, void* buffer,
                                  std::size_t count, std::size_t first_index,
                                  std::uint64_t seed) const {
  const std::size_t es = size_of(type_);
  auto* out = static_cast<std::byte*>(buffer);
  for_each_slice(count, first_index, seed, shift,
                 [&](std::size_t start, std::size_t done, std::size_t n) {
                   std::memcpy(out + done * es, row + start * es, n * es);
                 });
}

void VerifiablePattern::fill_input(int rank, void* buffer, std::size_t count,
                                   std::size_t first_index, std::uint64_t seed) const {
  std::size_t shift = 0;
  const std::byte* row = input_row(rank, shift);
  fill_from(row, shift, buffer, count, first_index, seed);
}

void VerifiablePattern::fill_expected(void* buffer, std::size_t count, std::size_t first_index,
                                      std::uint64_t seed) const {
  fill_from(expected_rows_.data(), 0, buffer, count, first_index, seed);
}

void VerifiablePattern::fill_poison(void* buffer, std::size_t count) const {
  // -2 x limit is outside every input and every result. One element, then doubling copies.
  if (count == 0) return;
  const std::size_t es = size_of(type_);
  auto* out = static_cast<std::byte*>(buffer);
  store(type_, -2 * exact_integer_limit(type_), out);
  const std::size_t total = count * es;
  for (std::size_t filled = es; filled < total; filled *= 2) {
    std::memcpy(out + filled, out, std::min(filled, total - filled));
  }
}

std::size_t VerifiablePattern::count_wrong(const void* buffer, std::size_t count,
                                           std::size_t first_index, std::uint64_t seed) const {
  return count_mismatch(expected_rows_.data(), 0, buffer, count, first_index, seed);
}

std::size_t VerifiablePattern::count_wrong_input(int rank, const void* buffer, std::size_t count,
                                                 std::size_t first_index,
                                                 std::uint64_t seed) const {
  std::size_t shift = 0;
  const std::byte* row = input_row(rank, shift);
  return count_mismatch(row, shift, buffer, count, first_index, seed);
}

std::size_t VerifiablePattern::count_mismatch(const std::byte* row, std::size_t shift,
                                              const void* buffer, std::size_t count,
                                              std::size_t first_index, std::uint64_t seed) const {
  const std::size_t es = size_of(type_);
  const auto* in = static_cast<const std::byte*>(buffer);
  std::size_t wrong = 0;
  for_each_slice(count, first_index, seed, shift,
                 [&](std::size_t start, std::size_t done, std::size_t n) {
                   wrong += count_differing(in + done * es, row + start * es, n, es);
                 });
  return wrong;
}

}  // namespace ibscope::collectives
