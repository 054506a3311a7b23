#include "runtime/cluster/dashboard/dashboard_view.hpp"

#include "core/json.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

namespace syncpoint::cluster {

const job_view* dashboard_view::job(uint64_t id) const {
  for (auto& j : jobs)
    if (j.status.id == id)
      return &j;
  return nullptr;
}

namespace {

// -- Prometheus text (prometheus-cpp's serializer) ------------------------------

using labels = std::vector<prometheus::ClientMetric::Label>;

// One metric family: its name, help and type, then its samples.
class family {
 public:
  family(std::vector<prometheus::MetricFamily>& out, const std::string& name, prometheus::MetricType type,
         const std::string& help)
      : out_(out), at_(out.size()) {
    out.push_back({name, help, type, {}});
  }
  void sample(const labels& ls, double value) {
    auto& f = out_[at_];
    auto& m = f.metric.emplace_back();
    m.label = ls;
    (f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value) = value;
  }
  void observe(const labels& ls, const histogram& h) {
    auto& m = out_[at_].metric.emplace_back();
    m.label = ls;
    m.histogram.sample_count = h.count;
    m.histogram.sample_sum = h.sum;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      m.histogram.bucket.push_back({cumulative, i < h.bounds.size() ? h.bounds[i] : INFINITY});
    }
  }

 private:
  std::vector<prometheus::MetricFamily>& out_;
  size_t at_;
};

labels job_labels(const job_view& j) { return {{"job", std::to_string(j.status.id)}}; }

labels worker_labels(const job_view& j, size_t w) {
  return {{"job", std::to_string(j.status.id)}, {"worker", std::to_string(w)}};
}

// Each job with figures, for a worker-level family.
void per_worker(const dashboard_view& v, const std::function<void(const job_view&, size_t, const worker_live&)>& f) {
  for (auto& j : v.jobs)
    if (j.live)
      for (size_t w = 0; w < j.live->workers().size(); ++w)
        f(j, w, j.live->workers()[w]);
}

// How many PS shards (copies of shards, with --ps-replicas: "a+b") each
// node hosts for the running jobs.
std::map<std::string, int> shards_by_node(const dashboard_view& v) {
  std::map<std::string, int> out;
  for (auto& j : v.jobs)
    if (!is_final(j.status.state))
      for (auto& where : j.status.shards)
        for (size_t at = 0; at <= where.size();) {
          auto plus = std::min(where.find('+', at), where.size());
          if (plus > at && where.compare(at, plus - at, "lost") != 0)
            ++out[where.substr(at, plus - at)];
          at = plus + 1;
        }
  return out;
}

double heartbeat_age_s(const dashboard_view& v, const node_status& n) {
  return std::max<int64_t>(0, v.now_ms - n.last_heartbeat_ms) / 1000.0;
}

// The nodes' slots, heartbeats and shards.
void node_metrics(std::vector<prometheus::MetricFamily>& out, const dashboard_view& v) {
  auto hosted = shards_by_node(v);
  {
    family f(out, "syncpoint_node_slots", prometheus::MetricType::Gauge, "Worker slots of a node, used or free.");
    for (auto& n : v.nodes) {
      f.sample({{"node", n.name}, {"state", "used"}}, n.used);
      f.sample({{"node", n.name}, {"state", "free"}}, std::max(0, n.slots - n.used));
    }
  }
  {
    family f(out, "syncpoint_node_heartbeat_age_seconds", prometheus::MetricType::Gauge, "Time since the node's last heartbeat.");
    for (auto& n : v.nodes)
      f.sample({{"node", n.name}}, heartbeat_age_s(v, n));
  }
  {
    family f(out, "syncpoint_node_shards", prometheus::MetricType::Gauge, "Parameter-server shards of running jobs on the node.");
    for (auto& n : v.nodes)
      f.sample({{"node", n.name}}, hosted.count(n.name) ? hosted[n.name] : 0);
  }
}

// Each job's state, progress, figures and shards' versions.
void job_metrics(std::vector<prometheus::MetricFamily>& out, const dashboard_view& v) {
  {
    family f(out, "syncpoint_job_info", prometheus::MetricType::Gauge, "1 for each job the head lists, with its protocol and state.");
    for (auto& j : v.jobs)
      f.sample({{"job", std::to_string(j.status.id)}, {"protocol", shown_protocol(j.status)}, {"state", to_string(j.status.state)}}, 1);
  }
  {
    family f(out, "syncpoint_job_progress_ratio", prometheus::MetricType::Gauge, "Fraction of the job's sample budget (or time cap) done.");
    for (auto& j : v.jobs)
      f.sample(job_labels(j), j.status.progress);
  }
  // A family with one sample per job that has figures (`only_known`: and whose value is known, >= 0).
  auto per_job = [&](const char* name, prometheus::MetricType type, const char* help, auto value,
                     bool only_known = false) {
    family f(out, name, type, help);
    for (auto& j : v.jobs) {
      double x = j.live ? static_cast<double>(value(*j.live)) : -1;
      if (j.live && (!only_known || x >= 0))
        f.sample(job_labels(j), x);
    }
  };
  using prometheus::MetricType;
  per_job("syncpoint_job_samples_total", MetricType::Counter, "Samples of the gradients the job's PS accepted.",
          [](const live_job& l) { return l.samples(); });
  per_job("syncpoint_job_accuracy", MetricType::Gauge, "Test accuracy at the job's last evaluation.",
          [](const live_job& l) { return l.accuracy(); }, true);
  {
    family f(out, "syncpoint_job_measure", prometheus::MetricType::Gauge,
             "The last value of what the job's loop measured (source evaluation: the held-out model's; workers: "
             "reported with a push, by any worker).");
    for (auto& j : v.jobs)
      if (j.live) {
        auto id = std::to_string(j.status.id);
        for (auto& [name, series] : j.live->measure_series())
          f.sample({{"job", id}, {"name", name}, {"source", "evaluation"}}, series.back().value);
        for (auto& [name, value] : j.live->reported())
          f.sample({{"job", id}, {"name", name}, {"source", "workers"}}, value);
      }
  }
  per_job("syncpoint_job_learning_rate", MetricType::Gauge, "The learning rate the PS applies now.",
          [](const live_job& l) { return l.lr(); }, true);
  per_job("syncpoint_job_workers_live", MetricType::Gauge, "Workers of the job still running.",
          [](const live_job& l) { return l.workers_live(); });
  per_job("syncpoint_job_samples_per_second", MetricType::Gauge, "Samples per second over the last 10 s of the run.",
          [](const live_job& l) { return l.samples_per_s(); });
  per_job("syncpoint_job_barriers_total", MetricType::Counter, "Times the protocol released workers it held together.",
          [](const live_job& l) { return l.barriers(); });
  {
    family f(out, "syncpoint_job_shard_version", prometheus::MetricType::Gauge, "The model version each PS shard holds.");
    for (auto& j : v.jobs)
      if (j.live)
        for (size_t k = 0; k < j.live->shard_versions().size(); ++k)
          f.sample({{"job", std::to_string(j.status.id)}, {"shard", std::to_string(k)}},
                   static_cast<double>(j.live->shard_versions()[k]));
  }
}

// A sparse model's tables, each on each shard.
void table_metrics(std::vector<prometheus::MetricFamily>& out, const dashboard_view& v) {
  using prometheus::MetricType;
  auto per_table = [&](const char* name, prometheus::MetricType type, const char* help, auto value) {
    family f(out, name, type, help);
    for (auto& j : v.jobs)
      if (j.live)
        for (size_t k = 0; k < j.live->tables().size(); ++k)
          for (auto& t : j.live->tables()[k])
            value(f, labels{{"job", std::to_string(j.status.id)}, {"table", t.name}, {"shard", std::to_string(k)}}, t);
  };
  per_table("syncpoint_table_rows", MetricType::Gauge, "Rows a sparse table holds on a PS shard.",
            [](family& f, const labels& ls, const table_counts& t) { f.sample(ls, static_cast<double>(t.rows)); });
  per_table("syncpoint_table_bytes", MetricType::Gauge,
            "Bytes of a sparse table's rows on a PS shard (values and optimizer state).",
            [](family& f, const labels& ls, const table_counts& t) { f.sample(ls, static_cast<double>(t.bytes)); });
  per_table("syncpoint_table_evictions_total", MetricType::Counter,
            "Rows a sparse table's capacity (lru, lfu, ttl) dropped on a PS shard.",
            [](family& f, const labels& ls, const table_counts& t) { f.sample(ls, static_cast<double>(t.evictions)); });
  per_table("syncpoint_table_lookups_total", MetricType::Counter,
            "Keys pulled from a sparse table on a PS shard: hit (it had the row) or miss.",
            [](family& f, labels ls, const table_counts& t) {
              ls.push_back({"result", "hit"});
              f.sample(ls, static_cast<double>(t.hits));
              ls.back().value = "miss";
              f.sample(ls, static_cast<double>(t.misses));
            });
}

// Staleness, each job's and each worker's, and each worker's counters and latencies.
void worker_metrics(std::vector<prometheus::MetricFamily>& out, const dashboard_view& v) {
  {
    family f(out, "syncpoint_job_staleness_versions", prometheus::MetricType::Histogram,
             "Versions between a gradient's model and the model it was applied to.");
    for (auto& j : v.jobs)
      if (j.live)
        f.observe(job_labels(j), j.live->staleness());
  }
  auto worker_counter = [&](const char* name, const char* help, uint64_t worker_live::*field) {
    family f(out, name, prometheus::MetricType::Counter, help);
    per_worker(v, [&](const job_view& j, size_t w, const worker_live& l) {
      f.sample(worker_labels(j, w), static_cast<double>(l.*field));
    });
  };
  worker_counter("syncpoint_worker_samples_total", "Samples of the worker's gradients the PS accepted.",
                 &worker_live::samples);
  worker_counter("syncpoint_worker_pushes_total", "Gradients the worker pushed (accepted).", &worker_live::pushes);
  worker_counter("syncpoint_worker_pulls_total", "Models the worker pulled.", &worker_live::pulls);
  worker_counter("syncpoint_worker_rejected_pushes_total", "Gradients the PS refused (NaN, wrong size).",
                 &worker_live::rejected);
  auto worker_histogram = [&](const char* name, const char* help, histogram worker_live::*field) {
    family f(out, name, prometheus::MetricType::Histogram, help);
    per_worker(v, [&](const job_view& j, size_t w, const worker_live& l) { f.observe(worker_labels(j, w), l.*field); });
  };
  worker_histogram("syncpoint_worker_push_latency_seconds", "From sending a gradient to the PS accepting it.",
                   &worker_live::push_latency);
  worker_histogram("syncpoint_worker_pull_latency_seconds", "From asking for the model to holding it.",
                   &worker_live::pull_latency);
  worker_histogram("syncpoint_worker_staleness_versions", "Staleness of the worker's gradients when applied.",
                   &worker_live::staleness);
}

}  // namespace

std::string metrics_text(const dashboard_view& v) {
  std::vector<prometheus::MetricFamily> out;
  node_metrics(out, v);
  job_metrics(out, v);
  table_metrics(out, v);
  worker_metrics(out, v);
  return prometheus::TextSerializer().Serialize(out);
}

// -- JSON ----------------------------------------------------------------------

namespace {

std::string points(const std::vector<point>& ps) {
  return json::array(ps, [](const point& p) { return json::array_of({json::num(p.t_s, 6), json::num(p.value, 6)}); });
}

std::string strings(const std::vector<std::string>& xs) { return json::array(xs, json::str); }

json::object job_summary(const job_view& j) {
  json::object o;
  o.add("id", static_cast<unsigned long long>(j.status.id))
    .add("kind", j.sweep ? "sweep" : "job")
    .add("protocol", shown_protocol(j.status))
    .add("state", to_string(j.status.state))
    .add("workers", j.status.workers)
    .add("progress", j.status.progress)
    .raw("accuracy", j.status.accuracy >= 0 ? json::num(j.status.accuracy) : "null")
    .raw("shards", strings(j.status.shards))
    .raw("devices", strings(j.status.devices));
  if (j.live) {
    o.add("workers_live", j.live->workers_live())
      .add("samples", static_cast<unsigned long long>(j.live->samples()))
      .add("samples_per_s", j.live->samples_per_s())
      .add("run_time_s", j.live->run_time_s());
  } else {
    o.raw("workers_live", "null").raw("samples", "null").raw("samples_per_s", "null").raw("run_time_s", "null");
  }
  return o;
}

std::string timeline(const timeline_window& tl) {
  json::object o;
  o.add("bin_s", timeline_window::bin_s)
    .raw("end_s", tl.last_bin < 0 ? "null" : json::num(static_cast<double>(tl.last_bin + 1) * timeline_window::bin_s, 8))
    .raw("barriers", json::array(tl.barriers, [](uint32_t n) { return std::to_string(n); }));
  std::vector<std::string> rows;
  for (auto& row : tl.rows) {
    json::object r;
    const char* names[] = {"compute", "comm", "wait"};
    for (int c = 0; c < time_share::categories; ++c)
      r.raw(names[c], json::array(row, [&](const std::array<float, time_share::categories>& cell) {
              double scale = time_share::scale(cell[0] + cell[1] + cell[2], timeline_window::bin_s);
              return json::num(cell[static_cast<size_t>(c)] * scale, 3);
            }));
    rows.push_back(r.done());
  }
  o.raw("workers", json::array(rows, [](const std::string& r) { return r; }));
  return o.done();
}

std::string histogram_json(const histogram& h) {
  json::object o;
  o.raw("bounds", json::array(h.bounds, [](double b) { return json::num(b); }))
    .raw("counts", json::array(h.counts, [](uint64_t n) { return std::to_string(n); }))
    .add("count", static_cast<unsigned long long>(h.count))
    .raw("mean", h.count ? json::num(h.sum / static_cast<double>(h.count)) : "null");
  return o.done();
}

}  // namespace

std::string cluster_json(const dashboard_view& v) {
  auto hosted = shards_by_node(v);
  json::object o;
  o.add("version", v.version).add("now_ms", static_cast<long long>(v.now_ms));
  o.raw("nodes", json::array(v.nodes, [&](const node_status& n) {
    json::object x;
    x.add("name", n.name)
      .add("address", n.address)
      .add("host", n.host)
      .add("launcher", n.launcher)
      .raw("rank", n.rank >= 0 ? std::to_string(n.rank) : "null")
      .add("slots", n.slots)
      .add("used", n.used)
      .add("free", std::max(0, n.slots - n.used))
      .add("heartbeat_age_s", heartbeat_age_s(v, n))
      .add("up_s", std::max<int64_t>(0, v.now_ms - n.up_since_ms) / 1000.0)
      .add("shards", hosted.count(n.name) ? hosted[n.name] : 0)
      .raw("gpus", json::array(n.gpus, [](int32_t g) { return std::to_string(g); }));
    return x.done();
  }));
  o.raw("jobs", json::array(v.jobs, [&](const job_view& j) { return job_summary(j).done(); }));
  return o.done();
}

std::string job_json(const job_view& j) {
  auto o = job_summary(j);
  if (!j.live)
    return o.raw("live", "null").done();
  auto& l = *j.live;
  json::object live;
  live.raw("lr", l.lr() >= 0 ? json::num(l.lr()) : "null")
    .add("phase", l.phase())
    .add("barriers", static_cast<unsigned long long>(l.barriers()))
    .raw("staleness", histogram_json(l.staleness()))
    .add("staleness_max", l.staleness_max())
    .raw("shard_versions", json::array(l.shard_versions(), [](uint64_t x) { return std::to_string(x); }))
    .raw("tables", json::array(l.tables(), [](const std::vector<table_counts>& shard) {
           return json::array(shard, [](const table_counts& t) {
             return json::object{}
               .add("name", t.name)
               .add("rows", static_cast<unsigned long long>(t.rows))
               .add("bytes", static_cast<unsigned long long>(t.bytes))
               .add("evictions", static_cast<unsigned long long>(t.evictions))
               .add("hits", static_cast<unsigned long long>(t.hits))
               .add("misses", static_cast<unsigned long long>(t.misses))
               .done();
           });
         }))
    .raw("series", json::object{}
                     .raw("accuracy", points(l.accuracy_series()))
                     .raw("loss", points(l.loss_series()))
                     .raw("samples_per_s", points(l.rate_series()))
                     .raw("lr", points(l.lr_series()))
                     .raw("measures", [&] {
                       json::object m;
                       for (auto& [name, series] : l.measure_series())
                         m.raw(name, points(series));
                       return m.done();
                     }())
                     .done())
    .raw("reported", [&] {
      json::object m;
      for (auto& [name, value] : l.reported())
        m.add(name, value);
      return m.done();
    }())
    .raw("phases", json::array(l.phases(), [](const phase_change& p) {
           return json::object{}
             .add("t_s", static_cast<double>(p.t) * 1e-9)
             .add("from", p.from)
             .add("to", p.to)
             .add("reason", p.reason)
             .add("samples", static_cast<unsigned long long>(p.samples))
             .done();
         }))
    .raw("per_worker", [&] {
      std::vector<std::string> rows;
      for (size_t w = 0; w < l.workers().size(); ++w) {
        auto& x = l.workers()[w];
        rows.push_back(json::object{}
                         .add("id", static_cast<int>(w))
                         .add("samples", static_cast<unsigned long long>(x.samples))
                         .add("pushes", static_cast<unsigned long long>(x.pushes))
                         .add("pulls", static_cast<unsigned long long>(x.pulls))
                         .add("rejected", static_cast<unsigned long long>(x.rejected))
                         .raw("loss", x.loss >= 0 ? json::num(x.loss) : "null")
                         .raw("push_p50_s", x.push_latency.count ? json::num(x.push_latency.quantile(0.5)) : "null")
                         .raw("pull_p50_s", x.pull_latency.count ? json::num(x.pull_latency.quantile(0.5)) : "null")
                         .raw("staleness_mean", x.staleness.count ? json::num(x.staleness.sum / static_cast<double>(
                                                                                 x.staleness.count))
                                                                  : "null")
                         .done());
      }
      return json::array(rows, [](const std::string& s) { return s; });
    }())
    .raw("timeline", timeline(l.timeline()))
    .raw("files", strings(l.files()));
  return o.raw("live", live.done()).done();
}

}  // namespace syncpoint::cluster
