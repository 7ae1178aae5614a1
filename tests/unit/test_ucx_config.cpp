// Which UCX_TLS values leave shared memory in (and so need UCX_MM_ERROR_HANDLING).

#include <catch2/catch.hpp>

#include "ibscope/transport/ucx/context.hpp"

using ibscope::ucx::uses_shared_memory;

TEST_CASE("UCX_TLS: shared memory in or out", "[ucx][config]") {
  CHECK(uses_shared_memory(nullptr));
  CHECK(uses_shared_memory(""));
  CHECK(uses_shared_memory("all"));
  CHECK(uses_shared_memory("sm,tcp"));
  CHECK(uses_shared_memory("tcp,posix"));
  CHECK(uses_shared_memory("sysv"));
  CHECK(uses_shared_memory("^cma"));
  CHECK(uses_shared_memory("^ud_verbs"));
  CHECK_FALSE(uses_shared_memory("^ud_verbs,sm"));  // ibscope's Soft-RoCE default
  CHECK_FALSE(uses_shared_memory("^shm"));
  CHECK_FALSE(uses_shared_memory("tcp"));
  CHECK_FALSE(uses_shared_memory("rc,ud"));
  CHECK_FALSE(uses_shared_memory("tcp,cma"));
  CHECK_FALSE(uses_shared_memory("smx"));  // a name that merely contains "sm"
}
