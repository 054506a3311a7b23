// train(), validate() and a run's files; the job's steps are in job_run.cpp.
#include <syncpoint/job.hpp>
#include <syncpoint/compressor.hpp>
#include <syncpoint/worker_loop.hpp>

#include "core/job_schema.hpp"
#include "core/straggler.hpp"
#include "runtime/job/job_parts.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

namespace syncpoint {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok)
    throw config_error(what);
}

}  // namespace

std::vector<std::pair<int, int>> fail_copies(const job_config& cfg) {
  std::vector<std::pair<int, int>> out;
  if (cfg.internals.fail_shard.empty())
    return out;
  auto shards = std::max(1, cfg.ps_shards);
  auto bad = [&](const std::string& why) {
    return config_error("--fail-shard '" + cfg.internals.fail_shard + "': " + why);
  };
  if (cfg.internals.fail_worker < 0 || cfg.ps_replicas < 1)
    throw bad("it needs --fail-worker W@K (the shards' copies die with that worker) and --ps-replicas >= 1");
  size_t at = 0;
  while (at <= cfg.internals.fail_shard.size()) {
    auto end = std::min(cfg.internals.fail_shard.find(',', at), cfg.internals.fail_shard.size());
    auto item = cfg.internals.fail_shard.substr(at, end - at);
    auto dot = item.find('.');
    auto number = [&](const std::string& text, int below, const char* what) {
      char* e = nullptr;
      long v = text.empty() ? -1 : std::strtol(text.c_str(), &e, 10);
      if (text.empty() || *e != '\0' || v < 0 || v >= below)
        throw bad(std::string(what) + " '" + text + "' is not in 0.." + std::to_string(below - 1) +
                  " (expected S or S.C, comma-separated: shard S's primary, or copy C of shard S)");
      return static_cast<int>(v);
    };
    int k = number(item.substr(0, dot), shards, "the shard");
    int c = dot == std::string::npos ? -1 : number(item.substr(dot + 1), cfg.ps_replicas + 1, "the copy");
    out.emplace_back(k, c);
    at = end + 1;
  }
  return out;
}

// An output directory the run could not write is found before the run, not after; checked
// without creating it, so that bad input writes nothing (write_run creates it at the end).
static void check_out_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty())
    return;
  std::error_code ec;
  auto path = fs::absolute(dir, ec);
  auto cannot = [&](const std::string& why) {
    throw config_error("cannot create output directory '" + dir + "': " + why);
  };
  if (ec)
    cannot(ec.message());
  for (auto at = path; !at.empty(); at = at.parent_path()) {
    auto st = fs::status(at, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st))
        cannot(at.string() + " is not a directory");
      if (access(at.c_str(), W_OK | X_OK) != 0)
        cannot(at.string() + " is not writable");
      return;
    }
    if (at == at.parent_path())
      break;
  }
  cannot("no part of the path exists");
}

void validate(const job_config& cfg) {
  try {
    make_protocol(cfg.protocol, protocol_options_for(cfg));
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  auto names = model_names();
  if (std::find(names.begin(), names.end(), cfg.model.substr(0, cfg.model.find(':'))) == names.end()) {
    std::string known;
    for (auto& n : names)
      known += (known.empty() ? "" : ", ") + n;
    throw config_error("unknown model '" + cfg.model + "' (valid: " + known + ")");
  }
  try {
    find_loop(cfg.loop);
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  check_field_ranges(cfg);  // every field's range and choices (core/job_schema.hpp)
  optimizer_kind optimizer{};
  try {
    optimizer = parse_optimizer(cfg.optimizer);
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  require(optimizer != optimizer_kind::nesterov || cfg.momentum > 0, "--optimizer nesterov needs --momentum > 0");
  try {
    make_compressor(cfg.compress);
  } catch (const std::invalid_argument& e) {
    throw config_error(std::string("--compress: ") + e.what());
  }
  require(!(cfg.target_accuracy > 0 && cfg.eval_every == 0 && cfg.epochs == 0 && cfg.max_time_s == 0),
          "--target-accuracy as the only limit needs --eval-every > 0 (nothing would be evaluated "
          "before the end)");
  require(cfg.checkpoint_every_s == 0 || !cfg.checkpoint_dir.empty(),
          "--checkpoint-every needs --checkpoint-dir DIR");
  require(cfg.internals.fail_worker < cfg.workers && (cfg.internals.fail_worker < 0 || cfg.internals.fail_at_iter >= 1),
          "--fail-worker W@K needs 0 <= W < workers and K >= 1");
  require(!cfg.ps_rereplicate || cfg.ps_replicas >= 1, "--ps-rereplicate needs --ps-replicas 1 or 2");
  fail_copies(cfg);  // throws naming what is wrong
  check_device_options(cfg);
  try {
    straggler_plan::parse(cfg.straggler).check_workers(cfg.workers);
  } catch (const straggler_error& e) {
    throw config_error(std::string("--straggler: ") + e.what());
  }
  check_out_dir(cfg.out_dir);
}

run_result train(const job_config& cfg, progress_fn on_progress) {
  caf::actor_system_config sys_cfg;
  configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  job_options opts;
  opts.on_progress = std::move(on_progress);
  auto j = job::spawn(sys, cfg, std::move(opts));
  j.start();
  return j.wait();
}

}  // namespace syncpoint

namespace syncpoint {

void apply_job_defaults(job_config& cfg, const std::function<bool(const std::string& name)>& given) {
  auto number = [](const std::string& name, const std::string& text) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
      throw std::logic_error("a protocol's job default --" + name + "=" + text + " is not a number");
    return v;
  };
  for (auto& [name, value] : protocol_job_defaults(cfg.protocol)) {
    if (given && given(name))
      continue;
    if (name == "optimizer")
      cfg.optimizer = value;
    else if (name == "lr")
      cfg.lr = number(name, value);
    else if (name == "momentum")
      cfg.momentum = number(name, value);
    else if (name == "weight-decay")
      cfg.weight_decay = number(name, value);
    else if (name == "momentum-rule")
      cfg.momentum_rule = value;
    else
      throw std::logic_error("protocol '" + cfg.protocol + "' has a job default for --" + name +
                             ", which is not one a protocol may set");
  }
}

}  // namespace syncpoint
