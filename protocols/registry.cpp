#include "protocols/protocol.hpp"

#include <mutex>
#include <stdexcept>

namespace syncpoint {

void protocol::on_start(coordinator_api& c) {
  c.set_mode(ps_mode::immediate);
  for (auto w : c.live_workers())
    c.release(w);
}

bool everyone_waiting(const coordinator_api& c) {
  auto live = c.live_workers();
  if (live.empty())
    return false;
  for (auto w : live)
    if (!c.waiting(w))
      return false;
  return true;
}

namespace {

struct entry {
  std::string summary;
  protocol_factory factory;
};

// A function-local static so that registrations from other files' static
// initializers never run before the map exists.
std::map<std::string, entry>& table() {
  static std::map<std::string, entry> protocols;
  return protocols;
}

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

bool register_protocol(const std::string& name, const std::string& summary,
                       protocol_factory factory) {
  std::lock_guard<std::mutex> guard(table_mutex());
  return table().emplace(name, entry{summary, std::move(factory)}).second;
}

bool has_protocol(const std::string& name) {
  std::lock_guard<std::mutex> guard(table_mutex());
  return table().count(name) > 0;
}

std::unique_ptr<protocol> make_protocol(const std::string& name, const protocol_options& opts) {
  protocol_factory f;
  std::string known;
  {
    std::lock_guard<std::mutex> guard(table_mutex());
    auto i = table().find(name);
    if (i != table().end())
      f = i->second.factory;
    for (auto& kv : table())
      known += (known.empty() ? "" : ", ") + kv.first;
  }
  if (!f)
    throw std::invalid_argument("unknown protocol '" + name + "' (valid: " + known + ")");
  return f(opts);
}

std::map<std::string, std::string> protocol_catalog() {
  std::lock_guard<std::mutex> guard(table_mutex());
  std::map<std::string, std::string> out;
  for (auto& kv : table())
    out.emplace(kv.first, kv.second.summary);
  return out;
}

}  // namespace syncpoint
