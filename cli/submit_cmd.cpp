// syncpoint submit: sends a job to the head, streams its progress to this
// terminal, and writes trace.jsonl and summary.json as `train` does.
#include "cli/cluster_cmds.hpp"

#include "cli/compare.hpp"
#include "cli/options.hpp"
#include "runtime/cluster/connect.hpp"
#include "runtime/cluster/placement.hpp"
#include "runtime/job_parts.hpp"
#include "runtime/model_file.hpp"

#include <filesystem>
#include "runtime/run_files.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace syncpoint::cli {

using namespace syncpoint::cluster;

namespace {

struct client_state {
  caf::actor waiter;
  static inline const char* name = "submit_client";
};

// Prints the job's progress lines as they come; hands the result to `waiter`.
client_actor::behavior_type client(client_actor::stateful_pointer<client_state> self, caf::actor waiter) {
  self->state.waiter = std::move(waiter);
  return {
    [=](progress_atom, const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
    },
    [=](finished_atom, job_result& r) {
      caf::anon_send(self->state.waiter, std::move(r));  // the waiter is a scoped (untyped) actor
      self->quit();
    },
  };
}

}  // namespace

int run_submit(const std::vector<std::string>& args) {
  signal_catcher signals;  // Ctrl-C stops the job instead of abandoning it
  options opts(options::command::submit);
  if (int rc = parse_command(opts, args, "submit"); rc >= 0)
    return rc;
  auto cfg = opts.job();
  if (cfg.clock == clock_kind::virtual_time) {
    std::cerr << "syncpoint submit: --clock virtual is not for a cluster: virtual time runs in one "
                 "process (use 'syncpoint train --clock virtual')\n";
    return 2;
  }
  auto at = parse_endpoint(opts.head);
  if (!at) {
    std::cerr << "syncpoint submit: --head expects HOST:PORT"
              << (opts.head.empty() ? std::string(" (required)") : ", got '" + opts.head + "'") << "\n";
    return 2;
  }
  if (!cluster::parse_placement(cfg.placement)) {
    std::cerr << "syncpoint submit: --placement must be spread or pack, got '" << cfg.placement << "'\n";
    return 2;
  }
  validate(cfg);  // bad options are refused here, before the network (config_error: exit 2)
  // The head reads and writes checkpoints: name the folders absolutely (on a
  // head on this machine they are the ones meant).
  for (auto* dir : {&cfg.checkpoint_dir, &cfg.resume_dir})
    if (!dir->empty())
      *dir = std::filesystem::absolute(*dir).lexically_normal().string();
  if (auto misfit = check_options_fit(cfg, {cfg.protocol}); !misfit.empty()) {
    std::cerr << "syncpoint submit: " << misfit << "\n";
    return 2;
  }
  auto secret = cluster_secret(opts.token, opts.token_file, "submit");
  configure_cluster(opts, cluster_tls(opts.tls, opts.tls_paths, "submit"));
  caf::actor_system sys{opts};
  auto head = reach_head(sys, *at, "submit");
  caf::scoped_actor self{sys};
  auto follower = sys.spawn(client, caf::actor{self});
  self->monitor(head);
  uint64_t id = 0;
  std::string stop_token;
  int rc = -1;
  self->request(head, std::chrono::seconds(60), submit_atom::value, cfg, follower, secret)
    .receive([&](uint64_t job, std::string& token) { id = job; stop_token = std::move(token); },
             [&](caf::error& e) { rc = head_refusal(sys, e, "submit"); });
  if (rc >= 0) {
    self->send_exit(follower, caf::exit_reason::user_shutdown);
    return rc;
  }
  std::fprintf(stderr, "syncpoint submit: job %llu accepted by the head at %s\n",
               static_cast<unsigned long long>(id), opts.head.c_str());
  auto limit = std::chrono::seconds(cfg.max_time_s > 0 ? static_cast<int64_t>(cfg.max_time_s * 2) + 600
                                                       : 30 * 24 * 3600);
  auto waited = await_finished(self, sys, head, id, stop_token, signals, limit, "submit",
                               "job " + std::to_string(id));
  auto& result = waited.result;
  bool got = waited.got;
  int interrupted = waited.interrupted;
  if (!got) {
    self->send_exit(follower, caf::exit_reason::user_shutdown);
    return 1;
  }
  if (result.state == "failed") {
    std::fprintf(stderr, "syncpoint submit: job %llu failed: %s\n", static_cast<unsigned long long>(id),
                 result.message.c_str());
    return interrupted ? 128 + interrupted : 1;
  }
  auto r = make_result(with_limits(cfg), result.iter_cost_ms, std::move(result.outcome));
  r.summary.resumed_from = result.resumed_from;
  r.summary.resumed_at_s = result.resumed_at_s;
  print_summary(r.summary);
  for (auto& f : r.failures)
    std::fprintf(stderr, "syncpoint submit: %s\n", f.c_str());
  if (!cfg.out_dir.empty()) {
    write_run(cfg.out_dir, r);
    auto p = current_provenance(command_line("submit", args), cfg);
    p.label = protocol_label(cfg.protocol, cfg.protocol_opts);
    p.machine = {{"ran on", "a cluster: head " + opts.head + ", job " + std::to_string(id)},
                 {"submitted from", p.machine["host"]}};
    write_provenance(cfg.out_dir, p);
    std::printf("wrote %s/trace.jsonl, summary.json and run.json\n", cfg.out_dir.c_str());
  }
  if (!opts.save_model.empty())
    save_model_file(opts.save_model, r.final_model);
  if (result.state == "stopped") {
    std::fprintf(stderr, "syncpoint submit: job %llu stopped early: %s\n",
                 static_cast<unsigned long long>(id), result.message.c_str());
    return interrupted ? 128 + interrupted : 1;
  }
  if (failed_run(r.summary)) {
    std::fprintf(stderr, "syncpoint submit: every worker was lost; the job failed\n");
    return 1;
  }
  return 0;
}

}  // namespace syncpoint::cli
