// A quorum syncer (an example of a local-update protocol written with the
// public API alone: <syncpoint/protocol.hpp>, <syncpoint/local_work.hpp>).
// Each learner takes H local SGD steps and pushes its outer gradient. When K
// of the live learners have reported, a grace window opens: whoever reports
// within it joins the merge, and at its end (or once every live learner is in)
// the PS steps once on the reports' mean, each weighted by the samples it
// stands for (the PS's weight rule), and those learners pull the merged model.
// The others go on training; their report counts toward the next merge.
// With K = N and no grace this is Local SGD's round; with K < N a straggler
// no longer holds everyone, and its late report is merged one round stale.
#include <syncpoint/protocol.hpp>
#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <vector>

namespace syncpoint {

class quorum_syncer : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    return {
      {"quorum", k::integer, "0", "quorum: reports that open a merge (K; 0: a majority of the live learners)", 0, 4096},
      {"grace", k::real, "0", "quorum: seconds a merge waits for more reports once K are in", 0, 1e9},
      {"local-steps", k::integer, "8", "local steps each worker takes between exchanges (H)", 1, 1e9, {}, "H"},
      {"inner-lr", k::real, "0.05", "the inner optimizer's learning rate", 1e-12, 1e6},
    };
  }
  static std::map<std::string, std::string> job_defaults() {  // the merge is the mean model
    return {{"optimizer", "sgd"}, {"lr", "1"}, {"momentum", "0"}};
  }

  explicit quorum_syncer(const protocol_options& o) : k_(o.integer("quorum")), grace_(o.real("grace")) {
    work_.steps = static_cast<uint32_t>(o.integer("local-steps"));
    work_.inner.type = inner_kind::sgd;
    work_.inner.lr = o.real("inner-lr");
    work_.push = push_kind::outer;
  }

  void on_start(coordinator_api& c) override {
    reported_.assign(static_cast<size_t>(c.workers()), false);
    c.set_mode(ps_mode::buffered);
    for (auto w : c.live_workers()) {
      c.set_local_work(w, work_);
      c.release(w);
    }
  }

  void on_push(coordinator_api& c, worker_id w) override {
    mark(w, true);
    consider(c);
  }

  void on_lost(coordinator_api& c, worker_id w) override {
    mark(w, false);
    consider(c);
  }

  void on_joined(coordinator_api& c, worker_id w) override {
    c.set_local_work(w, work_);
    c.release(w);
  }

  void on_timer(coordinator_api& c, uint64_t tag) override {
    if (tag == merges_ && window_open_)
      merge(c);  // the grace window is over (a timer of a merge already made is void)
  }

  void checkpoint(protocol_archive& ar) override { ar(reported_, in_, merges_, window_open_); }

 private:
  int quorum(const coordinator_api& c) const {
    return k_ > 0 ? static_cast<int>(std::min<long long>(k_, c.live_count())) : c.live_count() / 2 + 1;
  }

  void mark(worker_id w, bool in) {
    auto i = static_cast<size_t>(w);
    if (reported_[i] != in)
      in_ += in ? 1 : -1;
    reported_[i] = in;
  }

  void consider(coordinator_api& c) {
    auto in = in_;
    if (in == 0)
      return;
    if (in >= c.live_count() || (in >= quorum(c) && grace_ == 0)) {
      merge(c);
    } else if (in >= quorum(c) && !window_open_) {
      window_open_ = true;
      c.set_timer(c.now() + grace_, merges_);
    }
  }

  void merge(coordinator_api& c) {
    c.commit();
    for (size_t i = 0; i < reported_.size(); ++i)
      if (reported_[i])
        c.release(static_cast<worker_id>(i));
    reported_.assign(reported_.size(), false);
    in_ = 0;
    window_open_ = false;
    ++merges_;
  }

  long long k_;
  double grace_;
  local_work work_;
  std::vector<bool> reported_;  // per learner: reported since the last merge
  int in_ = 0;                   // ... how many
  uint64_t merges_ = 0;
  bool window_open_ = false;
};

SYNCPOINT_REGISTER_PROTOCOL("quorum", "merges the outer gradients of K of N learners, with a grace window", quorum_syncer);

}  // namespace syncpoint
