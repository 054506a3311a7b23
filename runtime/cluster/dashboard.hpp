// The head's dashboard, on the actors' side (issue 28). A watcher actor per
// job (job_watch.hpp) folds the job's trace and counts into a live_job once a
// second and hands a copy to the hub; the hub polls the head's status, and
// after each poll publishes one immutable dashboard_view on the board. The
// HTTP server (http_server.hpp) reads only the board: no request of a browser
// or a scraper ever reaches an actor, so they cannot slow a job.
//
//   auto board = std::make_shared<view_board>();
//   auto hub = spawn_hub(sys, {board, secret});
//   head_config.dashboard = {hub, runs_dir, write_report};   // each job gets a watcher
//   anon_send(hub, attach_atom::value, head);                 // the head to poll
//   board->get();                                             // from any thread
#pragma once

#include "runtime/cluster/dashboard_view.hpp"

#include <caf/allowed_unsafe_message_type.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace syncpoint::cluster {

using live_atom = caf::atom_constant<caf::atom("sp_live")>;

/// The latest view, from the hub (one writer) to the HTTP threads (readers).
class view_board {
 public:
  std::shared_ptr<const dashboard_view> get() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return view_;
  }
  void put(std::shared_ptr<const dashboard_view> view) {
    std::lock_guard<std::mutex> guard{mutex_};
    view_ = std::move(view);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const dashboard_view> view_ = std::make_shared<dashboard_view>();
};

/// Keeps the cluster's view and publishes it.
using hub_actor = caf::typed_actor<
  caf::reacts_to<attach_atom, head_actor>,                               // the head whose status it polls
  caf::reacts_to<live_atom, uint64_t, std::shared_ptr<const live_job>>,  // job id's figures (its watcher)
  caf::reacts_to<timeout_atom>>;                                         // (itself) time to poll

struct hub_config {
  std::shared_ptr<view_board> board;
  std::string secret;  ///< the cluster's token, which the head's status wants
  std::chrono::milliseconds period{500};
  size_t keep_finished = 100;  ///< finished jobs whose figures stay (older ones: their status only)
};

/// A detached actor (a thread of its own: it never takes a scheduler thread from a job).
hub_actor spawn_hub(caf::actor_system& sys, hub_config cfg);

/// What a job on the head needs to have itself watched: the hub, and where
/// its files go when it ends (`runs_dir`/job-ID/: summary.json, trace.jsonl,
/// and report.html when `write_report(dir)` makes one).
struct dashboard_link {
  hub_actor hub;  ///< null: no dashboard, nothing is watched
  std::string runs_dir;
  std::function<void(const std::string& dir)> write_report;
};

/// The folder of job `id`'s files: `runs_dir`/job-ID.
inline std::string job_files_dir(const std::string& runs_dir, uint64_t id) {
  return runs_dir + "/job-" + std::to_string(id);
}

}  // namespace syncpoint::cluster

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const syncpoint::cluster::live_job>)  // stays in the head's process
