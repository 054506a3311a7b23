// The job most integration tests start from: 4 workers, Eigen softmax on
// 4000 synthetic examples, 2 epochs, 10 ms per iteration on the virtual clock.
#pragma once

#include <syncpoint/train.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace syncpoint::testing {

// A local-update protocol (docs/protocols.md, "Local updates") at this job's
// size: a push every 4 plain SGD steps at the others' rate, the model's one
// tensor a fragment, and the protocol's own outer step.
inline void fit_local_updates(job_config& cfg) {
  auto declares = [&](const std::string& name) {
    for (auto& o : protocol_option_specs(cfg.protocol))
      if (o.name == name)
        return true;
    return false;
  };
  if (!declares("local-steps"))
    return;
  cfg.protocol_opts.set("local-steps", 4);
  if (declares("inner-optimizer"))
    cfg.protocol_opts.set("inner-optimizer", "sgd");
  if (declares("inner-lr"))
    cfg.protocol_opts.set("inner-lr", 0.1);
  if (declares("fragments"))
    cfg.protocol_opts.set("fragments", 1);
  apply_job_defaults(cfg);
}

/// Every protocol built in (or an example's), not those the tests register ("test-...").
inline std::vector<std::string> builtin_protocols() {
  std::vector<std::string> out;
  for (auto& entry : protocol_catalog())
    if (entry.first.rfind("test-", 0) != 0)
      out.push_back(entry.first);
  return out;
}

inline job_config small_job(const std::string& protocol) {
  job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 4;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 4000;
  cfg.test_limit = 500;
  cfg.epochs = 2;
  cfg.iter_cost_ms = 10;
  cfg.lr = 0.1;
  cfg.progress = false;
  fit_local_updates(cfg);
  return cfg;
}

/// The checkpoint files in `dir`, oldest first (their names sort by time).
inline std::vector<std::filesystem::path> checkpoint_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (auto& e : std::filesystem::directory_iterator(dir))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// `cfg` resuming from the checkpoint `file` alone, copied into `dir` (which
/// then also takes the resumed run's checkpoints).
inline job_config resuming_from(job_config cfg, const std::filesystem::path& file, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(file, dir / file.filename());
  cfg.checkpoint_dir = dir.string();
  cfg.resume_dir = dir.string();
  return cfg;
}

}  // namespace syncpoint::testing
