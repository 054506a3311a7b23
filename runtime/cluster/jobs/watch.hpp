// What the cluster hands a dashboard (runtime/cluster/dashboard/, the layer
// above): each job's figures, as a watcher (job_watch.hpp) folds them, and
// where a finished job's files go. The dashboard implements the sink; the
// head and the job runner know only this, never the dashboard.
//
//   head_config.dashboard = {sink, runs_dir};                 // each job gets a watcher
//   anon_send(sink, live_atom::value, job_id, figures);       // (a watcher) the job's latest figures
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"
#include "runtime/cluster/jobs/live_job.hpp"

#include <caf/allowed_unsafe_message_type.hpp>

#include <memory>
#include <string>

namespace syncpoint::cluster {

using live_atom = caf::atom_constant<caf::atom("sp_live")>;

/// Takes job id's figures (from its watcher).
using watch_sink_actor = caf::typed_actor<caf::reacts_to<live_atom, uint64_t, std::shared_ptr<const live_job>>>;

struct dashboard_link {
  watch_sink_actor hub;  ///< null: no dashboard, nothing is watched
  std::string runs_dir;
};

inline std::string job_files_dir(const std::string& runs_dir, uint64_t id) {
  return runs_dir + "/job-" + std::to_string(id);
}

}  // namespace syncpoint::cluster

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const syncpoint::cluster::live_job>)  // stays in the head's process
