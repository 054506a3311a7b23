// Where a worker's local work stands (<syncpoint/local_work.hpp>,
// actors/worker_local.cpp): what its last release said, its inner optimizer's
// state, the round's steps so far, and the model it last pulled. One value,
// so that a checkpoint keeps it whole (core/saved_state.hpp).
//
//   local_progress p;
//   p.work = release.work;          // from its next release on
//   if (++p.steps_done == p.work.steps) { /* push */ }
#pragma once

#include "core/inner_optimizer.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <vector>

namespace syncpoint {

struct local_progress {
  local_work work;                  // as the last release said
  double rate = 0;                  // ... the PS's rate then (0: the job's, or the inner optimizer's own)
  uint64_t release_samples = 0;     // ... the run's samples then
  int32_t release_live = 1;         // ... and its live workers
  inner_state inner;                // the inner optimizer's state: it persists across exchanges
  uint32_t steps_done = 0;          // local steps since the last push
  int64_t round_samples = 0;        // ... their samples
  std::vector<float> gradient_sum;  // ... their gradients' sum (push kind gradient, H > 1)
  std::vector<float> anchor;        // the model as last pulled: an outer push is anchor - local
  local_work built_work;            // the work the gradient ready to push was made under
  local_work pushed_work;           // ... and that of the exchange in flight: its pull merges that fragment
  bool round_done = false;          // the compute in progress ends the round: its gradient is pushed
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, local_progress& x) {
  return f(caf::meta::type_name("local_progress"), x.work, exact(x.rate), x.release_samples, x.release_live, x.inner,
           x.steps_done, x.round_samples, float_block{x.gradient_sum}, float_block{x.anchor}, x.built_work,
           x.pushed_work, x.round_done);
}

}  // namespace syncpoint
