// output/progress_line: the text (pure) and that a disabled line writes nothing.

#include <catch2/catch.hpp>
#include <cstdio>

#include "ibscope/output/progress_line.hpp"

using ibscope::output::progress_text;
using ibscope::output::ProgressLine;

TEST_CASE("progress text: step, percentage and the time left", "[progress]") {
  CHECK(progress_text("allreduce ring float sum 4 MiB", 0, 60, 0) ==
        "[1/60   0 %] allreduce ring float sum 4 MiB");
  // 12 of 60 done in 6 s: 0.5 s per step, 48 left -> 24 s.
  CHECK(progress_text("x", 12, 60, 6.0) == "[13/60  20 %] x  ~24 s left");
  // 10 of 100 in 90 s: 810 s left = 13 min 30 s.
  CHECK(progress_text("x", 10, 100, 90.0) == "[11/100  10 %] x  ~13 min 30 s left");
  // 1 of 1000 in 20 s: 19980 s = 5 h 33 min.
  CHECK(progress_text("x", 1, 1000, 20.0) == "[2/1000   0 %] x  ~5 h 33 min left");
}

TEST_CASE("a disabled progress line writes nothing", "[progress]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    ProgressLine line(false, f);
    line.update("x", 0, 3);
    line.update("y", 1, 3);
    CHECK(!line.callback());
  }
  CHECK(std::ftell(f) == 0);
  {
    ProgressLine line(true, f);
    line.callback()("z", 0, 2);
  }  // drawn, then erased by the destructor
  CHECK(std::ftell(f) > 0);
  std::fclose(f);
}
