// Your own worker loop, at the client level and with no LibTorch: least
// squares on generated data (examples/linear_regression.hpp), 4 workers
// under SSP with worker 3 four times slower, on the virtual clock.
//
//   example_linear_regression [PROTOCOL] [CLOCK] [OUT]   (default: ssp virtual, no files)
//
// With OUT, the run's files go there: `syncpoint report OUT...` draws the
// held-out MSE and the training loss of the runs side by side.
#include "linear_regression.hpp"

#include <syncpoint/train.hpp>

#include <cmath>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  linreg::register_linear_regression();
  auto cfg = linreg::job(argc > 1 ? argv[1] : "ssp");
  cfg.clock = argc > 2 && std::string(argv[2]) == "real" ? syncpoint::clock_kind::real
                                                          : syncpoint::clock_kind::virtual_time;
  if (argc > 3)
    cfg.out_dir = argv[3];
  auto r = syncpoint::train(cfg);
  for (auto& f : r.failures)
    std::fprintf(stderr, "%s\n", f.c_str());
  const auto& w = r.final_model.values.vec();
  std::printf("w =");
  for (auto v : w)
    std::printf(" %.4f", v);
  auto p = linreg::make_problem(cfg.seed);
  std::printf("\nheld-out mse %.4f after %llu samples, %.2f s on the run clock\n", linreg::mse(w, p.x_test, p.y_test),
              static_cast<unsigned long long>(r.summary.samples), r.summary.run_time_s);
  return r.failures.empty() ? 0 : 1;
}
