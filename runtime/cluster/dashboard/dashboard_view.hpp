// What the head's dashboard shows at one moment, and its three renderings:
// Prometheus's text exposition format (/metrics) and the JSON of the pages'
// API (/api/cluster, /api/jobs/ID; docs/dashboard.md lists every field). A
// view is built whole by the dashboard hub and never changed after: the HTTP
// threads read it while the next one is built.
//
//   auto v = std::make_shared<dashboard_view>();   // the hub fills it
//   std::string text = metrics_text(*v);
//   std::string page_data = cluster_json(*v);
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"
#include "runtime/cluster/jobs/live_job.hpp"

#include <memory>
#include <string>
#include <vector>

namespace syncpoint::cluster {

/// One job (or sweep) as the head lists it, with what its watcher knows.
struct job_view {
  job_status status;
  bool sweep = false;
  std::shared_ptr<const live_job> live;  ///< null: no figures yet (or a sweep)
};

struct dashboard_view {
  int64_t now_ms = 0;              ///< Unix time the view was taken
  std::string version;             ///< syncpoint's
  std::vector<node_status> nodes;  ///< in the order they joined
  std::vector<job_view> jobs;      ///< by id

  /// The job with this id, or null.
  const job_view* job(uint64_t id) const;
};

/// Prometheus's text format, version 0.0.4 (prometheus-cpp's serializer): the nodes' slots and heartbeat
/// ages, each job's gauges and staleness, each worker's counters and histograms.
std::string metrics_text(const dashboard_view& v);

/// The cluster page's data: nodes and jobs.
std::string cluster_json(const dashboard_view& v);

/// One job page's data: its figures, series, the last minute's timeline, phases, files.
std::string job_json(const job_view& job);

}  // namespace syncpoint::cluster
