// The head's dashboard, on the actors' side (issue 28). A watcher actor per
// job (job_watch.hpp) folds the job's trace and counts into a live_job once a
// second and hands a copy to the hub; the hub polls the head's status, and
// after each poll publishes one immutable dashboard_view on the board. The
// HTTP server (http_server.hpp) reads only the board: no request of a browser
// or a scraper ever reaches an actor, so they cannot slow a job.
//
//   auto board = std::make_shared<view_board>();
//   auto hub = spawn_hub(sys, {board, secret});
//   head_config.dashboard = {hub, runs_dir};                 // each job gets a watcher
//   anon_send(hub, attach_atom::value, head);                 // the head to poll
//   board->get();                                             // from any thread
#pragma once

#include "runtime/cluster/dashboard/dashboard_view.hpp"
#include "runtime/cluster/jobs/watch.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

namespace syncpoint::cluster {

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

/// The hub: a watch sink (each job's figures) that polls a status source (the head).
using hub_actor = watch_sink_actor::extend<
  caf::reacts_to<attach_atom, status_source_actor>,  // the head whose status it polls
  caf::reacts_to<timeout_atom>>;                     // (itself) time to poll

struct hub_config {
  std::shared_ptr<view_board> board;
  std::string secret;  ///< the cluster's token, which the head's status wants
  std::chrono::milliseconds period{500};
  size_t keep_finished = 100;  ///< finished jobs whose figures stay (older ones: their status only)
};

hub_actor spawn_hub(caf::actor_system& sys, hub_config cfg);

}  // namespace syncpoint::cluster
