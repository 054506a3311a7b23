#include "cli/compare_runs.hpp"

#include "cli/options.hpp"
#include "runtime/job.hpp"
#include "runtime/run_files.hpp"
#include "runtime/spread.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace syncpoint::cli {

namespace {

double reference_epochs(const job_config& base) { return base.epochs > 0 ? base.epochs : 1; }

// One protocol at one lr under the stop rule: no sample budget, the cap, the target.
compared_run run_under_rule(const comparison_plan& plan, const std::string& protocol, double lr, uint64_t seed,
                             const comparison& c, bool tuning, std::vector<std::string>& failures) {
  auto cfg = plan.base;
  cfg.protocol = protocol;
  cfg.seed = seed;
  cfg.protocol_opts = options_of(plan.base, protocol);  // each protocol gets its own options
  cfg.lr = lr;
  cfg.epochs = 0;
  cfg.max_time_s = c.cap_s;
  // A schedule is by samples and must not depend on where the cap stops a run:
  // every protocol meets the reference's schedule (its epochs), and one that
  // gets further trains on at the schedule's last rate.
  // (With --max-time and no --epochs there is no reference: --lr-epochs must say.)
  if (cfg.lr_epochs == 0 && (plan.base.epochs > 0 || plan.base.max_time_s <= 0))
    cfg.lr_epochs = reference_epochs(plan.base);
  cfg.stop_at_target = cfg.target_accuracy > 0 && !plan.run_to_cap;
  if (!plan.base.out_dir.empty())
    cfg.out_dir = plan.base.out_dir + "/" + protocol + (tuning ? "-lr" + fmt("%g", lr) : "") +
                  (plan.seeds.empty() ? "" : "-seed" + std::to_string(seed));
  compared_run out;
  out.label = protocol_label(protocol, cfg.protocol_opts) + (tuning ? " lr=" + fmt("%g", lr) : "");
  out.lr = lr;
  auto whose = protocol + " (lr " + fmt("%g", lr) + (plan.seeds.empty() ? "" : ", seed " + std::to_string(seed)) + "): ";
  run_result r;
  try {
    r = train(cfg, plan.on_progress);
  } catch (const std::runtime_error& e) {  // e.g. no result in time: the other runs still count
    failures.push_back(whose + "the run failed: " + e.what());
    out.stopped_by = "failed";
    out.summary.protocol = protocol;
    out.summary.workers = cfg.workers;
    out.summary.seed = seed;
    out.summary.lost = static_cast<uint64_t>(cfg.workers);  // failed_run() from here on
    return out;  // no folder: the page shows the runs that have one
  }
  for (auto& f : r.failures)
    failures.push_back(whose + f);
  out.stopped_by = failed_run(r.summary)                                        ? "failed"
                   : cfg.stop_at_target && r.summary.time_to_target_s >= 0 ? "target"
                                                                             : "cap";
  out.dir = cfg.out_dir;
  if (!cfg.out_dir.empty()) {
    auto p = current_provenance(plan.command, cfg);
    p.label = out.label;
    p.stopped_by = out.stopped_by;
    p.rule = c.rule;
    write_provenance(cfg.out_dir, p);
  }
  out.summary = std::move(r.summary);
  return out;
}

}  // namespace

bool better_run(const run_summary& a, const run_summary& b) {
  bool ra = a.time_to_target_s >= 0, rb = b.time_to_target_s >= 0;
  if (ra != rb)
    return ra;
  if (ra && a.time_to_target_s != b.time_to_target_s)
    return a.time_to_target_s < b.time_to_target_s;
  return a.final_accuracy > b.final_accuracy;
}

bool better_runs(const std::vector<compared_run>& a, const std::vector<compared_run>& b) {
  auto failed = [](auto& g) {
    return static_cast<size_t>(std::count_if(g.begin(), g.end(), [](auto& r) { return failed_run(r.summary); }));
  };
  if (failed(a) != failed(b) || failed(a) == a.size())
    return failed(a) < failed(b);
  if (a.size() == 1 && b.size() == 1)
    return better_run(a[0].summary, b[0].summary);
  spread ta, tb, fa, fb;
  for (auto& r : a) {
    ta.add(r.summary.time_to_target_s >= 0 ? std::optional(r.summary.time_to_target_s) : std::nullopt);
    fa.add(r.summary.final_accuracy);
  }
  for (auto& r : b) {
    tb.add(r.summary.time_to_target_s >= 0 ? std::optional(r.summary.time_to_target_s) : std::nullopt);
    fb.add(r.summary.final_accuracy);
  }
  if (ta.n() != tb.n())
    return ta.n() > tb.n();
  if (ta.n() > 0 && ta.mean() != tb.mean())
    return ta.mean() < tb.mean();
  return fa.mean() > fb.mean();
}

comparison run_comparison(const comparison_plan& plan) {
  comparison c;
  const auto& base = plan.base;
  std::vector<double> lrs = plan.lrs.empty() ? std::vector<double>{base.lr} : plan.lrs;
  std::vector<uint64_t> seeds = plan.seeds.empty() ? std::vector<uint64_t>{base.seed} : plan.seeds;
  bool tuning = !plan.lrs.empty();
  auto runs_total = static_cast<int>(plan.protocols.size() * lrs.size() * seeds.size());

  // The cap: given, or the reference's run time for the sample budget.
  if (base.max_time_s > 0) {
    c.cap_s = base.max_time_s;
    c.cap_source = "--max-time";
  } else {
    auto cfg = base;
    cfg.protocol = plan.protocols.front();
    cfg.protocol_opts = options_of(base, cfg.protocol);
    cfg.epochs = reference_epochs(base);
    cfg.seed = seeds.front();
    cfg.stop_at_target = false;
    cfg.out_dir.clear();
    if (plan.on_run)
      plan.on_run(cfg.protocol + " (sets the time cap)", 0, runs_total);
    auto r = train(cfg, plan.on_progress);
    c.cap_s = r.summary.run_time_s;
    c.cap_source = cfg.protocol + "'s run time for " + fmt("%g", cfg.epochs) + " epoch" +
                   (cfg.epochs == 1 ? "" : "s") + " at lr " + fmt("%g", base.lr) +
                   (seeds.size() > 1 ? ", seed " + std::to_string(cfg.seed) + ", for every seed" : "");
    if (failed_run(r.summary) || c.cap_s <= 0)
      throw std::runtime_error("the reference run (" + cfg.protocol +
                               ") failed, so there is no time cap; give one with --max-time");
  }

  c.rule = base.target_accuracy > 0 && !plan.run_to_cap
             ? "every run stops at test accuracy " + fmt("%g", base.target_accuracy) + " or at "
             : "every run stops at ";
  c.rule += "the time cap, " + fmt("%g", c.cap_s) + " s (" + c.cap_source +
            (c.cap_source == "--max-time" ? "" : "; --max-time sets it") + ")";

  int done = 0;
  for (auto& p : plan.protocols) {
    std::optional<std::vector<compared_run>> best;
    for (double lr : lrs) {
      std::vector<compared_run> at_lr;  // one per seed
      for (auto seed : seeds) {
        if (plan.on_run)
          plan.on_run(p + (tuning ? " lr=" + fmt("%g", lr) : "") +
                        (plan.seeds.empty() ? "" : " seed " + std::to_string(seed)),
                      ++done, runs_total);
        at_lr.push_back(run_under_rule(plan, p, lr, seed, c, tuning, c.failures));
      }
      if (tuning)
        c.grid.insert(c.grid.end(), at_lr.begin(), at_lr.end());
      if (!best || better_runs(at_lr, *best))
        best = std::move(at_lr);
    }
    for (auto& r : *best) {
      if (failed_run(r.summary))
        c.failed.push_back(p + (plan.seeds.empty() ? "" : " seed " + std::to_string(r.summary.seed)));
      c.runs.push_back(std::move(r));
    }
  }

  std::vector<const run_summary*> reported;
  for (auto& r : c.runs)
    reported.push_back(&r.summary);
  c.equal_samples = equal_samples(reported);
  for (auto* list : {&c.runs, &c.grid})
    for (auto& r : *list)
      r.acc_equal = accuracy_at_samples(r.summary, c.equal_samples);
  return c;
}

}  // namespace syncpoint::cli
