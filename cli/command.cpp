// The `syncpoint` command, as a function a program of its own may call
// (<syncpoint/command.hpp>): cli/main.cpp is the command's whole main().
//   syncpoint train   --protocol P --workers N --model M [--epochs E | --target-accuracy A | --max-time S] ...
//   syncpoint simulate --protocol P --workers N --iterations K ...  (timing only, virtual clock)
//   syncpoint compare [--protocols bsp,asp,ssp] [same options]   (the default command)
//   syncpoint protocols
// Exit status: 0 success, 2 bad arguments or input, 1 a run that failed.
#include <syncpoint/command.hpp>

#include "cli/cluster_cmds.hpp"
#include "runtime/report/comparison.hpp"
#include "runtime/studies/compare_runs.hpp"
#include "cli/launch_cmd.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "cli/report_cmd.hpp"
#include "cli/simulate_cmd.hpp"
#include "cli/sweep_cmd.hpp"
#include "cli/tune_cmd.hpp"
#include "cli/zipline_cmd.hpp"
#include "core/build_info.hpp"
#include <syncpoint/train.hpp>
#include "runtime/records/model_file.hpp"
#include "runtime/records/run_files.hpp"
#include "runtime/studies/sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>

using namespace syncpoint;
using syncpoint::report::print_summary;

namespace {

constexpr const char* usage =
  "usage: syncpoint <command> [options]\n"
  "commands:\n"
  "  compare    run several protocols on the same job and compare them (default)\n"
  "  train      run one training job\n"
  "  simulate   a protocol's timing with many workers, nothing computed: syncpoint simulate -w 1024 -p ssp -k 100\n"
  "  protocols  list the registered protocols\n"
  "  zipline    run the ZipLine barrier choice on a CSV matrix or a random instance\n"
  "  tune-switch  find the smallest share of BSP for Sync-Switch (writes a policy file)\n"
  "  sweep      a grid of runs over train options, on every core: syncpoint sweep --grid protocol=bsp,asp --seeds 1,2,3\n"
  "  report     build the comparison page from run folders: syncpoint report DIR... [--out FILE]\n"
  "cluster (docs/cluster.md):\n"
  "  head       start a cluster's head: syncpoint head --port P [--host H] [--slots K]\n"
  "  node       join a head with this machine's slots: syncpoint node --join HOST:P\n"
  "  submit     run a job on a cluster: syncpoint submit --head HOST:P [train options]\n"
  "  status     list a cluster's nodes and jobs: syncpoint status --head HOST:P\n"
  "  launch     what every process of a launched job runs (srun, mpirun, Kubernetes; docs/launch.md):\n"
  "             srun syncpoint launch -- [train options]\n"
  "Run 'syncpoint <command> --help' for the options of a command, 'syncpoint --version' for the version.\n";

void print_protocols() {
  for (auto& kv : protocol_catalog()) {
    std::printf("%-12s %s\n", kv.first.c_str(), kv.second.c_str());
    for (auto& o : protocol_option_specs(kv.first)) {
      std::string type = o.type == option_spec::kind::integer ? "integer"
                         : o.type == option_spec::kind::real  ? "number"
                                                              : "text";
      std::string range;
      if (!o.choices.empty()) {
        for (auto& c : o.choices)
          range += (range.empty() ? "" : "|") + c;
      } else if (o.type != option_spec::kind::text && (o.min > -1e299 || o.max < 1e299)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g..%g", o.min, o.max);
        range = buf;
      }
      std::printf("    --%-18s %-7s default %-14s %s%s\n", o.name.c_str(), type.c_str(),
                  o.default_value.c_str(), o.help.c_str(), range.empty() ? "" : (" [" + range + "]").c_str());
    }
  }
}

int run_train(const std::vector<std::string>& args) {
  cli::options opts(false);
  if (int rc = cli::parse_command(opts, args, "train"); rc >= 0)
    return rc;
  if (auto misfit = cli::check_options_fit(opts.job(), {opts.job().protocol}); !misfit.empty()) {
    std::cerr << "syncpoint train: " << misfit << "\n";
    return 2;
  }
  const auto& job = opts.job();
  validate(job);  // before the progress line names the run
  cli::check_save_model(opts);
  auto label = cli::run_label(job);
  cli::progress_display shown(job.progress);
  shown.begin(label);
  auto r = train(job, shown.callback());
  shown.end();
  if (!job.out_dir.empty()) {
    auto p = current_provenance(cli::command_line("train", args), job);
    p.label = label;
    write_provenance(job.out_dir, p);
  }
  report::print_summary(r.summary);
  for (auto& f : r.failures)
    std::fprintf(stderr, "syncpoint train: %s\n", f.c_str());
  if (failed_run(r.summary)) {
    std::fprintf(stderr, "syncpoint train: every worker was lost; the run failed\n");
    return 1;
  }
  if (!opts.job().out_dir.empty())
    std::printf("wrote %s/trace.jsonl, summary.json and run.json\n", opts.job().out_dir.c_str());
  if (!opts.save_model.empty())
    save_model_file(opts.save_model, r.final_model);
  return 0;
}

// `compare --jobs`'s children: "--internal-run=I --internal-cap=S --internal-out=DIR" after the
// parent's own arguments (not options a user gives: taken out before parsing).
struct child_run {
  long index = -1;
  double cap_s = 0;
  std::string out;
};

child_run take_child_run(std::vector<std::string>& args) {
  child_run c;
  for (auto it = args.begin(); it != args.end();) {
    auto take = [&](const std::string& key) {
      return it->rfind(key, 0) == 0 ? std::optional<std::string>(it->substr(key.size())) : std::nullopt;
    };
    if (auto v = take("--internal-run="))
      c.index = std::stol(*v);
    else if (auto v = take("--internal-cap="))
      c.cap_s = std::stod(*v);
    else if (auto v = take("--internal-out="))
      c.out = *v;
    else {
      ++it;
      continue;
    }
    it = args.erase(it);
  }
  return c;
}

// What is wrong with compare's protocols ("" if nothing): each named once and
// valid with the shared options. validate()'s config_error is thrown (exit 2).
std::string protocols_refusal(const cli::options& opts, const job_config& base) {
  if (opts.protocols.empty())
    return "--protocols names no protocol";
  for (size_t i = 0; i < opts.protocols.size(); ++i)
    if (std::find(opts.protocols.begin(), opts.protocols.begin() + static_cast<long>(i), opts.protocols[i]) !=
        opts.protocols.begin() + static_cast<long>(i))
      return "--protocols names '" + opts.protocols[i] + "' twice (each run writes its own folder)";
  std::vector<std::string> names;
  for (auto& p : opts.protocols) {  // all names checked before the first run
    auto cfg = base;
    try {
      auto v = parse_variant(p);
      cfg.protocol = v.protocol;
      for (auto& [name, value] : v.options)
        cfg.protocol_opts.set(name, value);
      if (!v.compress.empty())
        cfg.compress = v.compress;
      check_protocol_options(cfg.protocol_opts);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    validate(cfg);
    names.push_back(cfg.protocol);
  }
  return cli::check_options_fit(base, names);
}

// The comparison's tables (every learning rate, the shared one, each at its
// best), its page, and the exit status.
int print_comparison(const comparison& c, const job_config& base) {
  for (auto& f : c.failures)
    std::fprintf(stderr, "syncpoint compare: %s\n", f.c_str());
  const auto& rule = c.rule;
  std::string equal = "acc@" + std::to_string(c.equal_samples) + " = accuracy after " +
                      std::to_string(c.equal_samples) + " samples, the fewest any run processed";
  std::printf("\n%s\n%s\n", rule.c_str(), equal.c_str());
  if (!c.grid.empty()) {
    std::printf("\nevery protocol at every learning rate:\n%s",
                report::comparison_table(c.grid, c.equal_samples).c_str());
    std::vector<compared_run> shared;
    for (auto& r : c.grid)
      if (r.lr == base.lr)
        shared.push_back(r);
    if (!shared.empty())
      std::printf("\nat the shared learning rate %s:\n%s", fmt("%g", base.lr).c_str(),
                  report::comparison_table(shared, c.equal_samples).c_str());
    std::printf("\neach protocol at its best learning rate (soonest to the target, else most accurate):\n");
  }
  std::printf("\n%s", report::comparison_table(c.runs, c.equal_samples).c_str());
  if (!base.out_dir.empty()) {
    report::write_report(base.out_dir, c.runs, rule + ". " + equal + ".", c.equal_samples, c.grid);
    std::printf("wrote %s/comparison.md and one folder per run\nreport: %s/index.html (open it in a browser)\n",
                base.out_dir.c_str(), base.out_dir.c_str());
  }
  for (auto& p : c.failed)
    std::fprintf(stderr, "syncpoint compare: every worker of the %s run was lost; that run failed\n",
                 p.c_str());
  return c.failed.empty() ? 0 : 1;
}

int run_compare(std::vector<std::string> args, bool defaults) {
  cli::options opts(true);
  // The embedded default job (README, "The two commands"): Fashion-MNIST, 4 workers, one 4x
  // straggler and a PS link that costs (each transfer 814 KB at 400 MB/s), so that waiting,
  // communicating and their remedies all show; a target past sync-switch's switch (25% of
  // the samples); 3 seeds, so that the page can say what is within the spread.
  if (defaults)
    args.insert(args.begin(), {"--protocols=bsp,asp,ssp,elastic-bsp,wbsp,wbsp-overlap,r2sp,sync-switch", "--workers=4",
                               "--model=mlp", "--straggler=3:x4", "--ps-bandwidth=400MB/s", "--epochs=3",
                               "--target-accuracy=0.86", "--iter-cost=10", "--seeds=1,2,3", "--out=results"});
  auto parent_args = args;
  auto child = take_child_run(args);
  if (int rc = cli::parse_command(opts, args, "compare"); rc >= 0)
    return rc;
  auto base = opts.job();
  if (auto why = protocols_refusal(opts, base); !why.empty()) {
    std::cerr << "syncpoint compare: " << why << "\n";
    return 2;
  }
  cli::progress_display shown(base.progress);
  comparison_plan plan;
  plan.base = base;
  plan.protocols = opts.protocols;
  plan.lrs = opts.tune_lrs;
  plan.run_to_cap = opts.run_to_cap;
  plan.seeds = opts.seeds;
  plan.command = cli::command_line("compare", args);
  plan.given = [&opts](const std::string& name) { return opts.given(name); };
  if (child.index >= 0)
    return run_one(plan, static_cast<size_t>(child.index), child.cap_s, child.out);
  plan.on_run = [&](const std::string& label, int i, int n) { shown.begin(label, i, n); };
  plan.on_progress = shown.callback();
  plan.jobs = opts.jobs > 0 ? opts.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  plan.spawn = [&](size_t index, double cap_s, const std::string& out_dir, const std::string& log) {
    std::vector<std::string> child_args{"compare"};
    child_args.insert(child_args.end(), parent_args.begin(), parent_args.end());
    child_args.insert(child_args.end(), {"--progress=false", "--internal-run=" + std::to_string(index),
                                         "--internal-cap=" + fmt("%.17g", cap_s), "--internal-out=" + out_dir});
    return launch_process(child_args, "/dev/null", log);
  };
  std::optional<cli::sweep_display> runs_shown;
  plan.on_cells = [&](const sweep_progress& p, const cell_outcome* ended) {
    if (!base.progress)
      return;
    if (!runs_shown) {
      shown.end();
      runs_shown.emplace(plan.jobs, std::string("compare"), std::string("runs"));
    }
    runs_shown->event(p, ended);
  };
  auto c = run_comparison(plan);
  shown.end();
  if (runs_shown)
    runs_shown->end();
  return print_comparison(c, base);
}

}  // namespace

namespace syncpoint {

namespace {

int with_command(const char* command, int argc, char** argv) {
  std::vector<char*> args{argc > 0 ? argv[0] : const_cast<char*>("syncpoint"), const_cast<char*>(command)};
  args.insert(args.end(), argv + std::min(argc, 1), argv + argc);
  args.push_back(nullptr);
  return command_main(static_cast<int>(args.size()) - 1, args.data());
}

}  // namespace

int node_main(int argc, char** argv) {
  return with_command("node", argc, argv);
}

int head_main(int argc, char** argv) {
  return with_command("head", argc, argv);
}

int command_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string command = args.empty() ? "compare" : args.front();
  bool defaults = args.empty();
  if (!args.empty())
    args.erase(args.begin());
  try {
    if (command == "train")
      return run_train(args);
    if (command == "compare")
      return run_compare(args, defaults);
    if (command == "sweep")
      return cli::run_sweep(args);
    if (command == "simulate")
      return cli::run_simulate(args);
    if (command == "zipline")
      return cli::run_zipline(args);
    if (command == "report")
      return cli::run_report(args);
    if (command == "tune-switch")
      return cli::run_tune_switch(args);
    if (command == "head")
      return cli::run_head(args);
    if (command == "node")
      return cli::run_node(args);
    if (command == "submit")
      return cli::run_submit(args);
    if (command == "status")
      return cli::run_status(args);
    if (command == "launch")
      return cli::run_launch(args);
    if (command == "protocols") {
      print_protocols();
      return 0;
    }
    if (command == "version" || command == "--version") {
      std::printf("syncpoint %s\n", build_text());
      return 0;
    }
    if (command == "help" || command == "--help" || command == "-h") {
      std::printf("%s", usage);
      return 0;
    }
    std::cerr << "syncpoint: unknown command '" << command << "'\n" << usage;
    return 2;
  } catch (const config_error& e) {
    std::cerr << "syncpoint " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "syncpoint " << command << ": run failed: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace syncpoint
