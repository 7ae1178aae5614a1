// Prometheus export of acceptance verdicts: escaping, the exposition format's line shapes,
// metric names and labels, one sample per link/host/NIC/rank; the sections are read through the
// results loader, which refuses a malformed one naming the JSON path.

#include <catch2/catch.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/text_lines.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/output/prometheus.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/writer.hpp"

using nlohmann::json;
namespace prom = ibscope::output::prometheus;

namespace {

json link(int a, int b, const std::string& host_a, const std::string& host_b, double gbps,
          double expected, bool pass) {
  return {{"rank_a", a},
          {"rank_b", b},
          {"host_a", host_a},
          {"host_b", host_b},
          {"nic_a", "mlx5_0:1"},
          {"nic_b", "mlx5_0:1"},
          {"measured_gbps", gbps},
          {"expected_gbps", expected},
          {"fraction_of_expected", expected > 0 ? gbps / expected : 0.0},
          {"latency_us", 2.5},
          {"pass", pass},
          {"reason", pass ? "" : "below expected"}};
}

json host(const std::string& name, bool pass, bool culprit) {
  return {{"host", name},
          {"links", 2},
          {"failed_links", pass ? 0 : 2},
          {"pass", pass},
          {"culprit", culprit}};
}

// Three hosts, h2 slow: both of its links fail; rank 2 is the straggler.
json section() {
  return {{"pass", false},
          {"transport", "verbs"},
          {"links",
           {link(0, 1, "h0", "h1", 48.0, 49.68, true), link(0, 2, "h0", "h2", 12.0, 49.68, false),
            link(1, 2, "h1", "h2", 11.5, 49.68, false)}},
          {"hosts", {host("h0", true, false), host("h1", true, false), host("h2", false, true)}},
          {"nics",
           {{{"host", "h2"},
             {"nic", "mlx5_0:1"},
             {"links", 2},
             {"failed_links", 2},
             {"culprit", true},
             {"pass", false}}}},
          {"allreduce", {{"rows", 4}, {"wrong", 0}}},
          {"stragglers",
           {{"ranks",
             {{{"rank", 0}, {"host", "h0"}},
              {{"rank", 1}, {"host", "h1"}},
              {{"rank", 2}, {"host", "h2"}}}},
            {"straggler", {{"rank", 2}, {"host", "h2"}}}}}};
}

// The section as every reader gets it: inside a results file, through the results loader.
ibscope::results::Acceptance typed(const json& acceptance) {
  namespace results = ibscope::results;
  json doc = json::parse(results::to_text(results::Document::start("accept", {"ibscope"})));
  doc["acceptance"] = acceptance;
  return *results::parse(doc.dump(), "x.json").acceptance;
}

std::vector<std::string> samples_named(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& l : ibscope::test::lines_of(text)) {
    if (l.rfind(name + "{", 0) == 0 || l.rfind(name + " ", 0) == 0) out.push_back(l);
  }
  return out;
}

}  // namespace

TEST_CASE("label values and help text are escaped as the exposition format requires",
          "[prometheus]") {
  CHECK(prom::escape_label_value("plain-host_01.example") == "plain-host_01.example");
  CHECK(prom::escape_label_value(R"(a\b)") == R"(a\\b)");
  CHECK(prom::escape_label_value(R"(say "hi")") == R"(say \"hi\")");
  CHECK(prom::escape_label_value("two\nlines") == R"(two\nlines)");
  CHECK(prom::escape_help("a \"quoted\" \\ and\nnewline") == "a \"quoted\" \\\\ and\\nnewline");

  prom::Family f{"ibscope_test", "help", "gauge", {{{{"host", "we\"ird\\\n"}}, 1}}};
  CHECK(prom::exposition_text({f}) ==
        "# HELP ibscope_test help\n# TYPE ibscope_test "
        "gauge\nibscope_test{host=\"we\\\"ird\\\\\\n\"} 1\n");
}

TEST_CASE("exposition text: HELP and TYPE once per family, values, no empty families",
          "[prometheus]") {
  std::vector<prom::Family> fams = {
      {"a_metric", "first", "gauge", {{{}, 0.5}, {{{"k", "v"}}, 2e-7}}},
      {"empty_metric", "nothing", "gauge", {}},
      {"nan_metric", "not finite", "gauge", {{{}, std::numeric_limits<double>::quiet_NaN()}}},
      {"big_metric", "time", "gauge", {{{}, 1764756000}}}};
  const std::string text = prom::exposition_text(fams);
  CHECK(text ==
        "# HELP a_metric first\n# TYPE a_metric gauge\na_metric 0.5\na_metric{k=\"v\"} 2e-07\n"
        "# HELP big_metric time\n# TYPE big_metric gauge\nbig_metric 1764756000\n");
}

TEST_CASE("acceptance metrics: one sample per link, host, NIC and rank, parseable lines",
          "[prometheus]") {
  const std::string text =
      prom::exposition_text(prom::acceptance_metrics(typed(section()), 1764756000));
  INFO(text);
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [0-9eE.+-]+$)");
  for (const auto& l : ibscope::test::lines_of(text)) {
    if (l.rfind("# HELP ", 0) == 0 || l.rfind("# TYPE ", 0) == 0) continue;
    INFO(l);
    CHECK(std::regex_match(l, sample));
  }
  CHECK(samples_named(text, "ibscope_accept_pass") ==
        std::vector<std::string>{"ibscope_accept_pass{transport=\"verbs\"} 0"});
  CHECK(samples_named(text, "ibscope_accept_timestamp_seconds") ==
        std::vector<std::string>{"ibscope_accept_timestamp_seconds 1764756000"});
  CHECK(samples_named(text, "ibscope_accept_links") ==
        std::vector<std::string>{"ibscope_accept_links 3"});
  CHECK(samples_named(text, "ibscope_accept_failed_links") ==
        std::vector<std::string>{"ibscope_accept_failed_links 2"});
  CHECK(samples_named(text, "ibscope_accept_failed_hosts") ==
        std::vector<std::string>{"ibscope_accept_failed_hosts 1"});
  for (const char* name :
       {"ibscope_link_bandwidth_gbps", "ibscope_link_expected_gbps",
        "ibscope_link_fraction_of_expected", "ibscope_link_latency_us", "ibscope_link_pass"}) {
    INFO(name);
    CHECK(samples_named(text, name).size() == 3);
  }
  CHECK(samples_named(text, "ibscope_link_bandwidth_gbps")[1] ==
        "ibscope_link_bandwidth_gbps{rank_a=\"0\",rank_b=\"2\",host_a=\"h0\",host_b=\"h2\","
        "nic_a=\"mlx5_0:1\",nic_b=\"mlx5_0:1\"} 12");
  CHECK(samples_named(text, "ibscope_link_pass")[0].ends_with("} 1"));
  CHECK(samples_named(text, "ibscope_link_pass")[2].ends_with("} 0"));
  CHECK(samples_named(text, "ibscope_host_pass") ==
        std::vector<std::string>{"ibscope_host_pass{host=\"h0\"} 1",
                                 "ibscope_host_pass{host=\"h1\"} 1",
                                 "ibscope_host_pass{host=\"h2\"} 0"});
  CHECK(samples_named(text, "ibscope_host_culprit")[2] == "ibscope_host_culprit{host=\"h2\"} 1");
  CHECK(samples_named(text, "ibscope_nic_pass") ==
        std::vector<std::string>{"ibscope_nic_pass{host=\"h2\",nic=\"mlx5_0:1\"} 0"});
  CHECK(samples_named(text, "ibscope_straggler") ==
        std::vector<std::string>{"ibscope_straggler{rank=\"0\",host=\"h0\"} 0",
                                 "ibscope_straggler{rank=\"1\",host=\"h1\"} 0",
                                 "ibscope_straggler{rank=\"2\",host=\"h2\"} 1"});
  CHECK(samples_named(text, "ibscope_accept_allreduce_wrong") ==
        std::vector<std::string>{"ibscope_accept_allreduce_wrong 0"});
  // Every family's HELP and TYPE precede its samples, once.
  for (const auto& l : ibscope::test::lines_of(text)) {
    if (l.rfind("# TYPE ", 0) == 0) CHECK(l.ends_with(" gauge"));
  }
}

TEST_CASE("acceptance metrics leave out what is unknown", "[prometheus]") {
  json a = section();
  for (auto& l : a["links"]) {
    l["expected_gbps"] = 0;  // UCX over TCP without --expect-gbps
    l["fraction_of_expected"] = 0;
    l["latency_us"] = 0;
  }
  a["stragglers"] = nullptr;  // --skip-allreduce
  a.erase("allreduce");
  a.erase("nics");
  const std::string text = prom::exposition_text(prom::acceptance_metrics(typed(a), 1));
  CHECK(samples_named(text, "ibscope_link_bandwidth_gbps").size() == 3);
  CHECK(text.find("ibscope_link_expected_gbps") == std::string::npos);
  CHECK(text.find("ibscope_link_fraction_of_expected") == std::string::npos);
  CHECK(text.find("ibscope_link_latency_us") == std::string::npos);
  CHECK(text.find("ibscope_straggler") == std::string::npos);
  CHECK(text.find("ibscope_nic_pass") == std::string::npos);

  SECTION("no straggler: every rank 0") {
    json b = section();
    b["stragglers"]["straggler"] = nullptr;
    const std::string t = prom::exposition_text(prom::acceptance_metrics(typed(b), 1));
    for (const auto& l : samples_named(t, "ibscope_straggler")) CHECK(l.ends_with("} 0"));
  }
}

TEST_CASE("a malformed acceptance section is refused by the loader, naming the JSON path",
          "[prometheus]") {
  const auto message_of = [](const json& a) {
    try {
      (void)typed(a);
    } catch (const ibscope::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json a = section();
  a["links"][1].erase("host_b");
  CHECK(message_of(a) == "x.json: acceptance.links[1].host_b: missing");
  a = section();
  a["links"][0]["measured_gbps"] = "fast";
  CHECK(message_of(a) ==
        "x.json: acceptance.links[0].measured_gbps: expected a number or null, got string");
  a = section();
  a["hosts"] = "h0";
  CHECK(message_of(a) == "x.json: acceptance.hosts: expected an array, got string");
  a = section();
  a["pass"] = 1;
  CHECK(message_of(a) == "x.json: acceptance.pass: expected true or false, got number");
  CHECK(message_of(json::array()) == "x.json: acceptance: expected an object, got array");
}

TEST_CASE("a textfile path must end in .prom and be in an existing folder", "[prometheus]") {
  CHECK_THROWS_WITH(prom::check_textfile_path("/tmp/ibscope.txt", "-o"),
                    Catch::Contains("reads only *.prom"));
  CHECK_THROWS_WITH(prom::check_textfile_path("/no/such/folder/ibscope.prom", "-o"),
                    Catch::Contains("no folder /no/such/folder"));
  CHECK_NOTHROW(prom::check_textfile_path("/tmp/ibscope.prom", "-o"));
  CHECK_NOTHROW(prom::check_textfile_path("ibscope.prom", "-o"));
}
