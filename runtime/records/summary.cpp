#include "runtime/records/summarize.hpp"

#include "core/clock.hpp"
#include "core/json.hpp"

#include <algorithm>

namespace syncpoint {

namespace {

// What the events add up to beyond run_summary's own fields.
struct tally {
  double staleness_sum = 0;
  uint64_t applied = 0;
  uint64_t links = 0;  // one per PS shard with a link model
};

// One trace event into the summary.
void count(run_summary& s, const job_config& cfg, const trace_event& ev, tally& t) {
  double span = to_seconds(ev.t1 - ev.t0);
  auto* w = ev.worker >= 0 && ev.worker < cfg.workers ? &s.per_worker[static_cast<size_t>(ev.worker)]
                                                      : nullptr;
  if (ev.kind == "compute" && w) {
    w->compute_s += span;
  } else if ((ev.kind == "push" || ev.kind == "pull") && w) {
    w->comm_s += span;
    if (ev.kind == "push")  // its value: its bytes on the wire
      s.pushed_bytes += static_cast<uint64_t>(ev.value);
    else
      s.pulled_bytes += static_cast<uint64_t>(ev.value);
  } else if (ev.kind == "wait" && w) {
    w->wait_s += span;
  } else if (ev.kind == "apply") {
    if (w)
      ++w->iterations;  // gradients the PS applied (a rejected one is no iteration)
    ++t.applied;
    t.staleness_sum += ev.value;
    s.staleness_max = std::max(s.staleness_max, static_cast<uint64_t>(ev.value));
  } else if (ev.kind == "barrier") {
    ++s.barriers;
  } else if (ev.kind == "rejected" && w) {
    ++s.rejected;
  } else if (ev.kind == "link") {  // iter: the shard whose link it is
    s.link_busy_s = std::max(0.0, s.link_busy_s) + span;
    t.links = std::max<uint64_t>(t.links, ev.iter + 1);
  } else if (ev.kind == "lost") {
    ++s.lost;
  } else if (ev.kind == "copy_lost") {  // iter: the shard, value: the copy
    s.copy_losses.push_back({ev.iter, static_cast<int>(ev.value), to_seconds(ev.t0), ev.note});
  } else if (ev.kind == "copy_added") {  // iter: the shard, value: the copy, note: where
    s.copies_made.push_back({ev.iter, static_cast<int>(ev.value), to_seconds(ev.t0), ev.note});
  } else if (ev.kind == "joined") {
    s.joins.push_back({ev.worker, to_seconds(ev.t0), ev.note});
  } else if (ev.kind == "eval" && ev.value >= 0) {  // (< 0: the loop measures no accuracy)
    s.evals.push_back({to_seconds(ev.t0), ev.iter, ev.value});
    if (cfg.target_accuracy > 0 && s.time_to_target_s < 0 && ev.value >= cfg.target_accuracy)
      s.time_to_target_s = to_seconds(ev.t0);
  } else if (ev.kind == "final_eval") {
    s.final_accuracy = ev.value;
    if (cfg.target_accuracy > 0 && s.time_to_target_s < 0 && ev.value >= cfg.target_accuracy)
      s.time_to_target_s = to_seconds(ev.t0);
  } else if (ev.kind == "metric" && ev.worker < 0) {  // the evaluator's: the last of each name is the final one
    auto same = [&](const metric& m) { return m.name == ev.note; };
    auto it = std::find_if(s.final_metrics.begin(), s.final_metrics.end(), same);
    if (it == s.final_metrics.end())
      s.final_metrics.push_back({ev.note, ev.value});
    else
      it->value = ev.value;
  } else if (ev.kind == "end") {
    s.run_time_s = to_seconds(ev.t0);
    s.samples = ev.iter;
  }
}

// Phases: each "phase" mark ("from>to reason") starts one; it ends at the next.
void add_phases(run_summary& s, const std::vector<trace_event>& trace) {
  for (auto& ev : trace)
    if (ev.kind == "phase") {
      auto change = phase_of(ev);
      phase_summary ph;
      ph.protocol = change.to;
      ph.reason = change.reason;
      ph.start_s = to_seconds(change.t);
      ph.samples = change.samples;  // samples at its start, for now
      s.phases.push_back(ph);
    }
  for (size_t i = 0; i < s.phases.size(); ++i) {
    auto& ph = s.phases[i];
    bool last = i + 1 == s.phases.size();
    double end = last ? s.run_time_s : s.phases[i + 1].start_s;
    uint64_t end_samples = last ? s.samples : s.phases[i + 1].samples;
    ph.time_s = end - ph.start_s;
    ph.samples = end_samples - ph.samples;
    if (last) {
      ph.accuracy_at_end = s.final_accuracy;
    } else {
      for (auto& e : s.evals)  // the evaluation requested at the switch
        if (e.t_s >= end - 1e-12) {
          ph.accuracy_at_end = e.accuracy;
          break;
        }
    }
  }
}

}  // namespace

run_summary summarize(const job_config& cfg, double iter_cost_ms,
                      const std::vector<trace_event>& trace,
                      const std::vector<worker_loss>& losses) {
  run_summary s;
  for (auto& l : losses)
    s.losses.push_back({l.worker, to_seconds(l.t), l.reason});
  s.protocol = cfg.protocol;
  s.model = cfg.model;
  s.workers = cfg.workers;
  s.clock = cfg.clock == clock_kind::real ? "real" : "virtual";
  s.seed = cfg.seed;
  s.straggler = cfg.straggler;
  s.lr = cfg.lr;
  s.momentum = cfg.momentum;
  s.momentum_rule = cfg.momentum_rule;
  s.compress = cfg.compress;
  s.iter_cost_ms = iter_cost_ms;
  s.target_accuracy = cfg.target_accuracy;
  s.per_worker.resize(static_cast<size_t>(cfg.workers));
  for (int i = 0; i < cfg.workers; ++i)
    s.per_worker[static_cast<size_t>(i)].id = i;
  tally t;
  for (auto& ev : trace)
    count(s, cfg, ev, t);
  s.samples_per_s = s.run_time_s > 0 ? static_cast<double>(s.samples) / s.run_time_s : 0;
  add_phases(s, trace);
  if (s.link_busy_s >= 0 && s.run_time_s > 0)
    s.link_utilization = s.link_busy_s / s.run_time_s / static_cast<double>(std::max<uint64_t>(t.links, 1));
  s.staleness_mean = t.applied > 0 ? t.staleness_sum / static_cast<double>(t.applied) : 0;
  double ratio_sum = 0;
  for (auto& w : s.per_worker) {
    w.compute_ratio = s.run_time_s > 0 ? w.compute_s / s.run_time_s : 0;
    ratio_sum += w.compute_ratio;
  }
  s.mean_compute_ratio = s.per_worker.empty() ? 0 : ratio_sum / static_cast<double>(s.per_worker.size());
  return s;
}

namespace {

std::string workers_json(const run_summary& s) {
  using namespace json;
  return array(s.per_worker, [](const worker_summary& w) {
    return object()
      .add("id", w.id)
      .add("iterations", static_cast<unsigned long long>(w.iterations))
      .add("compute_s", w.compute_s)
      .add("comm_s", w.comm_s)
      .add("wait_s", w.wait_s)
      .add("compute_ratio", w.compute_ratio)
      .done();
  });
}

std::string evals_json(const run_summary& s) {
  using namespace json;
  return array(s.evals, [](const eval_point& e) {
    return object()
      .add("t_s", e.t_s)
      .add("samples", static_cast<unsigned long long>(e.samples))
      .add("accuracy", e.accuracy)
      .done();
  });
}

std::string phases_json(const run_summary& s) {
  using namespace json;
  return array(s.phases, [](const phase_summary& ph) {
    return object()
      .add("protocol", ph.protocol)
      .add("reason", ph.reason)
      .add("start_s", ph.start_s)
      .add("time_s", ph.time_s)
      .add("samples", static_cast<unsigned long long>(ph.samples))
      .raw("accuracy_at_end", ph.accuracy_at_end >= 0 ? num(ph.accuracy_at_end) : "null")
      .done();
  });
}

}  // namespace

std::string to_json(const run_summary& s) {
  using namespace json;
  auto workers = workers_json(s), evals = evals_json(s), phases = phases_json(s);
  auto losses = array(s.losses, [](const loss_point& l) {
    return object().add("worker", l.worker).add("t_s", l.t_s).add("reason", l.reason).done();
  });
  auto o = object();
  o.add("protocol", s.protocol)
           .add("model", s.model)
           .add("workers", s.workers)
           .add("clock", s.clock)
           .add("seed", static_cast<unsigned long long>(s.seed))
           .add("straggler", s.straggler)
           .add("lr", s.lr)
           .add("momentum", s.momentum)
           .add("momentum_rule", s.momentum_rule)
           .add("iter_cost_ms", s.iter_cost_ms)
           .raw("iter_cost_source", s.iter_cost_source.empty() ? "null" : json::str(s.iter_cost_source))
           .add("run_time_s", s.run_time_s)
           .add("samples", static_cast<unsigned long long>(s.samples))
           .add("samples_per_s", s.samples_per_s)
           .raw("final_accuracy", s.final_accuracy >= 0 ? num(s.final_accuracy) : "null");
  if (!s.copy_losses.empty())  // (--ps-replicas: a job that lost no shard's copy keeps the summary it had)
    o.raw("lost_shard_copies", array(s.copy_losses, [](const copy_loss_point& l) {
      return object().add("shard", static_cast<unsigned long long>(l.shard)).add("copy", l.copy).add("t_s", l.t_s)
        .add("reason", l.reason).done();
    }));
  if (!s.copies_made.empty())
    o.raw("remade_shard_copies", array(s.copies_made, [](const copy_loss_point& l) {
      return object().add("shard", static_cast<unsigned long long>(l.shard)).add("copy", l.copy).add("t_s", l.t_s)
        .add("host", l.reason).done();
    }));
  if (!s.final_metrics.empty()) {  // (a job that measures only accuracy keeps the summary it always had)
    json::object m;
    for (auto& x : s.final_metrics)
      m.add(x.name, x.value);
    o.raw("final_metrics", m.done());
  }
  return o
           .raw("target_accuracy", s.target_accuracy > 0 ? num(s.target_accuracy) : "null")
           .raw("time_to_target_s", s.time_to_target_s >= 0 ? num(s.time_to_target_s) : "null")
           .add("mean_compute_ratio", s.mean_compute_ratio)
           .add("staleness_mean", s.staleness_mean)
           .add("staleness_max", static_cast<unsigned long long>(s.staleness_max))
           .add("barriers", static_cast<unsigned long long>(s.barriers))
           .add("rejected_pushes", static_cast<unsigned long long>(s.rejected))
           .add("lost_workers", static_cast<unsigned long long>(s.lost))
           .add("compress", s.compress)
           .add("pushed_bytes", static_cast<unsigned long long>(s.pushed_bytes))
           .add("pulled_bytes", static_cast<unsigned long long>(s.pulled_bytes))
           .raw("link_busy_s", s.link_busy_s >= 0 ? num(s.link_busy_s) : "null")
           .raw("link_utilization", s.link_utilization >= 0 ? num(s.link_utilization) : "null")
           .raw("phases", phases)
           .raw("losses", losses)
           .raw("joins", array(s.joins, [](const loss_point& j) {
             return object().add("worker", j.worker).add("t_s", j.t_s).add("where", j.reason).done();
           }))
           .raw("per_worker", workers)
           .raw("evals", evals)
           .raw("resumed_from", s.resumed_from.empty() ? "null" : json::str(s.resumed_from))
           .raw("resumed_at_s", s.resumed_at_s >= 0 ? num(s.resumed_at_s) : "null")
           .done();
}

std::string to_json(const trace_event& ev) {
  auto o = json::object();
  o.add("kind", ev.kind)
    .add("worker", ev.worker)
    .raw("t0", json::num(to_seconds(ev.t0), 15))
    .raw("t1", json::num(to_seconds(ev.t1), 15))
    .add("iter", static_cast<unsigned long long>(ev.iter))
    .add("version", static_cast<unsigned long long>(ev.version))
    .raw("value", json::num(ev.value, 9));
  if (!ev.note.empty())  // only events that need words have them (the key is absent otherwise)
    o.add("note", ev.note);
  return o.done();
}

double total_wait_s(const run_summary& s) {
  double t = 0;
  for (auto& w : s.per_worker)
    t += w.wait_s;
  return t;
}

double total_comm_s(const run_summary& s) {
  double t = 0;
  for (auto& w : s.per_worker)
    t += w.comm_s;
  return t;
}

bool failed_run(const run_summary& s) {
  // Every worker that ran was lost: as many losses as workers, plus those that joined later.
  return s.workers > 0 && s.lost >= static_cast<uint64_t>(s.workers) + s.joins.size();
}

uint64_t equal_samples(const std::vector<const run_summary*>& runs) {
  uint64_t n = 0;
  bool any = false;
  for (auto* s : runs)
    if (!failed_run(*s)) {
      n = any ? std::min(n, s->samples) : s->samples;
      any = true;
    }
  return n;
}

double accuracy_at_samples(const run_summary& s, uint64_t samples) {
  auto points = s.evals;  // and the final evaluation, at the run's last sample
  if (s.samples > 0 && s.final_accuracy >= 0 && (points.empty() || points.back().samples <= s.samples))
    points.push_back({s.run_time_s, s.samples, s.final_accuracy});
  const eval_point* before = nullptr;
  for (auto& e : points) {
    if (e.samples > samples) {
      if (before && before->samples == samples)
        return before->accuracy;
      if (!before)
        return -1;
      double f = static_cast<double>(samples - before->samples) /
                 static_cast<double>(e.samples - before->samples);
      return before->accuracy + f * (e.accuracy - before->accuracy);
    }
    before = &e;
  }
  return before && before->samples <= samples ? before->accuracy : -1;
}

}  // namespace syncpoint
