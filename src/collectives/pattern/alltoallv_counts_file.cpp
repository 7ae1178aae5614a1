#include "ibscope/collectives/pattern/alltoallv_counts_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "ibscope/core/error.hpp"

namespace ibscope::collectives {
namespace {

// More ranks than any job: a bigger matrix is a wrong file, not a job.
constexpr std::size_t kMaxCountsRanks = 1 << 16;

[[noreturn]] void bad_counts(std::string_view source, std::size_t line, std::size_t column,
                             std::string_view why) {
  throw UsageError(fmt::format("{}:{}:{}: {}", source, line, column, why));
}

bool is_separator(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r'; }

}  // namespace

CountsSpec parse_counts_matrix(std::string_view text, std::string_view source) {
  CountsSpec spec;
  spec.kind = CountsSpec::Kind::kMatrix;
  spec.text = std::string(source);
  std::size_t line_no = 0, width = 0, rows = 0, first_row_line = 0;
  std::size_t last_line = 1;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    last_line = line_no;
    std::size_t i = 0;
    while (i < line.size() && is_separator(line[i])) ++i;
    if (i == line.size() || line[i] == '#') continue;
    std::size_t numbers = 0;
    while (i < line.size()) {
      const std::size_t start = i;
      while (i < line.size() && !is_separator(line[i])) ++i;
      const std::string token(line.substr(start, i - start));
      std::size_t used = 0;
      double v = -1;
      try {
        v = std::stod(token, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != token.size() || !std::isfinite(v)) {
        bad_counts(source, line_no, start + 1, fmt::format("'{}' is not a number", token));
      }
      if (v < 0) bad_counts(source, line_no, start + 1, fmt::format("{} is negative", token));
      spec.weights.push_back(v);
      ++numbers;
      if (numbers > kMaxCountsRanks) {
        bad_counts(source, line_no, start + 1,
                   fmt::format("more than {} numbers in a row", kMaxCountsRanks));
      }
      while (i < line.size() && is_separator(line[i])) ++i;
    }
    if (rows == 0) {
      width = numbers;
      first_row_line = line_no;
    } else if (numbers != width) {
      bad_counts(source, line_no, 1,
                 fmt::format("{} number(s) in this row, {} in the first (line {})", numbers, width,
                             first_row_line));
    }
    ++rows;
    if (rows > width) {
      bad_counts(source, line_no, 1,
                 fmt::format("row {} of a matrix of {} column(s): one row per sender, as many "
                             "rows as columns",
                             rows, width));
    }
  }
  if (rows == 0) bad_counts(source, last_line, 1, "no rows: expected p rows of p numbers");
  if (rows != width) {
    bad_counts(source, last_line, 1,
               fmt::format("{} row(s) of {} number(s): expected as many rows as columns (one "
                           "row per sender)",
                           rows, width));
  }
  double sum = 0;
  for (double w : spec.weights) sum += w;
  if (!(sum > 0) || !std::isfinite(sum)) {
    bad_counts(source, first_row_line, 1, "every count is 0 (or their sum overflows)");
  }
  spec.matrix_ranks = static_cast<int>(rows);
  return spec;
}

CountsSpec load_counts_spec(const std::string& text) {
  if (is_counts_generator(text)) return parse_counts_generator(text);
  if (text.empty()) throw UsageError("--counts: empty; expected uniform, zipf:S[:seed] or a file");
  std::ifstream in(text, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format(
        "--counts {}: cannot open the counts file (or say uniform or zipf:S[:seed])", text));
  }
  std::ostringstream body;
  body << in.rdbuf();
  return parse_counts_matrix(body.str(), text);
}

}  // namespace ibscope::collectives
