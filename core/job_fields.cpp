// The table of job_config's fields (core/job_schema.hpp): a declarative table,
// one entry per field in declaration order. A field's default is its
// initializer in job_config.hpp, never written here.
#include "core/job_schema.hpp"

namespace syncpoint {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// One row, filled by chained calls: the table below reads as a list.
struct row {
  job_field& f;
  row& in(double lowest, double highest, bool lowest_open = false, bool highest_open = false) {
    f.lowest = lowest;
    f.highest = highest;
    f.lowest_open = lowest_open;
    f.highest_open = highest_open;
    return *this;
  }
  row& at_least(double lowest) { return in(lowest, inf); }
  row& positive() { return in(0, inf, true); }
  row& unit(const char* u) { return f.unit = u, *this; }
  row& choices(std::vector<std::string> c) { return f.choices = std::move(c), *this; }
  row& none(const char* means) { return f.none_means = means, *this; }
  row& on(uint8_t commands) { return f.commands = commands, *this; }
  row& parsed() { return f.binding = cli_binding::parsed, *this; }
  row& by(const char* option) { return f.option = option, f.binding = cli_binding::by_other, *this; }
  row& no_option() { return f.option.clear(), f.binding = cli_binding::none, *this; }
  row& short_name(char c) { return f.short_name = c, *this; }
  row& simulate(const std::string& help) { return f.help_simulate = help, *this; }
  row& submit(const std::string& help) { return f.help_submit = help, *this; }
  row& layer(const char* l) { return f.layer = l, *this; }
};

struct table {
  std::vector<job_field> fields;
  template <class T>
  row add(const char* key, T job_config::*member, const char* option, const char* group, std::string help) {
    return add(key, field_ref<T>{member, nullptr}, option, group, std::move(help));
  }
  template <class T>
  row add(const char* key, T detail::job_internals::*internal, const char* option, const char* group,
          std::string help) {
    return add(key, field_ref<T>{nullptr, internal}, option, group, std::move(help));
  }
  template <class T>
  row add(const char* key, field_ref<T> member, const char* option, const char* group, std::string help) {
    job_field f;
    f.key = key;
    f.member = member;
    f.option = option;
    f.group = group;
    f.help = std::move(help);
    fields.push_back(std::move(f));
    return row{fields.back()};
  }
};

std::vector<job_field> make_fields() {
  table t;
  using jc = job_config;
  t.add("protocol", &jc::protocol, "protocol", "protocol", "synchronization protocol (bsp, asp, ssp, ...; syncpoint protocols)")
    .short_name('p').on(on_train | on_submit | on_simulate).layer("actors/coordinator");
  t.add("protocol_opts", &jc::protocol_opts, "param", "protocol",
        "protocol options by name: key=value[,key=value] (same as --key=value)")
    .parsed().none("none").layer("protocols");
  t.add("workers", &jc::workers, "workers", "job", "number of workers").short_name('w').in(1, 4096).layer("runtime/job");
  // The CLI puts the registered models and loops first ("model: cnn, mlp, ...; ") and
  // the machine's folders after --data's help.
  t.add("model", &jc::model, "model", "job",
        "tinylm takes its size after a colon, e.g. tinylm:layers=2,width=64,heads=4 (docs/datasets.md); "
        "script:FILE.pt is a TorchScript module saved by torch.jit.script(net).save(FILE) (docs/python.md)")
    .short_name('m').simulate("the model whose iteration cost and size are charged; nothing is computed").layer("models");
  t.add("loss", &jc::loss, "loss", "job",
        "script:FILE.pt: a TorchScript function of (output, target) returning the loss, instead of cross-entropy "
        "(a LibTorch model; docs/python.md)")
    .on(on_learning).none("cross-entropy").layer("models");
  t.add("loop", &jc::loop, "loop", "job",
        "what each worker computes between pull and push (classify: the data set's batches, the model's "
        "cross-entropy; your own: <syncpoint/worker_loop.hpp>)")
    .on(on_learning).layer("actors/worker");
  t.add("dataset", &jc::dataset, "dataset", "data",
        "fashion-mnist, idx (MNIST-style files in --data), cifar10 (its binary version in --data), text (UTF-8 "
        "text in --data, character by character), synthetic, or one the program registered")
    .on(on_learning).layer("models");
  t.add("data_dir", &jc::data_dir, "data", "data", "the data set's folder, or text's file or folder")
    .on(on_learning).none("the data set's own").layer("models");
  t.add("train_limit", &jc::train_limit, "train-limit", "data", "use the first N training examples")
    .on(on_learning).at_least(0).none("all").layer("models");
  t.add("test_limit", &jc::test_limit, "test-limit", "data", "evaluate on the first N test examples")
    .on(on_learning).at_least(0).none("all").layer("models");
  t.add("context", &jc::context, "context", "data",
        "text: tokens (characters, or words with text:tokens=words) of context each example holds, and the model sees")
    .on(on_learning).in(1, 65536).layer("models");
  t.add("epochs", &jc::epochs, "epochs", "job", "stop after this many epochs of samples")
    .short_name('e').on(on_learning).in(0, 1e6).none("no limit").layer("actors/coordinator");
  t.add("max_time_s", &jc::max_time_s, "max-time", "job", "stop after this many seconds on the run clock")
    .in(0, 1e9).unit("seconds").none("no limit").layer("actors/coordinator");
  t.add("target_accuracy", &jc::target_accuracy, "target-accuracy", "job", "test accuracy to reach (time_to_target_s)")
    .on(on_learning).in(0, 1).none("none").layer("actors/evaluator");
  t.add("stop_at_target", &jc::stop_at_target, "stop-at-target", "job", "stop when the target is reached")
    .on(on_learning).layer("actors/coordinator");
  t.add("optimizer", &jc::optimizer, "optimizer", "optimizer", "the PS's optimizer: sgd, nesterov, adam or adamw (docs/optimizers.md)")
    .on(on_learning).choices({"sgd", "nesterov", "adam", "adamw"}).layer("actors/ps");
  t.add("lr", &jc::lr, "lr", "optimizer", "learning rate").on(on_learning).positive().layer("actors/ps");
  t.add("momentum", &jc::momentum, "momentum", "optimizer", "sgd, nesterov: momentum")
    .on(on_learning).in(0, 1, false, true).layer("actors/ps");
  t.add("beta1", &jc::beta1, "beta1", "optimizer", "adam, adamw: decay of the first moment")
    .on(on_learning).in(0, 1, false, true).layer("actors/ps");
  t.add("beta2", &jc::beta2, "beta2", "optimizer", "adam, adamw: decay of the second moment")
    .on(on_learning).in(0, 1, false, true).layer("actors/ps");
  t.add("eps", &jc::eps, "eps", "optimizer", "adam, adamw: added to the second moment's root")
    .on(on_learning).positive().layer("actors/ps");
  t.add("weight_decay", &jc::weight_decay, "weight-decay", "optimizer",
        "weight decay: L2 (sgd, nesterov, adam) or decoupled (adamw)")
    .on(on_learning).at_least(0).layer("actors/ps");
  t.add("momentum_rule", &jc::momentum_rule, "momentum-rule", "optimizer",
        "adjusted (stale pushes weigh less, momentum per visible step; docs/momentum.md) or plain")
    .on(on_learning).choices({"adjusted", "plain"}).layer("actors/ps");
  t.add("lr_schedule", &jc::lr_schedule, "lr-schedule", "optimizer",
        "the learning rate by samples taken in: constant, step (--lr-milestones) or cosine")
    .on(on_learning).choices({"constant", "step", "cosine"}).layer("actors/ps");
  t.add("lr_milestones", &jc::lr_milestones, "lr-milestones", "optimizer",
        "step: epochs at which the rate is multiplied by --lr-gamma (e.g. 30,60)")
    .on(on_learning).parsed().none("none").layer("actors/ps");
  t.add("lr_gamma", &jc::lr_gamma, "lr-gamma", "optimizer", "step: the factor at each milestone")
    .on(on_learning).in(0, 1, true, false).layer("actors/ps");
  t.add("warmup", &jc::warmup, "warmup", "optimizer",
        "rise linearly to the rate over a share of the run below 1 (0.05) or a number of samples (3000)")
    .on(on_learning).none("none").layer("actors/ps");
  t.add("lr_scaling", &jc::lr_scaling, "lr-scaling", "optimizer",
        "none, or linear: --lr times workers x batch / 256 (Goyal et al.)")
    .on(on_learning).choices({"none", "linear"}).layer("runtime/job");
  t.add("lr_epochs", &jc::lr_epochs, "lr-epochs", "optimizer",
        "cosine and a warmup share: the schedule's length in epochs")
    .on(on_learning).at_least(0).none("the run's --epochs").layer("actors/ps");
  t.add("lr_min", &jc::lr_min, "lr-min", "optimizer", "cosine: the rate it ends at").on(on_learning).layer("actors/ps");
  t.add("clip_norm", &jc::clip_norm, "clip-norm", "optimizer",
        "scale each pushed gradient to at most this global L2 norm")
    .on(on_learning).at_least(0).none("no clipping").layer("actors/worker");
  t.add("compress", &jc::compress, "compress", "optimizer",
        "compress each pushed gradient, with error feedback: none, fp16, bf16, topk:R, randomk:R (R: the share "
        "of values sent), onebit (docs/compression.md)")
    .on(on_learning).layer("compressors");
  t.add("sparse_sync", &jc::sparse_sync, "sparse-sync", "optimizer",
        "a sparse model's rows: same (stepped as the protocol steps the dense part) or async (each push's rows at "
        "once, Persia's hybrid; docs/sparse.md)")
    .on(on_learning).choices({"same", "async"}).layer("actors/ps");
  t.add("batch", &jc::batch, "batch", "job", "batch size per worker").short_name('b').at_least(1).layer("actors/worker");
  t.add("device", &jc::device, "device", "job",
        "where workers and the evaluator compute: cpu, cuda (the visible GPUs, round robin), cuda:N, or auto "
        "(cuda if there is one, else cpu; docs/gpu.md)")
    .on(on_learning).layer("runtime/job");
  t.add("precision", &jc::precision, "precision", "job",
        "fp32, or bf16: CUDA autocast for the forward and backward, the PS stays fp32")
    .on(on_learning).choices({"fp32", "bf16"}).layer("models");
  t.add("seed", &jc::seed, "seed", "job", "random seed: every random choice of the run follows it").layer("runtime/job");
  t.add("clock", &jc::clock, "clock", "job", "real or virtual (virtual: every run of a config is the same bytes)")
    .on(on_learning).parsed().submit("real (virtual time runs in one process: use train)").layer("runtime/job");
  t.add("straggler", &jc::straggler, "straggler", "job", "slow workers, e.g. '3:x4', '1:x2;3:x3', '0:x3@10-20', '2:+50ms'")
    .none("none").layer("actors/worker");
  t.add("iter_cost_ms", &jc::iter_cost_ms, "iter-cost", "job",
        "virtual clock: ms per iteration at --batch, or 'measure' (on this machine: not reproducible)")
    .parsed().in(0, 1e9).unit("ms").none("the model's reference cost")
    .simulate("ms per iteration at --batch").layer("actors/worker");
  t.add("ps_shards", &jc::ps_shards, "ps-shards", "job",
        "the parameter server as K shards, each a contiguous range of the model")
    .on(on_learning).in(0, 64).none("one, or with submit --ps-placement nodes one per node").layer("runtime/job");
  t.add("ps_replicas", &jc::ps_replicas, "ps-replicas", "job",
        "replicas of each PS shard, each taking every push: a lost primary's replica serves in its place, nothing redone")
    .on(on_learning).in(0, 2).layer("runtime/job");
  t.add("ps_rereplicate", &jc::ps_rereplicate, "ps-rereplicate", "job",
        "a lost copy of a PS shard is made again from its serving copy, the run holding still meanwhile, so each "
        "shard keeps its replicas")
    .on(on_learning).layer("actors/coordinator");
  t.add("ps_bandwidth", &jc::ps_bandwidth, "ps-bandwidth", "job",
        "link rate of each PS shard, shared by its transfers: 25MB/s, 1Gbit/s, 400e6 (bytes/s)")
    .parsed().at_least(0).unit("bytes/s").none("unlimited").layer("core/link_model");
  t.add("ps_memory", &jc::ps_memory, "ps-memory", "job",
        "bytes of sparse rows each PS shard may hold: 2GB, 512MiB, 1e9; a table without a capacity that would pass "
        "it is refused (docs/sparse.md)")
    .parsed().at_least(0).unit("bytes").none("no limit").layer("actors/ps");
  t.add("latency_ms", &jc::latency_ms, "latency", "job", "ms added to every transfer to or from the PS")
    .in(0, 1e9).unit("ms").layer("core/link_model");
  t.add("eval_every", &jc::eval_every, "eval-every", "job", "evaluate every this many epochs of samples")
    .on(on_learning).at_least(0).none("only at the end").layer("actors/evaluator");
  t.add("request_timeout_s", &jc::request_timeout_s, "request-timeout", "job",
        "real clock: a worker's push or pull unanswered this long ends it")
    .on(on_learning).in(0, 1e9, true).unit("seconds").layer("actors/worker");
  t.add("threads", &jc::threads, "threads", "job", "real clock: scheduler threads")
    .on(on_learning).at_least(0).none("min(workers, cores)").layer("runtime/job");
  t.add("checkpoint_every_s", &jc::checkpoint_every_s, "checkpoint-every", "output",
        "take a checkpoint every S seconds on the run clock")
    .on(on_train | on_submit).at_least(0).unit("seconds").none("only when asked").layer("actors/coordinator");
  t.add("checkpoint_dir", &jc::checkpoint_dir, "checkpoint-dir", "output", "where checkpoints go (checkpoint-<samples>.bin)")
    .on(on_train | on_submit).none("none")
    .submit("where the head writes checkpoints (a folder on the head's machine; SIGUSR1 to submit takes one at once)")
    .layer("runtime/job");
  t.add("checkpoint_keep", &jc::checkpoint_keep, "checkpoint-keep", "output", "keep the newest N checkpoints")
    .on(on_train | on_submit).at_least(0).none("keep all").layer("runtime/records");
  t.add("resume_dir", &jc::resume_dir, "resume", "output",
        "continue from the newest checkpoint in DIR, or from the checkpoint FILE (same options; limits may be raised)")
    .on(on_train | on_submit).none("start afresh").layer("runtime/job");
  t.add("out_dir", &jc::out_dir, "out", "output", "directory for trace.jsonl and summary.json")
    .short_name('o').none("write nothing").layer("runtime/records");
  t.add("progress", &jc::progress, "progress", "output", "print progress lines on stderr").layer("runtime/job");
  t.add("placement", &jc::placement, "placement", "cluster", "spread or pack workers over the nodes' slots")
    .on(on_submit).choices({"spread", "pack"}).layer("runtime/cluster");
  t.add("ps_placement", &jc::ps_placement, "ps-placement", "cluster",
        "where the PS shards run: head (with the coordinator) or nodes (one on each node hosting workers, unless "
        "--ps-shards says otherwise)")
    .on(on_submit).choices({"head", "nodes"}).layer("runtime/cluster");
  t.add("elastic", &jc::elastic, "elastic", "cluster",
        "start on the free slots if fewer than --workers; grow as nodes join, and bring a lost node's workers back "
        "on a new one")
    .on(on_submit).layer("runtime/cluster");
  // The internals (detail::job_internals): the CLI's testing options and simulate's.
  using ji = detail::job_internals;
  t.add("measure_iter_cost", &ji::measure_iter_cost, "", "job", "virtual clock: measure the iteration cost")
    .by("iter-cost").layer("runtime/job");
  t.add("wire_bytes", &ji::wire_bytes, "", "job", "bytes each push and pull is charged on the PS link")
    .no_option().at_least(0).none("its size; simulate charges the simulated model's").layer("core/link_model");
  t.add("fail_worker", &ji::fail_worker, "fail-worker", "job", "fault injection: worker W dies at its K-th push (W@K)")
    .on(on_learning).parsed().none("nobody").layer("actors/worker");
  t.add("fail_at_iter", &ji::fail_at_iter, "", "job", "fault injection: the push the worker dies at")
    .by("fail-worker").layer("actors/worker");
  t.add("fail_shard", &ji::fail_shard, "fail-shard", "job",
        "fault injection: PS shards' copies die with --fail-worker's worker, in order: S (shard S's primary) or S.C "
        "(its copy C), comma-separated (needs --ps-replicas)")
    .on(on_learning).none("none").layer("runtime/job");
  return std::move(t.fields);
}

}  // namespace

const std::vector<job_field>& job_fields() {
  static const std::vector<job_field> fields = make_fields();
  return fields;
}

}  // namespace syncpoint
