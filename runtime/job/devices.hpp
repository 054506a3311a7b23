// Where a job's workers compute: --device and --precision resolved against
// what a machine offers (docs/gpu.md). The rule for one process:
//
//   cpu      every worker on the CPU (the default)
//   auto     cuda if this LibTorch has CUDA and a device is visible, else cpu
//   cuda     the visible devices shared round robin: worker w on cuda:(w mod N)
//   cuda:N   every worker on device N
//
// The evaluator computes where worker 0 does.
//
//   device_offer here{torch_has_cuda(), cuda_device_count()};
//   auto devices = resolve_devices(cfg, here, cfg.workers);  // {"cuda:0", "cuda:1", "cuda:0", ...}
#pragma once

#include <syncpoint/job_config.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

/// What a machine (or a node's slots) offers workers.
struct device_offer {
  bool cuda = false;  ///< its LibTorch has CUDA
  int gpus = 0;       ///< CUDA devices visible to it
};

/// N of "cuda:N", -1 for "cuda" (any GPU), -2 for anything else ("cpu",
/// "auto", "cuda:01", "gpu"): the one reading of a device's name.
int cuda_index(const std::string& device);

/// The offer of this process: its LibTorch and the devices it sees.
device_offer this_machine();

/// Checks --device and --precision alone (their words, not the machine):
/// throws config_error naming the option.
void check_device_options(const job_config& cfg);

/// Each of `workers` workers' device under `offer`, by the rule above.
/// Throws config_error naming what the offer lacks: "this LibTorch was built
/// without CUDA", no device visible, a device index past the last, or bf16
/// without CUDA.
std::vector<std::string> resolve_devices(const job_config& cfg, const device_offer& offer, int workers);

/// A node's `--gpus` list ("0,1"): the GPU indices its workers may take,
/// checked against what `here` offers. "" is none. Throws config_error naming
/// the fault: no CUDA in this LibTorch, a word that is no index, an index
/// listed twice or not visible.
std::vector<int32_t> parse_gpu_list(const std::string& text, const device_offer& here);

/// The names of GPUs by index, joined by `sep`: {0, 1} gives "cuda:0, cuda:1"; {} gives "".
std::string gpu_names(const std::vector<int32_t>& gpus, const std::string& sep = ", ");

/// "cpu", or the distinct devices in order ("cuda:0, cuda:1"): what run.json
/// and status show.
std::string describe_devices(const std::vector<std::string>& devices);

}  // namespace syncpoint
