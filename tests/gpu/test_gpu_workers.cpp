// What needs a CUDA device (CTest label gpu). Each test says "skipped: no
// CUDA device" and passes when torch::cuda::is_available() is false, which
// CTest reports as skipped (SKIP_REGULAR_EXPRESSION). On a machine with a GPU
// they compare a GPU worker with the CPU one: its gradient, a whole job's
// accuracy, and bf16 against fp32.
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>

#include "tests/small_job.hpp"

#include <torch/cuda.h>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

using namespace syncpoint;

namespace {

bool no_gpu() {
  if (torch::cuda::is_available())
    return false;
  std::printf("skipped: no CUDA device (torch::cuda::is_available() is false)\n");
  return true;
}

double norm(const std::vector<float>& v) {
  double s = 0;
  for (auto x : v)
    s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

double distance(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
  return std::sqrt(s);
}

}  // namespace

// cuDNN may compute convolutions in TF32 on Ampere and later (PyTorch's
// default for them), so the tolerance is relative and at TF32's precision.
TEST_CASE("gpu: a GPU worker's gradient equals the CPU's to float tolerance") {
  if (no_gpu())
    return;
  auto data = make_synthetic(64, 1, 3);
  auto b = data.train.view(0, 64);
  for (auto name : {"mlp", "cnn", "resnet", "resnet18"}) {
    CAPTURE(name);
    auto in = input_of(data.train);
    auto cpu = make_model(name, in);
    in.device = "cuda:0";
    auto gpu = make_model(name, in);
    auto w = cpu->initial_weights(7);
    CHECK(gpu->initial_weights(7) == w);  // drawn on the host whatever the device
    std::vector<float> g_cpu(cpu->size()), g_gpu(gpu->size());
    cpu->load(w.data());
    gpu->load(w.data());
    float l_cpu = cpu->gradient(b, g_cpu.data());
    float l_gpu = gpu->gradient(b, g_gpu.data());
    CHECK(l_gpu == doctest::Approx(l_cpu).epsilon(1e-3));
    CHECK(distance(g_gpu, g_cpu) <= 5e-3 * norm(g_cpu));
    CHECK(gpu->current_weights() == w);
    std::vector<int64_t> p_cpu(64), p_gpu(64);
    cpu->predict(b, p_cpu.data());
    gpu->predict(b, p_gpu.data());
    int same = 0;
    for (size_t i = 0; i < 64; ++i)
      same += p_cpu[i] == p_gpu[i];
    CHECK(same >= 62);
  }
}

TEST_CASE("gpu: a 2-worker bsp run on one GPU reaches the CPU run's accuracy") {
  if (no_gpu())
    return;
  auto cfg = testing::small_job("bsp");
  cfg.model = "cnn";
  cfg.workers = 2;
  auto on_cpu = train(cfg).summary.final_accuracy;
  cfg.device = "cuda:0";
  auto on_gpu = train(cfg).summary.final_accuracy;
  std::printf("bsp, 2 workers, cnn: accuracy %.4f on the CPU, %.4f on cuda:0\n", on_cpu, on_gpu);
  CHECK(on_gpu >= on_cpu - 0.01);
}

TEST_CASE("gpu: bf16 reaches within 0.5 points of fp32 on the MLP") {
  if (no_gpu())
    return;
  auto cfg = testing::small_job("bsp");
  cfg.model = "mlp";
  cfg.workers = 2;
  cfg.device = "cuda";
  auto fp32 = train(cfg).summary.final_accuracy;
  cfg.precision = "bf16";
  auto bf16 = train(cfg).summary.final_accuracy;
  std::printf("bsp, 2 workers, mlp on cuda: accuracy %.4f in fp32, %.4f in bf16\n", fp32, bf16);
  CHECK(bf16 >= fp32 - 0.005);
}
