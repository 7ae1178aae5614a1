// `ibscope report` opened in a real headless Chromium: results of real runs (a 2-rank
// all-reduce sweep, a p2p sweep, an acceptance run on 3 emulated hosts whose links fail an
// expected rate loopback cannot reach) become one page; the browser's screenshot is a real
// image and its DOM has every chart with its series, labelled axes with units, the line-rate
// reference and the failing pairs marked. Malformed files exit 2 without a page; a hostile
// host name stays text. Run by run_browser.sh (skips without Chromium).

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "dom.hpp"
#include "ibscope/bootstrap/socket.hpp"
#include "mp/process.hpp"

using namespace ibscope::test;
namespace fs = std::filesystem;

namespace {

std::string describe(const ProcessResult& r) {
  return fmt::format("exit {}{}\n--- stdout ---\n{}\n--- stderr ---\n{}", r.exit_code,
                     r.timed_out ? " (TIMED OUT)" : "", r.out, r.err);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump(1);
}

std::uint16_t free_port() {
  auto fd = ibscope::bootstrap::net::listen_tcp({"127.0.0.1", 0});
  return ibscope::bootstrap::net::bound_port(fd.get());
}

struct Runs {
  std::string dir, allreduce, p2p, accept;
};

// One set of real results for every case (the runs take most of the test's time).
const Runs& runs() {
  static const Runs r = [] {
    Runs out;
    out.dir = make_temp_dir();
    const auto ar = run_process({{"allreduce", "--np", "2", "-A", "ring,dbt", "-b", "1K", "-e",
                                  "1M", "-n", "5", "--out", out.dir},
                                 {},
                                 120});
    INFO(describe(ar));
    REQUIRE(ar.exit_code == 0);
    out.allreduce = results_path(ar);
    const auto p2p = run_process({{"p2p", "--np", "2", "-b", "1K", "-e", "256K", "-n", "20",
                                   "--bw-iters", "4", "--out", out.dir},
                                  {},
                                  120});
    INFO(describe(p2p));
    REQUIRE(p2p.exit_code == 0);
    out.p2p = results_path(p2p);
    // 3 emulated hosts (TCP store, UCX over TCP): every link misses 4000 Gb/s.
    const std::string root = fmt::format("127.0.0.1:{}", free_port());
    std::vector<Running> ranks;
    for (int rank = 0; rank < 3; ++rank) {
      ranks.push_back(start_process(
          {{"accept",        "--transport", "ucx",         "--timeout",   "30",
            "--expect-gbps", "4000",        "--link-kind", "tcp",         "--bw-size",
            "256K",          "--bw-iters",  "4",           "--lat-iters", "50",
            "--retests",     "1",           "-A",          "ring",        "--ar-sizes",
            "64K,256K,1M",   "--ar-iters",  "10",          "--out",       out.dir},
           {{"IBSCOPE_BOOTSTRAP", "tcp"},
            {"IBSCOPE_RANK", std::to_string(rank)},
            {"IBSCOPE_SIZE", "3"},
            {"IBSCOPE_ROOT", root},
            {"IBSCOPE_TOKEN", "browser-test"},
            {"IBSCOPE_HOSTNAME", fmt::format("emu{}", rank)},
            {"UCX_TLS", "tcp"}},
           120}));
    }
    std::vector<ProcessResult> done;
    for (auto& r : ranks) done.push_back(wait_process(r));
    INFO(describe(done[0]));
    REQUIRE(done[0].exit_code == 1);
    out.accept = results_path(done[0]);
    REQUIRE(!out.accept.empty());
    return out;
  }();
  return r;
}

ProcessResult report(const std::vector<std::string>& args) {
  std::vector<std::string> a = {"report"};
  a.insert(a.end(), args.begin(), args.end());
  return run_process({a, {}, 60});
}

std::string chromium() {
  const char* c = std::getenv("IBSCOPE_CHROMIUM");
  return c == nullptr ? "" : c;
}

ProcessResult run_chromium_once(const std::vector<std::string>& args) {
  const std::string profile = make_temp_dir();
  std::vector<std::string> a = {"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--user-data-dir=" + profile};
  a.insert(a.end(), args.begin(), args.end());
  ProcessSpec spec{a, {}, 60, chromium()};
  auto r = run_process(spec);
  std::error_code ec;
  fs::remove_all(profile, ec);
  return r;
}

// A browser that fails to start (not the page: the page is checked after) gets one more try.
ProcessResult run_chromium(const std::vector<std::string>& args) {
  ProcessResult r = run_chromium_once(args);
  if (r.exit_code != 0) {
    WARN("chromium exited " << r.exit_code << "; once more. stderr:\n" << r.err.substr(0, 2000));
    r = run_chromium_once(args);
  }
  return r;
}

Dom browser_dom(const std::string& html) {
  const auto r = run_chromium({"--dump-dom", "file://" + fs::absolute(html).string()});
  INFO(describe(r).substr(0, 4000));
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.find("</html>") != std::string::npos);
  return parse_dom(r.out);
}

struct ChartView {
  std::string id;
  std::vector<const Element*> elements;
  std::vector<const Element*> with_class(const std::string& cls) const {
    std::vector<const Element*> out;
    for (const auto* e : elements) {
      const std::string c = " " + e->attr("class") + " ";
      if (c.find(" " + cls + " ") != std::string::npos) out.push_back(e);
    }
    return out;
  }
};

std::map<std::string, ChartView> charts_of(const Dom& dom) {
  std::map<std::string, ChartView> out;
  std::vector<std::string> ids;
  for (std::size_t k : dom.charts) ids.push_back(dom.elements[k].attr("data-chart"));
  for (const auto& e : dom.elements) {
    if (e.chart < 0) continue;
    ChartView& v = out[ids[static_cast<std::size_t>(e.chart)]];
    v.id = ids[static_cast<std::size_t>(e.chart)];
    v.elements.push_back(&e);
  }
  return out;
}

// Every axis label names its unit in parentheses, e.g. "busbw (GB/s)".
void check_axis_labels(const ChartView& c) {
  const auto labels = c.with_class("axis-label");
  INFO("chart " << c.id);
  REQUIRE(labels.size() == 2);
  for (const auto* l : labels) {
    INFO("axis label '" << l->text << "'");
    CHECK(l->text.find('(') != std::string::npos);
    CHECK(l->text.find(')') != std::string::npos);
  }
}

// At least one series path with points; returns the series names.
std::set<std::string> check_series(const ChartView& c) {
  INFO("chart " << c.id);
  std::set<std::string> names;
  int with_points = 0;
  for (const auto* p : c.with_class("series")) {
    names.insert(p->attr("data-series"));
    if (std::atoi(p->attr("data-points").c_str()) > 0 && !p->attr("d").empty()) ++with_points;
  }
  CHECK(with_points >= 1);
  return names;
}

bool any_starts_with(const std::set<std::string>& names, const std::string& prefix) {
  for (const auto& n : names) {
    if (n.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool has_element(const Dom& dom, const std::string& name) {
  for (const auto& e : dom.elements) {
    if (e.name == name) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("report of real runs: every chart in headless Chromium, screenshot", "[browser]") {
  REQUIRE(!chromium().empty());
  const Runs& r = runs();
  const std::string html = r.dir + "/report.html";
  const auto rep = report({r.allreduce, r.p2p, r.accept, "--label", "allreduce,p2p,accept",
                           "--title", "browser test", "-o", html});
  INFO(describe(rep));
  REQUIRE(rep.exit_code == 0);
  CHECK(rep.out.find("# report: " + html) != std::string::npos);
  const std::string page = read_file(html);
  // Self-contained: no script, nothing fetched.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find(" src=") == std::string::npos);

  const Dom dom = browser_dom(html);
  CHECK_FALSE(has_element(dom, "script"));
  const auto charts = charts_of(dom);
  for (const char* id :
       {"busbw-allreduce", "latency-allreduce", "p2p-latency", "p2p-bw", "pairs-bw-2", "pairs-bw-3",
        "stragglers-3", "arrivals-3", "fit-allreduce", "fit-p2p-latency"}) {
    INFO("chart " << id);
    CHECK(charts.count(id) == 1);
  }
  for (const auto& [id, c] : charts) {
    check_axis_labels(c);
    if (id.rfind("pairs-bw", 0) == 0) {
      CHECK(!c.with_class("cell").empty());
    } else if (id.rfind("stragglers", 0) == 0) {
      CHECK(c.with_class("segment").size() == 3);  // one bar per rank
    } else {
      check_series(c);
    }
  }
  // Comparison: both files with all-reduce rows on the same axes, each under its label; the
  // expected rate from the acceptance run drawn as a reference.
  const auto& busbw = charts.at("busbw-allreduce");
  const auto names = check_series(busbw);
  CHECK(any_starts_with(names, "allreduce: ring"));
  CHECK(any_starts_with(names, "allreduce: dbt"));
  CHECK(any_starts_with(names, "accept: ring"));
  REQUIRE(!busbw.with_class("reference").empty());
  CHECK(std::atof(busbw.with_class("reference")[0]->attr("data-value").c_str()) > 0);
  CHECK(!charts.at("p2p-bw").with_class("reference").empty());
  // Every link missed 4000 Gb/s: failing cells marked in the acceptance matrix (3 links,
  // both halves of the symmetric matrix).
  const auto& pairs = charts.at("pairs-bw-3");
  CHECK(pairs.with_class("fail").size() == 6);
  CHECK(pairs.with_class("fail-mark").size() == 6);
  CHECK(charts.at("pairs-bw-2").with_class("fail").empty());  // p2p: no verdicts

  // Without a workload the training section says how to get one.
  bool training_note = false;
  for (const auto& e : dom.elements) {
    if (e.name == "p" && e.text.find("No workload given") != std::string::npos)
      training_note = true;
  }
  CHECK(training_note);

  const std::string png = r.dir + "/report.png";
  const auto shot = run_chromium({"--screenshot=" + png, "--window-size=1280,4000",
                                  "--hide-scrollbars", "file://" + fs::absolute(html).string()});
  INFO(describe(shot).substr(0, 4000));
  REQUIRE(shot.exit_code == 0);
  const std::string image = read_file(png);
  REQUIRE(image.size() > 20000);
  REQUIRE(image.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  const auto be32 = [&](std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(image[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(image[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(image[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(image[at + 3]));
  };
  CHECK(image.compare(12, 4, "IHDR") == 0);
  CHECK(be32(16) == 1280);
  CHECK(be32(20) == 4000);
}

TEST_CASE("report: the training step from the files' tiers, or what is missing", "[browser]") {
  REQUIRE(!chromium().empty());
  const Runs& r = runs();
  SECTION("intra tier fitted from the 2-rank runs, inter tier given: breakdown and what-ifs") {
    const std::string html = r.dir + "/training.html";
    const auto rep = report({r.allreduce, r.p2p, "--preset", "llama2-7b", "--inter-bw-gbps", "12.5",
                             "--inter-lat-us", "5", "-o", html});
    INFO(describe(rep));
    REQUIRE(rep.exit_code == 0);
    const Dom dom = browser_dom(html);
    const auto charts = charts_of(dom);
    REQUIRE(charts.count("step") == 1);
    const auto& step = charts.at("step");
    check_axis_labels(step);
    // baseline + 3 default what-ifs, 5 terms each
    CHECK(step.with_class("segment").size() == 20);
    bool what_if_table = false;
    for (const auto& e : dom.elements) {
      if (e.name == "th" && e.text == "changed step (s)") what_if_table = true;
    }
    CHECK(what_if_table);
  }
  SECTION("one host only: the section says which tier is missing, the page is still made") {
    const std::string html = r.dir + "/missing.html";
    const auto rep = report({r.allreduce, "--preset", "llama2-7b", "-o", html});
    INFO(describe(rep));
    REQUIRE(rep.exit_code == 0);
    const Dom dom = browser_dom(html);
    bool missing = false;
    for (const auto& e : dom.elements) {
      if (e.attr("class") == "note missing" && e.text.find("Not computed") != std::string::npos) {
        missing = true;
      }
    }
    CHECK(missing);
    CHECK(charts_of(dom).count("step") == 0);
  }
}

TEST_CASE("report: a malformed results file exits 2 naming it, and writes no page", "[browser]") {
  const Runs& r = runs();
  SECTION("truncated JSON") {
    const std::string bad = r.dir + "/truncated.json";
    const std::string text = read_file(r.allreduce);
    std::ofstream(bad) << text.substr(0, text.size() / 2);
    const std::string html = r.dir + "/truncated.html";
    const auto rep = report({r.p2p, bad, "-o", html});
    INFO(describe(rep));
    CHECK(rep.exit_code == 2);
    CHECK(rep.err.find(bad) != std::string::npos);
    CHECK_FALSE(fs::exists(html));
  }
  SECTION("a mistyped field of the acceptance section, named by its JSON path") {
    nlohmann::json doc = nlohmann::json::parse(read_file(r.accept));
    doc["acceptance"]["links"][1]["measured_gbps"] = "fast";
    const std::string bad = r.dir + "/bad-accept.json";
    write_json(bad, doc);
    const std::string html = r.dir + "/bad-accept.html";
    const auto rep = report({bad, "-o", html});
    INFO(describe(rep));
    CHECK(rep.exit_code == 2);
    CHECK(rep.err.find(bad + ": acceptance.links[1].measured_gbps: expected a number") !=
          std::string::npos);
    CHECK_FALSE(fs::exists(html));
  }
  SECTION("an existing output is never overwritten") {
    const std::string html = r.dir + "/exists.html";
    std::ofstream(html) << "keep";
    const auto rep = report({r.p2p, "-o", html});
    CHECK(rep.exit_code == 2);
    CHECK(read_file(html) == "keep");
  }
}

TEST_CASE("report: a hostile host name in a results file stays text", "[browser]") {
  REQUIRE(!chromium().empty());
  const Runs& r = runs();
  const std::string hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>";
  nlohmann::json p2p = nlohmann::json::parse(read_file(r.p2p));
  for (auto& h : p2p["job"]["hosts"]) h = hostile;
  for (auto& row : p2p["p2p"]["rows"]) row["host_a"] = hostile;
  nlohmann::json accept = nlohmann::json::parse(read_file(r.accept));
  accept["acceptance"]["links"][0]["host_a"] = hostile;
  accept["acceptance"]["stragglers"]["ranks"][0]["host"] = hostile;
  accept["warnings"].push_back(hostile);
  const std::string p2p_file = r.dir + "/hostile-p2p.json",
                    accept_file = r.dir + "/hostile-accept.json";
  write_json(p2p_file, p2p);
  write_json(accept_file, accept);
  const std::string html = r.dir + "/hostile.html";
  const auto rep = report(
      {p2p_file, accept_file, "--label", hostile + "," + hostile, "--title", hostile, "-o", html});
  INFO(describe(rep));
  REQUIRE(rep.exit_code == 0);
  const std::string page = read_file(html);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<img") == std::string::npos);
  const Dom dom = browser_dom(html);
  CHECK_FALSE(has_element(dom, "script"));
  CHECK_FALSE(has_element(dom, "img"));
  // The name is shown as written: as text (headings, tables, SVG labels) and attribute values.
  int as_text = 0;
  for (const auto& e : dom.elements) {
    if (e.text.find(hostile) != std::string::npos) ++as_text;
  }
  CHECK(as_text >= 5);
}
