// What a loop that measures no test accuracy (a regression's held-out MSE)
// shows (issue 45, item 5): its summary holds the final measures and no
// accuracy, the progress line and the printed summary name them, the
// comparison page draws them and the training loss, and the dashboard and
// /metrics carry them.
#include "examples/linear_regression.hpp"

#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include "core/rapidjson.hpp"
#include "runtime/cluster/dashboard/dashboard_view.hpp"
#include "runtime/records/run_files.hpp"
#include <syncpoint/train.hpp>
#include "tests/helpers.hpp"
#include "tests/prometheus_text.hpp"

#include <doctest/doctest.h>

#include <regex>

using namespace syncpoint;

namespace {

run_result linreg_run(const std::string& protocol, std::vector<std::string>* progress = nullptr) {
  linreg::register_linear_regression();
  auto cfg = linreg::job(protocol);
  cfg.epochs = 4;
  cfg.eval_every = 0.5;
  if (progress) {
    cfg.progress = true;
    return train(cfg, [=](const progress_report& r) {
      if (!r.line.empty())
        progress->push_back(r.line);
    });
  }
  return train(cfg);
}

// The evaluator's values of one measure, in trace order.
std::vector<double> traced(const run_result& r, const std::string& name) {
  std::vector<double> out;
  for (auto& e : r.trace)
    if (e.kind == "metric" && e.worker < 0 && e.note == name)
      out.push_back(e.value);
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

}  // namespace

TEST_CASE("loop measures: a job with no accuracy has a null final accuracy and its final measures, in memory and on disk") {
  std::vector<std::string> lines;
  auto r = linreg_run("ssp", &lines);
  REQUIRE(r.failures.empty());
  auto mse = traced(r, "mse");
  REQUIRE(mse.size() >= 4);
  CHECK(r.summary.final_accuracy < 0);
  CHECK(r.summary.evals.empty());  // the evaluations measured no accuracy
  REQUIRE(r.summary.final_metrics.size() == 1);
  CHECK(r.summary.final_metrics[0].name == "mse");
  CHECK(r.summary.final_metrics[0].value == mse.back());
  CHECK(mse.back() < 0.5 * mse.front());
  auto json = to_json(r.summary);
  CHECK(json.find("\"final_accuracy\": null") != std::string::npos);
  CHECK(json.find("\"final_metrics\": {\"mse\": ") != std::string::npos);
  testing::temp_folder dir("syncpoint_loop_measures");
  write_run((dir.path / "ssp").string(), r);
  auto back = load_run((dir.path / "ssp").string());
  CHECK(back.summary.final_accuracy < 0);
  REQUIRE(back.summary.final_metrics.size() == 1);
  CHECK(back.summary.final_metrics[0].value == doctest::Approx(mse.back()).epsilon(1e-9));
  // The progress line shows the measure where a classifier's shows its accuracy.
  REQUIRE(!lines.empty());
  CHECK(lines.back().find("mse=") != std::string::npos);
  CHECK(lines.back().find("acc=") == std::string::npos);
  // And the printed summary says what was measured, not an accuracy of 0.
  CHECK(report::final_measures(r.summary).find("final mse ") == 0);
  auto none = r.summary;
  none.final_metrics.clear();
  CHECK(report::final_measures(none).find("measured nothing") != std::string::npos);
  auto both = r.summary;
  both.final_accuracy = 0.5;
  CHECK(report::final_measures(both) == "final accuracy 0.5000, mse " + fmt("%.4g", mse.back()));
}

TEST_CASE("loop measures: the comparison page draws the held-out measure and the training loss instead of accuracy") {
  std::vector<run_record> runs;
  for (auto protocol : {"bsp", "ssp"}) {
    auto r = linreg_run(protocol);
    REQUIRE(r.failures.empty());
    run_record rec;
    rec.summary = r.summary;
    rec.trace = r.trace;
    rec.provenance.label = protocol;
    runs.push_back(std::move(rec));
  }
  auto page = report::report_html(runs);
  CHECK(page.find("<h2>Test accuracy") == std::string::npos);
  CHECK(page.find("<h2>What the loop measured, and training loss</h2>") != std::string::npos);
  CHECK(page.find("<h3>held-out mse against time</h3>") != std::string::npos);
  CHECK(page.find("<h3>training loss against samples</h3>") != std::string::npos);
  CHECK(page.find("<th>final acc</th>") == std::string::npos);
  CHECK(page.find("<th>final mse</th>") != std::string::npos);
  CHECK(page.find("<b>Final held-out mse</b>: bsp ") != std::string::npos);
  // Four charts (two measures by time and samples), a line and an end dot per run in each.
  CHECK(count(page, "<svg class='chart measure'") == 4);
  std::regex chart("<svg class='chart measure'.*?</svg>");
  for (std::sregex_iterator it(page.begin(), page.end(), chart), end; it != end; ++it) {
    CHECK(count(it->str(), "<polyline class='series'") == 2);
    CHECK(count(it->str(), "<circle") == 2);
  }
  // The loss falls: a line's first point sits higher on the page than its last (SVG y grows down).
  auto loss_at = page.find("<h3>training loss against time</h3>");
  REQUIRE(loss_at != std::string::npos);
  std::smatch m;
  std::string loss_svg = page.substr(loss_at, page.find("</svg>", loss_at) - loss_at);
  REQUIRE(std::regex_search(loss_svg, m, std::regex("points='([0-9.]+),([0-9.]+) [^']* ([0-9.]+),([0-9.]+) '")));
  CHECK(std::stod(m[2]) < std::stod(m[4]));
}

TEST_CASE("loop measures: the dashboard and /metrics carry the job's measures, and no accuracy") {
  auto r = linreg_run("bsp");
  REQUIRE(r.failures.empty());
  auto live = std::make_shared<cluster::live_job>(cluster::job_facts{3, "bsp", 4, "done", 1, {"head"}});
  for (auto& e : r.trace)
    live->add(e);
  // A worker's own report (what a bandit's loop reports with its pushes).
  live->add({"metric", 2, 5, 5, 1, 1, 0.75, "reward"});
  CHECK(live->accuracy() < 0);
  REQUIRE(live->measure_series().count("mse") == 1);
  CHECK(live->measure_series().at("mse").back().value == traced(r, "mse").back());
  cluster::dashboard_view v;
  v.jobs = {{{3, "bsp", 4, 1, -1, cluster::job_stage::done, {"head"}}, false, live}};
  auto p = testing::parse_prometheus(cluster::metrics_text(v));
  CHECK(p.value("syncpoint_job_measure", {{"job", "3"}, {"name", "mse"}, {"source", "evaluation"}}) ==
        doctest::Approx(traced(r, "mse").back()));
  CHECK(p.value("syncpoint_job_measure", {{"job", "3"}, {"name", "reward"}, {"source", "workers"}}) == 0.75);
  CHECK(p.find("syncpoint_job_accuracy", {{"job", "3"}}).empty());
  rapidjson::Document d;
  d.Parse(cluster::job_json(v.jobs[0]).c_str());
  REQUIRE(!d.HasParseError());
  CHECK(d["accuracy"].IsNull());
  CHECK(d["live"]["series"]["accuracy"].Size() == 0);
  CHECK(d["live"]["series"]["measures"]["mse"].Size() == traced(r, "mse").size());
  CHECK(d["live"]["reported"]["reward"].GetDouble() == 0.75);
}
