// The options a model's or a data set's name carries after its colon
// ("tinylm:layers=4,width=128", "clicks:keys=1000000"): NAME=VALUE items,
// comma-separated. Not part of the API.
//
//   for (auto& [name, value] : syncpoint::name_options("keys=100,zipf=1.2", "clicks", "keys, zipf")) ...
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint {

/// The items of `spec` as (name, value) pairs, in order; throws
/// std::invalid_argument for an item without '=', saying `who` takes `known`.
inline std::vector<std::pair<std::string, std::string>> name_options(const std::string& spec, const std::string& who,
                                                                     const std::string& known) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(who + ": '" + item + "' is not NAME=VALUE (" + known + ")");
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

}  // namespace syncpoint
