#include "runtime/records/model_file.hpp"

#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace syncpoint {

namespace {
const std::string magic = "syncpoint-model-1";
}

void save_model_file(const std::string& path, const weights& w) {
  auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw std::runtime_error("cannot write the model to '" + path + "'");
    cereal::PortableBinaryOutputArchive ar(out);
    ar(magic, w.version, w.values.vec());
    if (!out)
      throw std::runtime_error("cannot write the model to '" + path + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot write the model to '" + path + "'");
}

weights load_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open model file '" + path + "'");
  try {
    cereal::PortableBinaryInputArchive ar(in);
    std::string m;
    ar(m);
    if (m != magic)
      throw std::runtime_error("not a syncpoint model file");
    uint64_t version = 0;
    std::vector<float> values;
    ar(version, values);
    return weights{version, shared_floats(std::move(values))};
  } catch (const std::exception& e) {
    throw std::runtime_error("model file '" + path + "' is unreadable: " + e.what());
  }
}

}  // namespace syncpoint
