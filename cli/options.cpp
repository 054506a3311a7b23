#include "cli/options.hpp"

#include <cstdlib>
#include <sstream>

namespace syncpoint::cli {

options::options(command c) {
  opt_group g{custom_options_, "global"};
  bool compare = c == command::compare;
  if (c == command::submit) {
    clock_ = "real";  // a cluster runs on the real clock
    g.add(head, "head", "HOST:PORT of the head to submit to (required)")
      .add(cfg_.placement, "placement", "spread or pack workers over the nodes' slots (default spread)");
  }
  if (c != command::compare)
    g.add(save_model, "save-model", "write the final model to FILE (cereal portable binary)");
  if (compare)
    g.add(protocol_list_, "protocols", "comma-separated protocols to compare (default bsp,asp,ssp)");
  else
    g.add(cfg_.protocol, "protocol,p", "synchronization protocol (bsp, asp, ssp, ...)");
  g.add(cfg_.protocol_opts.staleness, "staleness,s", "ssp: iterations a worker may run ahead (default 3)")
    .add(cfg_.protocol_opts.lookahead, "lookahead", "elastic-bsp: push times predicted per worker (default 15)")
    .add(cfg_.protocol_opts.zipline_variant, "zipline-variant",
         "elastic-bsp: zipline, zipline-opt or zipline-opt-bs (default zipline-opt-bs)")
    .add(cfg_.protocol_opts.interval_window, "interval-window",
         "elastic-bsp: intervals averaged per prediction (default 1)")
    .add(params_, "param", "protocol parameters without a flag of their own: key=value[,key=value]")
    .add(cfg_.workers, "workers,w", "number of workers (default 4)")
    .add(cfg_.model, "model,m", "model: mlp, cnn, softmax (default mlp)")
    .add(cfg_.epochs, "epochs,e", "stop after this many epochs of samples")
    .add(cfg_.target_accuracy, "target-accuracy", "test accuracy to reach (time_to_target_s)")
    .add(cfg_.stop_at_target, "stop-at-target", "stop when the target is reached")
    .add(cfg_.max_time_s, "max-time", "stop after this many seconds on the run clock")
    .add(cfg_.lr, "lr", "learning rate (default 0.05)")
    .add(cfg_.momentum, "momentum", "momentum (default 0.9)")
    .add(cfg_.weight_decay, "weight-decay", "weight decay (default 0)")
    .add(cfg_.batch, "batch,b", "batch size per worker (default 64)")
    .add(cfg_.seed, "seed", "random seed (default 1)")
    .add(clock_, "clock", c == command::submit ? "real (virtual time runs in one process: use train)"
                                                : "real or virtual (default virtual)")
    .add(cfg_.straggler, "straggler", "e.g. '3:x4', '1:x2;3:x3', '0:x3@10-20', '2:+50ms'")
    .add(cfg_.iter_cost_ms, "iter-cost", "virtual clock: ms per iteration (default: measured once)")
    .add(cfg_.ps_bandwidth, "ps-bandwidth", "bytes/s of the PS link, shared by all transfers (default unlimited)")
    .add(cfg_.latency_ms, "latency", "ms added to every transfer to or from the PS (default 0)")
    .add(cfg_.eval_every, "eval-every", "evaluate every this many epochs of samples (default 0.25)")
    .add(cfg_.dataset, "dataset", "fashion-mnist or synthetic (default fashion-mnist)")
    .add(cfg_.data_dir, "data", "Fashion-MNIST directory (default /usr/share/datasets/fashion-mnist)")
    .add(cfg_.train_limit, "train-limit", "use the first N training examples (default all)")
    .add(cfg_.test_limit, "test-limit", "evaluate on the first N test examples (default all)")
    .add(cfg_.threads, "threads", "real clock: scheduler threads (default min(workers, cores))")
    .add(cfg_.request_timeout_s, "request-timeout", "real clock: seconds to wait for any reply")
    .add(cfg_.progress, "progress", "print progress lines on stderr (default true)")
    .add(fail_worker_, "fail-worker", "fault injection: worker W dies at its K-th push (W@K)")
    .add(cfg_.out_dir, "out,o", "directory for trace.jsonl and summary.json");
}

std::string options::parse_args(std::vector<std::string> args) {
  if (auto err = cli_config::parse_args(args); !err.empty())
    return err;
  if (clock_ != "real" && clock_ != "virtual")
    return "invalid value in '--clock=" + clock_ + "' (expected real or virtual)";
  if (!fail_worker_.empty()) {
    auto at = fail_worker_.find('@');
    char* e1 = nullptr;
    char* e2 = nullptr;
    long w = at == std::string::npos ? -1 : std::strtol(fail_worker_.c_str(), &e1, 10);
    long k = at == std::string::npos ? -1 : std::strtol(fail_worker_.c_str() + at + 1, &e2, 10);
    if (at == std::string::npos || at == 0 || e1 != fail_worker_.c_str() + at || *e2 != '\0' || w < 0
        || k < 1)
      return "invalid value in '--fail-worker=" + fail_worker_ + "' (expected W@K, e.g. 2@10)";
    cfg_.fail_worker = static_cast<int>(w);
    cfg_.fail_at_iter = static_cast<uint64_t>(k);
  }
  std::stringstream items(params_);
  std::string kv;
  while (std::getline(items, kv, ',')) {
    auto eq = kv.find('=');
    char* end = nullptr;
    double v = eq == std::string::npos ? 0 : std::strtod(kv.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || end == kv.c_str() + eq + 1 || *end != '\0')
      return "invalid value in '--param=" + params_ + "': '" + kv + "' is not key=number";
    cfg_.protocol_opts.params[kv.substr(0, eq)] = v;
  }
  protocols.clear();
  std::stringstream ss(protocol_list_);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      protocols.push_back(item);
  return {};
}

job_config options::job() const {
  job_config out = cfg_;
  out.clock = clock_ == "real" ? clock_kind::real : clock_kind::virtual_time;
  return out;
}

}  // namespace syncpoint::cli
