// Local SGD — average every H steps (PROTOCOLS.md, "Local SGD"; Stich 2019, Lin et al. 2020).
// Each worker takes H plain SGD steps on its own copy of the model, then
// pushes how far it moved, Δ = θ_pulled − θ_local. When every live worker
// has pushed, the PS steps once on their mean: with the outer step sgd at
// rate 1 without momentum (this protocol's defaults for the job) the new model
// is the mean of the workers' models. Everyone then pulls it.
#include "protocols/local_update.hpp"

namespace syncpoint {

class local_sgd : public synchronous_local_update {
 public:
  static std::vector<option_spec> options() { return local_update_options("sgd", "0.05", "8"); }
  /// The outer step that averages: θ − 1 × mean Δ = the mean of the workers' models.
  static std::map<std::string, std::string> job_defaults() {
    return {{"optimizer", "sgd"}, {"lr", "1"}, {"momentum", "0"}};
  }

  explicit local_sgd(const protocol_options& o) : synchronous_local_update(local_update_work(o)) {}
};

SYNCPOINT_REGISTER_PROTOCOL("local-sgd", "every worker takes H local SGD steps, then the models are averaged",
                            local_sgd);

}  // namespace syncpoint
