// The size, duration and list arguments of the command line: the first byte picks the parser,
// the rest is the argument's text. Expected rejection: UsageError. Properties: a parsed
// duration is positive and finite; a split list has no empty item and no comma in an item
// (unless the text had no items); a sweep stays within its bounds and its size limit.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "ibscope/cli/list_args.hpp"
#include "ibscope/cli/memory_request.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/sweep.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ib = ibscope;

namespace {

std::vector<std::string> checked_split(const std::string& text) {
  const auto items = ib::cli::split_list(text);
  IBSCOPE_FUZZ_CHECK(!items.empty());
  if (items.size() == 1 && items[0] == text) return items;
  for (const auto& item : items) {
    IBSCOPE_FUZZ_CHECK(!item.empty() && item.find(',') == std::string::npos);
  }
  return items;
}

// "MIN,MAX,STEP,FACTOR" as -b, -e, -i and -f give them, then the sweep for element size 1..8.
void sweep(const std::string& text, std::uint8_t element_selector) {
  const auto items = checked_split(text);
  if (items.size() != 4) return;
  ib::measure::SweepSpec spec;
  spec.min_bytes = ib::units::parse_size_bytes(items[0], "-b/--minbytes");
  spec.max_bytes = ib::units::parse_size_bytes(items[1], "-e/--maxbytes");
  spec.step_bytes = ib::units::parse_size_bytes(items[2], "-i/--stepbytes");
  const auto [end, ec] =
      std::from_chars(items[3].data(), items[3].data() + items[3].size(), spec.factor);
  if (ec != std::errc()) return;  // CLI11 rejects a factor that is not a number
  const std::uint64_t element_bytes = std::uint64_t{1} << (element_selector % 4);
  const auto sizes = ib::measure::sweep_sizes(spec, element_bytes);
  IBSCOPE_FUZZ_CHECK(sizes.size() <= 10001);
  for (std::uint64_t s : sizes) IBSCOPE_FUZZ_CHECK(s <= spec.max_bytes);
}

// "MEM|PATH|CHUNK": --mem (one kind, or two A,B as p2p takes them), --mem-path, --stage-chunk.
void memory(const std::string& text) {
  const auto bar1 = text.find('|');
  const auto bar2 = bar1 == std::string::npos ? bar1 : text.find('|', bar1 + 1);
  if (bar2 == std::string::npos) return;
  const std::string mem = text.substr(0, bar1);
  const std::string path = text.substr(bar1 + 1, bar2 - bar1 - 1);
  const std::string chunk = text.substr(bar2 + 1);
  for (const auto& side : checked_split(mem)) {
    const auto request = ib::cli::parse_memory_request(side, path, chunk);
    IBSCOPE_FUZZ_CHECK(request.fragment_bytes >= 4096 && request.fragment_bytes <= (1u << 30));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(ib::fuzz::as_text(data + 1, size - 1));
  try {
    switch (data[0] % 7) {
      case 0:
        (void)ib::units::parse_size_bytes(text, "--size");
        break;
      case 1: {
        const double s = ib::units::parse_duration_s(text, "--timeout");
        IBSCOPE_FUZZ_CHECK(std::isfinite(s) && s > 0);
        break;
      }
      case 2:  // --sizes 0,4,12,1M
        for (const auto& item : checked_split(text)) {
          (void)ib::units::parse_size_bytes(item, "--sizes");
        }
        break;
      case 3:
        sweep(text, static_cast<std::uint8_t>(data[0] / 7));
        break;
      case 4:  // -d float,half / all
        for (const auto& item : checked_split(text)) {
          if (item != "all") (void)ib::parse_data_type(item);
        }
        break;
      case 5:  // -o sum,max / all
        for (const auto& item : checked_split(text)) {
          if (item != "all") (void)ib::parse_reduce_op(item);
        }
        break;
      case 6:
        memory(text);
        break;
    }
  } catch (const ib::UsageError&) {
  }
  return 0;
}
