// What `syncpoint sweep` is asked to do, from its command line and an
// optional SPEC.toml:
//
//   syncpoint sweep --grid protocol=bsp,elastic-bsp --grid straggler=3:x1.5,3:x2 --seeds 1,2,3 --epochs 2
//   syncpoint sweep spec.toml --jobs 2
//   syncpoint sweep spec.toml --head 10.0.0.1:4242 --token-file cluster.token   (cells on the nodes' free slots)
//
// SPEC.toml is read by runtime/studies/sweep_spec.hpp, which shows its keys.
//
// A grid value that holds a comma is quoted: --grid 'lr-milestones="1,2","2,3"'.
#pragma once

#include "runtime/cluster/net/tls_files.hpp"
#include "runtime/studies/sweep.hpp"
#include "runtime/studies/sweep_spec.hpp"

#include <string>
#include <vector>

namespace syncpoint::cli {

struct sweep_request {
  sweep_grid grid;     // the seeds are its last axis, "seed"
  std::string out = "sweep";
  int jobs = 0;        // 0: one per core
  bool help = false;
  // On a cluster (--head HOST:P): its token and TLS files, as for submit. Never a cell's options.
  std::string head, token, token_file;
  bool tls = false;
  cluster::tls_files tls_paths;
};

/// Parses `syncpoint sweep`'s arguments (and the SPEC.toml they name).
/// Throws config_error naming the bad argument, file, line or axis.
sweep_request parse_sweep_args(const std::vector<std::string>& args);


extern const char* sweep_help;

}  // namespace syncpoint::cli
