// Memory spaces and staging logic without a GPU: the path decision for every (kind, request,
// UCX support) case, the --mem spellings, the host copy engine's deferred copies (what makes a
// pipeline that reads too early visible), fragment counts, and the host space's operations.

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/memory/copy_engine.hpp"
#include "ibscope/memory/mem_path.hpp"
#include "ibscope/memory/memory_space.hpp"
#include "ibscope/transport/ucx/staged_transfer.hpp"

using namespace ibscope;
using namespace ibscope::memory;

TEST_CASE("path decision: host, direct, staged", "[memory]") {
  CHECK(choose_path(MemKind::kHost, PathRequest::kAuto, false, "1.13.1").path == MemPath::kHost);
  CHECK(choose_path(MemKind::kHost, PathRequest::kAuto, true, "1.13.1").path == MemPath::kHost);
  CHECK(choose_path(MemKind::kHost, PathRequest::kDirect, false, "1.13.1").path == MemPath::kHost);
  CHECK(choose_path(MemKind::kHost, PathRequest::kStaged, false, "1.13.1").path ==
        MemPath::kStaged);
  CHECK(choose_path(MemKind::kCuda, PathRequest::kAuto, true, "1.16.0").path == MemPath::kDirect);
  CHECK(choose_path(MemKind::kCuda, PathRequest::kDirect, true, "1.16.0").path == MemPath::kDirect);
  const PathDecision fallback = choose_path(MemKind::kCuda, PathRequest::kAuto, false, "1.13.1");
  CHECK(fallback.path == MemPath::kStaged);
  CHECK(fallback.reason.find("1.13.1") != std::string::npos);
  CHECK(choose_path(MemKind::kCuda, PathRequest::kStaged, true, "1.16.0").path == MemPath::kStaged);
  try {
    choose_path(MemKind::kCuda, PathRequest::kDirect, false, "1.13.1");
    FAIL("direct without UCX CUDA support must be refused");
  } catch (const UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find("1.13.1") != std::string::npos);
    CHECK(what.find("--with-cuda") != std::string::npos);
    CHECK(what.find("--mem-path staged") != std::string::npos);
  }
}

TEST_CASE("mem and mem-path flag spellings", "[memory]") {
  CHECK(parse_mem_kind("host") == MemKind::kHost);
  CHECK(parse_mem_kind("H") == MemKind::kHost);
  CHECK(parse_mem_kind("cuda") == MemKind::kCuda);
  CHECK(parse_mem_kind("D") == MemKind::kCuda);
  CHECK_THROWS_AS(parse_mem_kind("gpu"), UsageError);
  CHECK(parse_path_request("auto") == PathRequest::kAuto);
  CHECK(parse_path_request("staged") == PathRequest::kStaged);
  CHECK_THROWS_WITH(parse_path_request("bounce"), Catch::Contains("auto, direct or staged"));
}

TEST_CASE("host copy engine: copies happen in order, only when polled", "[memory]") {
  auto engine = make_host_copy_engine();
  BounceBuffer bounce = engine->allocate_bounce(64);
  REQUIRE(bounce.size() >= 64);
  std::vector<char> src(64, 'a'), dst(64, 'z');
  std::memset(bounce.data(), 0, 64);
  const auto t1 = engine->start(bounce.data(), src.data(), 64);
  const auto t2 = engine->start(dst.data(), bounce.data(), 64);
  CHECK(t2 == t1 + 1);
  // Nothing has moved before a poll: a pipeline that used the data now would see stale bytes.
  CHECK(static_cast<char>(bounce.data()[0]) == 0);
  CHECK(dst[0] == 'z');
  CHECK(engine->done(t1));
  CHECK(static_cast<char>(bounce.data()[63]) == 'a');
  CHECK(dst[0] == 'z');  // the second copy waits for its own poll
  CHECK(engine->done(t2));
  CHECK(dst[63] == 'a');
  CHECK(engine->done(t1));  // done stays done
}

TEST_CASE("fragments of a staged message", "[memory]") {
  CHECK(ucx::fragment_count(0, 1 << 20) == 1);
  CHECK(ucx::fragment_count(1, 1 << 20) == 1);
  CHECK(ucx::fragment_count(1 << 20, 1 << 20) == 1);
  CHECK(ucx::fragment_count((1 << 20) + 1, 1 << 20) == 2);
  CHECK(ucx::fragment_count(64 << 20, 1 << 20) == 64);
  CHECK(ucx::fragment_count(12345, 0) == 1);  // 0: not fragmented
}

TEST_CASE("bounce pool reuses buffers by size class", "[memory]") {
  auto engine = make_host_copy_engine();
  ucx::BouncePool pool(*engine);
  BounceBuffer a = pool.take(100);
  CHECK(a.size() == 4096);  // at least a page
  std::byte* first = a.data();
  pool.give(std::move(a));
  BounceBuffer b = pool.take(4000);
  CHECK(b.data() == first);  // same class: reused, not allocated again
  BounceBuffer c = pool.take(5000);
  CHECK(c.size() == 8192);
  CHECK(pool.allocated_bytes() == 4096 + 8192);
}

TEST_CASE("host space: reduce, copy, mirrors", "[memory]") {
  auto space = host_space();
  CHECK(space->kind() == MemKind::kHost);
  SpaceBuffer buf = space->allocate(4 * sizeof(float));
  const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  float out[4] = {};
  space->from_host(buf.data(), a, sizeof a);
  space->reduce(DataType::kFloat32, ReduceOp::kSum, buf.data(), buf.data(), b, 4);
  space->to_host(out, buf.data(), sizeof out);
  CHECK(out[0] == 11);
  CHECK(out[3] == 44);
}
