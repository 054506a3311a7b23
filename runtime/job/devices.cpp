#include "runtime/job/devices.hpp"

#include <syncpoint/model.hpp>

#include <algorithm>
#include <numeric>

namespace syncpoint {

std::string gpu_names(const std::vector<int32_t>& gpus, const std::string& sep) {
  std::string out;
  for (auto g : gpus)
    out += (out.empty() ? "cuda:" : sep + "cuda:") + std::to_string(g);
  return out;
}

int cuda_index(const std::string& device) {
  if (device == "cuda")
    return -1;
  if (device.rfind("cuda:", 0) != 0 || device.size() == 5 || device.size() > 7)
    return -2;
  int n = 0;
  for (auto c : device.substr(5)) {
    if (c < '0' || c > '9')
      return -2;
    n = n * 10 + (c - '0');
  }
  return device.size() > 6 && device[5] == '0' ? -2 : n;  // no leading zero: "cuda:01" is not a name
}

namespace {

std::string listed(int gpus) {
  std::vector<int32_t> all(static_cast<size_t>(std::max(gpus, 0)));
  std::iota(all.begin(), all.end(), 0);
  return gpu_names(all);
}

}  // namespace

device_offer this_machine() {
  return {torch_has_cuda(), cuda_device_count()};
}

void check_device_options(const job_config& cfg) {
  if (cfg.device != "cpu" && cfg.device != "auto" && cuda_index(cfg.device) == -2)
    throw config_error("--device must be cpu, cuda, cuda:N or auto, not '" + cfg.device + "'");
  if (cfg.precision != "fp32" && cfg.precision != "bf16")
    throw config_error("--precision must be fp32 or bf16, not '" + cfg.precision + "'");
}

std::vector<std::string> resolve_devices(const job_config& cfg, const device_offer& offer, int workers) {
  check_device_options(cfg);
  auto n = static_cast<size_t>(std::max(0, workers));
  bool gpu = cfg.device != "cpu" && !(cfg.device == "auto" && (!offer.cuda || offer.gpus == 0));
  if (!gpu) {
    if (cfg.precision == "bf16")
      throw config_error("--precision bf16 needs a CUDA device: autocast runs on CUDA, and --device " + cfg.device +
                         (cfg.device == "cpu" ? "" : " found none") + " (on the CPU, use fp32)");
    return std::vector<std::string>(n, "cpu");
  }
  if (!offer.cuda)
    throw config_error("--device " + cfg.device + ": this LibTorch was built without CUDA (LibTorch " +
                       torch_version() + "; build with a CUDA one: docs/gpu.md)");
  if (offer.gpus == 0)
    throw config_error("--device " + cfg.device + ": no CUDA device is visible to this process");
  int index = cfg.device == "auto" ? -1 : cuda_index(cfg.device);
  if (index >= offer.gpus)
    throw config_error("--device " + cfg.device + ": this machine has " + std::to_string(offer.gpus) +
                       " CUDA device" + (offer.gpus == 1 ? "" : "s") + " (" + listed(offer.gpus) + ")");
  std::vector<std::string> out;
  for (size_t w = 0; w < n; ++w)
    out.push_back("cuda:" + std::to_string(index >= 0 ? index : static_cast<int>(w % static_cast<size_t>(offer.gpus))));
  return out;
}

std::vector<int32_t> parse_gpu_list(const std::string& text, const device_offer& here) {
  std::vector<int32_t> out;
  if (text.empty())
    return out;
  if (!here.cuda)
    throw config_error("--gpus: this LibTorch was built without CUDA (LibTorch " + torch_version() + ")");
  size_t start = 0;
  while (start <= text.size()) {
    auto end = std::min(text.find(',', start), text.size());
    auto word = text.substr(start, end - start);
    int index = cuda_index("cuda:" + word);
    if (word.empty() || index < 0)
      throw config_error("--gpus: '" + word + "' is not a GPU index (a list like 0,1)");
    if (std::find(out.begin(), out.end(), index) != out.end())
      throw config_error("--gpus: " + word + " is listed twice");
    if (index >= here.gpus)
      throw config_error("--gpus: cuda:" + word + " is not visible here (" +
                         (here.gpus == 0 ? std::string("no CUDA device") : listed(here.gpus)) + ")");
    out.push_back(index);
    start = end + 1;
  }
  return out;
}

std::string describe_devices(const std::vector<std::string>& devices) {
  std::vector<std::string> seen;
  for (auto& d : devices)
    if (std::find(seen.begin(), seen.end(), d) == seen.end())
      seen.push_back(d);
  std::string out;
  for (auto& d : seen)
    out += (out.empty() ? "" : ", ") + d;
  return out.empty() ? "cpu" : out;
}

}  // namespace syncpoint
