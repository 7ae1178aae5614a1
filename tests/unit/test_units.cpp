// Units: sizes are binary multiples (K = 2^10 ...), durations are seconds, and every parse error
// is a UsageError whose message names the flag and quotes the input.

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "common/byte_sizes.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"

using Catch::Matchers::Contains;
using ibscope::UsageError;
using ibscope::units::format_size;
using ibscope::units::parse_duration_s;
using ibscope::units::parse_size_bytes;

using ibscope::test::kGiB;
using ibscope::test::kKiB;
using ibscope::test::kMiB;
using ibscope::test::kTiB;

namespace {

// The UsageError message for `text`, or "" if it parsed.
std::string size_error(const std::string& text, const std::string& flag = "--size") {
  try {
    (void)parse_size_bytes(text, flag);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string duration_error(const std::string& text, const std::string& flag = "--timeout") {
  try {
    (void)parse_duration_s(text, flag);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("parse_size_bytes: plain byte counts", "[units]") {
  CHECK(parse_size_bytes("0", "--size") == 0);
  CHECK(parse_size_bytes("1", "--size") == 1);
  CHECK(parse_size_bytes("4096", "--size") == 4096);
  CHECK(parse_size_bytes("4096B", "--size") == 4096);
  CHECK(parse_size_bytes("4096 b", "--size") == 4096);
  CHECK(parse_size_bytes("  8  ", "--size") == 8);
  CHECK(parse_size_bytes("1e3", "--size") == 1000);
  CHECK(parse_size_bytes("18446744073709549568", "--size") ==
        18446744073709549568ULL);  // the largest double below 2^64
}

TEST_CASE("parse_size_bytes: binary suffixes in every spelling", "[units]") {
  const struct {
    const char* text;
    std::uint64_t bytes;
  } cases[] = {
      {"1K", kKiB},
      {"1k", kKiB},
      {"64K", 64 * kKiB},
      {"64KB", 64 * kKiB},
      {"64KiB", 64 * kKiB},
      {"64kib", 64 * kKiB},
      {"64 KiB", 64 * kKiB},
      {"1M", kMiB},
      {"1m", kMiB},
      {"1MB", kMiB},
      {"1MiB", kMiB},
      {"2G", 2 * kGiB},
      {"2GiB", 2 * kGiB},
      {"2gb", 2 * kGiB},
      {"1T", kTiB},
      {"1TiB", kTiB},
      {"0.5K", 512},
      {"1.5M", 3 * kMiB / 2},
      {"0.25G", kGiB / 4},
      {"0K", 0},
      {"16777215T", 16777215 * kTiB},
  };
  for (const auto& c : cases) {
    INFO("input '" << c.text << "'");
    CHECK(parse_size_bytes(c.text, "--size") == c.bytes);
  }
}

TEST_CASE("parse_size_bytes: every error names the flag and the input", "[units]") {
  const struct {
    const char* text;
    const char* why;
  } cases[] = {
      {"", "empty"},
      {"   ", "empty"},
      {"-1", "negative"},
      {"-4K", "negative"},
      {" -0", "negative"},
      {"K", "not a number"},
      {"abc", "not a number"},
      {"+5", "not a number"},
      {"5X", "unknown unit"},
      {"5P", "unknown unit"},  // no petabyte suffix: sizes stop at T
      {"5Kbytes", "unknown unit"},
      {"5KiBB", "unknown unit"},
      {"5iB", "unknown unit"},
      {"5 K B", "unknown unit"},
      {"1.5", "not a whole number of bytes"},
      {"0.1K", "not a whole number of bytes"},
      {"1.0000001M", "not a whole number of bytes"},
      {"16777216T", "too large"},  // exactly 2^64
      {"18446744073709551616", "too large"},
      {"1e300", "too large"},
      {"1e300T", "too large"},
  };
  for (const auto& c : cases) {
    INFO("input '" << c.text << "'");
    const std::string msg = size_error(c.text, "--msg-size");
    CHECK_THAT(msg, Contains("--msg-size") && Contains(c.why) &&
                        Contains(std::string("'") + c.text + "'"));
  }
  CHECK_THROWS_AS(parse_size_bytes("-1", "--size"), UsageError);
  CHECK_THROWS_AS(parse_size_bytes("inf", "--size"), UsageError);
  CHECK_THROWS_AS(parse_size_bytes("nan", "--size"), UsageError);
  // A UsageError maps to exit status 2 in the CLI.
  try {
    (void)parse_size_bytes("lots", "--size");
    FAIL("expected a UsageError");
  } catch (const ibscope::Error& e) {
    CHECK(e.kind() == ibscope::ErrorKind::kUsage);
    CHECK(ibscope::exit_status(e.kind()) == 2);
  }
}

TEST_CASE("parse_duration_s: valid forms", "[units]") {
  CHECK(parse_duration_s("60", "--timeout") == Approx(60));
  CHECK(parse_duration_s("2.5", "--timeout") == Approx(2.5));
  CHECK(parse_duration_s("90s", "--timeout") == Approx(90));
  CHECK(parse_duration_s("90 s", "--timeout") == Approx(90));
  CHECK(parse_duration_s(" 500ms ", "--timeout") == Approx(0.5));
  CHECK(parse_duration_s("250us", "--timeout") == Approx(250e-6));
  CHECK(parse_duration_s("2m", "--timeout") == Approx(120));
  CHECK(parse_duration_s("1.5min", "--timeout") == Approx(90));
  CHECK(parse_duration_s("1h", "--timeout") == Approx(3600));
  CHECK(parse_duration_s("1e-3", "--timeout") == Approx(1e-3));
}

TEST_CASE("parse_duration_s: every error names the flag and the input", "[units]") {
  const struct {
    const char* text;
    const char* why;
  } cases[] = {
      {"", "not a number"},           {"  ", "not a number"},     {"s", "not a number"},
      {"ten", "not a number"},        {"5x", "unknown unit"},     {"5 sec", "unknown unit"},
      {"5S", "unknown unit"},         {"5ms5", "unknown unit"},   {"0", "must be positive"},
      {"0ms", "must be positive"},    {"-1", "must be positive"}, {"-2m", "must be positive"},
      {"1e308h", "must be positive"},  // overflows to infinity
  };
  for (const auto& c : cases) {
    INFO("input '" << c.text << "'");
    const std::string msg = duration_error(c.text, "--warmup-time");
    CHECK_THAT(msg, Contains("--warmup-time") && Contains(c.why) &&
                        Contains(std::string("'") + c.text + "'"));
  }
  CHECK_THROWS_AS(parse_duration_s("abc", "--timeout"), UsageError);
  CHECK_THROWS_AS(parse_duration_s("inf", "--timeout"), UsageError);
  CHECK_THROWS_AS(parse_duration_s("nan", "--timeout"), UsageError);
}

TEST_CASE("format_size: binary units, no scientific notation", "[units]") {
  CHECK(format_size(0) == "0 B");
  CHECK(format_size(1) == "1 B");
  CHECK(format_size(100) == "100 B");
  CHECK(format_size(1023) == "1023 B");
  CHECK(format_size(kKiB) == "1 KiB");
  CHECK(format_size(1536) == "1.5 KiB");
  CHECK(format_size(64 * kKiB) == "64 KiB");
  CHECK(format_size(kMiB) == "1 MiB");
  CHECK(format_size(3 * kMiB / 2) == "1.5 MiB");
  CHECK(format_size(kGiB) == "1 GiB");
  CHECK(format_size(kTiB) == "1 TiB");
  CHECK(format_size(kTiB * 1024) == "1 PiB");
  CHECK(format_size(kTiB * 1024 * 1024) == "1024 PiB");  // PiB is the largest unit
  CHECK(format_size(1000000) == "977 KiB");
  CHECK(format_size(kMiB - 1) == "1024 KiB");
  CHECK(format_size(1048000) == "1023 KiB");
  // Just below a unit boundary: never "1.02e+03 KiB".
  const std::uint64_t near_boundaries[] = {kMiB - 1,
                                           kMiB - 512,
                                           1048000,
                                           1024000 + 512,
                                           kGiB - 1,
                                           kTiB * 1024 * 1024 + kTiB * 512,
                                           std::numeric_limits<std::uint64_t>::max()};
  for (const std::uint64_t b : near_boundaries) {
    const std::string s = format_size(b);
    INFO(b << " -> " << s);
    CHECK(s.find('e') == std::string::npos);
  }
}

TEST_CASE("format_size agrees with parse_size_bytes for whole units", "[units]") {
  const std::uint64_t sizes[] = {1, 512, kKiB, 4 * kKiB, 256 * kMiB, 8 * kGiB, 2 * kTiB};
  for (const std::uint64_t b : sizes) {
    const std::string s = format_size(b);
    INFO(s);
    CHECK(parse_size_bytes(s, "--size") == b);
  }
}

TEST_CASE("to_gb_per_s uses 1e9 and guards zero time", "[units]") {
  CHECK(ibscope::units::to_gb_per_s(2e9, 1.0) == Approx(2.0));
  CHECK(ibscope::units::to_gb_per_s(1e9, 0.5) == Approx(2.0));
  CHECK(ibscope::units::to_gb_per_s(1e9, 0.0) == 0.0);
  CHECK(ibscope::units::to_gb_per_s(1e9, -1.0) == 0.0);
}
