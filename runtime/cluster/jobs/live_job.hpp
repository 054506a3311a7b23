// What the dashboard and /metrics know of one job while it runs (issue 28):
// figures folded from its trace events as they arrive, the coordinator's
// sample counts and each PS shard's version. Plain values, no actors: the
// job's watcher (runtime/cluster/jobs/job_watch.cpp) feeds it, the HTTP side reads
// copies of it (runtime/cluster/dashboard/dashboard.hpp).
//
//   live_job j(info);
//   for (auto& ev : new_events) j.add(ev);     // in arrival order
//   j.set_counts(counts, now);                 // the coordinator's (get) answer
//   j.set_shard_version(k, v);
//   metrics_text(view), job_json(view): dashboard_view.hpp
#pragma once

#include "core/messages.hpp"
#include "core/time_share.hpp"

#include <syncpoint/messages.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace syncpoint::cluster {

/// A Prometheus histogram: counts per bucket (upper bounds `bounds`, then
/// +Inf), their sum and count.
struct histogram {
  std::vector<double> bounds;
  std::vector<uint64_t> counts;  // bounds.size() + 1, not cumulative
  double sum = 0;
  uint64_t count = 0;

  explicit histogram(std::vector<double> upper_bounds = {});
  void add(double x);
  /// The value below which a share `q` of the observations fall, as
  /// Prometheus's histogram_quantile estimates it (linear in the bucket).
  double quantile(double q) const;
};

/// Bucket bounds: latencies in seconds, staleness in versions.
const std::vector<double>& latency_buckets();
const std::vector<double>& staleness_buckets();

/// A point of a series: run-clock seconds, value.
struct point {
  double t_s = 0;
  double value = 0;
};

/// A series of at most `cap` points: when full, neighbours are averaged in
/// pairs and the step doubles (a whole run stays drawable in one page).
class thinned_series {
 public:
  explicit thinned_series(double step_s = 1, size_t cap = 600) : step_s_(step_s), cap_(cap) {}
  /// Adds `value` at `t_s` to the mean of its step.
  void add(double t_s, double value);
  /// The points: one per step (the mean of what fell in it).
  std::vector<point> points() const;

 private:
  struct cell {
    double t_sum = 0, v_sum = 0;
    uint64_t n = 0;
  };
  double step_s_;
  size_t cap_;
  std::map<int64_t, cell> cells_;  // by step index
};

/// What one worker did, by the trace.
struct worker_live {
  uint64_t samples = 0;  ///< the coordinator's count of its accepted samples
  uint64_t pushes = 0, pulls = 0, rejected = 0;
  histogram push_latency{latency_buckets()}, pull_latency{latency_buckets()};
  histogram staleness{staleness_buckets()};  ///< of its gradients, when applied
  double loss = -1;  ///< of its last gradient (-1: none yet)
};

/// The last minute of the workers' time, cut as the report cuts a run: per
/// bin, the seconds each worker spent computing, communicating, waiting.
struct timeline_window {
  static constexpr double bin_s = 0.25;
  static constexpr int bins = 240;  // 60 s
  int64_t last_bin = -1;  ///< the newest bin (by index from the run's start); the window ends with it
  std::vector<std::deque<std::array<float, time_share::categories>>> rows;  // per worker, oldest first, ending at last_bin
  std::deque<uint32_t> barriers = std::deque<uint32_t>(bins, 0);  // per bin, as rows
};

/// Where the job stands, for the pages (from the head's job status).
struct job_facts {
  uint64_t id = 0;
  std::string protocol;
  int32_t workers = 0;
  std::string state = "starting";  ///< starting, running, done, failed, stopped
  double progress = 0;             ///< fraction of the run
  std::vector<std::string> shards;  ///< where each PS shard runs: "head" or a node's name
  double lr = -1;                   ///< the learning rate it starts with (-1: unknown); `lr` events change it
};

class live_job {
 public:
  explicit live_job(job_facts facts);

  /// One trace event, as the tracer got it (any order of arrival).
  void add(const trace_event& ev);
  /// The coordinator's counts at run time `now` (ns).
  void set_counts(uint64_t samples, const std::vector<uint64_t>& per_worker, int32_t live, nanos now);
  void set_shard_version(size_t shard, uint64_t version);
  void set_facts(job_facts facts);
  /// The samples/s series of `before` (the same job while it ran): figures
  /// rebuilt from the trace alone have no counts over time.
  void keep_rates(const live_job& before) { rate_ = before.rate_; }
  /// A sparse model's tables on PS shard `shard`, as it last said (table_counts).
  void set_tables(size_t shard, std::vector<table_counts> tables);
  /// Files of the finished job the head wrote ("summary.json", ...), by name.
  void set_files(std::vector<std::string> names) { files_ = std::move(names); }

  const job_facts& facts() const { return facts_; }
  const std::vector<worker_live>& workers() const { return workers_; }
  uint64_t samples() const { return samples_; }
  int32_t workers_live() const { return live_; }
  double accuracy() const { return accuracy_; }  ///< last evaluation (-1: none yet)
  double lr() const { return lr_; }              ///< the learning rate now: the last traced, else the starting one (-1: unknown)
  double samples_per_s() const;                  ///< over the last 10 s of the run
  nanos run_time() const { return now_; }  ///< the latest run-clock time it heard of
  double run_time_s() const { return to_s(now_); }
  uint64_t barriers() const { return barriers_; }
  const std::string& phase() const { return phase_; }  ///< the protocol now ("" until a phase event)
  const std::vector<phase_change>& phases() const { return phases_; }
  const std::vector<uint64_t>& shard_versions() const { return shard_versions_; }
  /// By shard: its tables' figures (empty: a dense model, or none read yet).
  const std::vector<std::vector<table_counts>>& tables() const { return tables_; }
  const histogram& staleness() const { return staleness_; }  ///< every applied gradient's
  double staleness_max() const { return staleness_max_; }
  const std::vector<point>& accuracy_series() const { return accuracy_series_; }
  /// What the loop's evaluation measured besides accuracy (a held-out "mse"): each evaluation's value, by name.
  const std::map<std::string, std::vector<point>>& measure_series() const { return measures_; }
  /// What the workers' loops reported with their pushes (a "reward"): the last value, by name.
  const std::map<std::string, double>& reported() const { return reported_; }
  std::vector<point> loss_series() const { return loss_.points(); }
  std::vector<point> rate_series() const { return rate_.points(); }
  std::vector<point> lr_series() const;
  const timeline_window& timeline() const { return timeline_; }
  const std::vector<std::string>& files() const { return files_; }

 private:
  static double to_s(nanos t) { return static_cast<double>(t) * 1e-9; }
  worker_live* worker(int32_t id);
  void spend(int32_t worker, nanos t0, nanos t1, time_share::category c);
  void advance_to(int64_t bin);

  job_facts facts_;
  std::vector<worker_live> workers_;
  uint64_t samples_ = 0;
  int32_t live_ = 0;
  nanos now_ = 0;
  double accuracy_ = -1, lr_ = -1;
  uint64_t barriers_ = 0;
  std::string phase_;
  std::vector<phase_change> phases_;
  std::vector<uint64_t> shard_versions_;
  std::vector<std::vector<table_counts>> tables_;
  histogram staleness_{staleness_buckets()};
  double staleness_max_ = 0;
  std::vector<point> accuracy_series_;
  std::map<std::string, std::vector<point>> measures_;
  std::map<std::string, double> reported_;
  std::vector<point> lr_points_;
  thinned_series loss_{1}, rate_{1};
  std::deque<std::pair<nanos, uint64_t>> recent_samples_;  // (time, samples) of the last 10 s of counts
  timeline_window timeline_;
  std::vector<std::string> files_;
};

}  // namespace syncpoint::cluster
