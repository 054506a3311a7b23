// Watches one job on the head for the dashboard (runtime/cluster/jobs/watch.hpp):
// once a second it reads the trace events the job's tracer got since the last
// read, the coordinator's counts and each PS shard's version, folds them into
// the job's live_job and hands the hub a copy. When the job ends, the runner
// hands it the result: it writes the job's files, rebuilds the figures from
// the whole trace (so the last ones equal the summary's) and quits. A
// detached actor: reading and folding never take a scheduler thread from the
// job's actors.
//
//   auto w = spawn_watch(sys, {id, cfg, link});
//   anon_send(w, start_atom::value, tracer, coordinator, ps, shard_hosts);  // again after a restart
//   anon_send(w, done_atom::value, result);                                 // the job's end
#pragma once

#include "core/ps_group.hpp"
#include "runtime/cluster/jobs/watch.hpp"

namespace syncpoint::cluster {

using watch_actor = caf::typed_actor<
  // a run starts (again, after a restart): its tracer, coordinator, shards and where they run
  caf::reacts_to<start_atom, tracer_actor, coordinator_actor, ps_group, std::vector<std::string>>,
  caf::reacts_to<done_atom, job_result>,  // the job's end
  caf::reacts_to<timeout_atom>>;          // (itself) time to read

struct watch_config {
  uint64_t id = 0;
  job_config cfg;  ///< the job's (its result's summary needs it)
  dashboard_link link;
  caf::actor_addr runner;  ///< the job's runner: should it end without `done`, the watcher ends too
  std::chrono::milliseconds period{1000};
};

watch_actor spawn_watch(caf::actor_system& sys, watch_config cfg);

}  // namespace syncpoint::cluster
