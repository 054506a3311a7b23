// What tests/test_header_examples*.cpp share: the small virtual-clock job the
// headers' examples run in (synthetic Fashion-MNIST-shaped data). Installed
// headers only, as those tests.
#pragma once

#include <syncpoint/job_config.hpp>

#include <string>

namespace syncpoint::testing {

inline syncpoint::job_config small_cfg(const std::string& protocol = "bsp") {
  syncpoint::job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 2;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 2000;
  cfg.test_limit = 400;
  cfg.epochs = 1;
  cfg.lr = 0.1;
  cfg.eval_every = 0.5;
  return cfg;
}

}  // namespace syncpoint::testing
