// All-to-all-v counts (collectives/pattern/alltoallv_counts.hpp): the generators, the scaling,
// the plans every rank computes, the imbalance, and the counts file's errors.
#include <catch2/catch.hpp>
#include <numeric>

#include "ibscope/collectives/pattern/alltoallv_counts.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts_file.hpp"
#include "ibscope/core/error.hpp"

using namespace ibscope;
namespace co = ibscope::collectives;

namespace {

std::string a2av_error_of(std::string_view text) {
  try {
    co::parse_counts_matrix(text, "m.txt");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("scale_to_total: exact totals, largest remainders, zero weights stay zero",
          "[alltoallv][counts]") {
  const std::vector<double> w{1, 1, 1};
  CHECK(co::scale_to_total(w, 10) == std::vector<std::size_t>{4, 3, 3});
  const std::vector<double> z{0, 2, 0, 1};
  CHECK(co::scale_to_total(z, 7) == std::vector<std::size_t>{0, 5, 0, 2});
  CHECK(co::scale_to_total(z, 0) == std::vector<std::size_t>{0, 0, 0, 0});
  const std::vector<double> tiny{1e-300, 1, 1e300};
  const auto t = co::scale_to_total(tiny, 1000);
  CHECK(std::accumulate(t.begin(), t.end(), std::size_t{0}) == 1000);
}

TEST_CASE("generators: uniform and zipf parse, bad ones are refused", "[alltoallv][counts]") {
  CHECK(co::parse_counts_generator("uniform").kind == co::CountsSpec::Kind::kUniform);
  const co::CountsSpec z = co::parse_counts_generator("zipf:1.5:42");
  CHECK(z.kind == co::CountsSpec::Kind::kZipf);
  CHECK(z.zipf_exponent == 1.5);
  CHECK(z.seed == 42);
  CHECK(co::parse_counts_generator("zipf:0.8").seed == 1);
  for (const char* bad :
       {"zipf", "zipf:", "zipf:-1", "zipf:x", "zipf:1:", "zipf:1:-3", "zipf:1:2:3", "zipf:nan"}) {
    INFO(bad);
    CHECK_THROWS_AS(co::parse_counts_generator(bad), UsageError);
  }
  CHECK(co::is_counts_generator("uniform"));
  CHECK_FALSE(co::is_counts_generator("counts.txt"));
}

TEST_CASE("counts matrix: every p in 1..64, plans agree with the matrix", "[alltoallv][counts]") {
  for (const char* text : {"uniform", "zipf:1.2:7", "zipf:3"}) {
    const co::CountsSpec spec = co::parse_counts_generator(text);
    for (int p = 1; p <= 64; ++p) {
      for (std::size_t mean : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
        INFO(text << " p=" << p << " mean=" << mean);
        const co::CountsMatrix m(spec, p, mean);
        std::size_t total = 0;
        for (int s = 0; s < p; ++s) {
          const auto r = m.row(s);
          const std::size_t sent = std::accumulate(r.begin(), r.end(), std::size_t{0});
          REQUIRE(sent == mean);  // a generator: every rank sends exactly the mean
          total += sent;
        }
        REQUIRE(total == m.total());
        for (int me = 0; me < p; me += std::max(1, p / 5)) {
          const co::AlltoallvPlan plan = co::make_alltoallv_plan(m, me);
          REQUIRE(plan.send_total == mean);
          std::size_t off = 0;
          for (int q = 0; q < p; ++q) {
            const auto uq = static_cast<std::size_t>(q);
            REQUIRE(plan.recv_counts[uq] == m.at(q, me));
            REQUIRE(plan.recv_offsets[uq] == off);
            off += plan.recv_counts[uq];
            std::size_t src = 0;
            for (int d = 0; d < me; ++d) src += m.at(q, d);
            REQUIRE(plan.source_offsets[uq] == src);
            REQUIRE(plan.send_offsets[uq] + plan.send_counts[uq] <= plan.send_total);
          }
          REQUIRE(plan.recv_total == off);
          REQUIRE(std::max(plan.send_total, plan.recv_total) <= m.max_rank_count());
        }
      }
    }
  }
}

TEST_CASE("zipf: skewed, seeded, same on every rank - imbalance as defined",
          "[alltoallv][counts]") {
  const co::CountsMatrix a(co::parse_counts_generator("zipf:1:5"), 8, 8000);
  const co::CountsMatrix b(co::parse_counts_generator("zipf:1:5"), 8, 8000);
  const co::CountsMatrix c(co::parse_counts_generator("zipf:1:6"), 8, 8000);
  CHECK(std::equal(a.row(3).begin(), a.row(3).end(), b.row(3).begin()));
  CHECK_FALSE(std::equal(a.row(3).begin(), a.row(3).end(), c.row(3).begin()));
  const auto r = a.row(0);
  // The hottest destination gets 1/H_8 of the row (H_8 = 2.7179), the coldest 1/8 of that.
  CHECK(*std::max_element(r.begin(), r.end()) == Approx(8000 / 2.717857).margin(1));
  const co::CountsImbalance im = a.imbalance();
  CHECK(im.send_max_over_mean == 1.0);
  CHECK(im.recv_max_over_mean == Approx(8 / 2.717857).epsilon(1e-3));
  CHECK(im.pair_max_over_mean == Approx(8 / 2.717857).epsilon(1e-3));
  const co::CountsImbalance flat =
      co::CountsMatrix(co::parse_counts_generator("uniform"), 8, 8000).imbalance();
  CHECK(flat.send_max_over_mean == 1.0);
  CHECK(flat.recv_max_over_mean == 1.0);
  CHECK(flat.pair_max_over_mean == 1.0);
  CHECK(
      co::CountsMatrix(co::parse_counts_generator("zipf:2"), 8, 0).imbalance().pair_max_over_mean ==
      1);
}

TEST_CASE("counts file: a matrix with zero-count peers scales to the size", "[alltoallv][counts]") {
  const co::CountsSpec spec = co::parse_counts_matrix(
      "# sender rows\n"
      "0, 1, 1\n"
      "\n"
      "2\t0  0\n"
      "1 1 0\n",
      "m.txt");
  REQUIRE(spec.matrix_ranks == 3);
  const co::CountsMatrix m(spec, 3, 200);  // total 600 over weight 6: 100 per unit
  CHECK(m.at(0, 0) == 0);
  CHECK(m.at(1, 0) == 200);
  CHECK(m.at(2, 2) == 0);
  CHECK(m.total() == 600);
  const co::AlltoallvPlan p1 = co::make_alltoallv_plan(m, 1);
  CHECK(p1.send_total == 200);
  CHECK(p1.recv_total == 200);  // from ranks 0 and 2: 100 each
  CHECK(p1.source_offsets[2] == 100);
  const co::CountsImbalance im = m.imbalance();
  CHECK(im.send_max_over_mean == Approx(1.0));
  CHECK(im.recv_max_over_mean == Approx(300.0 / 200));
  CHECK(im.pair_max_over_mean == Approx(200.0 / (600.0 / 9)));
  CHECK_THROWS_WITH(co::CountsMatrix(spec, 4, 10),
                    Catch::Contains("3 row(s)") && Catch::Contains("4 rank(s)"));
}

TEST_CASE("counts file: a bad file is refused with its line and column", "[alltoallv][counts]") {
  CHECK_THAT(a2av_error_of("1 2\n3 x\n"),
             Catch::Contains("m.txt:2:3:") && Catch::Contains("'x' is not a number"));
  CHECK_THAT(a2av_error_of("1 2\n3 -4\n"),
             Catch::Contains("m.txt:2:3:") && Catch::Contains("negative"));
  CHECK_THAT(a2av_error_of("1 2\n3 4 5\n"),
             Catch::Contains("m.txt:2:1:") && Catch::Contains("3 number(s) in this row"));
  CHECK_THAT(a2av_error_of("1 2\n3 4\n5 6\n"),
             Catch::Contains("m.txt:3:1:") && Catch::Contains("as many rows as columns"));
  CHECK_THAT(a2av_error_of("1 2 3\n4 5 6\n"), Catch::Contains("2 row(s) of 3"));
  CHECK_THAT(a2av_error_of("# nothing\n\n"), Catch::Contains("no rows"));
  CHECK_THAT(a2av_error_of("0 0\n0 0\n"), Catch::Contains("every count is 0"));
  CHECK_THAT(a2av_error_of("1 inf\n1 1\n"), Catch::Contains("m.txt:1:3:"));
  CHECK_THROWS_WITH(co::load_counts_spec("/nonexistent/counts.txt"),
                    Catch::Contains("cannot open the counts file"));
  CHECK_THROWS_AS(co::load_counts_spec("zipf:-2"), UsageError);
}
