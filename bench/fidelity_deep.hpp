// The deeper-model column of docs/fidelity.md: each paper's claim measured
// twice under one training recipe (the ResNet's: SGD with momentum 0.9, lr
// 0.1, weight decay 5e-4, cosine with 5% warmup, 2 epochs over the first
// 20,000 training examples), once with the MLP and once with --model resnet,
// so that the model is the only difference. Says per claim whether it holds
// better, the same or worse on the deeper model.
//
// Each run is one cell, run in a child process (`bench_fidelity --deep-run
// ID`) by the sweep's pool (runtime/studies/sweep.hpp), up to `jobs` at once, into
// `cache`/cells/ID: a cell whose folder is there and was made by the same job
// is not run again, so a stopped run resumes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint::bench {

struct deep_options {
  std::vector<uint64_t> seeds{1, 2, 3};
  int jobs = 1;        // cells at once, each a process
  std::string cache;   // one folder per finished cell
  std::string self;    // this program, to start children with
};

/// Runs the missing cells and returns the section's markdown. Throws
/// std::runtime_error naming the cells that failed.
std::string deep_section(const deep_options& o);

/// What a child does: runs the cell `id` into `out_dir`. Returns 0 on success.
int deep_run_cell(const std::string& id, const std::string& out_dir, const deep_options& o);

}  // namespace syncpoint::bench
