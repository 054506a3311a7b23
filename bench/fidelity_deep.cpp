#include "bench/fidelity_deep.hpp"

#include "bench/fidelity_cells.hpp"
#include "runtime/report/comparison.hpp"
#include <syncpoint/train.hpp>
#include "runtime/records/run_files.hpp"
#include "runtime/studies/sweep.hpp"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <spawn.h>
#include <stdexcept>

extern char** environ;

namespace syncpoint::bench {

namespace {

namespace fs = std::filesystem;
using syncpoint::fmt;

// One scenario of a paper, with the protocols its claim compares.
struct scenario {
  std::string name;  // in cell ids
  int workers;
  std::string straggler;
  double ps_bandwidth;  // bytes/s, 0: no link model
  std::vector<std::string> protocols;
  std::string words;
};

const std::vector<scenario>& scenarios() {
  static const std::vector<scenario> all{
    {"elastic", 4, "1:x2;3:x3", 0, {"bsp", "elastic-bsp"}, "4 workers, `1:x2;3:x3`, no link model"},
    {"wbsp", 4, "1:x2;3:x3", 400e6, {"bsp", "asp", "wbsp", "wbsp-overlap"},
     "4 workers, `1:x2;3:x3`, a shared PS link of 400 MB/s"},
    {"r2sp", 8, "", 1.3e9, {"bsp", "asp", "r2sp"}, "8 equal workers, a shared PS link of 1.3 GB/s"},
    {"switch", 8, "6:x2;7:x3", 0, {"bsp", "asp", "sync-switch"},
     "8 workers, `6:x2;7:x3`, sync-switch with the schedule bsp:0.5,asp:0.5"},
  };
  return all;
}

const std::vector<std::string> models{"resnet", "mlp"};  // the long runs first

// A target each model's BSP reaches at 50 to 70% of the run (4 workers).
double target_of(const std::string& model) { return model == "resnet" ? 0.85 : 0.82; }

job_config recipe(const std::string& model, const scenario& s, const std::string& protocol, uint64_t seed) {
  job_config j;
  j.model = model;
  j.protocol = protocol;
  if (protocol == "sync-switch")  // the MLP's tuned share (full tables); tuning on the ResNet would cost hours
    j.protocol_opts.set("schedule", "bsp:0.5,asp:0.5");
  j.workers = s.workers;
  j.straggler = s.straggler;
  j.ps_bandwidth = s.ps_bandwidth;
  j.seed = seed;
  j.epochs = 2;
  j.train_limit = 20000;
  j.test_limit = 5000;
  j.eval_every = 0.25;
  j.iter_cost_ms = 10;  // as in the other tables: only the model differs
  j.lr = 0.1;
  j.momentum = 0.9;
  j.weight_decay = 5e-4;
  j.lr_schedule = "cosine";
  j.warmup = "0.05";
  j.target_accuracy = target_of(model);
  j.stop_at_target = false;
  j.progress = false;
  return j;
}

std::string cell_id(const std::string& model, const scenario& s, const std::string& protocol, uint64_t seed) {
  return model + "-" + s.name + "-" + protocol + "-s" + std::to_string(seed);
}

struct planned {
  std::string id;
  job_config cfg;
};

std::vector<planned> plan(const std::vector<uint64_t>& seeds) {
  std::vector<planned> out;
  for (auto& m : models)
    for (auto seed : seeds)
      for (auto& s : scenarios())
        for (auto& p : s.protocols)
          out.push_back({cell_id(m, s, p, seed), recipe(m, s, p, seed)});
  return out;
}

// What made a cell, kept in its run.json: a folder made by another recipe is run again.
std::string describe(const job_config& c) {
  return "fidelity deep cell: " + c.model + " " + c.protocol + " " + (c.protocol_opts.has("schedule") ? c.protocol_opts.text("schedule") : "") +
         " workers " + std::to_string(c.workers) + " straggler '" + c.straggler + "' link " + fmt("%g", c.ps_bandwidth) +
         " seed " + std::to_string(c.seed) + " epochs " + fmt("%g", c.epochs) + " train " +
         std::to_string(c.train_limit) + " test " + std::to_string(c.test_limit) + " eval " + fmt("%g", c.eval_every) +
         " cost " + fmt("%g", c.iter_cost_ms) + " lr " + fmt("%g", c.lr) + " momentum " + fmt("%g", c.momentum) +
         " wd " + fmt("%g", c.weight_decay) + " " + c.lr_schedule + " warmup " + c.warmup + " target " +
         fmt("%g", c.target_accuracy) + " batch " + std::to_string(c.batch);
}

sweep_cell as_sweep_cell(const planned& c, size_t index) {
  sweep_cell s;
  s.index = index;
  s.name = s.folder = c.id;
  return s;
}

// The cell's result, if its folder (runtime/studies/sweep.hpp's: CACHE/cells/ID) was made by this recipe.
std::optional<run_summary> cached(const planned& c, const std::string& cache) {
  auto dir = finished_cell(cache, as_sweep_cell(c, 0));
  if (dir.empty())
    return std::nullopt;
  try {
    auto run = load_run(dir);
    if (run.provenance.command == describe(c.cfg))
      return run.summary;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string seeds_arg(const std::vector<uint64_t>& seeds) {
  std::string out;
  for (auto s : seeds)
    out += (out.empty() ? "" : ",") + std::to_string(s);
  return out;
}

// Runs the cells not in the cache by the sweep's pool (runtime/studies/sweep.hpp),
// `jobs` child processes at once; a folder of another recipe is run again.
void run_missing(const std::vector<planned>& cells, const deep_options& o) {
  std::vector<sweep_cell> pool;
  for (auto& c : cells) {
    pool.push_back(as_sweep_cell(c, pool.size()));
    auto dir = finished_cell(o.cache, pool.back());
    if (!dir.empty() && !cached(c, o.cache))
      fs::remove_all(dir);
  }
  auto launch = [&](const sweep_cell& c, const std::string& out_dir, const std::string& log) -> pid_t {
    std::vector<std::string> args{o.self, "--deep-run", c.name, "--deep-out", out_dir, "--seeds", seeds_arg(o.seeds)};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, o.self.c_str(), &files, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    return rc == 0 ? pid : -1;
  };
  auto t0 = std::chrono::steady_clock::now();
  auto outcomes = run_sweep_cells(o.cache, pool, o.jobs, launch, [&](const sweep_progress& p, const cell_outcome* e) {
    if (!e) {
      if (p.done + p.failed + p.running == 0)
        std::fprintf(stderr, "fidelity deep: %zu of %zu cells to run, %d at once\n", p.total - p.skipped, p.total, o.jobs);
      return;
    }
    std::fprintf(stderr, "fidelity deep: [%zu/%zu] %s %s (%.0f s in)\n", p.done + p.failed, p.total - p.skipped,
                 e->cell->name.c_str(), e->ok ? "done" : ("FAILED: " + e->error).c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  });
  std::string failed;
  for (auto& e : outcomes)
    if (!e.ok)
      failed += " " + e.cell->name;
  if (!failed.empty())
    throw std::runtime_error("cells failed (their stderr.txt is in " + o.cache + "/cells/ID.partial):" + failed);
}

// -- the figures ----------------------------------------------------------------

using results = std::map<std::string, run_summary>;

struct claim_figure {
  std::string paper, claim, figure;
  const char* format;  // of one value
  std::string unit;    // after the mean
  double holds_above;  // the claim's direction holds when the figure exceeds this
  std::function<std::optional<double>(const results&, const std::string& model, uint64_t seed)> value;
};

const run_summary& at(const results& r, const std::string& model, const std::string& scen, const std::string& protocol,
                      uint64_t seed) {
  for (auto& s : scenarios())
    if (s.name == scen)
      return r.at(cell_id(model, s, protocol, seed));
  throw std::logic_error("no scenario " + scen);
}

std::optional<double> ttt(const run_summary& s) {
  return s.time_to_target_s >= 0 ? std::optional<double>(s.time_to_target_s) : std::nullopt;
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  return a && b && *b > 0 ? std::optional<double>(*a / *b) : std::nullopt;
}

std::optional<double> fastest(std::initializer_list<std::optional<double>> xs) {
  std::optional<double> best;
  for (auto& x : xs)
    if (x && (!best || *x < *best))
      best = x;
  return best;
}

std::vector<claim_figure> figures() {
  auto acc_diff = [](std::string scen, std::string a, std::string b) {
    return [=](const results& r, const std::string& m, uint64_t s) -> std::optional<double> {
      return 100 * (at(r, m, scen, a, s).final_accuracy - at(r, m, scen, b, s).final_accuracy);
    };
  };
  auto ttt_ratio = [](std::string scen, std::string faster) {
    return [=](const results& r, const std::string& m, uint64_t s) {
      return ratio(ttt(at(r, m, scen, "bsp", s)), ttt(at(r, m, scen, faster, s)));
    };
  };
  auto throughput = [](std::string scen, std::string p) {
    return [=](const results& r, const std::string& m, uint64_t s) -> std::optional<double> {
      return at(r, m, scen, p, s).samples_per_s / at(r, m, scen, "bsp", s).samples_per_s;
    };
  };
  return {
    {"ElasticBSP", "converges faster than BSP", "time to target, BSP's ÷ ElasticBSP's", "%.2f", "×", 1,
     ttt_ratio("elastic", "elastic-bsp")},
    {"ElasticBSP", "to a higher accuracy than BSP", "final accuracy, ElasticBSP − BSP", "%+.2f", " points", 0,
     acc_diff("elastic", "elastic-bsp", "bsp")},
    {"WBSP", "cuts time to a target by up to 60% against the fastest other method",
     "time to target, % less than the faster of BSP and ASP", "%+.0f", "%", 0,
     [](const results& r, const std::string& m, uint64_t s) -> std::optional<double> {
       auto other = fastest({ttt(at(r, m, "wbsp", "bsp", s)), ttt(at(r, m, "wbsp", "asp", s))});
       auto w = fastest({ttt(at(r, m, "wbsp", "wbsp", s)), ttt(at(r, m, "wbsp", "wbsp-overlap", s))});
       auto q = ratio(w, other);
       return q ? std::optional<double>(100 * (1 - *q)) : std::nullopt;
     }},
    {"WBSP", "raises the computation share to 91%", "wbsp-overlap's compute ratio", "%.2f", "", 0.9,
     [](const results& r, const std::string& m, uint64_t s) -> std::optional<double> {
       return at(r, m, "wbsp", "wbsp-overlap", s).mean_compute_ratio;
     }},
    {"R²SP", "trains up to 25% faster when the PS link is the bottleneck (throughput)", "samples/s, R²SP ÷ BSP",
     "%.2f", "×", 1, throughput("r2sp", "r2sp")},
    {"R²SP", "the same claim, to a target", "time to target, BSP's ÷ R²SP's", "%.2f", "×", 1, ttt_ratio("r2sp", "r2sp")},
    {"Sync-Switch", "up to 5.13× BSP's throughput", "samples/s, Sync-Switch ÷ BSP", "%.2f", "×", 1,
     throughput("switch", "sync-switch")},
    {"Sync-Switch", "at similar accuracy", "final accuracy, Sync-Switch − BSP (similar: above −1)", "%+.2f", " points",
     -1, acc_diff("switch", "sync-switch", "bsp")},
    {"Sync-Switch", "3.8 points more than ASP", "final accuracy, Sync-Switch − ASP", "%+.2f", " points", 0,
     acc_diff("switch", "sync-switch", "asp")},
  };
}

struct measured {
  spread values;
  size_t missing = 0;  // seeds without a value (a run that never reached the target)
  // "1.44× (1.21–1.70)": the mean with its unit, the range over seeds.
  std::string str(const char* f, const std::string& unit) const {
    if (values.empty())
      return "not reached";
    auto mean = fmt(f, values.mean()) + unit;
    auto text = values.xs.size() < 2 ? mean : mean + " (" + fmt(f, values.lo()) + "–" + fmt(f, values.hi()) + ")";
    return text + (missing ? ", " + std::to_string(values.xs.size()) + " of " +
                               std::to_string(values.xs.size() + missing) + " seeds reached the target"
                           : "");
  }
};

// Better, the same or worse on the ResNet: the same when the two ranges over
// seeds overlap, else by which side of the MLP's range it lies.
std::string deeper_verdict(const measured& mlp, const measured& resnet) {
  if (mlp.values.empty() && resnet.values.empty())
    return "the same: neither reaches the target";
  if (mlp.values.empty() || resnet.values.empty())
    return resnet.values.empty() ? "worse" : "better";
  if (resnet.values.lo() <= mlp.values.hi() && mlp.values.lo() <= resnet.values.hi())
    return "the same";
  return resnet.values.mean() > mlp.values.mean() ? "better" : "worse";
}

std::string holds(const measured& m, double above) {
  if (m.values.empty())
    return "no";
  return m.values.mean() > above ? "yes" : "no";
}

std::string detail_tables(const results& r, const std::vector<uint64_t>& seeds) {
  std::string out;
  for (auto& s : scenarios()) {
    out += "### " + s.name + ": " + s.words + "\n\n| protocol | model (target) | time to target (s) | final accuracy | "
           "samples/s | compute ratio |\n|---|---|---|---|---|---|\n";
    for (auto& p : s.protocols)
      for (auto it = models.rbegin(); it != models.rend(); ++it) {
        cell c;
        for (auto seed : seeds)
          c.add(r.at(cell_id(*it, s, p, seed)));
        out += "| " + p + " | " + *it + " (" + fmt("%g", target_of(*it)) + ") | " + c.to_target_str() + " | " +
               c.accuracy.str("%.4f") + " | " + c.samples_per_s.str("%.0f") + " | " + c.compute.str("%.3f") + " |\n";
      }
    out += "\n";
  }
  return out;
}

}  // namespace

int deep_run_cell(const std::string& id, const std::string& out_dir, const deep_options& o) {
  for (auto& c : plan(o.seeds)) {
    if (c.id != id)
      continue;
    auto cfg = c.cfg;
    cfg.out_dir = out_dir;
    auto t0 = std::chrono::steady_clock::now();
    auto r = train(cfg);
    auto p = current_provenance(describe(c.cfg), cfg);
    p.label = id;
    write_provenance(out_dir, p);
    std::fprintf(stderr, "fidelity deep: %s: accuracy %.4f, %.0f s\n", id.c_str(), r.summary.final_accuracy,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return 0;
  }
  std::fprintf(stderr, "fidelity deep: no cell %s\n", id.c_str());
  return 2;
}

std::string deep_section(const deep_options& o) {
  auto cells = plan(o.seeds);
  fs::create_directories(o.cache + "/cells");
  run_missing(cells, o);
  results r;
  for (auto& c : cells) {
    auto s = cached(c, o.cache);
    if (!s)
      throw std::runtime_error("cell " + c.id + " has no result in " + o.cache);
    r[c.id] = *s;
  }
  std::string out = "Generated by `bench/fidelity.sh --deep` (" + std::to_string(o.seeds.size()) + " seed" +
                    (o.seeds.size() > 1 ? "s per cell, mean (min–max)" : " per cell") +
                    "). Both models under one recipe: SGD with momentum 0.9, lr 0.1, weight decay 5e-4, a cosine "
                    "schedule with 5% warmup, 2 epochs over the first 20,000 training examples, evaluation on the "
                    "first 5,000 test examples every 0.25 epoch, 10 ms charged per iteration. Each protocol runs the "
                    "2 epochs, so every run ends its schedule. Targets: MLP 0.82, ResNet 0.85 (BSP reaches each at 50 "
                    "to 70% of the run).\n\n"
                    "| source | claim | figure | MLP | ResNet | holds (MLP / ResNet) | on the deeper model |\n"
                    "|---|---|---|---|---|---|---|\n";
  for (auto& f : figures()) {
    std::map<std::string, measured> by_model;
    for (auto& m : models)
      for (auto seed : o.seeds) {
        auto v = f.value(r, m, seed);
        if (v)
          by_model[m].values.add(*v);
        else
          ++by_model[m].missing;
      }
    auto& mlp = by_model["mlp"];
    auto& res = by_model["resnet"];
    out += "| " + f.paper + " | " + f.claim + " | " + f.figure + " | " + mlp.str(f.format, f.unit) + " | " + res.str(f.format, f.unit) +
           " | " + holds(mlp, f.holds_above) + " / " + holds(res, f.holds_above) + " | **" + deeper_verdict(mlp, res) +
           "** |\n";
  }
  out += "\nNot run twice, since the model does not enter them: ZipLine's cost (it sees only times), the online "
         "policy's overhead per push, and the transient-straggler throughput (on the virtual clock with no link, "
         "samples/s follows from the charged times alone).\n\n";
  return out + detail_tables(r, o.seeds);
}

}  // namespace syncpoint::bench
