#include "cli/options.hpp"

#include "core/link_model.hpp"
#include "runtime/job/job_parts.hpp"
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>
#include <syncpoint/worker_loop.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace syncpoint::cli {

namespace {

// The registered models a user may name (not simulate's own timing-only).
std::string model_list() {
  std::string out;
  for (auto& name : model_names())
    if (name != "timing-only")
      out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string loop_list() {
  std::string out;
  for (auto& name : loop_names())
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

namespace {

const char* command_name(options::command c) {
  switch (c) {
    case options::command::train:
      return "train";
    case options::command::compare:
      return "compare";
    case options::command::submit:
      return "submit";
    case options::command::tune:
      return "tune-switch";
    case options::command::simulate:
      return "simulate";
  }
  return "train";
}

}  // namespace

options::options(command c) : table_(command_name(c)) {
  auto& t = table_;
  bool compare = c == command::compare, sim = c == command::simulate, submit = c == command::submit;
  if (submit)
    clock_ = "real";  // a cluster runs on the real clock
  t.group("job");
  if (compare)
    t.add(protocol_list_, "protocols", "comma-separated protocols to compare (default bsp,asp,ssp)")
      .add(seeds_, "seeds", "run every protocol once per seed (e.g. 1,2,3); the tables and the page show mean and min–max")
      .add(tune_lr_, "tune-lr", "run each protocol at each of these learning rates (e.g. 0.02,0.05,0.1) and report it at its best")
      .add(run_to_cap, "run-to-cap", "the target does not stop a run; every run goes on to the time cap")
      .add(jobs, "jobs", "virtual clock: runs at once after the reference, each in its own process (default: the number of cores)");
  if (c == command::tune)
    t.add(tolerance, "tolerance", "accept a BSP share whose accuracy is within this of pure BSP (default 0.005)")
      .add(budget, "budget", "runs of the binary search after the reference run (default 5)");
  t.add(cfg_.workers, "workers,w", "number of workers (default 4)")
    .add(cfg_.model, "model,m", sim ? "model whose iteration cost and size are charged: " + model_list() +
                                        " (default mlp); nothing is computed"
                                    : "model: " + model_list() +
                                        " (default mlp); tinylm takes its size after a colon, e.g. "
                                        "tinylm:layers=2,width=64,heads=4 (docs/datasets.md); script:FILE.pt a TorchScript "
                                        "module saved by torch.jit.script(net).save(FILE) (docs/python.md)")
    .add(cfg_.batch, "batch,b", "batch size per worker (default 64)");
  if (!sim)
    t.add(cfg_.loss, "loss", "script:FILE.pt: a TorchScript function of (output, target) returning the loss, "
                             "instead of cross-entropy (a LibTorch model; docs/python.md)")
      .add(cfg_.loop, "loop", "what each worker computes: " + loop_list() +
                             " (default classify: the data set's batches, the model's cross-entropy)");
  t.add(cfg_.seed, "seed", "random seed (default 1)");
  if (!sim)
    t.add(cfg_.device, "device", "where workers and the evaluator compute: cpu, cuda (the visible GPUs, round robin), "
                                 "cuda:N, or auto (cuda if there is one, else cpu); default cpu (docs/gpu.md)")
      .add(cfg_.precision, "precision", "fp32, or bf16: CUDA autocast for the forward and backward, the PS stays fp32 "
                                        "(default fp32)");
  if (sim)
    t.add(iterations, "iterations,k", "iterations per worker: the run stops after workers x K pushes' samples (default 100)");
  else
    t.add(cfg_.epochs, "epochs,e", "stop after this many epochs of samples")
      .add(cfg_.target_accuracy, "target-accuracy", "test accuracy to reach (time_to_target_s)")
      .add(cfg_.stop_at_target, "stop-at-target", "stop when the target is reached");
  t.add(cfg_.max_time_s, "max-time", "stop after this many seconds on the run clock");
  if (!sim)
    t.add(clock_, "clock", submit ? "real (virtual time runs in one process: use train)" : "real or virtual (default virtual)")
      .add(cfg_.eval_every, "eval-every", "evaluate every this many epochs of samples (default 0.25)");
  t.add(cfg_.straggler, "straggler", "e.g. '3:x4', '1:x2;3:x3', '0:x3@10-20', '2:+50ms'")
    .add(iter_cost_, "iter-cost", sim ? "ms per iteration at --batch (default: the model's reference cost)"
                                      : "virtual clock: ms per iteration at --batch, or 'measure' (default: the model's reference cost)")
    .add(ps_memory_, "ps-memory", "bytes of sparse rows each PS shard may hold: 2GB, 512MiB, 1e9; a table without a capacity that would pass it is refused (docs/sparse.md); default no limit")
    .add(bandwidth_, "ps-bandwidth", "link rate of each PS shard, shared by its transfers: 25MB/s, 1Gbit/s, 400e6 (bytes/s); default unlimited")
    .add(cfg_.latency_ms, "latency", "ms added to every transfer to or from the PS (default 0)");
  if (!sim)
    t.add(cfg_.ps_shards, "ps-shards", "the parameter server as K shards, each a contiguous range of the model (default 1; "
                                       "submit --ps-placement nodes: one per node)")
      .add(cfg_.threads, "threads", "real clock: scheduler threads (default min(workers, cores))")
      .add(cfg_.request_timeout_s, "request-timeout", "real clock: a worker's push or pull unanswered this long ends it (s)")
      .add(cfg_.ps_replicas, "ps-replicas", "replicas of each PS shard (0, 1 or 2), each taking every push: a lost "
                                            "primary's replica serves in its place, nothing redone (default 0)")
      .add(cfg_.ps_rereplicate, "ps-rereplicate", "a lost copy of a PS shard is made again from its serving copy, "
                                                  "the run holding still meanwhile, so each shard keeps its replicas")
      .add(fail_worker_, "fail-worker", "fault injection: worker W dies at its K-th push (W@K)")
      .add(cfg_.fail_shard, "fail-shard", "fault injection: PS shards' copies die with --fail-worker's worker, in order: S "
                                          "(shard S's primary) or S.C (its copy C), comma-separated (needs --ps-replicas)");

  t.group("protocol");
  if (!compare && c != command::tune)  // tune-switch's protocol is sync-switch
    t.add(cfg_.protocol, "protocol,p", "synchronization protocol (bsp, asp, ssp, ...)");
  // Every option a registered protocol declares, typed as declared.
  for (auto& [name, decl] : all_protocol_options()) {
    auto& spec = decl.first;
    std::string who;
    for (auto& p : decl.second)
      who += (who.empty() ? "" : ",") + p;
    auto flag = spec.short_name.empty() ? name : name + "," + spec.short_name;
    auto help = who + ": " + spec.help + " (default " + spec.default_value + ")";
    switch (spec.type) {
      case option_spec::kind::integer:
        t.add(int_opts_[name], flag, help);
        break;
      case option_spec::kind::real:
        t.add(real_opts_[name], flag, help);
        break;
      case option_spec::kind::text:
        t.add(text_opts_[name], flag, help);
        break;
    }
    if (!spec.choices.empty()) {
      std::string words;
      for (size_t i = 0; i < spec.choices.size(); ++i)
        words += (i == 0 ? "" : i + 1 == spec.choices.size() ? " or " : ", ") + spec.choices[i];
      t.expects(name, words);
    }
    auto on_off = spec.choices;
    std::sort(on_off.begin(), on_off.end());
    if (on_off == std::vector<std::string>{"off", "on"})
      t.bare_means(name, "on");  // a switch: "--online" is "--online=on"
  }
  t.add(params_, "param", "protocol options by name: key=value[,key=value] (same as --key=value)");
  if (sim) {  // timing only: nothing is learned, evaluated or read
    t.group("output")
      .add(cfg_.progress, "progress", "print progress lines on stderr (default true)")
      .add(cfg_.out_dir, "out,o", "directory for trace.jsonl and summary.json");
    return;
  }

  t.group("data")
    .add(cfg_.dataset, "dataset", "fashion-mnist, idx (MNIST-style files in --data), cifar10 (its binary version in --data), "
                                  "text (UTF-8 text in --data, character by character), synthetic, or one the program "
                                  "registered (default fashion-mnist)")
    .add(cfg_.data_dir, "data", "the data set's folder (default for fashion-mnist: /usr/share/datasets/fashion-mnist), "
                                "or text's file or folder (default /usr/share/games/fortunes)")
    .add(cfg_.train_limit, "train-limit", "use the first N training examples (default all)")
    .add(cfg_.test_limit, "test-limit", "evaluate on the first N test examples (default all)")
    .add(cfg_.context, "context", "text: tokens (characters, or words with text:tokens=words) of context each example holds, and the model sees (default 64)");

  t.group("optimizer")
    .add(cfg_.optimizer, "optimizer", "the PS's optimizer: sgd, nesterov, adam or adamw (default sgd; docs/optimizers.md)")
    .add(cfg_.lr, "lr", "learning rate (default 0.05)")
    .add(cfg_.momentum, "momentum", "sgd, nesterov: momentum (default 0.9)")
    .add(cfg_.beta1, "beta1", "adam, adamw: decay of the first moment (default 0.9)")
    .add(cfg_.beta2, "beta2", "adam, adamw: decay of the second moment (default 0.999)")
    .add(cfg_.eps, "eps", "adam, adamw: added to the second moment's root (default 1e-8)")
    .add(cfg_.sparse_sync, "sparse-sync", "a sparse model's rows: same (stepped as the protocol steps the dense part) or async (each push's rows at once, Persia's hybrid; docs/sparse.md) (default same)")
    .add(cfg_.momentum_rule, "momentum-rule", "adjusted (stale pushes weigh less, momentum per visible step; docs/momentum.md) or plain (default adjusted)")
    .add(cfg_.weight_decay, "weight-decay", "weight decay: L2 (sgd, nesterov, adam) or decoupled (adamw) (default 0)")
    .add(cfg_.lr_schedule, "lr-schedule", "the learning rate by samples taken in: constant, step or cosine (default constant)")
    .add(milestones_, "lr-milestones", "step: epochs at which the rate is multiplied by --lr-gamma (e.g. 30,60)")
    .add(cfg_.lr_gamma, "lr-gamma", "step: the factor at each milestone (default 0.1)")
    .add(cfg_.lr_epochs, "lr-epochs", "cosine and a warmup share: the schedule's length in epochs (default --epochs)")
    .add(cfg_.lr_min, "lr-min", "cosine: the rate it ends at (default 0)")
    .add(cfg_.warmup, "warmup", "rise linearly to the rate over a share of the run below 1 (0.05) or a number of samples (3000)")
    .add(cfg_.lr_scaling, "lr-scaling", "none, or linear: --lr times workers x batch / 256 (Goyal et al.; default none)")
    .add(cfg_.clip_norm, "clip-norm", "scale each pushed gradient to at most this global L2 norm (default 0: never)")
    .add(cfg_.compress, "compress", "compress each pushed gradient, with error feedback: none, fp16, bf16, topk:R, "
                                    "randomk:R (R: the share of values sent), onebit (default none; "
                                    "docs/compression.md)");

  if (submit)
    add_cluster_access(t.group("cluster").add(head, "head", "HOST:PORT of the head to submit to (required)"), token,
                       token_file, tls, tls_paths)
      .add(head_wait, "head-wait", "seconds to wait for a lost head that keeps a journal (head --state) to come "
                                   "back, then follow the job again (default 120; 0: fail at once)")
      .add(cfg_.placement, "placement", "spread or pack workers over the nodes' slots (default spread)")
      .add(cfg_.ps_placement, "ps-placement", "where the PS shards run: head (with the coordinator) or nodes "
                                              "(one on each node hosting workers, unless --ps-shards says otherwise; default head)")
      .add(cfg_.elastic, "elastic", "start on the free slots if fewer than --workers; grow as nodes join, and "
                                    "bring a lost node's workers back on a new one")
      .actor_system(actor_system);

  t.group("output")
    .add(cfg_.progress, "progress", "print progress lines on stderr (default true)")
    .add(cfg_.out_dir, "out,o", "directory for trace.jsonl and summary.json");
  if (!compare && c != command::tune)
    t.add(save_model, "save-model", "write the final model to FILE (cereal portable binary)");
  if (c == command::tune)
    t.add(policy_out, "policy-out", "where to write the policy (default sync-switch-policy.json)");
  if (c == command::train || submit)
    t.add(cfg_.checkpoint_every_s, "checkpoint-every", "take a checkpoint every S seconds on the run clock")
      .add(cfg_.checkpoint_dir, "checkpoint-dir", submit ? "where the head writes checkpoints (a folder on the head's machine; SIGUSR1 to "
                                                                  "submit takes one at once)"
                                                         : "where checkpoints go (checkpoint-<samples>.bin)")
      .add(cfg_.checkpoint_keep, "checkpoint-keep", "keep the newest N checkpoints, 0: all (default 3)")
      .add(cfg_.resume_dir, "resume", "continue from the newest checkpoint in DIR, or from the checkpoint FILE (same options; limits may be raised)");
}

std::string options::parse_args(const std::vector<std::string>& args) {
  if (auto err = table_.parse_args(args); !err.empty() || table_.help_printed())
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
  if (iter_cost_ == "measure") {
    cfg_.measure_iter_cost = true;
  } else if (!iter_cost_.empty()) {
    char* end = nullptr;
    cfg_.iter_cost_ms = std::strtod(iter_cost_.c_str(), &end);
    if (end == iter_cost_.c_str() || *end != '\0')
      return "invalid value in '--iter-cost=" + iter_cost_ + "' (expected ms per iteration or 'measure')";
  }
  if (!ps_memory_.empty()) {
    auto bytes = parse_bandwidth(ps_memory_);  // the same units, without "/s"
    if (!bytes || ps_memory_.find('/') != std::string::npos)
      return "invalid value in '--ps-memory=" + ps_memory_ + "' (expected a size such as 2GB, 512MiB or 1e9 bytes)";
    cfg_.ps_memory = *bytes;
  }
  if (!bandwidth_.empty()) {
    auto bw = parse_bandwidth(bandwidth_);
    if (!bw)
      return "invalid value in '--ps-bandwidth=" + bandwidth_ +
             "' (expected a rate such as 25MB/s, 1Gbit/s, 100Mbps or 400e6 bytes/s)";
    cfg_.ps_bandwidth = *bw;
  }
  std::stringstream items(params_);
  std::string kv;
  while (std::getline(items, kv, ',')) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      return "invalid value in '--param=" + params_ + "': '" + kv + "' is not key=value";
    cfg_.protocol_opts.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (auto& [name, v] : int_opts_)
    if (table_.given(name))
      cfg_.protocol_opts.set(name, static_cast<long long>(v));
  for (auto& [name, v] : real_opts_)
    if (table_.given(name))
      cfg_.protocol_opts.set(name, v);
  for (auto& [name, v] : text_opts_)
    if (table_.given(name))
      cfg_.protocol_opts.set(name, v);
  try {
    check_protocol_options(cfg_.protocol_opts);
    apply_job_defaults(cfg_, [this](const std::string& name) { return table_.given(name); });
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  protocols = split_protocols(protocol_list_);
  std::string item;
  cfg_.lr_milestones.clear();
  std::stringstream marks(milestones_);
  while (std::getline(marks, item, ',')) {
    char* end = nullptr;
    double epoch = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(epoch) || epoch <= 0)
      return "--lr-milestones: '" + item + "' is not a positive number of epochs (expected a list like 30,60)";
    cfg_.lr_milestones.push_back(epoch);
  }
  tune_lrs.clear();
  std::stringstream lrs(tune_lr_);
  while (std::getline(lrs, item, ',')) {
    char* end = nullptr;
    double lr = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(lr) || lr <= 0)
      return "--tune-lr: '" + item + "' is not a positive learning rate (expected a list like 0.02,0.05,0.1)";
    if (std::find(tune_lrs.begin(), tune_lrs.end(), lr) == tune_lrs.end())
      tune_lrs.push_back(lr);
  }
  seeds.clear();
  std::stringstream seed_list(seeds_);
  while (std::getline(seed_list, item, ',')) {
    if (item.empty())
      continue;
    char* end = nullptr;
    errno = 0;
    unsigned long long seed = std::strtoull(item.c_str(), &end, 10);
    if (*end != '\0' || item[0] == '-' || errno == ERANGE)
      return "--seeds: '" + item + "' is not a seed (expected a list of whole numbers like 1,2,3)";
    if (std::find(seeds.begin(), seeds.end(), seed) != seeds.end())
      return "--seeds names " + item + " twice";
    seeds.push_back(seed);
  }
  if (!seeds_.empty() && seeds.empty())
    return "--seeds names no seed (expected a list like 1,2,3)";
  if (jobs < 0)
    return "--jobs: " + std::to_string(jobs) + " is not a number of processes (expected 1 or more; 0: the cores)";
  return {};
}

job_config options::job() const {
  job_config out = cfg_;
  out.clock = clock_ == "real" ? clock_kind::real : clock_kind::virtual_time;
  return out;
}

option_table& add_cluster_access(option_table& table, std::string& token, std::string& token_file, bool& tls,
                                 cluster::tls_files& files) {
  return table.group("cluster")
    .add(token, "token", "the cluster's shared secret: the head refuses nodes, jobs and status requests without it")
    .add(token_file, "token-file", "read the token from FILE (its first line): keeps it out of `ps` and shell history")
    .add(tls, "tls", "TLS on every connection, certificates checked both ways (needs --cert, --key, --ca)")
    .add(files.cert, "cert", "this process's certificate (PEM), signed by the cluster's CA")
    .add(files.key, "key", "the private key of --cert (PEM)")
    .add(files.ca, "ca-cert", "(or --ca) the cluster's CA certificate (PEM): peers must present a certificate it signed")
    .alias("ca-cert", "ca");
}

std::string run_label(const job_config& cfg) {
  return protocol_label(cfg.protocol, cfg.protocol_opts) +
         (cfg.compress.empty() || cfg.compress == "none" ? "" : " " + cfg.compress);
}

std::vector<std::string> split_protocols(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  for (char c : list) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ',' && depth == 0) {
      if (!item.empty())
        out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!item.empty())
    out.push_back(item);
  return out;
}

std::string check_options_fit(const job_config& cfg, const std::vector<std::string>& protocols) {
  auto all = all_protocol_options();
  for (auto& [name, value] : cfg.protocol_opts.values()) {
    bool used = false;
    for (auto& p : protocols)
      for (auto& o : protocol_option_specs(p))
        used = used || o.name == name;
    if (used)
      continue;
    std::string who, list;
    if (auto i = all.find(name); i != all.end())
      for (auto& p : i->second.second)
        who += (who.empty() ? "" : ", ") + p;
    for (auto& p : protocols)
      list += (list.empty() ? "" : ", ") + p;
    return "--" + name + " is an option of " + (who.empty() ? std::string("no protocol") : who) +
           ", not of " + list;
  }
  return {};
}

std::string command_line(const std::string& command, const std::vector<std::string>& args) {
  std::string out = "syncpoint " + command;
  bool secret_next = false;
  for (auto a : args) {
    // The cluster's token never goes into run.json or a report.
    if (secret_next)
      a = "***";
    secret_next = a == "--token";
    if (a.rfind("--token=", 0) == 0)
      a = "--token=***";
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                   "0123456789-_=.,:/+@%") == std::string::npos;
    if (plain) {
      out += " " + a;
      continue;
    }
    std::string q = "'";
    for (char c : a)
      q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += " " + q + "'";
  }
  return out;
}

void check_save_model(const options& opts) {
  if (opts.save_model.empty())
    return;
  auto cfg = opts.job();
  auto data = load_job_data(cfg);
  if (!make_model(cfg.model, input_of(data.train))->tables().empty())
    throw config_error("--save-model writes the dense weights, and model '" + cfg.model +
                       "' keeps sparse tables on the PS: run it without --save-model (docs/sparse.md, \"Status\")");
}

}  // namespace syncpoint::cli
