// syncpoint submit: sends a job to the head, streams its progress to this
// terminal, and writes trace.jsonl and summary.json as `train` does. The
// library's submit() (runtime/cluster/client/submit.cpp) does the work; this adds
// the terminal: options, Ctrl-C, SIGUSR1 (a checkpoint now), exit status,
// run.json and the model file.
#include "cli/cluster_cmds.hpp"

#include "runtime/report/comparison.hpp"
#include "cli/options.hpp"
#include "runtime/cluster/jobs/placement.hpp"
#include "runtime/records/model_file.hpp"
#include "runtime/records/run_files.hpp"
#include "models/data_paths.hpp"
#include <syncpoint/model.hpp>
#include <syncpoint/worker_loop.hpp>

#include <algorithm>

#include <syncpoint/cluster.hpp>

#include <cstdio>
#include <iostream>

namespace syncpoint::cli {

namespace {

// What the options get wrong before the network, or "". validate()'s
// config_error is thrown (exit 2). A loop or model this program does not
// register may be the head's and its nodes' own (their program's): the head checks those.
std::string refusal(const options& opts, const job_config& cfg) {
  if (!cfg.data_dir.empty())  // the job reads the folders of the processes it runs in, not the submitter's
    return "--data " + cfg.data_dir +
           " is not for a cluster job: each node's workers read the data set from that node's own folder "
           "(syncpoint node --data DIR, default " + default_fashion_mnist_dir + "), and the head evaluates on "
           "its own (syncpoint head --data DIR)";
  if (cfg.clock == clock_kind::virtual_time)
    return "--clock virtual is not for a cluster: virtual time runs in one process (use 'syncpoint train "
           "--clock virtual')";
  if (!cluster::parse_endpoint(opts.head))
    return "--head expects HOST:PORT" + (opts.head.empty() ? std::string(" (required)") : ", got '" + opts.head + "'");
  auto here = cfg;
  auto loops = loop_names(), models = model_names();
  if (std::find(loops.begin(), loops.end(), here.loop) == loops.end())
    here.loop = "classify";
  if (std::find(models.begin(), models.end(), here.model) == models.end())
    here.model = "mlp";
  validate(here);
  if (auto misfit = check_options_fit(cfg, {cfg.protocol}); !misfit.empty())
    return misfit;
  if (opts.head_wait < 0 || opts.head_wait > 86400)
    return "--head-wait must be in 0..86400 seconds, got " + std::to_string(opts.head_wait);
  return {};
}

// What the job came to: its summary, its files, and the exit status.
int finish(cluster_run& run, const options& opts, job_config cfg, const std::string& out_dir,
           const std::vector<std::string>& args, int interrupted) {
  auto id = static_cast<unsigned long long>(run.id);
  if (run.state == "failed") {
    std::fprintf(stderr, "syncpoint submit: job %llu failed: %s\n", id, run.message.c_str());
    return interrupted ? 128 + interrupted : 1;
  }
  if (!run.ran && run.head_returns > 0) {  // it ended while the head was away: its outcome came in words
    std::fprintf(stderr, "syncpoint submit: job %llu %s%s%s (it ended before this submitter reattached: its trace "
                         "and model are in the head's runs folder)\n",
                 id, run.state.c_str(), run.message.empty() ? "" : ": ", run.message.c_str());
    return run.state == "done" ? 0 : interrupted ? 128 + interrupted : 1;
  }
  auto& r = run.result;
  report::print_summary(r.summary);
  for (auto& f : r.failures)
    std::fprintf(stderr, "syncpoint submit: %s\n", f.c_str());
  if (!out_dir.empty()) {
    write_run(out_dir, r);
    cfg.out_dir = out_dir;
    auto p = current_provenance(command_line("submit", args), cfg);
    p.label = run_label(cfg);
    p.machine = {{"ran on", "a cluster: head " + opts.head + ", job " + std::to_string(run.id)},
                 {"submitted from", p.machine["host"]}};
    write_provenance(out_dir, p);
    std::printf("wrote %s/trace.jsonl, summary.json and run.json\n", out_dir.c_str());
  }
  if (!opts.save_model.empty())
    save_model_file(opts.save_model, r.final_model);
  if (run.state == "stopped") {
    std::fprintf(stderr, "syncpoint submit: job %llu stopped early: %s\n", id, run.message.c_str());
    return interrupted ? 128 + interrupted : 1;
  }
  if (failed_run(r.summary)) {
    std::fprintf(stderr, "syncpoint submit: every worker was lost; the job failed\n");
    return 1;
  }
  return 0;
}

}  // namespace

int run_submit(const std::vector<std::string>& args) {
  signal_catcher signals;  // Ctrl-C stops the job instead of abandoning it
  options opts(options::command::submit);
  if (int rc = parse_command(opts, args, "submit"); rc >= 0)
    return rc;
  auto cfg = opts.job();
  if (auto why = refusal(opts, cfg); !why.empty()) {
    std::cerr << "syncpoint submit: " << why << "\n";
    return 2;
  }
  submit_options how;
  how.head = opts.head;
  how.head_wait = std::chrono::seconds(opts.head_wait);
  how.token = cluster_secret(opts.token, opts.token_file, "submit");
  auto tls = cluster_tls(opts.tls, opts.tls_paths, "submit");
  how.tls_cert = tls.cert;
  how.tls_key = tls.key;
  how.tls_ca = tls.ca;
  std::string what = "the job";
  int interrupted = 0;
  how.stop_when = stop_on_signal(signals, interrupted, "submit", what);
  how.checkpoint_when = [&]() -> std::string {  // Slurm's warning before a time limit (--signal=USR1@60)
    if (!signals.take_usr1())
      return "";
    std::fprintf(stderr, "syncpoint submit: SIGUSR1: asking %s for a checkpoint\n", what.c_str());
    return "SIGUSR1";
  };
  how.on_accepted = [&](uint64_t id) {
    what = "job " + std::to_string(id);
    std::fprintf(stderr, "syncpoint submit: job %llu accepted by the head at %s\n",
                 static_cast<unsigned long long>(id), opts.head.c_str());
  };
  auto out_dir = cfg.out_dir;
  cfg.out_dir.clear();  // written below, with run.json
  configure_submitter(opts.actor_system, how);
  caf::actor_system sys{opts.actor_system};
  cluster_run run;
  try {
    run = submit(sys, cfg, how);
  } catch (const cluster_error& e) {  // config_error (bad options): main says so, exit 2
    std::fprintf(stderr, "syncpoint submit: %s\n", e.what());
    if (e.which() == cluster_error::kind::unreachable)
      leave_now(2);  // a connect that timed out may block CAF's orderly shutdown
    return e.which() == cluster_error::kind::refused ? 2 : 1;
  }
  return finish(run, opts, cfg, out_dir, args, interrupted);
}

}  // namespace syncpoint::cli
