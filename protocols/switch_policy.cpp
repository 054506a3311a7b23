#include "protocols/switch_policy.hpp"

#include "core/rapidjson.hpp"

#include <fstream>
#include <stdexcept>

namespace syncpoint {

template <class Archive>
void serialize(Archive& ar, switch_policy& p) {
  ar(cereal::make_nvp("model", p.model), cereal::make_nvp("dataset", p.dataset),
     cereal::make_nvp("workers", p.workers), cereal::make_nvp("bsp_share", p.bsp_share),
     cereal::make_nvp("schedule", p.schedule), cereal::make_nvp("reference_accuracy", p.reference_accuracy),
     cereal::make_nvp("tolerance", p.tolerance));
}

switch_policy load_switch_policy(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::invalid_argument("cannot open switch policy file '" + path + "'");
  switch_policy p;
  try {
    cereal::JSONInputArchive ar(in);
    ar(cereal::make_nvp("sync_switch_policy", p));
  } catch (const std::exception& e) {
    throw std::invalid_argument("switch policy file '" + path + "' is malformed: " + e.what());
  }
  if (p.schedule.empty() || p.model.empty())
    throw std::invalid_argument("switch policy file '" + path + "' has no schedule or model");
  return p;
}

void save_switch_policy(const std::string& path, const switch_policy& p) {
  std::ofstream out(path);
  if (!out)
    throw std::runtime_error("cannot write switch policy file '" + path + "'");
  {
    cereal::JSONOutputArchive ar(out);
    ar(cereal::make_nvp("sync_switch_policy", p));
  }
  out << "\n";
  if (!out)
    throw std::runtime_error("cannot write switch policy file '" + path + "'");
}

}  // namespace syncpoint
