// DiLoCo — distributed low-communication training (PROTOCOLS.md, "DiLoCo";
// Douillard et al. 2023, arXiv 2311.08105).
// Each worker takes H inner steps with its own AdamW, then pushes its outer
// gradient Δ = θ_pulled − θ_local. When every live worker has pushed, the PS
// applies the outer optimizer to their mean: Nesterov at rate 0.7 with
// momentum 0.9 (this protocol's defaults for the job). Everyone pulls the
// new model and goes on; each worker's AdamW state persists across rounds.
#include "protocols/local_update.hpp"

namespace syncpoint {

class diloco : public synchronous_local_update {
 public:
  static std::vector<option_spec> options() { return local_update_options("adamw", "0.001", "50"); }
  static std::map<std::string, std::string> job_defaults() {
    return {{"optimizer", "nesterov"}, {"lr", "0.7"}, {"momentum", "0.9"}};
  }

  explicit diloco(const protocol_options& o) : synchronous_local_update(local_update_work(o)) {}
};

SYNCPOINT_REGISTER_PROTOCOL("diloco", "H inner AdamW steps, then an outer Nesterov step on the mean outer gradient",
                            diloco);

}  // namespace syncpoint
