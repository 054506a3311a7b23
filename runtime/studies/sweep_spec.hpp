// A sweep's SPEC.toml (docs/sweeps.md): the options every cell shares, its
// axes and parts, and where it goes.
//
//   auto spec = syncpoint::read_sweep_spec("spec.toml");
//   for (auto& cell : syncpoint::cells_of(spec.full_grid())) ...
//
// spec.toml:
//   out = "sweeps/stragglers"       # optional, like --out
//   seeds = [1, 2, 3]               # optional, like --seeds
//   [train]                         # options every cell shares
//   model = "mlp"
//   epochs = 2
//   [grid]                          # one axis per key, in the file's order
//   protocol = ["bsp", "elastic-bsp"]
//   straggler = ["3:x1.5", "3:x2"]
#pragma once

#include "runtime/studies/sweep.hpp"

#include <string>
#include <vector>

namespace syncpoint {

struct sweep_spec {
  sweep_grid grid;                 // without the seeds
  std::string out;                 // "": not given
  int jobs = 0;                    // 0: not given
  std::vector<std::string> seeds;  // empty: not given
  /// The grid with the seeds as its last axis, "seed".
  sweep_grid full_grid() const;
};

/// Reads SPEC.toml. Throws config_error naming the file, the line and what is wrong.
sweep_spec read_sweep_spec(const std::string& file);

/// "a,b" -> {"a", "b"}; a double-quoted item may hold commas ("\"1,2\",3" -> {"1,2", "3"}).
std::vector<std::string> split_values(const std::string& text);

}  // namespace syncpoint
