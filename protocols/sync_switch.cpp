// Sync-Switch — a schedule of protocols (PROTOCOLS.md, "Sync-Switch").
// Training follows phases by share of the sample budget, e.g.
// --schedule bsp:0.25,asp:0.75; any registered protocols, any number of phases.
// - A switch is live: the next phase's protocol (a fresh instance) takes over
//   the same coordinator, the PS keeps model, optimizer state and version. The
//   new phase sets its PS mode, which applies anything the old one buffered
//   (a BSP round half pushed is one step, no gradient lost or applied twice);
//   workers it holds are released by its on_start; workers in flight push
//   into the new phase.
// - Switch boundary: the push that brings the samples to share × budget is
//   the old phase's last; the switch follows it.
// - At a switch: worker behaviour and batches go back to the defaults, the
//   model is evaluated (accuracy at the end of the phase), the trace gets a
//   "phase" mark ("bsp>asp share"), and momentum follows --switch-momentum:
//   keep (the default: the PS's adjusted momentum rule already adapts to
//   asynchrony); zero (clear the velocity); scale (μ/n in asynchronous phases, μ in
//   bsp); ramp (clear, then rise from 0 to μ over --ramp-steps updates).
// - Online policy (--online on): bsp, switching to asp when a worker's cycle
//   (release → push) exceeds --straggler-factor × the median of the others
//   for --straggler-window consecutive iterations, and back to bsp when every
//   worker has been normal that long. The schedule is then not used.
// - --switch-policy FILE: the schedule a `syncpoint tune-switch` run chose.
#include <syncpoint/protocol_archive.hpp>
#include "protocols/switch_policy.hpp"

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace syncpoint {

namespace {

struct phase {
  std::string protocol;
  double share = 0;
};

std::vector<phase> parse_schedule(const std::string& text) {
  std::vector<phase> out;
  std::stringstream items(text);
  std::string item;
  double total = 0;
  while (std::getline(items, item, ',')) {
    auto colon = item.find(':');
    char* end = nullptr;
    double share = colon == std::string::npos ? -1 : std::strtod(item.c_str() + colon + 1, &end);
    if (colon == std::string::npos || colon == 0 || end == item.c_str() + colon + 1 || *end != '\0')
      throw std::invalid_argument("sync-switch: malformed schedule item '" + item +
                                  "' (expected protocol:share, e.g. bsp:0.25)");
    auto name = item.substr(0, colon);
    if (name == "sync-switch")
      throw std::invalid_argument("sync-switch: a schedule cannot contain sync-switch itself");
    if (!has_protocol(name))
      throw std::invalid_argument("sync-switch: unknown protocol '" + name + "' in schedule item '" +
                                  item + "'");
    if (!(share > 0 && share <= 1))
      throw std::invalid_argument("sync-switch: share in '" + item + "' must be in (0, 1]");
    out.push_back({name, share});
    total += share;
  }
  if (out.empty())
    throw std::invalid_argument("sync-switch: the schedule is empty");
  if (std::abs(total - 1.0) > 1e-6)
    throw std::invalid_argument("sync-switch: the shares of '" + text + "' sum to " +
                                std::to_string(total) + ", not 1");
  return out;
}

}  // namespace

class sync_switch : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    return {{"schedule", k::text, "bsp:0.25,asp:0.75", "phases as protocol:share,... (shares sum to 1)"},
            {"switch-momentum", k::text, "keep", "momentum at a switch (docs/sync-switch.md: why keep)", 0, 0,
             {"keep", "zero", "scale", "ramp"}},
            {"ramp-steps", k::integer, "50", "updates over which momentum ramps back", 1, 1e9},
            {"online", k::text, "off", "switch bsp/asp on stragglers instead of a schedule", 0, 0, {"off", "on"}},
            {"straggler-factor", k::real, "2", "a cycle this many times the others' median is slow", 1, 1e6},
            {"straggler-window", k::integer, "3", "consecutive slow (or normal) cycles to switch", 1, 1e6},
            {"switch-policy", k::text, "", "a policy file from 'syncpoint tune-switch' (its schedule)"}};
  }

  explicit sync_switch(const protocol_options& o)
    : opts_(o),
      momentum_(o.text("switch-momentum")),
      ramp_steps_(static_cast<uint32_t>(o.integer("ramp-steps"))),
      online_(o.text("online") == "on"),
      factor_(o.real("straggler-factor")),
      window_(static_cast<int>(o.integer("straggler-window"))) {
    auto schedule = o.text("schedule");
    if (!o.text("switch-policy").empty()) {
      auto policy = load_switch_policy(o.text("switch-policy"));  // throws naming the file
      if (o.has("job.model") && policy.model != o.text("job.model"))
        throw std::invalid_argument("sync-switch: policy file '" + o.text("switch-policy") +
                                    "' was tuned for model '" + policy.model + "', this job trains '" +
                                    o.text("job.model") + "'");
      schedule = policy.schedule;
    }
    phases_ = online_ ? std::vector<phase>{{"bsp", 1}, {"asp", 1}} : parse_schedule(schedule);
    for (auto& p : phases_)
      make_protocol(p.protocol, opts_);  // every phase's options are checked before the run
  }

  void on_start(coordinator_api& c) override {
    auto n = static_cast<size_t>(c.workers());
    released_at_.assign(n, -1);
    cycle_.assign(n, -1);
    slow_.assign(n, 0);
    normal_.assign(n, 0);
    base_batch_ = c.batch(0);
    enter(c, 0, "start");
  }

  void on_push(coordinator_api& c, worker_id w) override {
    bool slow_now = online_ && observe(c, w);
    active_->on_push(api(c), w);
    if (online_) {
      if (current_ == 0 && slow_now)
        enter(c, 1, "straggler");
      else if (current_ == 1 && all_normal(c))
        enter(c, 0, "recovered");
      return;
    }
    double done = 0;
    for (size_t i = 0; i <= current_; ++i)
      done += phases_[i].share;
    if (current_ + 1 < phases_.size() && c.run_fraction() >= done - 1e-9)
      enter(c, current_ + 1, "share");
  }

  // The online policy looks at live workers only: one that leaves, or comes
  // back, has no cycle observed. (After a load, refresh rebuilds the indexes
  // from cycle_ and normal_ at the next push anyway.)
  void on_lost(coordinator_api& c, worker_id w) override {
    set_cycle(w, -1);
    set_normal(w, 0);
    active_->on_lost(api(c), w);
  }
  void on_joined(coordinator_api& c, worker_id w) override {
    auto i = static_cast<size_t>(w);
    released_at_[i] = -1;
    slow_[i] = 0;
    set_cycle(w, -1);
    set_normal(w, 0);
    active_->on_joined(api(c), w);
  }

  // The phase's protocol nests: after loading which phase runs, a fresh
  // instance of it loads its own state (it is not started again).
  void checkpoint(protocol_archive& ar) override {
    ar(current_, entries_, base_batch_, released_at_, cycle_, slow_, normal_);
    if (ar.loading()) {
      active_ = make_protocol(phases_.at(current_).protocol, opts_);
      stale_ = true;  // the policy's indexes are made again at the next event
    }
    if (active_)  // none before the start
      active_->checkpoint(ar);
  }

  void on_timer(coordinator_api& c, uint64_t tag) override {
    if ((tag >> 48) == entries_)  // a timer of an earlier phase is void
      active_->on_timer(api(c), tag & ((uint64_t{1} << 48) - 1));
  }

 private:
  // What the phase's protocol sees: the coordinator, with its releases
  // recorded (cycle times) and its timers tagged with the phase entry.
  struct phase_api : coordinator_api {
    sync_switch* owner = nullptr;
    coordinator_api* c = nullptr;
    int workers() const override { return c->workers(); }
    bool live(worker_id w) const override { return c->live(w); }
    std::vector<worker_id> live_workers() const override { return c->live_workers(); }
    int live_count() const override { return c->live_count(); }
    int waiting_count() const override { return c->waiting_count(); }
    uint64_t min_clock() const override { return c->min_clock(); }
    uint64_t clock(worker_id w) const override { return c->clock(w); }
    double now() const override { return c->now(); }
    bool waiting(worker_id w) const override { return c->waiting(w); }
    void release(worker_id w, bool pull) override {
      if (c->waiting(w))
        owner->released_at_[static_cast<size_t>(w)] = c->now();
      c->release(w, pull);
    }
    void commit() override { c->commit(); }
    void set_mode(ps_mode m) override { c->set_mode(m); }
    void publish() override { c->publish(); }
    void set_worker_behavior(bool l, bool o) override { c->set_worker_behavior(l, o); }
    void release_at(worker_id w, double t, bool pull) override {
      if (c->waiting(w))
        owner->released_at_[static_cast<size_t>(w)] = std::max(t, c->now());
      c->release_at(w, t, pull);
    }
    void set_timer(double t, uint64_t tag) override { c->set_timer(t, (owner->entries_ << 48) | tag); }
    void set_batch(worker_id w, uint32_t b) override { c->set_batch(w, b); }
    uint32_t batch(worker_id w) const override { return c->batch(w); }
    uint64_t samples() const override { return c->samples(); }
    uint64_t sample_budget() const override { return c->sample_budget(); }
    double time_budget() const override { return c->time_budget(); }
    void set_momentum(double mu, bool clear, uint32_t ramp) override { c->set_momentum(mu, clear, ramp); }
    double base_momentum() const override { return c->base_momentum(); }
    void mark(const std::string& k, const std::string& n, double v) override { c->mark(k, n, v); }
    void evaluate() override { c->evaluate(); }
  };

  coordinator_api& api(coordinator_api& c) {
    wrapper_.owner = this;
    wrapper_.c = &c;
    return wrapper_;
  }

  // Starts phase `next` (a fresh protocol instance) on the running job.
  void enter(coordinator_api& c, size_t next, const std::string& reason) {
    auto from = active_ ? phases_[current_].protocol : std::string("-");
    auto& to = phases_[next].protocol;
    if (active_) {
      c.evaluate();  // the accuracy at the end of the phase
      c.set_worker_behavior(false, false);
      for (auto w : c.live_workers())
        c.set_batch(w, base_batch_);
      apply_momentum(c, to);
      std::fill(slow_.begin(), slow_.end(), 0);
      std::fill(normal_.begin(), normal_.end(), 0);
      normal_count_ = 0;
    }
    c.mark("phase", from + ">" + to + " " + reason, static_cast<double>(next));
    current_ = next;
    ++entries_;
    active_ = make_protocol(to, opts_);
    active_->on_start(api(c));
  }

  void apply_momentum(coordinator_api& c, const std::string& to) {
    double mu = c.base_momentum();
    if (momentum_ == "zero")
      c.set_momentum(mu, true, 0);
    else if (momentum_ == "scale")
      c.set_momentum(to == "bsp" ? mu : mu / std::max(1, c.live_count()), false, 0);
    else if (momentum_ == "ramp")
      c.set_momentum(mu, true, ramp_steps_);
  }

  // Online policy: w's latest cycle against the median of the others'. True
  // when w has now been slow for `window_` cycles in a row. The live workers'
  // cycles are kept ordered, so the median is O(log n), not O(n), per push.
  bool observe(coordinator_api& c, worker_id w) {
    auto i = static_cast<size_t>(w);
    if (released_at_[i] < 0)
      return false;
    refresh(c);
    set_cycle(w, -1);  // the others, without w
    auto others = cycles_.size();
    double median = others > 0 ? cycles_.find_by_order(others / 2)->first : 0;
    set_cycle(w, c.now() - released_at_[i]);
    if (others == 0)
      return false;
    if (cycle_[i] > factor_ * median) {
      set_normal(w, 0);
      return ++slow_[i] >= window_;
    }
    slow_[i] = 0;
    set_normal(w, normal_[i] + 1);
    return false;
  }

  bool all_normal(const coordinator_api& c) const { return normal_count_ == c.live_count(); }

  // cycle_[w], and its place among the live workers' cycles (those > 0).
  void set_cycle(worker_id w, double cycle) {
    auto i = static_cast<size_t>(w);
    if (cycle_[i] > 0)
      cycles_.erase({cycle_[i], w});
    cycle_[i] = cycle;
    if (cycle > 0)
      cycles_.insert({cycle, w});
  }

  // normal_[w], and how many live workers have been normal for `window_` cycles.
  void set_normal(worker_id w, int normal) {
    auto i = static_cast<size_t>(w);
    normal_count_ += (normal >= window_) - (normal_[i] >= window_);
    normal_[i] = normal;
  }

  // After a load: the indexes from cycle_ and normal_ of the live workers.
  void refresh(const coordinator_api& c) {
    if (!stale_)
      return;
    stale_ = false;
    cycles_.clear();
    normal_count_ = 0;
    for (auto v : c.live_workers()) {
      auto i = static_cast<size_t>(v);
      if (cycle_[i] > 0)
        cycles_.insert({cycle_[i], v});
      normal_count_ += normal_[i] >= window_;
    }
  }

  protocol_options opts_;
  std::string momentum_;
  uint32_t ramp_steps_;
  bool online_;
  double factor_;
  int window_;
  std::vector<phase> phases_;
  size_t current_ = 0;
  uint64_t entries_ = 0;  // phases entered so far: tags timers
  std::unique_ptr<protocol> active_;
  phase_api wrapper_;
  uint32_t base_batch_ = 64;
  std::vector<double> released_at_, cycle_;
  std::vector<int> slow_, normal_;
  // Derived from cycle_ and normal_ over the live workers (refresh).
  __gnu_pbds::tree<std::pair<double, worker_id>, __gnu_pbds::null_type, std::less<>, __gnu_pbds::rb_tree_tag,
                   __gnu_pbds::tree_order_statistics_node_update>
    cycles_;
  int normal_count_ = 0;
  bool stale_ = false;
};

SYNCPOINT_REGISTER_PROTOCOL("sync-switch", "a schedule of protocols by share of samples, or bsp/asp on stragglers",
                            sync_switch);

}  // namespace syncpoint
