// CIFAR-shaped data made in the test (3x32x32 images, 10 classes) and a
// short bsp job on it that every built-in model learns: what the model-shape
// tests and the GPU tests train on.
#pragma once

#include <syncpoint/data_registry.hpp>

#include "tests/small_job.hpp"

#include <cmath>
#include <random>

namespace syncpoint::testing {

// Images of 3x32x32: class c is a smooth wave of its own frequencies and
// colours, under pixel noise as strong as the wave. Learnable by a linear
// model and by convolutions alike, and hard for neither to mistake for luck:
// a model that ignored the shape would see noise.
inline dataset cifar_shaped(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> pick(0, 9);
  return dataset_from(n, {3, 32, 32}, 10, [&](int64_t, float* x) {
    auto c = pick(rng);
    double fi = static_cast<double>(c % 3), fj = static_cast<double>(c / 3);
    for (int ch = 0; ch < 3; ++ch)
      for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 32; ++j) {
          double phase = 2.0944 * ch + 0.7 * static_cast<double>(c);
          auto wave = std::cos(6.2832 * (fi * i + fj * j) / 32.0 + phase);
          x[(ch * 32 + i) * 32 + j] = static_cast<float>(wave) + noise(rng);
        }
    return c;
  });
}

/// Registers "test-cifar-shaped" (true the first time, false after).
inline bool register_cifar_shaped() {
  return register_dataset("test-cifar-shaped", [](const data_request& r) {
    return train_test{cifar_shaped(r.train_size, r.seed), cifar_shaped(r.test_size, r.seed + 1)};
  });
}

/// bsp, 2 workers, one epoch of 1600 CIFAR-shaped images at batch 32.
inline job_config cifar_job(const std::string& model) {
  register_cifar_shaped();
  auto cfg = small_job("bsp");
  cfg.dataset = "test-cifar-shaped";
  cfg.model = model;
  cfg.workers = 2;
  cfg.train_limit = 1600;
  cfg.test_limit = 400;
  cfg.batch = 32;
  cfg.epochs = 1;
  cfg.lr = 0.05;
  return cfg;
}

}  // namespace syncpoint::testing
