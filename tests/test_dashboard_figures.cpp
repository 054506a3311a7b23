// The dashboard's figures (runtime/cluster/jobs/live_job.hpp) from scripted trace
// events, and their renderings: Prometheus text that a strict reader takes,
// with exactly the counts the events make, and the pages' JSON.
#include "runtime/cluster/dashboard/dashboard_view.hpp"
#include "tests/prometheus_text.hpp"

#include "core/rapidjson.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace syncpoint::testing;

namespace {

constexpr nanos ms = 1'000'000;

trace_event ev(const std::string& kind, int worker, nanos t0, nanos t1, double value = 0, uint64_t iter = 0,
               const std::string& note = "") {
  return {kind, worker, t0, t1, iter, 0, value, note};
}

job_facts two_workers() { return {7, "sync-switch", 2, "running", 0.5, {"head", "a"}}; }

// Two workers' first second: w0 computes, pushes, pulls; w1 computes, is
// refused once, waits for a barrier; an evaluation, a rate, two phases.
live_job scripted() {
  live_job j(two_workers());
  for (auto& e : std::vector<trace_event>{
         ev("lr", -1, 0, 0, 0.1),
         ev("phase", -1, 0, 0, 0, 0, "->bsp start"),
         ev("compute", 0, 0, 100 * ms, 2.5),
         ev("push", 0, 100 * ms, 102 * ms),
         ev("apply", 0, 102 * ms, 102 * ms, 0),
         ev("pull", 0, 102 * ms, 105 * ms),
         ev("compute", 1, 0, 300 * ms, 2.0),
         ev("rejected", 1, 300 * ms, 300 * ms),
         ev("push", 1, 300 * ms, 340 * ms),
         ev("apply", 1, 340 * ms, 340 * ms, 3),
         ev("wait", 1, 340 * ms, 600 * ms),
         ev("barrier", -1, 600 * ms, 600 * ms),
         ev("eval", -1, 900 * ms, 900 * ms, 0.625, 128),
         ev("phase", -1, 950 * ms, 950 * ms, 0, 128, "bsp>asp share"),
       })
    j.add(e);
  return j;
}

}  // namespace

TEST_CASE("dashboard figures: counters, histograms and gauges follow the trace events exactly") {
  auto j = scripted();
  auto& w = j.workers();
  REQUIRE(w.size() == 2);
  CHECK(w[0].pushes == 1);
  CHECK(w[0].pulls == 1);
  CHECK(w[0].rejected == 0);
  CHECK(w[1].pushes == 1);
  CHECK(w[1].pulls == 0);
  CHECK(w[1].rejected == 1);
  // 2 ms lands in the bucket le=0.0025, 40 ms in le=0.05, 3 ms (the pull) in le=0.005.
  CHECK(w[0].push_latency.counts[2] == 1);
  CHECK(w[1].push_latency.counts[6] == 1);
  CHECK(w[0].pull_latency.counts[3] == 1);
  CHECK(w[0].push_latency.sum == doctest::Approx(0.002));
  CHECK(j.staleness().count == 2);
  CHECK(j.staleness().counts[0] == 1);  // le=0
  CHECK(j.staleness().counts[3] == 1);  // 3: le=4
  CHECK(j.staleness_max() == 3);
  CHECK(w[1].staleness.count == 1);
  CHECK(w[0].loss == 2.5);
  CHECK(j.accuracy() == 0.625);
  CHECK(j.lr() == 0.1);
  CHECK(j.barriers() == 1);
  CHECK(j.phase() == "asp");
  REQUIRE(j.phases().size() == 2);
  CHECK(j.phases()[1].from == "bsp");
  CHECK(j.phases()[1].reason == "share");
  CHECK(j.accuracy_series().size() == 1);
  CHECK(j.shard_versions() == std::vector<uint64_t>{0, 0});

  // The coordinator's counts: samples per worker, and the rate over the last 10 s.
  j.set_counts(64, {64, 0}, 2, 1000 * ms);
  j.set_counts(192, {128, 64}, 1, 3000 * ms);
  CHECK(j.samples() == 192);
  CHECK(w[0].samples == 128);
  CHECK(j.workers_live() == 1);
  CHECK(j.samples_per_s() == doctest::Approx(64.0));
  REQUIRE(j.rate_series().size() == 1);
  CHECK(j.rate_series()[0].value == doctest::Approx(64.0));
  j.set_shard_version(1, 9);
  j.set_shard_version(1, 4);  // an answer that overtook a newer one changes nothing
  CHECK(j.shard_versions() == std::vector<uint64_t>{0, 9});
}

TEST_CASE("dashboard figures: the timeline holds the last minute in 0.25 s bins, as the report cuts a run") {
  auto j = scripted();
  auto& tl = j.timeline();
  CHECK(tl.last_bin == 2);  // the last span ended at 0.6 s: the third bin
  REQUIRE(tl.rows.size() == 2);
  REQUIRE(tl.rows[0].size() == static_cast<size_t>(timeline_window::bins));
  auto at = [&](int worker, int bin) {
    auto& row = tl.rows[static_cast<size_t>(worker)];
    return row[row.size() - 1 - static_cast<size_t>(tl.last_bin - bin)];
  };
  CHECK(at(0, 0)[time_share::compute] == doctest::Approx(0.1));
  CHECK(at(0, 0)[time_share::comm] == doctest::Approx(0.005));
  CHECK(at(1, 0)[time_share::compute] == doctest::Approx(0.25));
  CHECK(at(1, 1)[time_share::compute] == doctest::Approx(0.05));
  CHECK(at(1, 1)[time_share::wait] == doctest::Approx(0.16));
  CHECK(at(1, 2)[time_share::wait] == doctest::Approx(0.1));
  CHECK(tl.barriers.back() == 1);  // 0.6 s
  // The coordinator's counts move the window to their time: no span there, empty bins.
  auto moved = scripted();
  moved.set_counts(0, {}, 2, 2000 * ms);
  CHECK(moved.timeline().last_bin == 8);
  CHECK(moved.timeline().rows[0].back()[time_share::compute] == 0);
  // 70 s later the first second has left the window.
  live_job later = scripted();
  later.add(ev("compute", 0, 70'000 * ms, 70'100 * ms, 1.0));
  double total = 0;
  for (auto& cell : later.timeline().rows[1])
    total += cell[time_share::compute] + cell[time_share::wait];
  CHECK(total == 0);
  CHECK(later.timeline().rows[0].back()[time_share::compute] == doctest::Approx(0.1));
}

TEST_CASE("dashboard figures: a series keeps a whole run by halving its detail when full") {
  thinned_series s(1, 4);
  for (int t = 0; t < 5; ++t)
    s.add(t + 0.5, t);
  auto ps = s.points();
  REQUIRE(ps.size() == 3);  // steps of 2 s: {0,1}, {2,3}, {4}
  CHECK(ps[0].value == doctest::Approx(0.5));
  CHECK(ps[1].t_s == doctest::Approx(3.0));
  CHECK(ps[2].value == doctest::Approx(4.0));
  histogram h(latency_buckets());
  for (double x : {0.0002, 0.0004, 0.0007, 0.0008})
    h.add(x);
  CHECK(h.quantile(0.5) == doctest::Approx(0.0005));  // two in le=0.0005: its top
  CHECK(h.quantile(1.0) == doctest::Approx(0.001));
}

TEST_CASE("dashboard figures: /metrics is Prometheus text a strict reader takes, with the events' counts") {
  dashboard_view v;
  v.now_ms = 10'000;
  v.nodes = {{"a", "127.0.0.1:1", 4, 1, 1'000, 8'500}, {"b\"q", "127.0.0.1:2", 2, 0, 1'000, 10'000}};
  auto live = std::make_shared<live_job>(scripted());
  live->set_counts(192, {128, 64}, 2, 3000 * ms);
  job_view job{{7, "sync-switch", 2, 0.5, 0.625, job_stage::running, {"head", "a"}}, false, live};
  // Job 9's shards are replicated (--ps-replicas 1): shard 0 on a and b"q, shard 1's primary lost.
  v.jobs = {job, job_view{{8, "", 4, 0.1, -1, job_stage::running, {}, {}, job_kind::sweep}, true, nullptr},
            job_view{{9, "bsp", 2, 0.2, -1, job_stage::running, {"a+b\"q", "b\"q"}}, false, nullptr}};
  auto text = metrics_text(v);
  prom_text p;
  REQUIRE_NOTHROW(p = parse_prometheus(text));
  CHECK(p.value("syncpoint_node_slots", {{"node", "a"}, {"state", "free"}}) == 3);
  CHECK(p.value("syncpoint_node_heartbeat_age_seconds", {{"node", "a"}}) == 1.5);
  CHECK(p.value("syncpoint_node_shards", {{"node", "a"}}) == 2);  // job 7's, and a copy of job 9's
  CHECK(p.value("syncpoint_node_shards", {{"node", "b\"q"}}) == 2);  // each copy a shard it hosts
  CHECK(p.value("syncpoint_node_slots", {{"node", "b\"q"}, {"state", "used"}}) == 0);  // escaped and read back
  CHECK(p.value("syncpoint_job_samples_total", {{"job", "7"}}) == 192);
  CHECK(p.sum("syncpoint_worker_samples_total", {{"job", "7"}}) == 192);
  CHECK(p.value("syncpoint_worker_pushes_total", {{"job", "7"}, {"worker", "1"}}) == 1);
  CHECK(p.value("syncpoint_worker_rejected_pushes_total", {{"job", "7"}, {"worker", "1"}}) == 1);
  CHECK(p.value("syncpoint_worker_push_latency_seconds_count", {{"job", "7"}, {"worker", "0"}}) == 1);
  CHECK(p.value("syncpoint_worker_push_latency_seconds_bucket", {{"job", "7"}, {"worker", "0"}, {"le", "0.0025"}}) ==
        1);
  CHECK(p.value("syncpoint_worker_push_latency_seconds_bucket", {{"job", "7"}, {"worker", "0"}, {"le", "0.001"}}) ==
        0);
  CHECK(p.value("syncpoint_job_staleness_versions_count", {{"job", "7"}}) == 2);
  CHECK(p.value("syncpoint_job_accuracy", {{"job", "7"}}) == 0.625);
  CHECK(p.value("syncpoint_job_learning_rate", {{"job", "7"}}) == 0.1);
  CHECK(p.value("syncpoint_job_shard_version", {{"job", "7"}, {"shard", "1"}}) == 0);
  CHECK(p.value("syncpoint_job_info", {{"job", "8"}, {"protocol", "sweep"}}) == 1);
  CHECK(p.find("syncpoint_job_samples_total", {{"job", "8"}}).empty());  // a sweep has no figures
  CHECK(p.types.at("syncpoint_worker_pull_latency_seconds") == "histogram");
  // The reader is strict: a counter without _total, a sample of no family, buckets that fall.
  CHECK_THROWS(parse_prometheus("# HELP x_count a\n# TYPE x_count counter\nx_count 1\n"));
  CHECK_THROWS(parse_prometheus("y 1\n"));
  CHECK_THROWS(parse_prometheus("# HELP h a\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
                                "h_sum 1\nh_count 1\n"));
}

TEST_CASE("dashboard figures: the pages' JSON holds the nodes, the jobs and one job's figures") {
  dashboard_view v;
  v.now_ms = 10'000;
  v.version = "0.11.0";
  v.nodes = {{"a", "127.0.0.1:1", 4, 1, 1'000, 8'500, {0, 1}, "n1", "slurm", 2},
             {"b", "127.0.0.1:2", 1, 0, 1'000, 8'500, {}, "n2"}};
  auto live = std::make_shared<live_job>(scripted());
  live->set_counts(192, {128, 64}, 2, 3000 * ms);
  v.jobs = {{{7, "sync-switch", 2, 0.5, 0.625, job_stage::running, {"head", "a"}, {"cuda:0", "cuda:1"}}, false, live}};
  rapidjson::Document c;
  c.Parse(cluster_json(v).c_str());
  REQUIRE(!c.HasParseError());
  REQUIRE(c["nodes"].Size() == 2);
  CHECK(std::string(c["nodes"][0]["host"].GetString()) == "n1");  // launched: its host and rank
  CHECK(std::string(c["nodes"][0]["launcher"].GetString()) == "slurm");
  CHECK(c["nodes"][0]["rank"].GetInt() == 2);
  CHECK(c["nodes"][1]["rank"].IsNull());  // started by hand
  CHECK(launch_rank(v.nodes[0]) == "slurm 2");
  CHECK(launch_rank(v.nodes[1]) == "-");
  CHECK(std::string(c["nodes"][0]["name"].GetString()) == "a");
  CHECK(c["nodes"][0]["free"].GetInt() == 3);
  CHECK(c["nodes"][0]["shards"].GetInt() == 1);
  CHECK(c["nodes"][0]["gpus"][1].GetInt() == 1);  // what the node offers GPU workers (node --gpus)
  CHECK(c["jobs"][0]["samples"].GetInt() == 192);
  CHECK(std::string(c["jobs"][0]["devices"][1].GetString()) == "cuda:1");  // each worker's device
  rapidjson::Document d;
  d.Parse(job_json(v.jobs[0]).c_str());
  REQUIRE(!d.HasParseError());
  auto& l = d["live"];
  CHECK(std::string(l["phase"].GetString()) == "asp");
  CHECK(l["series"]["accuracy"].Size() == 1);
  CHECK(l["series"]["accuracy"][0][1].GetDouble() == 0.625);
  CHECK(l["timeline"]["workers"].Size() == 2);
  CHECK(l["timeline"]["workers"][1]["wait"].Size() == static_cast<unsigned>(timeline_window::bins));
  CHECK(l["per_worker"][1]["rejected"].GetInt() == 1);
  CHECK(l["phases"][1]["reason"].GetString() == std::string("share"));
  job_view bare{{9, "bsp", 2, 0, -1, job_stage::starting, {}}, false, nullptr};
  rapidjson::Document b;
  b.Parse(job_json(bare).c_str());
  REQUIRE(!b.HasParseError());
  CHECK(b["live"].IsNull());
  CHECK(b["accuracy"].IsNull());
}
