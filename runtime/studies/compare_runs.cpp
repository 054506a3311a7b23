#include "runtime/studies/compare_runs.hpp"

#include <syncpoint/protocol.hpp>
#include <syncpoint/train.hpp>
#include "core/text.hpp"
#include "runtime/records/run_files.hpp"
#include "runtime/studies/spread.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace syncpoint {

namespace fs = std::filesystem;

namespace {

// A child's stderr line that carries a failure of its run (a lost worker), not its end.
constexpr const char* child_failure = "compare run: ";

double reference_epochs(const job_config& base) { return base.epochs > 0 ? base.epochs : 1; }

// `cfg`'s protocol options that `protocol` declares: each protocol of a comparison gets its own.
protocol_options options_of(const job_config& cfg, const std::string& protocol) {
  protocol_options out;
  for (auto& o : protocol_option_specs(protocol))
    if (cfg.protocol_opts.has(o.name))
      out.set(o.name, cfg.protocol_opts.text(o.name));
  return out;
}

// One run of the plan: a protocol at an lr and a seed.
struct planned_run {
  std::string protocol;
  double lr;
  uint64_t seed;
};

// The runs in the order they are reported: protocol, then lr, then seed.
std::vector<planned_run> planned_runs(const comparison_plan& plan) {
  std::vector<planned_run> out;
  std::vector<double> lrs = plan.lrs.empty() ? std::vector<double>{plan.base.lr} : plan.lrs;
  std::vector<uint64_t> seeds = plan.seeds.empty() ? std::vector<uint64_t>{plan.base.seed} : plan.seeds;
  for (auto& p : plan.protocols)
    for (double lr : lrs)
      for (auto seed : seeds)
        out.push_back({p, lr, seed});
  return out;
}

// "bsp lr=0.05 seed 2": the lr when tuning, the seed with --seeds (progress, the children's cells).
std::string run_name(const comparison_plan& plan, const planned_run& run) {
  return run.protocol + (plan.lrs.empty() ? "" : " lr=" + fmt("%g", run.lr)) +
         (plan.seeds.empty() ? "" : " seed " + std::to_string(run.seed));
}

// A protocol of the list with its own values: its name, options and compressor.
job_config with_variant(job_config cfg, const std::string& spec) {
  auto v = parse_variant(spec);
  auto base = cfg;
  cfg.protocol = v.protocol;
  cfg.protocol_opts = options_of(base, v.protocol);  // each protocol gets its own options
  for (auto& [name, value] : v.options)
    cfg.protocol_opts.set(name, value);
  if (!v.compress.empty())
    cfg.compress = v.compress;
  return cfg;
}

// One protocol at one lr under the stop rule: no sample budget, the cap, the target.
job_config run_config(const comparison_plan& plan, const planned_run& run, double cap_s) {
  auto cfg = with_variant(plan.base, run.protocol);
  cfg.seed = run.seed;
  cfg.lr = run.lr;
  apply_job_defaults(cfg, [&](const std::string& name) {  // a tuned lr is given
    return (plan.given && plan.given(name)) || (name == "lr" && !plan.lrs.empty());
  });
  cfg.epochs = 0;
  cfg.max_time_s = cap_s;
  // A schedule is by samples and must not depend on where the cap stops a run:
  // every protocol meets the reference's schedule (its epochs), and one that
  // gets further trains on at the schedule's last rate.
  // (With --max-time and no --epochs there is no reference: --lr-epochs must say.)
  if (cfg.lr_epochs == 0 && (plan.base.epochs > 0 || plan.base.max_time_s <= 0))
    cfg.lr_epochs = reference_epochs(plan.base);
  cfg.stop_at_target = cfg.target_accuracy > 0 && !plan.run_to_cap;
  if (!plan.base.out_dir.empty())
    cfg.out_dir = plan.base.out_dir + "/" + variant_folder(run.protocol) + (plan.lrs.empty() ? "" : "-lr" + fmt("%g", run.lr)) +
                  (plan.seeds.empty() ? "" : "-seed" + std::to_string(run.seed));
  return cfg;
}

// What compare reports of a run that ended with `summary` (nullptr: it failed with `error`).
compared_run reported(const comparison_plan& plan, const planned_run& run, const job_config& cfg,
                      const comparison& c, const run_summary* summary, const std::string& error,
                      const std::vector<std::string>& run_failures, std::vector<std::string>& failures) {
  compared_run out;
  out.label = protocol_label(cfg.protocol, cfg.protocol_opts) +
              (cfg.compress != plan.base.compress ? " " + cfg.compress : std::string()) +
              (plan.lrs.empty() ? "" : " lr=" + fmt("%g", run.lr));
  out.lr = run.lr;
  auto whose = run.protocol + " (lr " + fmt("%g", run.lr) +
               (plan.seeds.empty() ? "" : ", seed " + std::to_string(run.seed)) + "): ";
  if (!summary) {  // e.g. no result in time: the other runs still count
    failures.push_back(whose + "the run failed: " + error);
    out.stopped_by = "failed";
    out.summary.protocol = cfg.protocol;
    out.summary.workers = cfg.workers;
    out.summary.seed = run.seed;
    out.summary.lost = static_cast<uint64_t>(cfg.workers);  // failed_run() from here on
    return out;  // no folder: the page shows the runs that have one
  }
  for (auto& f : run_failures)
    failures.push_back(whose + f);
  out.stopped_by = failed_run(*summary)                                        ? "failed"
                   : cfg.stop_at_target && summary->time_to_target_s >= 0 ? "target"
                                                                            : "cap";
  out.dir = cfg.out_dir;
  if (!cfg.out_dir.empty()) {
    auto p = current_provenance(plan.command, cfg);
    p.label = out.label;
    p.stopped_by = out.stopped_by;
    p.rule = c.rule;
    write_provenance(cfg.out_dir, p);
  }
  // As summary.json holds it (10 digits), however the run was made: the tables then show
  // what the page shows, whether the run was in this process or in a child.
  out.summary = summary_from_json(to_json(*summary), "summary of " + out.label);
  return out;
}

// The runs one after the other in this process.
std::vector<compared_run> run_here(const comparison_plan& plan, const std::vector<planned_run>& runs,
                                   comparison& c) {
  std::vector<compared_run> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto& run = runs[i];
    if (plan.on_run)
      plan.on_run(run_name(plan, run), static_cast<int>(i + 1), static_cast<int>(runs.size()));
    auto cfg = run_config(plan, run, c.cap_s);
    try {
      auto r = train(cfg, plan.on_progress);
      out.push_back(reported(plan, run, cfg, c, &r.summary, "", r.failures, c.failures));
    } catch (const std::runtime_error& e) {
      out.push_back(reported(plan, run, cfg, c, nullptr, e.what(), {}, c.failures));
    }
  }
  return out;
}

// The runs `plan.jobs` at once, each in a child process (plan.spawn) by the
// sweep's pool, into a scratch folder; each finished folder then moves to its place.
std::vector<compared_run> run_in_children(const comparison_plan& plan, const std::vector<planned_run>& runs,
                                          comparison& c) {
  auto scratch = plan.base.out_dir.empty()
                   ? (fs::temp_directory_path() / ("syncpoint-compare-" + std::to_string(getpid()))).string()
                   : plan.base.out_dir + "/.runs";
  fs::remove_all(scratch);
  fs::create_directories(scratch + "/cells");
  std::vector<job_config> cfgs;
  std::vector<sweep_cell> cells;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto& cfg = cfgs.emplace_back(run_config(plan, runs[i], c.cap_s));
    auto folder = cfg.out_dir.empty() ? "run-" + std::to_string(i) : fs::path(cfg.out_dir).filename().string();
    cells.push_back({i, run_name(plan, runs[i]), folder, {}, {}});
  }
  auto log_of = [&](const sweep_cell& cell) { return scratch + "/" + cell.folder + ".log"; };
  auto launch = [&](const sweep_cell& cell, const std::string& out_dir, const std::string&) {
    return plan.spawn(cell.index, c.cap_s, out_dir, log_of(cell));
  };
  auto outcomes = run_sweep_cells(scratch, cells, plan.jobs, launch, plan.on_cells);
  std::vector<const cell_outcome*> by_index(runs.size());  // the plan's order: failures listed as run_here lists them
  for (auto& o : outcomes)
    by_index[o.cell->index] = &o;
  std::vector<compared_run> list;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto& o = *by_index[i];
    auto& cfg = cfgs[i];
    std::vector<std::string> run_failures;
    std::string error = o.error, line;
    std::ifstream log(log_of(*o.cell));
    while (std::getline(log, line)) {
      if (line.rfind(child_failure, 0) == 0)
        run_failures.push_back(line.substr(std::string(child_failure).size()));
      else if (!line.empty())
        error = line;
    }
    if (!o.ok) {
      list.push_back(reported(plan, runs[i], cfg, c, nullptr, error.empty() ? "its process failed" : error, {}, c.failures));
      continue;
    }
    auto dir = scratch + "/cells/" + o.cell->folder;
    if (!cfg.out_dir.empty()) {
      fs::remove_all(cfg.out_dir);
      fs::rename(dir, cfg.out_dir);
      dir = cfg.out_dir;
    }
    auto summary = load_summary(dir);
    list.push_back(reported(plan, runs[i], cfg, c, &summary, "", run_failures, c.failures));
  }
  fs::remove_all(scratch);
  return list;
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
  auto to_target = [](auto& g) {
    spread t;
    for (auto& r : g)
      t.add(r.summary.time_to_target_s >= 0 ? std::optional(r.summary.time_to_target_s) : std::nullopt);
    return t;
  };
  auto final_accuracy = [](auto& g) {
    spread f;
    for (auto& r : g)
      f.add(r.summary.final_accuracy);
    return f;
  };
  auto ta = to_target(a), tb = to_target(b);
  if (ta.n() != tb.n())
    return ta.n() > tb.n();
  if (ta.n() > 0 && ta.mean() != tb.mean())
    return ta.mean() < tb.mean();
  return final_accuracy(a).mean() > final_accuracy(b).mean();
}

int run_one(const comparison_plan& plan, size_t index, double cap_s, const std::string& out_dir) {
  auto runs = planned_runs(plan);
  if (index >= runs.size())
    throw config_error("run " + std::to_string(index) + " is not in the plan (" + std::to_string(runs.size()) + " runs)");
  auto cfg = run_config(plan, runs[index], cap_s);
  cfg.out_dir = out_dir;
  cfg.progress = false;
  try {
    auto r = train(cfg);
    for (auto& f : r.failures)
      std::fprintf(stderr, "%s%s\n", child_failure, f.c_str());
    return 0;
  } catch (const std::runtime_error& e) {  // its last line is the parent's words for the failure
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
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
    cfg = with_variant(cfg, plan.protocols.front());
    apply_job_defaults(cfg, plan.given);
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

  auto runs = planned_runs(plan);
  auto results = plan.jobs > 1 && runs.size() > 1 && plan.spawn && base.clock == clock_kind::virtual_time
                   ? run_in_children(plan, runs, c)
                   : run_here(plan, runs, c);
  for (size_t i = 0; i < results.size();) {  // each protocol at its best lr: the runs of one lr are adjacent
    std::optional<std::vector<compared_run>> best;
    auto& p = runs[i].protocol;
    while (i < results.size() && runs[i].protocol == p) {
      std::vector<compared_run> at_lr;  // one per seed
      for (double lr = runs[i].lr; i < results.size() && runs[i].protocol == p && runs[i].lr == lr; ++i)
        at_lr.push_back(results[i]);
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

  std::vector<const run_summary*> summaries;
  for (auto& r : c.runs)
    summaries.push_back(&r.summary);
  c.equal_samples = equal_samples(summaries);
  for (auto* list : {&c.runs, &c.grid})
    for (auto& r : *list)
      r.acc_equal = accuracy_at_samples(r.summary, c.equal_samples);
  return c;
}

}  // namespace syncpoint

namespace syncpoint {

protocol_variant parse_variant(const std::string& spec) {
  protocol_variant v;
  auto open = spec.find('(');
  v.protocol = spec.substr(0, open);
  if (open == std::string::npos)
    return v;
  if (spec.back() != ')')
    throw std::invalid_argument("--protocols: '" + spec + "' opens a parenthesis it does not close");
  auto specs = protocol_option_specs(v.protocol);
  std::stringstream items(spec.substr(open + 1, spec.size() - open - 2));
  std::string item;
  while (std::getline(items, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("--protocols: '" + item + "' in '" + spec + "' is not NAME=VALUE");
    auto name = item.substr(0, eq), value = item.substr(eq + 1);
    if (name == "compress") {
      v.compress = value;
      continue;
    }
    auto o = std::find_if(specs.begin(), specs.end(), [&](auto& s) { return s.name == name || s.short_name == name; });
    if (o == specs.end())
      throw std::invalid_argument("--protocols: '" + spec + "': " + v.protocol + " has no option '" + name + "'");
    v.options.emplace_back(o->name, value);
  }
  return v;
}

std::string variant_folder(const std::string& spec) {
  std::string out;
  for (char c : spec)
    if (c == '(' || c == ',')
      out += '-';
    else if (c != ')' && c != '=' && c != ':')
      out += c;
  return out;
}

}  // namespace syncpoint
