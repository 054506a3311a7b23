// The comparison page: what compare writes, what report rebuilds from run
// folders, and (when Debian's chromium is installed) that a real browser draws it.
#include "runtime/report/comparison.hpp"
#include "cli/progress.hpp"
#include "runtime/report/page.hpp"
#include "runtime/report/verdict.hpp"
#include <syncpoint/job_config.hpp>
#include "runtime/records/run_files.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <regex>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace syncpoint;
using syncpoint::testing::comparison_row;
using syncpoint::testing::occurrences;
using syncpoint::testing::run_shell;
using syncpoint::testing::slurp;

namespace fs = std::filesystem;

namespace {

// What `body` writes to stderr.
std::string stderr_of(const std::function<void()>& body) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  int saved = dup(fileno(stderr));
  dup2(fileno(tmp), fileno(stderr));
  body();
  std::fflush(stderr);
  dup2(saved, fileno(stderr));
  close(saved);
  std::rewind(tmp);
  std::string out;
  for (int c; (c = std::fgetc(tmp)) != EOF;)
    out += static_cast<char>(c);
  std::fclose(tmp);
  return out;
}

const std::string fast = " --model softmax --dataset synthetic --train-limit 2000 --test-limit 300"
                         " --iter-cost 5 --progress=false";

// One compare run shared by the cases below in this process (ctest runs each
// case in a process of its own, in parallel: the folder is per process).
struct compare_folder {
  fs::path path = fs::temp_directory_path() / ("syncpoint_report_compare_" + std::to_string(getpid()));
  ~compare_folder() { fs::remove_all(path); }
};

const fs::path& compared() {
  static const compare_folder folder;
  static const fs::path dir = [] {
    auto d = folder.path;
    fs::remove_all(d);
    // Not in alphabetical order: the page keeps compare's order, and so must report.
    auto r = run_shell(std::string(SYNCPOINT_CLI) + " compare --protocols ssp,bsp --workers 4 --epochs 2 "
                   "--straggler 3:x3 --target-accuracy 0.9 --out " + d.string() + fast);
    REQUIRE_MESSAGE(r.status == 0, r.output);
    return d;
  }();
  return dir;
}

}  // namespace

// The cases up to the browser check start the syncpoint command (or chromium):
// scripts/soak-tests.sh runs this suite under load.
TEST_SUITE_BEGIN("process");

TEST_CASE("report: compare's page has both curves, both timelines and the runs' own figures") {
  auto page = slurp(compared() / "index.html");
  REQUIRE(!page.empty());
  // Nothing is loaded from anywhere: the only URLs are SVG's namespace.
  CHECK(occurrences(page, "http") == occurrences(page, "http://www.w3.org/2000/svg"));
  CHECK(occurrences(page, "src=") + occurrences(page, "<link") + occurrences(page, "@import") == 0);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(occurrences(page, "<svg class='chart' data-series='2'") == 2);  // against time and against samples
  CHECK(occurrences(page, "<polyline class='series'") == 4);
  CHECK(occurrences(page, "<svg class='timeline' data-workers='4'") == 2);
  CHECK(occurrences(page, "<g class='worker-row'>") == 8);
  CHECK(page.find("syncpoint compare --protocols ssp,bsp") != std::string::npos);  // the exact command
  CHECK(page.find("<dt>seed</dt><dd>1</dd>") != std::string::npos);
  CHECK(page.find("<dt>caf</dt><dd>0.17.6</dd>") != std::string::npos);
  CHECK(page.find("<dt>cores</dt>") != std::string::npos);

  CHECK(page.find("ssp(s=3)</td>") < page.find("bsp</td>"));
  auto ssp = load_run((compared() / "ssp").string()), bsp = load_run((compared() / "bsp").string());
  uint64_t n = std::min(ssp.summary.samples, bsp.summary.samples);
  CHECK(page.find("<th>acc@" + std::string(n >= 1000 ? std::to_string(n / 1000) + "," : "")) != std::string::npos);
  for (auto* run : {&ssp, &bsp}) {
    auto& s = run->summary;
    auto cells = comparison_row(page, run->provenance.label);
    // to target, stopped, final acc, acc@N, run time, samples, samples/s, compute, wait, staleness, barriers
    REQUIRE(cells.size() == 11);
    REQUIRE(s.time_to_target_s >= 0);  // both reach 0.9 and stop there
    CHECK(cells[0] == fmt("%.2f", s.time_to_target_s));
    CHECK(cells[1] == "target at " + fmt("%.2f", s.run_time_s) + " s");
    CHECK(cells[2] == fmt("%.4f", s.final_accuracy));
    CHECK(cells[3] == fmt("%.4f", accuracy_at_samples(s, n)));
    CHECK(cells[4] == fmt("%.2f", s.run_time_s));
    CHECK(std::stoull(std::regex_replace(cells[5], std::regex(","), "")) == s.samples);
    CHECK(cells[6] == fmt("%.1f", s.samples_per_s));
    CHECK(cells[7] == fmt("%.3f", s.mean_compute_ratio));
    double wait = 0;
    for (auto& w : s.per_worker)
      wait += w.wait_s;
    CHECK(cells[8] == fmt("%.2f", wait));
    CHECK(cells[9] == fmt("%.2f", s.staleness_mean));
    CHECK(cells[10] == std::to_string(s.barriers));
  }
  // The best of a column is marked: ssp reached the target first, bsp has no staleness.
  REQUIRE(ssp.summary.time_to_target_s < bsp.summary.time_to_target_s);
  CHECK(std::regex_search(page, std::regex("ssp\\(s=3\\)</td><td class='best'>")));
  CHECK(std::regex_search(page, std::regex("bsp</td><td>[^<]*</td>")));
  CHECK(std::regex_search(page, std::regex("bsp</td>(<td[^>]*>[^<]*</td>){9}<td class='best'>0.00</td>")));
}

TEST_CASE("report: rebuilding the page from the run folders gives compare's page, byte for byte") {
  auto out = fs::temp_directory_path() / ("syncpoint_report_again_" + std::to_string(getpid()) + ".html");
  // The compare folder (its runs.json keeps compare's order), with a trailing slash ...
  auto r = run_shell(std::string(SYNCPOINT_CLI) + " report " + compared().string() + "/ --out " + out.string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("report: " + out.string() + " (2 runs)") != std::string::npos);
  CHECK(slurp(out) == slurp(compared() / "index.html"));
  // ... and the run folders named one by one.
  r = run_shell(std::string(SYNCPOINT_CLI) + " report " + (compared() / "ssp").string() + " " +
            (compared() / "bsp").string() + " --out " + out.string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(slurp(out) == slurp(compared() / "index.html"));
  fs::remove(out);
}

TEST_CASE("report: runs with different settings are shown with their differences stated") {
  auto dir = fs::temp_directory_path() / ("syncpoint_report_differ_" + std::to_string(getpid()));
  fs::remove_all(dir);
  for (auto [name, extra] : {std::pair{"a", " --workers 2 --seed 1"}, std::pair{"b", " --workers 3 --seed 1 --batch 32"}}) {
    auto r = run_shell(std::string(SYNCPOINT_CLI) + " train --protocol asp --epochs 1 --out " + (dir / name).string() +
                   extra + fast);
    REQUIRE_MESSAGE(r.status == 0, r.output);
  }
  auto r = run_shell(std::string(SYNCPOINT_CLI) + " report " + dir.string() + " --out " + (dir / "page.html").string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  auto page = slurp(dir / "page.html");
  CHECK(page.find("These runs differ in 2 setting(s)") != std::string::npos);
  CHECK(page.find("<th>workers</th>") != std::string::npos);
  CHECK(page.find("<th>batch</th>") != std::string::npos);  // from run.json: summary.json has no batch
  CHECK(page.find("whose model, workers, clock or stragglers differ") != std::string::npos);
  CHECK(page.find("<dt>seed</dt><dd>1</dd>") != std::string::npos);
  CHECK(page.find("syncpoint train --protocol asp --epochs 1 --out") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("report: bad folders and corrupt files are refused with the file named") {
  auto dir = fs::temp_directory_path() / ("syncpoint_report_bad_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "run");
  auto cli = std::string(SYNCPOINT_CLI) + " report ";
  auto r = run_shell(cli + (dir / "nope").string());
  CHECK(r.status == 2);
  CHECK(r.output.find("is not a folder") != std::string::npos);
  r = run_shell(cli + dir.string());
  CHECK(r.status == 2);
  CHECK(r.output.find("has no summary.json") != std::string::npos);
  std::ofstream(dir / "run" / "summary.json") << "{\"protocol\": \"bsp\", \"workers\": \"four\"}";
  std::ofstream(dir / "run" / "trace.jsonl") << "";
  r = run_shell(cli + (dir / "run").string());
  CHECK(r.status == 2);
  CHECK(r.output.find("summary.json: 'workers' must be a count") != std::string::npos);
  std::ofstream(dir / "run" / "summary.json") << "{\"protocol\": \"bsp\"";
  CHECK_THROWS_WITH_AS(load_run((dir / "run").string()), doctest::Contains("summary.json: not JSON"), config_error);
  std::ofstream(dir / "run" / "summary.json") << "{\"protocol\": \"bsp\"}";
  std::ofstream(dir / "run" / "trace.jsonl") << "{\"kind\": \"compute\", \"t0\": 0}\nnot json\n";
  CHECK_THROWS_WITH_AS(load_run((dir / "run").string()), doctest::Contains("trace.jsonl line 2: not JSON"),
                       config_error);
  std::ofstream(dir / "run" / "trace.jsonl") << "{\"kind\": \"compute\", \"worker\": 0, \"t0\": -5, \"t1\": 1}\n";
  r = run_shell(cli + (dir / "run").string());
  CHECK(r.status == 2);
  CHECK(r.output.find("trace.jsonl line 1: times must satisfy 0 <= t0 <= t1 <= 1e9 s") != std::string::npos);
  std::ofstream(dir / "runs.json") << "{\"runs\": [1]}";
  fs::remove_all(dir / "run");
  r = run_shell(cli + dir.string());
  CHECK(r.status == 2);
  CHECK(r.output.find("runs.json: every run must be a folder name") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("report: under a schedule, compare gives every run the reference's schedule and the page draws the rate") {
  auto dir = fs::temp_directory_path() / ("syncpoint_report_lr_" + std::to_string(getpid()));
  fs::remove_all(dir);
  // A warmup given as a share of the run needs the run's length: the capped
  // runs (no epochs of their own) take the reference's 2 epochs.
  auto r = run_shell(std::string(SYNCPOINT_CLI) + " compare --protocols bsp,asp --workers 4 --epochs 2 "
                     "--straggler 3:x3 --lr 0.1 --lr-schedule cosine --warmup 0.1 --out " + dir.string() + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  auto bsp = load_run((dir / "bsp").string()), asp = load_run((dir / "asp").string());
  const uint64_t horizon = 2 * 2000, warmup = 400;  // 2 epochs of --train-limit 2000
  for (auto* run : {&bsp, &asp}) {
    int events = 0;
    double peak = 0, last = -1;
    for (auto& e : run->trace) {
      if (e.kind != "lr")
        continue;
      ++events;
      peak = std::max(peak, e.value);
      if (e.iter >= horizon)  // past the schedule's end: its last rate, 0
        CHECK(e.value == 0);
      else if (e.iter >= warmup)  // cosine from 0.1 to 0 between the warmup and the horizon
        CHECK(e.value == doctest::Approx(0.05 * (1 + std::cos(M_PI * double(e.iter - warmup) / double(horizon - warmup))))
                           .epsilon(0.02));
      last = e.value;
    }
    CHECK(events > 10);
    CHECK(peak <= 0.1);
    CHECK(peak > 0.09);
    if (run->summary.samples > horizon + 200)
      CHECK(last == 0);
  }
  CHECK(asp.summary.samples > horizon);  // asp got past the schedule within bsp's time
  auto page = slurp(dir / "index.html");
  CHECK(occurrences(page, "<svg class='chart lr' data-series='2'") == 2);  // under both accuracy charts
  CHECK(occurrences(page, "<svg class='chart lr'") == 2);
  CHECK(page.find("Test accuracy and learning rate") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("report: a real browser draws every chart and timeline") {
  if (run_shell("command -v chromium").status != 0) {
    MESSAGE("chromium is not installed (apt-get install chromium): the browser check is skipped");
    return;
  }
  // A page beside the report reads it in a frame once it is laid out and
  // writes what it found; chromium prints the resulting DOM.
  auto check = compared() / "check.html";
  std::ofstream(check) << R"(<!doctype html><html><body><pre id='out'>pending</pre>
<iframe id='f' src='index.html' width='1250' height='900'></iframe><script>
document.getElementById('f').onload = function() {
  var d = this.contentDocument, out = [];
  var charts = d.querySelectorAll('svg.chart'), drawn = 0, lines = 0;
  charts.forEach(function(s) {
    if (s.getBoundingClientRect().width > 100) drawn++;
    s.querySelectorAll('polyline.series').forEach(function(p) { if (p.getTotalLength() > 50) lines++; });
  });
  var tl = d.querySelectorAll('svg.timeline'), tl_drawn = 0, rows = 0;
  tl.forEach(function(s) {
    if (s.getBoundingClientRect().width > 500) tl_drawn++;
    s.querySelectorAll('g.worker-row').forEach(function(g) {
      var area = 0;
      g.querySelectorAll('path').forEach(function(p) { var b = p.getBBox(); area += b.width * b.height; });
      if (area > 100) rows++;
    });
  });
  var cells = d.querySelectorAll('table.comparison td').length;
  out.push('charts=' + charts.length + '/' + drawn, 'lines=' + lines, 'timelines=' + tl.length + '/' + tl_drawn,
           'rows=' + rows, 'cells=' + cells);
  document.getElementById('out').textContent = out.join(' ');
};
</script></body></html>)";
  auto r = run_shell("timeout 90 chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files "
                 "--virtual-time-budget=5000 --dump-dom file://" + check.string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  // Three charts: accuracy against time and samples, and communication against quality.
  CHECK_MESSAGE(r.output.find("charts=3/3 lines=4 timelines=2/2 rows=8 cells=24") != std::string::npos, r.output);
  fs::remove(check);
}

TEST_SUITE_END();

TEST_CASE("report: round axis ticks") {
  CHECK(report::nice_ticks(0, 9.4, 5) == std::vector<double>{0, 2, 4, 6, 8});
  CHECK(report::nice_ticks(0, 195520, 5) == std::vector<double>{0, 50000, 100000, 150000});
  auto t = report::nice_ticks(0.79, 0.872, 6);
  REQUIRE(t.size() == 9);  // step 0.01
  CHECK(t.front() == doctest::Approx(0.79));
  CHECK(t.back() == doctest::Approx(0.87));
  CHECK(report::nice_ticks(1, 1).empty());
}

TEST_CASE("progress: the bar shows the share done, the accuracy and the time left") {
  using cli::progress_display;
  CHECK(progress_display::bar_line("asp", 0.5, 0.8123, 10, false) ==
        "asp [##############--------------]  50%  acc 0.8123  0:10 left");
  CHECK(progress_display::bar_line("asp", 0.25, -1, 30, false) ==
        "asp [#######---------------------]  25%  1:30 left");
  CHECK(progress_display::bar_line("bsp", 1, 0.85, 3725, true) ==
        "bsp [############################] 100%  acc 0.8500  took 1:02:05");
  CHECK(progress_display::bar_line("bsp", 0.001, -1, 1, false).find("estimating time left") != std::string::npos);
  CHECK(progress_display::bar_line("bsp", 0, -1, 1, false, 640).find("640 samples, no budget") != std::string::npos);
}

TEST_CASE("progress: plain lines off a terminal, one bar per run on one") {
  using cli::progress_display;
  auto capture = [](bool as_bar) {
    return stderr_of([&] {
      progress_display shown(true, as_bar);
      shown.begin("asp", 2, 3);
      auto report = shown.callback();
      report(progress_report{"[asp] eval   t=1.00s", 640, 0.5, 0.81, false});
      report(progress_report{"", 700, 0.55, 0.81, false});  // a tick: moves a bar, prints no line
      report(progress_report{"[asp] worker 1 lost: boom", 700, 0.55, 0.81, true});  // shown either way
      shown.end();
    });
  };
  CHECK(capture(false) == "run 2/3: asp\n[asp] eval   t=1.00s\n[asp] worker 1 lost: boom\n");
  auto bar = capture(true);
  CHECK(bar.find("\r\033[K[2/3] asp") == 0);
  // The finished line stays (how long it took is the machine's: any m:ss).
  CHECK(std::regex_search(bar, std::regex("acc 0\\.8100  took [0-9]+:[0-5][0-9]\n")));
  CHECK(bar.find("[asp] eval") == std::string::npos);
  CHECK(bar.find("\r\033[K[asp] worker 1 lost: boom\n\r\033[K[2/3] asp") != std::string::npos);
}

TEST_CASE("progress: a sweep shows one bar with cells done, running and failed and the time left, or one line per cell") {
  using cli::sweep_display;
  sweep_progress p{18, 2, 5, 1, 2};  // 18 cells, 2 finished before, 5 done and 1 failed now, 2 running
  CHECK(sweep_display::bar_line(p, 30) ==
        "sweep [############----------------] 7/18 done, 2 running, 1 failed, about 0:50 left");
  CHECK(sweep_display::bar_line({4, 0, 0, 0, 2}, 3).find("0/4 done, 2 running, 0 failed, estimating time left") !=
        std::string::npos);
  CHECK(sweep_display::bar_line({4, 1, 3, 0, 0}, 65) ==
        "sweep [############################] 4/4 done, 0 running, 0 failed  took 1:05");
  sweep_cell a{0, "a", "0000_a", {}, {}}, b{1, "b", "0001_b", {}, {}};
  cell_outcome ok{&a, true, "", 1.5}, bad{&b, false, "boom", 0.5};
  auto events = [&](bool as_bar) {
    return stderr_of([&] {
      sweep_display shown(2, as_bar);
      shown.event({2, 0, 0, 0, 0}, nullptr);
      shown.event({2, 0, 0, 0, 2}, nullptr);
      shown.event({2, 0, 1, 0, 1}, &ok);
      shown.event({2, 0, 1, 1, 0}, &bad);
      shown.end();
    });
  };
  auto lines = events(false);
  CHECK(lines.find("sweep: 2 cells, 2 at once\n") == 0);
  CHECK(lines.find("sweep: [1/2] a done (1.5 s); 1 running, 0 failed, about") != std::string::npos);
  CHECK(lines.find("sweep: [2/2] b FAILED: boom (0.5 s); 0 running, 1 failed\n") != std::string::npos);
  auto bar = events(true);
  CHECK(bar.find("\r\033[Ksweep [##############--------------] 1/2 done, 1 running, 0 failed, about") !=
        std::string::npos);
  CHECK(bar.find("\r\033[Ksweep: b FAILED: boom\n\r\033[Ksweep [############################] 1/2 done, 0 running, "
                 "1 failed  took") != std::string::npos);
  CHECK(bar.back() == '\n');
}

TEST_CASE("report: the rate is drawn as steps from the trace's lr events to the run's end, only when it changes") {
  auto run = [](const std::string& label, std::vector<std::pair<uint64_t, double>> rates) {
    run_record r;
    r.provenance.label = label;
    r.summary.protocol = label;
    r.summary.workers = 1;
    r.summary.samples = 300;
    r.summary.run_time_s = 3;
    r.summary.final_accuracy = 0.8;
    r.summary.evals = {{1, 100, 0.5}, {2, 200, 0.7}};
    for (auto& [samples, lr] : rates)
      r.trace.push_back({"lr", -1, static_cast<nanos>(samples) * 10'000'000, static_cast<nanos>(samples) * 10'000'000,
                         samples, 1, lr, ""});
    return r;
  };
  auto lr_polylines = [](const std::string& page) {
    std::vector<std::string> out;
    std::regex line("<svg class='chart lr'.*?</svg>");
    for (std::sregex_iterator it(page.begin(), page.end(), line), end; it != end; ++it) {
      auto svg = it->str();
      std::regex pts("points='([^']*)'");
      for (std::sregex_iterator p(svg.begin(), svg.end(), pts); p != end; ++p)
        out.push_back((*p)[1]);
    }
    return out;
  };
  // A step decay: 0.1, then 0.01 from sample 150; the run ends at 300.
  auto page = report::report_html({run("bsp", {{0, 0.1}, {150, 0.01}})});
  auto lines = lr_polylines(page);
  REQUIRE(lines.size() == 2);  // against time, against samples
  for (auto& pts : lines) {
    std::vector<std::pair<double, double>> xy;
    std::regex pair("([0-9.]+),([0-9.]+)");
    for (std::sregex_iterator p(pts.begin(), pts.end(), pair), end; p != end; ++p)
      xy.push_back({std::stod((*p)[1]), std::stod((*p)[2])});
    // (0, 0.1) -> (150, 0.1) -> (150, 0.01) -> (300, 0.01) -> (300, 0.01): horizontal, then down, then horizontal.
    REQUIRE(xy.size() == 5);
    CHECK(xy[0].second == xy[1].second);
    CHECK(xy[1].first == xy[2].first);
    CHECK(xy[2].second > xy[1].second);  // lower rate, lower on the page (larger y)
    CHECK(xy[3].second == xy[2].second);
    CHECK(xy[3].first > xy[2].first);
    CHECK(xy[1].first - xy[0].first == doctest::Approx(xy[3].first - xy[2].first).epsilon(0.01));  // 150 and 150
  }
  // A constant rate draws no rate chart.
  CHECK(report::report_html({run("bsp", {{0, 0.1}}), run("asp", {{0, 0.1}})}).find("chart lr") == std::string::npos);
  CHECK(report::report_html({run("bsp", {})}).find("chart lr") == std::string::npos);
}

namespace {

// A run of two workers for 10 s toward target 0.8: `sps` samples/s, each worker waiting `wait_s`,
// reaching 0.81 after `samples_at_target` samples at time `t` (< 0: never); asp's gradients 3 updates stale.
run_record raced(const std::string& label, double sps, double wait_s, uint64_t samples_at_target, double t) {
  run_record r;
  r.provenance.label = label;
  auto& s = r.summary;
  s.protocol = label;
  s.workers = 2;
  s.target_accuracy = 0.8;
  s.time_to_target_s = t;
  s.run_time_s = 10;
  s.samples_per_s = sps;
  s.samples = static_cast<uint64_t>(sps * 10);
  s.final_accuracy = 0.85;
  s.staleness_mean = label == "asp" ? 3 : 0;
  s.per_worker = {{0, 1, 5, 0, wait_s, 0.5}, {1, 1, 5, 0, wait_s, 0.5}};
  s.evals = {{t / 2, samples_at_target / 2, 0.7}, {t, samples_at_target, 0.81}};
  return r;
}

}  // namespace

TEST_CASE("report: when another run beats the first to the target, the page says why in numbers") {
  auto run = raced;
  // bsp: 1000 samples/s, half its time waiting, 0.8 after 4000 samples; asp: 3000/s, 6000 samples.
  auto page = report::report_html({run("bsp", 1000, 5, 4000, 4), run("asp", 3000, 0, 6000, 2)});
  CHECK_MESSAGE(page.find("<b>Why</b> asp beat bsp: it processed 3.00&times; as many samples per second (its workers "
                          "waited 0% of their time, bsp's 50%), and needed 1.50&times; the samples to reach 0.8 "
                          "(6,000 against 4,000; its gradients were 3.0 updates stale on average") != std::string::npos,
                page);
  CHECK(report::report_html({run("asp", 3000, 0, 6000, 2), run("bsp", 1000, 5, 4000, 4)}).find("<b>Why</b>") ==
        std::string::npos);  // the first run won: nothing to explain against it
}

// The page's words stand on facts decided apart from the HTML (runtime/report/verdict.hpp).
TEST_CASE("report: who won is decided as data: the soonest, why, the fastest and where the time went") {
  auto run = raced;
  std::vector<run_record> runs{run("bsp", 1000, 5, 4000, 4), run("asp", 3000, 0, 6000, 2), run("ssp", 500, 1, 0, -1)};
  auto all = report::parts::by_seed(runs);
  auto f = report::parts::decide(all, runs);
  CHECK(f.target == 0.8);
  REQUIRE(f.soonest.who == &all[1]);
  CHECK(f.soonest.value.mean() == 2);
  CHECK(f.soonest_seeds_won == 1);
  REQUIRE(f.others.size() == 2);
  CHECK(f.others[0].who == &all[0]);
  CHECK(f.others[0].value.mean() == 4);
  CHECK(f.others[1].who == &all[2]);
  CHECK(f.others[1].value.empty());  // ssp never reached it
  CHECK(f.within_spread.empty());    // one seed each: nothing to overlap
  REQUIRE(f.why.ref == &all[0]);     // asp beat the first series, bsp: why, in numbers
  CHECK(f.why.rate_ratio == doctest::Approx(3));
  CHECK(f.why.wait == doctest::Approx(0));
  CHECK(f.why.ref_wait == doctest::Approx(0.5));
  CHECK(f.why.samples.mean() == 6000);
  CHECK(f.why.ref_samples.mean() == 4000);
  CHECK(f.why.stale == 3);
  CHECK(f.fastest.who == &all[1]);
  CHECK(f.next_fastest.who == &all[0]);
  CHECK(f.slowest == &all[2]);
  CHECK(f.slowest_rate == 500);
  CHECK(f.equal_samples == 5000);
  REQUIRE(f.time_spent.size() == 3);
  CHECK(f.time_spent[0].wait == doctest::Approx(0.5));
  CHECK(f.time_spent[2].wait == doctest::Approx(0.1));
  // Nobody reached it: no soonest, and no why.
  runs = {run("bsp", 1000, 5, 0, -1), run("asp", 3000, 0, 0, -1)};
  all = report::parts::by_seed(runs);
  f = report::parts::decide(all, runs);
  CHECK(f.soonest.who == nullptr);
  CHECK_FALSE(f.reached_on_some_seed);
  CHECK(f.why.ref == nullptr);
}
