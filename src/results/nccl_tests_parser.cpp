// nccl-tests' stdout into typed runs (results/nccl_tests.hpp). A line-by-line state machine:
// outside a run, in a run's banner (after "# nThread"), in its table (after the column header),
// done (after "# Out of bounds values"). Only rows, the banner and the footer must be well formed:
// the output often carries other lines (NCCL INFO logs, a launcher's warnings) that are skipped.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>

#include "ibscope/results/nccl_tests.hpp"

namespace ibscope::results {

NcclTestsParseError::NcclTestsParseError(std::string file, int line, int column,
                                         std::string_view what)
    : UsageError(fmt::format("{}:{}:{}: {}", file, line, column, what)),
      file_(std::move(file)),
      line_(line),
      column_(column) {}

int NcclTestsRun::rank_count() const {
  if (!ranks.empty()) return static_cast<int>(ranks.size());
  return std::max(1, threads) * std::max(1, gpus_per_thread);
}

namespace {

struct NcclField {
  std::string_view text;
  int column = 0;  // 1-based
};

std::vector<NcclField> split_fields(std::string_view line) {
  std::vector<NcclField> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The text of a '#' comment line after the '#', or nullopt for other lines.
std::optional<std::string_view> nccl_comment(std::string_view line) {
  const std::string_view t = trim_blanks(line);
  if (t.empty() || t.front() != '#') return std::nullopt;
  return trim_blanks(t.substr(1));
}

bool starts_with_digit_nccl(std::string_view line) {
  const std::string_view t = trim_blanks(line);
  return !t.empty() && t.front() >= '0' && t.front() <= '9';
}

// The programs nccl-tests builds, without "_perf".
constexpr std::array<std::string_view, 11> kNcclPrograms = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",   "alltoallv",
    "alltoall",   "sendrecv",   "gather",         "scatter",   "hypercube"};

// "all_reduce" when `text` names "<collective>_perf" (also "_perf_mpi", a path); "" otherwise.
std::string nccl_program_in(std::string_view text) {
  std::size_t best = std::string_view::npos;
  std::string found;
  for (const std::string_view c : kNcclPrograms) {
    const std::string name = fmt::format("{}_perf", c);
    for (std::size_t at = text.find(name); at != std::string_view::npos;
         at = text.find(name, at + 1)) {
      // "reduce_perf" inside "all_reduce_perf" is not a match.
      const bool word_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) ||
                                           text[at - 1] == '_');
      if (word_start && at < best) {
        best = at;
        found = std::string(c);
      }
    }
  }
  return found;
}

constexpr long long kMaxGpusPerProcess = 1 << 16;

class NcclParser {
 public:
  NcclParser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  NcclTestsOutput run() {
    std::size_t pos = 0;
    // A final newline ends the last line; it does not start another.
    while (pos < text_.size()) {
      std::size_t end = text_.find('\n', pos);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no_;
      take(line);
      if (end == text_.size()) break;
      pos = end + 1;
    }
    finish_run(line_no_ + 1);
    if (out_.runs.empty()) {
      fail(1, 1,
           "not nccl-tests output: no '# nThread ... nGpus ...' banner followed by its table "
           "(size count type ... time algbw busbw)");
    }
    return std::move(out_);
  }

 private:
  enum class State { kOutside, kBanner, kTable, kDone };

  [[noreturn]] void fail(int line, int column, std::string_view what) const {
    throw NcclTestsParseError(std::string(source_), line, column, what);
  }

  void take(std::string_view line) {
    const auto comment = nccl_comment(line);
    if (comment && comment->starts_with("nThread")) {
      start_run(line, *comment);
      return;
    }
    switch (state_) {
      case State::kOutside:
      case State::kDone:
        if (comment && state_ == State::kDone && comment->starts_with("Avg bus bandwidth")) {
          footer_busbw(line);
        }
        if (comment && comment->starts_with("nccl-tests version")) pending_version_ = *comment;
        if (comment && comment->starts_with("Collective test starting:")) {
          pending_program_ = nccl_program_in(*comment);
        }
        if (comment && is_column_header(*comment)) {
          fail(line_no_, 1,
               "a table header with no '# nThread ... nGpus ...' banner before it: ibscope needs "
               "nccl-tests' whole output (the ranks come from its '# Rank' lines)");
        }
        if (!comment) {
          // A command line echoed before the banner ("./build/all_gather_perf -b 8 ...").
          if (auto c = nccl_program_in(line); !c.empty()) pending_command_ = std::move(c);
        }
        return;
      case State::kBanner:
        if (comment) banner_comment(line, *comment);
        return;
      case State::kTable:
        if (comment) {
          table_comment(line, *comment);
        } else if (starts_with_digit_nccl(line)) {
          row(line);
        }
        return;
    }
  }

  void start_run(std::string_view line, std::string_view banner) {
    NcclTestsRun r;
    r.first_line = line_no_;
    r.banner = std::string(banner);
    r.version = version_of(pending_version_);
    r.collective = !pending_program_.empty() ? pending_program_ : pending_command_;
    if (!out_.runs.empty() && state_ == State::kBanner && r.collective.empty()) {
      r.collective = current().collective;  // a banner printed twice
    }
    finish_run(line_no_);
    pending_program_.clear();
    pending_command_.clear();
    pending_version_ = {};
    const auto tokens = split_fields(line);
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      const std::string_view key = tokens[i].text;
      const NcclField& value = tokens[i + 1];
      if (key == "nThread") r.threads = to_int(value, "nThread");
      if (key == "nGpus") r.gpus_per_thread = to_int(value, "nGpus");
      if (key == "iters:" && i > 0 && tokens[i - 1].text == "warmup") {
        r.warmup_iters = to_int(value, "warmup iters");
      } else if (key == "iters:" && (i == 0 || tokens[i - 1].text != "agg")) {
        r.iters = to_int(value, "iters");
      }
    }
    if (r.threads <= 0 || r.gpus_per_thread <= 0) {
      fail(line_no_, static_cast<int>(line.size()) + 1,
           "the banner has no positive 'nThread N' and 'nGpus N'");
    }
    // GPUs per process: nccl-tests' -t x -g, a few dozen at most; a larger product is garbled
    // (and would overflow the rank count).
    if (static_cast<long long>(r.threads) * r.gpus_per_thread > kMaxGpusPerProcess) {
      fail(line_no_, 1,
           fmt::format("nThread {} x nGpus {}: more than {} GPUs in one process", r.threads,
                       r.gpus_per_thread, kMaxGpusPerProcess));
    }
    out_.runs.push_back(std::move(r));
    state_ = State::kBanner;
    header_.clear();
  }

  static std::string version_of(std::string_view comment) {
    // "nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007"
    const auto t = split_fields(comment);
    return t.size() >= 3 ? std::string(t[2].text) : std::string();
  }

  NcclTestsRun& current() { return out_.runs.back(); }

  static bool is_column_header(std::string_view comment) {
    const auto t = split_fields(comment);
    return t.size() >= 3 && t[0].text == "size" && t[1].text == "count";
  }

  void banner_comment(std::string_view line, std::string_view comment) {
    if (comment.starts_with("Rank ")) {
      rank_line(line);
    } else if (comment.starts_with("Collective test starting:") && current().collective.empty()) {
      current().collective = nccl_program_in(comment);
    } else if (is_column_header(comment)) {
      column_header(line);
    }
  }

  // "#  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] NVIDIA H100 80GB"
  // (before nccl-tests 2.11 without "Group N").
  void rank_line(std::string_view line) {
    const auto t = split_fields(line);
    NcclTestsRank r;
    std::size_t i = 0;
    while (i < t.size() && t[i].text != "Rank") ++i;
    if (i + 1 >= t.size())
      fail(line_no_, static_cast<int>(line.size()) + 1, "'Rank' without a number");
    r.rank = to_int(t[i + 1], "Rank");
    std::size_t on = i;
    while (on < t.size() && t[on].text != "on") ++on;
    if (on + 1 >= t.size()) {
      fail(line_no_, static_cast<int>(line.size()) + 1, "a '# Rank' line without 'on HOST'");
    }
    r.host = std::string(t[on + 1].text);
    std::size_t dev = on;
    while (dev < t.size() && t[dev].text != "device") ++dev;
    if (dev + 1 < t.size()) r.device = to_int(t[dev + 1], "device");
    std::size_t name = dev + 2;
    if (name < t.size() && t[name].text.starts_with("[")) ++name;
    if (name < t.size()) {
      const auto from = static_cast<std::size_t>(t[name].column - 1);
      r.device_name = std::string(trim_blanks(line.substr(from)));
    }
    current().ranks.push_back(std::move(r));
  }

  void column_header(std::string_view line) {
    header_.clear();
    for (const NcclField& t : split_fields(line)) {
      if (t.text == "#") continue;
      header_.emplace_back(t.text);
    }
    // The columns ibscope needs: size, and per half time (or cputime), algbw, busbw.
    const auto has = [&](std::string_view name) {
      return std::find(header_.begin(), header_.end(), name) != header_.end();
    };
    if (!has("type") || !(has("time") || has("cputime")) || !has("algbw") || !has("busbw")) {
      fail(line_no_, 1,
           "a table header without the columns type, time, algbw and busbw: not a layout this "
           "parser knows");
    }
    state_ = State::kTable;
    table_line_ = line_no_;
  }

  void table_comment(std::string_view line, std::string_view comment) {
    if (comment.starts_with("Out of bounds values")) {
      const auto colon = line.find(':');
      if (colon != std::string_view::npos) {
        const auto t = split_fields(line.substr(colon + 1));
        if (!t.empty()) {
          current().out_of_bounds = to_u64({t[0].text, t[0].column + static_cast<int>(colon) + 1},
                                           "Out of bounds values");
        }
      }
      state_ = State::kDone;
      return;
    }
    if (comment.starts_with("Rank ")) rank_line(line);  // interleaved by several processes
  }

  void footer_busbw(std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const auto t = split_fields(line.substr(colon + 1));
    if (t.empty()) return;
    current().avg_busbw_gbps =
        to_double({t[0].text, t[0].column + static_cast<int>(colon) + 1}, "Avg bus bandwidth");
  }

  void row(std::string_view line) {
    const auto t = split_fields(line);
    // Columns after the last named one (a timestamp) may follow; fewer is a cut row.
    std::size_t needed = header_.size();
    if (!header_.empty() && header_.back() == "timestamp") --needed;
    if (t.size() < needed) {
      fail(line_no_, static_cast<int>(line.size()) + 1,
           fmt::format("a table row of {} field(s) where the header (line {}) names {}: the "
                       "output is cut or garbled",
                       t.size(), table_line_, needed));
    }
    NcclTestsRow base;
    base.line = line_no_;
    base.redop = "none";
    NcclTestsRow halves[2] = {};
    int half = -1;  // the half the next time/algbw/busbw/#wrong belongs to
    bool seen_time[2] = {false, false};
    for (std::size_t i = 0; i < needed; ++i) {
      const std::string_view name = header_[i];
      const NcclField& v = t[i];
      if (name == "size") {
        base.size_bytes = to_u64(v, "size");
      } else if (name == "count") {
        base.count = to_u64(v, "count");
      } else if (name == "type") {
        base.type = std::string(v.text);
      } else if (name == "redop") {
        base.redop = std::string(v.text);
      } else if (name == "root") {
        base.root = to_int(v, "root");
      } else if (name == "time" || name == "cputime") {
        ++half;
        if (half > 1)
          fail(line_no_, v.column, "a third time column: not a layout this parser knows");
        halves[half] = base;
        halves[half].in_place = half == 1;
        halves[half].time_us = to_double(v, "time");
        seen_time[half] = true;
        if (halves[half].time_us < 0) fail(line_no_, v.column, "a negative time");
      } else if (half >= 0 && name == "algbw") {
        halves[half].algbw_gbps = to_double(v, "algbw");
      } else if (half >= 0 && name == "busbw") {
        halves[half].busbw_gbps = to_double(v, "busbw");
      } else if (half >= 0 && name == "#wrong") {
        if (v.text != "N/A") {
          const double w = to_double(v, "#wrong");  // "%6g": 1e+06 for large counts
          if (w < 0 || w > 1.8e19) fail(line_no_, v.column, "#wrong is not a count");
          halves[half].wrong = static_cast<std::uint64_t>(w);
        }
      } else if (half >= 0 && name == "error") {
        // Before nccl-tests 2.x printed #wrong, this column was the largest error (a double).
        if (v.text != "N/A") (void)to_double(v, "error");
      }
    }
    // The columns before the first time apply to both halves.
    for (int h = 0; h < 2; ++h) {
      if (!seen_time[h]) continue;
      NcclTestsRow& r = halves[h];
      r.size_bytes = base.size_bytes;
      r.count = base.count;
      r.type = base.type;
      r.redop = base.redop;
      r.root = base.root;
      r.line = base.line;
      current().rows.push_back(r);
    }
  }

  void finish_run(int at_line) {
    if (state_ == State::kDone || out_.runs.empty() || state_ == State::kOutside) {
      state_ = State::kOutside;
      return;
    }
    NcclTestsRun& r = current();
    if (state_ == State::kBanner) {
      // A banner printed twice (each process of a run without MPI prints one) is not an error;
      // a banner with nothing after it is a cut output.
      if (at_line <= line_no_) {
        out_.runs.pop_back();
        state_ = State::kOutside;
        return;
      }
      fail(at_line, 1,
           fmt::format("the output ends after the banner of line {}: no table (the run stopped "
                       "or the output was cut)",
                       r.first_line));
    }
    fail(at_line, 1,
         fmt::format("the table of line {} ends without '# Out of bounds values' after {} row(s): "
                     "the run stopped or the output was cut",
                     table_line_, r.rows.size() / 2));
  }

  // Numbers: the whole token must be one.
  int to_int(const NcclField& v, std::string_view what) const {
    int x = 0;
    const auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), x);
    if (ec != std::errc() || p != v.text.data() + v.text.size()) {
      fail(line_no_, v.column, fmt::format("{}: expected an integer, got '{}'", what, v.text));
    }
    return x;
  }
  std::uint64_t to_u64(const NcclField& v, std::string_view what) const {
    std::uint64_t x = 0;
    const auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), x);
    if (ec != std::errc() || p != v.text.data() + v.text.size()) {
      fail(line_no_, v.column,
           fmt::format("{}: expected a non-negative integer, got '{}'", what, v.text));
    }
    return x;
  }
  double to_double(const NcclField& v, std::string_view what) const {
    double x = 0;
    const auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), x);
    if (ec != std::errc() || p != v.text.data() + v.text.size() || !std::isfinite(x)) {
      fail(line_no_, v.column, fmt::format("{}: expected a number, got '{}'", what, v.text));
    }
    return x;
  }

  std::string_view text_, source_;
  NcclTestsOutput out_;
  State state_ = State::kOutside;
  int line_no_ = 0, table_line_ = 0;
  std::vector<std::string> header_;
  std::string pending_program_, pending_command_;
  std::string_view pending_version_;
};

}  // namespace

bool looks_like_nccl_tests(std::string_view text) {
  // A results file is one JSON object: its first character that is not blank is '{'.
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] == '{' || text[first] == '[') return false;
  return text.find("nThread") != std::string_view::npos ||
         text.find("algbw") != std::string_view::npos;
}

NcclTestsOutput parse_nccl_tests(std::string_view text, std::string_view source) {
  NcclTestsOutput out = NcclParser(text, source).run();
  const std::string file_name = std::filesystem::path(std::string(source)).filename().string();
  for (NcclTestsRun& r : out.runs) {
    if (r.collective.empty()) r.collective = nccl_program_in(file_name);
    if (r.collective.empty()) {
      throw NcclTestsParseError(
          std::string(source), r.first_line, 1,
          "cannot tell which nccl-tests program wrote this table: the output has no '# "
          "Collective test starting:' line or command line before it; name the file after the "
          "program (all_reduce_perf.txt)");
    }
    r.program = r.collective + "_perf";
  }
  return out;
}

}  // namespace ibscope::results
