// A worker on a device against a plain LibTorch loop on the same device, and
// workers sharing one GPU, on CIFAR-shaped images (3x32x32, 10 classes).
//
//   build/bench_devices [--model resnet] [--batch 64] [--samples 1024] [--device cpu] [--repeat 3]
//
// Prints samples/s of the plain loop (models/torch_nets.hpp's network,
// torch::optim::SGD) and of syncpoint bsp with 1 worker, as a ratio to the
// plain loop and as the framework's overhead in percent (target on a GPU,
// resnet18 at batch 128: at most 10%). On a CUDA device it adds bsp with 2 and
// 4 workers sharing it, against 1 worker, and what a step's copies of the
// model cost (device to host for the gradient, host to device for the weights).
// Each figure is the median of K interleaved runs; a ratio is the median of
// the per-round ratios, so a slow spell of the machine divides out.
#include "bench/args.hpp"
#include "bench/plain_loop.hpp"
#include <syncpoint/data_registry.hpp>
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace syncpoint;

namespace {

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

// Gaussian images of a class mean each: the content only has to be an image's.
dataset cifar_shaped(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise;
  std::uniform_int_distribution<int64_t> pick(0, 9);
  return dataset_from(n, {3, 32, 32}, 10, [&](int64_t, float* x) {
    auto c = pick(rng);
    for (int64_t k = 0; k < 3 * 32 * 32; ++k)
      x[k] = 0.1f * static_cast<float>(c) + noise(rng);
    return c;
  });
}

struct options {
  std::string model = "resnet", device = "cpu";
  int batch = 64, repeat = 3;
  int64_t samples = 1024;
};

// One configuration, its samples/s each round.
struct row {
  std::string name;
  std::function<double()> run;
  std::vector<double> sps;
};

// syncpoint bsp with `workers` on the device; worker 0's summary kept in `last`.
std::function<double()> syncpoint_run(const options& o, int64_t train_size, int workers,
                                      std::map<int, worker_summary>& last) {
  return [=, &last] {
    job_config cfg;
    cfg.protocol = "bsp";
    cfg.workers = workers;
    cfg.model = o.model;
    cfg.dataset = "bench-cifar-shaped";
    cfg.train_limit = train_size;
    cfg.test_limit = 100;
    cfg.batch = o.batch;
    cfg.epochs = static_cast<double>(o.samples) / static_cast<double>(train_size);
    cfg.eval_every = 0;
    cfg.device = o.device;
    cfg.threads = o.device != "cpu" ? 0 : 2;
    cfg.clock = clock_kind::real;
    cfg.progress = false;
    auto s = train(cfg).summary;
    last[workers] = s.per_worker.at(0);
    return s.samples_per_s;
  };
}

// The table (each row against the plain loop and, sharing a GPU, against 1 worker), the overhead,
// worker 0's step, and on a GPU what a step's copies cost.
void print(const options& o, const std::vector<row>& rows, const std::map<int, worker_summary>& last,
           int64_t values) {
  auto paired = [&](size_t a, size_t b) {
    std::vector<double> ratios;
    for (int r = 0; r < o.repeat; ++r)
      ratios.push_back(rows[a].sps[static_cast<size_t>(r)] / rows[b].sps[static_cast<size_t>(r)]);
    return median(ratios);
  };
  std::printf("\n%-34s %12s %10s %10s\n", "configuration", "samples/s", "vs plain", "vs 1 wkr");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::printf("%-34s %12.1f %9.3fx", rows[i].name.c_str(), median(rows[i].sps), paired(i, 0));
    if (i >= 2)
      std::printf(" %9.3fx", paired(i, 1));
    std::printf("\n");
  }
  std::printf("\nframework overhead, 1 worker (bsp) vs plain loop on %s: %.2f%% (target on a GPU, resnet18 at batch "
              "128: at most 10%%)\n",
              o.device.c_str(), (1 / paired(1, 0) - 1) * 100);
  std::printf("worker 0's step, last run: ");
  for (auto& [workers, w] : last) {
    auto ms = [&](double s) { return 1000 * s / static_cast<double>(std::max<uint64_t>(1, w.iterations)); };
    std::printf("%s%d worker%s: gradient %.2f ms (its copies included), push and pull %.2f ms, waiting %.2f ms",
                workers == last.begin()->first ? "" : "; ", workers, workers == 1 ? "" : "s", ms(w.compute_s),
                ms(w.comm_s), ms(w.wait_s));
  }
  std::printf("\n");
  if (o.device != "cpu") {
    auto t = bench::time_copies(values, o.device, 20);
    std::printf("a step's copies of %lld floats: gradient to host %.0f us pinned (%.0f pageable), weights to the "
                "device %.0f us pinned (%.0f pageable)\n",
                static_cast<long long>(values), t.to_host_pinned, t.to_host_pageable, t.to_device_pinned,
                t.to_device_pageable);
  }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"a worker on a device against a plain LibTorch loop, CIFAR-shaped images", "bench_devices"};
  app.add_option("--model", o.model, "built-in network: mlp, cnn, resnet, resnet18")->capture_default_str();
  app.add_option("--batch", o.batch, "batch size per worker")->capture_default_str()->check(bench::positive());
  app.add_option("--samples", o.samples, "samples per run")->capture_default_str()->check(bench::positive());
  app.add_option("--device", o.device, "cpu or cuda:N")->capture_default_str();
  app.add_option("--repeat", o.repeat, "interleaved runs of each (the median is shown)")
    ->capture_default_str()
    ->check(bench::positive());
  if (int rc = bench::parse(app, argc, argv); rc >= 0)
    return rc;
  bool gpu = o.device != "cpu";
  if (gpu && cuda_device_count() == 0) {
    std::fprintf(stderr, "bench_devices: --device %s: no CUDA device (LibTorch %s%s)\n", o.device.c_str(),
                 torch_version().c_str(), torch_has_cuda() ? "" : ", built without CUDA");
    return 2;
  }
  set_torch_threads(gpu ? 1 : 2);  // on the CPU the plain loop and the one worker get both cores
  auto train_size = std::max<int64_t>(o.samples, 2048);
  register_dataset("bench-cifar-shaped", [](const data_request& r) {
    return train_test{cifar_shaped(r.train_size, r.seed), cifar_shaped(r.test_size, r.seed + 1)};
  });
  auto data = cifar_shaped(train_size, 1);
  auto values = static_cast<int64_t>(make_model(o.model, input_of(data))->size());
  std::printf("%s on 3x32x32 images (%lld values), batch %d, %lld samples per run, device %s, LibTorch %s, "
              "median of %d interleaved runs, real clock\n",
              o.model.c_str(), static_cast<long long>(values), o.batch, static_cast<long long>(o.samples),
              o.device.c_str(), torch_version().c_str(), o.repeat);
  auto plain_run = [&] {
    return bench::plain_model_loop(o.model, data, o.batch, o.samples, 0.05, 0.9, 1, o.device).samples_per_s;
  };
  std::map<int, worker_summary> last;  // worker 0 of the last run with this many workers
  std::vector<row> rows{{"plain LibTorch loop", plain_run, {}},
                        {"syncpoint bsp, 1 worker", syncpoint_run(o, train_size, 1, last), {}}};
  if (gpu) {
    rows.push_back({"syncpoint bsp, 2 workers, 1 GPU", syncpoint_run(o, train_size, 2, last), {}});
    rows.push_back({"syncpoint bsp, 4 workers, 1 GPU", syncpoint_run(o, train_size, 4, last), {}});
  }
  for (int r = 0; r < o.repeat; ++r)
    for (auto& row : rows)
      row.sps.push_back(row.run());
  print(o, rows, last, values);
  return 0;
}
