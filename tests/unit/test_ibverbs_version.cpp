// The libibverbs version: from the loaded library's file name, into every results file and the
// report (which said "not recorded in results files (schema v1)" for every file).

#include <catch2/catch.hpp>
#include <string>

#include "ibscope/output/html_report.hpp"
#include "ibscope/transport/verbs/library_version.hpp"

using ibscope::verbs::version_from_library_path;

TEST_CASE("libibverbs version: from the library's file name", "[verbs][ibverbs_version]") {
  CHECK(version_from_library_path("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0") ==
        "1.14.44.0");
  CHECK(version_from_library_path("libibverbs.so.1") == "1");
  CHECK_FALSE(version_from_library_path("/usr/lib/libibverbs.so").has_value());
  CHECK_FALSE(version_from_library_path("/usr/lib/libibverbs.so.").has_value());
  CHECK_FALSE(version_from_library_path("/usr/lib/libmlx5.so.1.24.44.0").has_value());
  CHECK_FALSE(version_from_library_path("/opt/libibverbs.so.1/libucp.so.0").has_value());
  // This test links libibverbs (through the library): the one loaded here has a version.
  const auto loaded = ibscope::verbs::loaded_library_version();
  REQUIRE(loaded.has_value());
  CHECK(loaded->find('.') != std::string::npos);
}

TEST_CASE("libibverbs version: the report shows each file's", "[report][ibverbs_version]") {
  ibscope::output::ReportFile with, without;
  with.path = "new.json";
  with.label = "new";
  with.doc.environment.ibverbs_version = "1.14.44.0";
  without.path = "old.json";
  without.label = "old";
  const std::string page = ibscope::output::html_report({with}, {});
  CHECK(page.find("1.14.44.0") != std::string::npos);
  CHECK(page.find("libibverbs") != std::string::npos);
  CHECK(page.find("schema v1") == std::string::npos);
  CHECK(page.find("does not record it") == std::string::npos);
  const std::string both = ibscope::output::html_report({with, without}, {});
  CHECK(both.find("does not record it") != std::string::npos);
}
