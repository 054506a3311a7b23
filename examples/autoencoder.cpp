// Your own loss, syncpoint's loop: an autoencoder on Fashion-MNIST trained
// with the mean squared error of its reconstruction, a level-(b) loop
// (<syncpoint/torch_loop.hpp>; the module and the loop: autoencoder.hpp): a
// registered module, a loss, and the job's data set as the batch source. The evaluation is the held-out
// reconstruction error; the program fails if it does not fall below 0.30
// (predicting 0, the mean pixel, everywhere scores about 1.0).
//
//   example_autoencoder [PROTOCOL] [CLOCK]     (default: bsp virtual)
#include "autoencoder.hpp"

#include <syncpoint/train.hpp>

#include <cstdio>
#include <string>

namespace {

constexpr double goal = 0.30;  // held-out reconstruction MSE (the pixels are standardized)

}  // namespace

int main(int argc, char** argv) {
  register_autoencoder();
  syncpoint::job_config cfg;
  cfg.protocol = argc > 1 ? argv[1] : "bsp";
  cfg.clock = argc > 2 && std::string(argv[2]) == "real" ? syncpoint::clock_kind::real
                                                          : syncpoint::clock_kind::virtual_time;
  cfg.workers = 4;
  cfg.straggler = "3:x2";
  cfg.model = "autoencoder";
  cfg.loop = "reconstruct";
  cfg.train_limit = 12000;
  cfg.test_limit = 2000;
  cfg.epochs = 2;
  cfg.eval_every = 0.5;
  cfg.optimizer = "adam";  // on the PS, as torch.optim.Adam
  cfg.lr = 0.002;
  cfg.progress = false;
  auto r = syncpoint::train(cfg);
  for (auto& f : r.failures)
    std::fprintf(stderr, "%s\n", f.c_str());
  double last = -1;
  for (auto& e : r.trace)
    if (e.kind == "metric" && e.note == "mse") {
      std::printf("after %7llu samples: held-out mse %.4f\n", static_cast<unsigned long long>(e.iter), e.value);
      last = e.value;
    }
  std::printf("%s clock, %s: held-out reconstruction mse %.4f (goal: below %.2f)\n",
              syncpoint::to_string(cfg.clock).c_str(), cfg.protocol.c_str(), last, goal);
  return r.failures.empty() && last >= 0 && last < goal ? 0 : 1;
}
