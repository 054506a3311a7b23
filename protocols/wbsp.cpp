// WBSP — worker-busy synchronous parallel (PROTOCOLS.md, "WBSP").
// Nobody waits at a barrier. Each worker trains its own copy (a local step
// with every gradient) and pushes each gradient; the PS applies every push on
// arrival with weight 1/n, but pulls only see the model as of the last round
// close. A round closes when every live worker has pushed since the last
// close; each worker learns it in the reply to its next push and then pulls
// the new global model (the worker that closed the round pulls at once).
// wbsp-overlap: a worker computes step k+1 while the push of step k is in flight.
#include <syncpoint/protocol_archive.hpp>

#include <algorithm>

namespace syncpoint {

class wbsp : public protocol {
 public:
  explicit wbsp(const protocol_options&, bool overlap = false) : overlap_(overlap) {}

  void on_start(coordinator_api& c) override {
    auto n = static_cast<size_t>(c.workers());
    pushed_.assign(n, false);
    must_pull_.assign(n, false);
    c.set_mode(ps_mode::gated);
    c.set_worker_behavior(true, overlap_);
    for (auto w : c.live_workers())
      c.release(w);  // everyone starts from the initial model
  }

  void on_push(coordinator_api& c, worker_id w) override {
    mark_pushed(w, true);
    close_round_if_everyone_pushed(c);
    bool pull = must_pull_[idx(w)];
    must_pull_[idx(w)] = false;
    c.release(w, pull);  // never held
  }

  void on_lost(coordinator_api& c, worker_id w) override {
    mark_pushed(w, false);
    must_pull_[idx(w)] = false;
    close_round_if_everyone_pushed(c);  // the round is over live workers only
  }

  void checkpoint(protocol_archive& ar) override {
    ar(pushed_, must_pull_);
    if (ar.loading())
      pushed_count_ = static_cast<int>(std::count(pushed_.begin(), pushed_.end(), true));
  }

 private:
  static size_t idx(worker_id w) { return static_cast<size_t>(w); }

  void mark_pushed(worker_id w, bool v) {
    if (pushed_[idx(w)] != v)
      pushed_count_ += v ? 1 : -1;
    pushed_[idx(w)] = v;
  }

  // Only live workers are marked (a lost one's mark is taken back): O(1) per
  // push, and O(n) once per round.
  void close_round_if_everyone_pushed(coordinator_api& c) {
    if (c.live_count() == 0 || pushed_count_ != c.live_count())
      return;
    c.publish();  // the visible version advances once per round
    for (auto w : c.live_workers()) {
      pushed_[idx(w)] = false;
      must_pull_[idx(w)] = true;
    }
    pushed_count_ = 0;
  }

  bool overlap_;
  std::vector<bool> pushed_;     // pushed since the last close
  std::vector<bool> must_pull_;  // told to pull in the reply to its next push
  int pushed_count_ = 0;
};

class wbsp_overlap : public wbsp {
 public:
  explicit wbsp_overlap(const protocol_options& o) : wbsp(o, true) {}
};

SYNCPOINT_REGISTER_PROTOCOL("wbsp", "workers never wait; pulls gated by rounds of the slowest", wbsp);
SYNCPOINT_REGISTER_PROTOCOL("wbsp-overlap", "wbsp, computing the next step while a push is in flight",
                            wbsp_overlap);

}  // namespace syncpoint
