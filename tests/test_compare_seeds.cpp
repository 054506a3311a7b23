// `compare --seeds`: every protocol once per seed; the table, comparison.md
// and the page show mean and min–max, computed here again by hand from the
// runs' own summary.json files.
#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include "runtime/records/run_files.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <regex>

using namespace syncpoint;
using syncpoint::testing::comparison_row;
using syncpoint::testing::occurrences;
using syncpoint::testing::run_shell;
using syncpoint::testing::slurp;
using syncpoint::testing::temp_folder;

namespace fs = std::filesystem;

namespace {

// "mean (lo–hi)" by hand, with printf's format.
std::string by_hand(const std::vector<double>& xs, const char* f) {
  double sum = 0, lo = xs.front(), hi = xs.front();
  for (double x : xs) {
    sum += x;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  return fmt(f, sum / static_cast<double>(xs.size())) + " (" + fmt(f, lo) + "–" + fmt(f, hi) + ")";
}

// The cells of the text table's row for `label` (stdout, comparison.md).
std::vector<std::string> text_row(const std::string& table, const std::string& label) {
  auto at = table.find("| " + label + " ");
  REQUIRE_MESSAGE(at != std::string::npos, label);
  auto line = table.substr(at, table.find('\n', at) - at);
  std::vector<std::string> cells;
  std::regex cell("\\|\\s*([^|]*[^|\\s])\\s*(?=\\|)");
  for (std::sregex_iterator it(line.begin(), line.end(), cell), end; it != end; ++it)
    cells.push_back((*it)[1]);
  return cells;
}

// The page's cells hold HTML: over seeds, the mean with the range under it.
std::string in_html(const std::vector<double>& xs, const char* f) {
  auto text = by_hand(xs, f);
  auto open = text.find(" (");
  return text.substr(0, open) + "<small class='range'>" + text.substr(open + 2, text.size() - open - 3) + "</small>";
}

}  // namespace

TEST_SUITE_BEGIN("process");

TEST_CASE("compare --seeds: the mean and min–max of each figure equal a hand computation from the runs") {
  temp_folder dir("syncpoint_compare_seeds");
  auto r = run_shell(std::string(SYNCPOINT_CLI) +
                     " compare --protocols bsp,asp --seeds 3,1,2 --workers 2 --epochs 2 --straggler 1:x2"
                     " --target-accuracy 0.93 --model softmax --dataset synthetic --train-limit 2000"
                     " --test-limit 300 --iter-cost 5 --progress=false --out " + dir.path.string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  std::map<std::string, std::vector<run_summary>> runs;
  std::vector<const run_summary*> all;
  for (std::string p : {"bsp", "asp"})
    for (int seed : {3, 1, 2}) {
      auto folder = dir.path / (p + "-seed" + std::to_string(seed));
      runs[p].push_back(load_summary(folder.string()));
      CHECK(runs[p].back().seed == static_cast<uint64_t>(seed));
    }
  for (auto& [p, list] : runs)
    for (auto& s : list)
      all.push_back(&s);
  uint64_t n = equal_samples(all);  // the fewest samples of any run, over every seed
  REQUIRE(n > 0);
  auto md = slurp(dir.path / "comparison.md");
  CHECK(md.find("seeds 3, 1, 2") != std::string::npos);
  CHECK(md.find("acc@" + std::to_string(n)) != std::string::npos);
  auto page = slurp(dir.path / "index.html");
  for (auto& [p, list] : runs) {
    std::vector<double> to_target, final_acc, acc_n, rate;
    for (auto& s : list) {
      if (s.time_to_target_s >= 0)
        to_target.push_back(s.time_to_target_s);
      final_acc.push_back(s.final_accuracy);
      acc_n.push_back(accuracy_at_samples(s, n));
      rate.push_back(s.samples_per_s);
    }
    // The text table (stdout and comparison.md): protocol, seeds, to target, final acc, acc@N, samples/s, ...
    auto row = text_row(md, p);
    REQUIRE(row.size() == 8);
    CHECK(row[1] == "3,1,2");
    if (to_target.size() == 3)
      CHECK(row[2] == by_hand(to_target, "%.2f"));
    else if (to_target.empty())
      CHECK(row[2] == "not reached");
    else
      CHECK(row[2] == by_hand(to_target, "%.2f") + ", " + std::to_string(to_target.size()) + " of 3");
    CHECK(row[3] == by_hand(final_acc, "%.4f"));
    CHECK(row[4] == by_hand(acc_n, "%.4f"));
    CHECK(row[5] == by_hand(rate, "%.1f"));
    CHECK(r.output.find(md.substr(md.find("| protocol"), md.find("\n\n", md.find("| protocol")) - md.find("| protocol"))) !=
          std::string::npos);  // stdout shows the same table
    // The page: protocol's swatch cell, seeds, to target, stopped, final acc, acc@N, run time, samples, samples/s, ...
    auto cells = comparison_row(page, p);
    REQUIRE(cells.size() == 12);
    CHECK(cells[0] == "3, 1, 2");
    if (!to_target.empty())
      CHECK(cells[1].rfind(in_html(to_target, "%.2f").substr(0, in_html(to_target, "%.2f").size() - 8), 0) == 0);
    CHECK(cells[3] == in_html(final_acc, "%.4f"));
    CHECK(cells[4] == in_html(acc_n, "%.4f"));
    CHECK(cells[7] == in_html(rate, "%.1f"));
  }
  // One line per protocol with a band, each seed's own run pale beneath it, in both charts.
  CHECK(occurrences(page, "<svg class='chart' data-series='2'") == 2);
  CHECK(occurrences(page, "<polyline class='series'") == 4);
  CHECK(occurrences(page, "<polygon class='band'") == 4);
  CHECK(occurrences(page, "<polyline class='seed'") == 12);
  CHECK(occurrences(page, "<svg class='timeline'") == 2);  // each protocol's first seed
  CHECK(page.find("<dt>seeds</dt><dd>3, 1, 2</dd>") != std::string::npos);
  // `report` rebuilds the same page from the folders.
  auto again = dir.path / "again.html";
  auto rebuilt = run_shell(std::string(SYNCPOINT_CLI) + " report " + dir.path.string() + " --out " + again.string());
  REQUIRE_MESSAGE(rebuilt.status == 0, rebuilt.output);
  CHECK(slurp(again) == page);
}

TEST_CASE("compare --seeds: the verdict says when a difference is within the spread, and on how many seeds it held") {
  auto run = [](const std::string& label, uint64_t seed, double t) {
    run_record r;
    r.provenance.label = label;
    auto& s = r.summary;
    s.protocol = label;
    s.seed = seed;
    s.workers = 2;
    s.target_accuracy = 0.8;
    s.time_to_target_s = t;
    s.run_time_s = t;
    s.samples_per_s = 1000;
    s.samples = static_cast<uint64_t>(1000 * t);
    s.final_accuracy = 0.85;
    s.per_worker = {{0, 1, t / 2, 0, 0, 0.5}, {1, 1, t / 2, 0, 0, 0.5}};
    s.evals = {{t, s.samples, 0.81}};
    return r;
  };
  // bsp 10, 12, 14 s; asp 11, 9, 17 s on seeds 1, 2, 3: means 12 and 12.33, and asp is
  // the soonest on seed 2; the ranges overlap.
  auto close = report::report_html({run("bsp", 1, 10), run("bsp", 2, 12), run("bsp", 3, 14), run("asp", 1, 11),
                                 run("asp", 2, 9), run("asp", 3, 17)});
  INFO(close);
  CHECK(close.find("<b>Soonest to accuracy 0.8: bsp</b>, at 12.00 s on average over 3 seeds (10.00–14.00), the "
                   "soonest of all on 2 of 3 seeds (asp 1.03&times; as long).") != std::string::npos);
  CHECK(close.find("<b>Within the spread:</b> the times to the target of asp (12.33 (9.00–17.00) s) overlap bsp's "
                   "(12.00 (10.00–14.00) s)") != std::string::npos);
  // asp far behind on every seed: no such line, and bsp soonest on all 3.
  auto clear = report::report_html({run("bsp", 1, 10), run("bsp", 2, 12), run("bsp", 3, 14), run("asp", 1, 20),
                                 run("asp", 2, 22), run("asp", 3, 24)});
  CHECK(clear.find("the soonest of all on 3 of 3 seeds (asp 1.83&times; as long)") != std::string::npos);
  CHECK(clear.find("Within the spread") == std::string::npos);
  // Runs that differ in more than the seed stay apart: two lines, no band.
  auto other = run("bsp", 2, 12);
  other.summary.lr = 0.5;
  auto apart = report::report_html({run("bsp", 1, 10), other});
  CHECK(occurrences(apart, "<polygon class='band'") == 0);
  CHECK(occurrences(apart, "<polyline class='series'") == 4);
}

TEST_CASE("compare --jobs: runs in child processes give the same tables, page and run files as one after the other") {
  temp_folder dir("syncpoint_compare_jobs");
  // Two seeds, and worker 0 lost at its 3rd push: the failures the children report are printed too.
  auto args = " compare --protocols bsp,asp,ssp --seeds 1,2 --workers 2 --fail-worker 0@3 --epochs 2"
              " --target-accuracy 0.93 --straggler 1:x2 --model softmax --dataset synthetic --train-limit 2000"
              " --test-limit 300 --iter-cost 5 --progress=false";
  std::map<int, std::string> output;
  for (int jobs : {1, 2}) {
    auto out = dir.path / ("jobs" + std::to_string(jobs));
    auto r = run_shell(std::string(SYNCPOINT_CLI) + args + " --jobs " + std::to_string(jobs) + " --out " + out.string());
    REQUIRE_MESSAGE(r.status == 0, r.output);
    output[jobs] = std::regex_replace(r.output, std::regex("jobs ?[12]"), "jobsN");
  }
  CHECK(output[1] == output[2]);
  CHECK(output[2].find("bsp (lr 0.05, seed 2): worker 0 lost") != std::string::npos);
  auto one = dir.path / "jobs1", two = dir.path / "jobs2";
  auto same = [](const std::string& a, const std::string& b) {
    return std::regex_replace(a, std::regex("jobs ?[12]"), "jobsN") == std::regex_replace(b, std::regex("jobs ?[12]"), "jobsN");
  };
  CHECK(same(slurp(one / "comparison.md"), slurp(two / "comparison.md")));
  CHECK(same(slurp(one / "index.html"), slurp(two / "index.html")));
  size_t runs = 0;
  for (auto& entry : fs::directory_iterator(one)) {
    if (!entry.is_directory())
      continue;
    ++runs;
    auto name = entry.path().filename();
    for (auto file : {"summary.json", "trace.jsonl"})
      CHECK_MESSAGE(slurp(entry.path() / file) == slurp(two / name / file), (name / file).string());
  }
  CHECK(runs == 6);
  CHECK(!fs::exists(two / ".runs"));  // the children's scratch folder is gone
}

TEST_CASE("compare --seeds: a seed list that is not one is refused by name, with exit 2") {
  for (auto [seeds, words] : std::vector<std::pair<std::string, std::string>>{
         {"1,1", "--seeds names 1 twice"}, {"1,x", "--seeds: 'x' is not a seed"}, {"-1", "'-1' is not a seed"},
         {",", "--seeds names no seed"}}) {
    auto r = run_shell(std::string(SYNCPOINT_CLI) + " compare --seeds=" + seeds + " --dataset synthetic");
    CHECK_MESSAGE(r.status == 2, seeds, r.output);
    CHECK_MESSAGE(r.output.find(words) != std::string::npos, r.output);
  }
}

TEST_SUITE_END();
