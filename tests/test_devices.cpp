// --device and --precision (runtime/job/devices.hpp): their words, the rule
// that places workers on what a machine offers, the refusals of what it does
// not offer, and that a CPU run's bytes do not depend on how it asked for the
// CPU. What needs a GPU is in tests/gpu/ (CTest label gpu).
#include "runtime/cluster/jobs/placement.hpp"
#include "runtime/job/devices.hpp"
#include "runtime/job/job_plan.hpp"
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>

#include "tests/cli_run.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

using namespace syncpoint;

namespace {

job_config asking(const std::string& device, const std::string& precision = "fp32") {
  job_config cfg;
  cfg.device = device;
  cfg.precision = precision;
  return cfg;
}

using devices = std::vector<std::string>;

}  // namespace

TEST_CASE("devices: one reading of a device's name, for the plan, the head and the placement") {
  CHECK(cuda_index("cuda") == -1);
  CHECK(cuda_index("cuda:0") == 0);
  CHECK(cuda_index("cuda:7") == 7);
  CHECK(cuda_index("cuda:12") == 12);
  for (auto word : {"cpu", "auto", "gpu", "cuda:", "cuda:01", "cuda:x", "cuda:1x", "cuda:123", "cudax", "CUDA"}) {
    CAPTURE(word);
    CHECK(cuda_index(word) == -2);
  }
  // The placement reads "cuda:N" as that GPU and "cuda" as any of a node's.
  auto any = cluster::place_on_gpus({2, 2}, {{}, {0, 1}}, 2, cluster::placement::spread, "cuda");
  REQUIRE(any);
  CHECK(any->devices == devices{"cuda:0", "cuda:1"});
  auto one = cluster::place_on_gpus({2, 2}, {{}, {0, 1}}, 2, cluster::placement::spread, "cuda:1");
  REQUIRE(one);
  CHECK(one->devices == devices{"cuda:1", "cuda:1"});
}

TEST_CASE("devices: the rule places workers on what is offered, round robin over the GPUs for cuda") {
  device_offer none{false, 0}, two{true, 2}, cuda_no_gpu{true, 0};
  CHECK(resolve_devices(asking("cpu"), two, 3) == devices(3, "cpu"));
  CHECK(resolve_devices(asking("auto"), none, 2) == devices(2, "cpu"));
  CHECK(resolve_devices(asking("auto"), cuda_no_gpu, 2) == devices(2, "cpu"));
  CHECK(resolve_devices(asking("auto"), two, 3) == devices{"cuda:0", "cuda:1", "cuda:0"});
  CHECK(resolve_devices(asking("cuda"), two, 5) == devices{"cuda:0", "cuda:1", "cuda:0", "cuda:1", "cuda:0"});
  CHECK(resolve_devices(asking("cuda:1"), two, 3) == devices(3, "cuda:1"));
  CHECK(resolve_devices(asking("cuda", "bf16"), two, 1) == devices{"cuda:0"});
  CHECK(describe_devices({"cuda:0", "cuda:1", "cuda:0"}) == "cuda:0, cuda:1");
  CHECK(describe_devices(devices(4, "cpu")) == "cpu");
}

TEST_CASE("devices: what the machine cannot give is refused, naming what is missing") {
  device_offer none{false, 0}, two{true, 2}, cuda_no_gpu{true, 0};
  CHECK_THROWS_WITH_AS(resolve_devices(asking("cuda"), none, 2),
                       ("--device cuda: this LibTorch was built without CUDA (LibTorch " + torch_version() +
                        "; build with a CUDA one: docs/gpu.md)").c_str(),
                       config_error);
  CHECK_THROWS_WITH_AS(resolve_devices(asking("cuda:0"), cuda_no_gpu, 2),
                       "--device cuda:0: no CUDA device is visible to this process", config_error);
  CHECK_THROWS_WITH_AS(resolve_devices(asking("cuda:2"), two, 2),
                       "--device cuda:2: this machine has 2 CUDA devices (cuda:0, cuda:1)", config_error);
  CHECK_THROWS_WITH_AS(resolve_devices(asking("cpu", "bf16"), two, 2),
                       "--precision bf16 needs a CUDA device: autocast runs on CUDA, and --device cpu (on the CPU, "
                       "use fp32)",
                       config_error);
  CHECK_THROWS_WITH_AS(resolve_devices(asking("auto", "bf16"), none, 2),
                       "--precision bf16 needs a CUDA device: autocast runs on CUDA, and --device auto found none (on "
                       "the CPU, use fp32)",
                       config_error);
  for (auto bad : {"gpu", "CUDA", "cuda:", "cuda:x", "cuda:01", "cuda:-1", "cuda:123", "cpu:0", ""})
    CHECK_THROWS_WITH_AS(check_device_options(asking(bad)),
                         ("--device must be cpu, cuda, cuda:N or auto, not '" + std::string(bad) + "'").c_str(),
                         config_error);
  CHECK_THROWS_WITH_AS(check_device_options(asking("cpu", "fp16")), "--precision must be fp32 or bf16, not 'fp16'",
                       config_error);
}

TEST_CASE("devices: the plan resolves --device once, and each worker's and the evaluator's model input carry it") {
  auto cfg = asking("cuda", "bf16");
  cfg.workers = 3;
  cfg.epochs = 1;
  plan_context ctx{6000, 1000};
  ctx.offer = {true, 2};
  auto plan = make_plan(cfg, ctx);
  CHECK(plan.devices == devices{"cuda:0", "cuda:1", "cuda:0"});
  CHECK(plan.eval_device == "cuda:0");
  CHECK(worker_input(plan, 1).device == "cuda:1");
  CHECK(worker_input(plan, 1).precision == "bf16");
  CHECK(evaluator_input(plan).device == "cuda:0");
  CHECK(plan.input.device == "cpu");  // the PS's model: initial weights are drawn on the host
  auto cpu = make_plan(asking("cpu"), ctx);
  CHECK(worker_input(cpu, 0).device == "cpu");
  CHECK(worker_input(cpu, 0).precision == "fp32");
  CHECK_THROWS_AS(make_plan(cfg, plan_context{6000, 1000}), config_error);  // the default offer: no CUDA
}

TEST_CASE("devices: a model placed where it cannot compute says why") {
  model_input in;
  in.device = "cuda:0";
  if (!torch_has_cuda())
    CHECK_THROWS_WITH_AS(make_model("mlp", in), "this LibTorch was built without CUDA (device cuda:0)",
                         std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_model("softmax", in), "this model computes on the CPU in fp32 only (asked for cuda:0 in fp32)",
                       std::invalid_argument);
  in.device = "tpu";
  CHECK_THROWS_WITH_AS(make_model("mlp", in), "device 'tpu' is not one of cpu, cuda, cuda:N", std::invalid_argument);
  in.device = "cpu";
  in.precision = "bf16";
  CHECK_THROWS_WITH_AS(make_model("mlp", in),
                       "--precision bf16 needs a CUDA device (autocast runs on CUDA); on the CPU use fp32",
                       std::invalid_argument);
}

TEST_CASE("devices: the command refuses a device or precision it cannot give with exit 2") {
  using testing::check_refused;
  check_refused("train --device gpu" + testing::fast_job, "--device must be cpu, cuda, cuda:N or auto, not 'gpu'");
  check_refused("train --precision fp16" + testing::fast_job, "--precision must be fp32 or bf16, not 'fp16'");
  check_refused("train --precision bf16" + testing::fast_job, "--precision bf16 needs a CUDA device");
  check_refused("compare --device gpu --protocols bsp" + testing::fast_job, "--device must be cpu, cuda, cuda:N or auto");
  if (torch_has_cuda()) {
    MESSAGE("this LibTorch has CUDA: the refusal of --device cuda without it is not checked here");
    return;
  }
  check_refused("train --device cuda" + testing::fast_job, "this LibTorch was built without CUDA");
  check_refused("train --device cuda:1" + testing::fast_job, "this LibTorch was built without CUDA");
}

// --device cpu, and auto on a machine without CUDA, are today's default to the byte.
TEST_CASE("devices: --device cpu and auto (without a GPU) train the bytes the default trains") {
  if (cuda_device_count() > 0) {
    MESSAGE("a CUDA device is visible: --device auto takes it, so only cpu is compared");
  }
  auto cfg = testing::small_job("ssp");
  cfg.model = "cnn";
  cfg.train_limit = 800;
  cfg.test_limit = 200;
  cfg.epochs = 1;
  auto reference = train(cfg);
  for (auto device : {"cpu", "auto"}) {
    if (std::string(device) == "auto" && cuda_device_count() > 0)
      continue;
    CAPTURE(device);
    cfg.device = device;
    auto r = train(cfg);
    CHECK(r.final_model.values == reference.final_model.values);
    CHECK(r.summary.final_accuracy == reference.summary.final_accuracy);
    CHECK(r.trace.size() == reference.trace.size());
  }
}

// A checkpoint holds host floats and no device: one written by a run on any
// device resumes on any other. Here one from a --device cpu run resumes
// under --device auto, as one from a CUDA run resumes on a CPU.
TEST_CASE("devices: a checkpoint names no device, and resumes under another --device") {
  testing::temp_folder dir("syncpoint_devices_checkpoint");
  auto cfg = testing::small_job("bsp");
  cfg.model = "mlp";
  cfg.device = "cpu";
  cfg.checkpoint_every_s = train(cfg).summary.run_time_s / 4;
  cfg.checkpoint_keep = 0;
  cfg.checkpoint_dir = (dir.path / "all").string();
  auto whole = train(cfg);
  auto files = testing::checkpoint_files(dir.path / "all");
  REQUIRE(files.size() >= 2);
  std::ifstream in(files[files.size() / 2], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes.find("device") == std::string::npos);
  auto again = testing::resuming_from(cfg, files[files.size() / 2], dir.path / "from");
  again.device = cuda_device_count() > 0 ? "cpu" : "auto";
  auto resumed = train(again);
  CHECK(resumed.final_model.values == whole.final_model.values);
}

TEST_CASE("devices: a cluster places GPU workers only on nodes that offer GPUs, each on one of its node's") {
  using cluster::placement;
  std::vector<std::vector<int32_t>> gpus{{}, {0, 1}, {3}};
  auto g = cluster::place_on_gpus({4, 4, 4}, gpus, 3, placement::spread, "cuda");
  REQUIRE(g);
  CHECK(g->nodes == std::vector<size_t>{1, 2, 1});
  CHECK(g->devices == devices{"cuda:0", "cuda:3", "cuda:1"});
  auto packed = cluster::place_on_gpus({4, 4, 4}, gpus, 3, placement::pack, "cuda");
  REQUIRE(packed);
  CHECK(packed->nodes == std::vector<size_t>{1, 1, 1});
  CHECK(packed->devices == devices{"cuda:0", "cuda:1", "cuda:0"});
  auto three = cluster::place_on_gpus({4, 4, 4}, gpus, 2, placement::spread, "cuda:3");  // only node 2 has GPU 3
  REQUIRE(three);
  CHECK(three->nodes == std::vector<size_t>{2, 2});
  CHECK(three->devices == devices{"cuda:3", "cuda:3"});
  CHECK_FALSE(cluster::place_on_gpus({4, 4, 1}, gpus, 2, placement::spread, "cuda:3"));  // one slot there
  CHECK_FALSE(cluster::place_on_gpus({8, 1, 1}, gpus, 3, placement::spread, "cuda"));    // node 0's slots are CPU's
  CHECK_FALSE(cluster::place_on_gpus({4}, {{}}, 1, placement::spread, "cuda"));
}

TEST_CASE("devices: a node's --gpus list is checked against what its machine has") {
  device_offer none{false, 0}, two{true, 2};
  CHECK(parse_gpu_list("", none).empty());
  CHECK(parse_gpu_list("0,1", two) == std::vector<int32_t>{0, 1});
  CHECK(parse_gpu_list("1", two) == std::vector<int32_t>{1});
  CHECK_THROWS_WITH_AS(parse_gpu_list("0", none),
                       ("--gpus: this LibTorch was built without CUDA (LibTorch " + torch_version() + ")").c_str(),
                       config_error);
  CHECK_THROWS_WITH_AS(parse_gpu_list("0,0", two), "--gpus: 0 is listed twice", config_error);
  CHECK_THROWS_WITH_AS(parse_gpu_list("2", two), "--gpus: cuda:2 is not visible here (cuda:0, cuda:1)", config_error);
  CHECK_THROWS_WITH_AS(parse_gpu_list("0,", two), "--gpus: '' is not a GPU index (a list like 0,1)", config_error);
  CHECK_THROWS_WITH_AS(parse_gpu_list("a", two), "--gpus: 'a' is not a GPU index (a list like 0,1)", config_error);
  CHECK_THROWS_WITH_AS(parse_gpu_list("0", device_offer{true, 0}), "--gpus: cuda:0 is not visible here (no CUDA device)",
                       config_error);
}
