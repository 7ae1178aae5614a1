// A mistyped command is named and the nearest command suggested (cli/command_names.hpp).

#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ibscope/cli/command_names.hpp"
#include "ibscope/core/error.hpp"

using namespace ibscope;

TEST_CASE("command names: edit distance and the nearest name", "[cli][command_names]") {
  CHECK(cli::edit_distance("", "") == 0);
  CHECK(cli::edit_distance("allreduc", "allreduce") == 1);
  CHECK(cli::edit_distance("alreduce", "allreduce") == 1);
  CHECK(cli::edit_distance("allerduce", "allreduce") == 2);
  CHECK(cli::edit_distance("kitten", "sitting") == 3);
  const std::vector<std::string> names{"allreduce", "allgather", "all_gather", "p2p", "probe",
                                       "report",    "recover",   "run",        "topo"};
  CHECK(cli::nearest_name("allreduc", names) == "allreduce");
  CHECK(cli::nearest_name("allgathr", names) == "allgather");
  CHECK(cli::nearest_name("prob", names) == "probe");
  CHECK(cli::nearest_name("tpo", names) == "topo");
  CHECK(cli::nearest_name("rep", names) == "report");  // a prefix
  // Nothing near: no suggestion rather than a wild one.
  CHECK_FALSE(cli::nearest_name("foo", names).has_value());
  CHECK_FALSE(cli::nearest_name("x", names).has_value());
  CHECK_FALSE(cli::nearest_name("benchmark", names).has_value());
}

TEST_CASE("command names: an unknown first word is a usage error naming it",
          "[cli][command_names]") {
  CLI::App app;
  app.add_subcommand("allreduce", "")->alias("all_reduce");
  app.add_subcommand("topo", "");
  std::string prog = "ibscope", typo = "allreduc", alias = "all_reduce", flag = "--help",
              foo = "foo";
  {
    char* argv[] = {prog.data(), typo.data(), nullptr};
    CHECK_THROWS_AS(cli::check_command_name(app, 2, argv), UsageError);
    CHECK_THROWS_WITH(cli::check_command_name(app, 2, argv),
                      Catch::Contains("unknown command 'allreduc' (did you mean 'allreduce'?)"));
  }
  {
    char* argv[] = {prog.data(), foo.data(), nullptr};
    CHECK_THROWS_WITH(
        cli::check_command_name(app, 2, argv),
        Catch::Contains("unknown command 'foo';") && !Catch::Contains("did you mean"));
  }
  for (std::string* ok : {&alias, &flag}) {
    char* argv[] = {prog.data(), ok->data(), nullptr};
    CHECK_NOTHROW(cli::check_command_name(app, 2, argv));
  }
  char* only[] = {prog.data(), nullptr};
  CHECK_NOTHROW(cli::check_command_name(app, 1, only));
  CHECK(cli::command_names(app) == std::vector<std::string>{"allreduce", "all_reduce", "topo"});
}
