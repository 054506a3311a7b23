// A protocol written outside syncpoint's tree, with the installed headers only: commit when half
// of the live workers have pushed (buffered), releasing those that did. The others' next pushes
// are then stale. Its state is the pushers of the open round, which checkpoint() saves, so a run
// of it resumes bit for bit. The including program registers it under a name of its own:
//
//   using downstream::half_quorum;  // the macro takes a bare class name
//   SYNCPOINT_REGISTER_PROTOCOL("half-quorum", "commit when half of the live workers have pushed", half_quorum);
#pragma once

#include <syncpoint/protocol.hpp>
#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <vector>

namespace downstream {

class half_quorum : public syncpoint::protocol {
 public:
  explicit half_quorum(const syncpoint::protocol_options&) {}

  void on_start(syncpoint::coordinator_api& c) override {
    c.set_mode(syncpoint::ps_mode::buffered);
    for (auto w : c.live_workers())
      c.release(w);
  }
  void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id w) override {
    pushed_.push_back(w);
    commit_if_half(c);
  }
  void on_lost(syncpoint::coordinator_api& c, syncpoint::worker_id w) override {
    pushed_.erase(std::remove(pushed_.begin(), pushed_.end(), w), pushed_.end());
    commit_if_half(c);
  }
  void checkpoint(syncpoint::protocol_archive& ar) override { ar(pushed_); }

 private:
  void commit_if_half(syncpoint::coordinator_api& c) {
    if (pushed_.empty() || 2 * static_cast<int>(pushed_.size()) < c.live_count())
      return;
    c.commit();
    for (auto w : pushed_)
      c.release(w);
    pushed_.clear();
  }
  std::vector<syncpoint::worker_id> pushed_;
};

}  // namespace downstream
