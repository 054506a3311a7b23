#include <syncpoint/protocol.hpp>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <stdexcept>

namespace syncpoint {

std::string check_option_value(const option_spec& spec, const std::string& value);  // options.cpp

int coordinator_api::live_count() const {
  return static_cast<int>(live_workers().size());
}

int coordinator_api::waiting_count() const {
  int n = 0;
  for (auto w : live_workers())
    n += waiting(w) ? 1 : 0;
  return n;
}

uint64_t coordinator_api::min_clock() const {
  auto live = live_workers();
  uint64_t m = UINT64_MAX;
  for (auto w : live)
    m = std::min(m, clock(w));
  return live.empty() ? 0 : m;
}

void protocol::on_start(coordinator_api& c) {
  c.set_mode(ps_mode::immediate);
  for (auto w : c.live_workers())
    c.release(w);
}

bool everyone_waiting(const coordinator_api& c) {
  int live = c.live_count();
  return live > 0 && c.waiting_count() == live;
}

namespace {

struct entry {
  std::string summary;
  protocol_factory factory;
  std::vector<option_spec> options;
  std::map<std::string, std::string> job_defaults;
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

// The declaration of option `name` by any protocol (null if none).
const option_spec* find_option(const std::string& name) {
  for (auto& kv : table())
    for (auto& o : kv.second.options)
      if (o.name == name)
        return &o;
  return nullptr;
}

}  // namespace

bool register_protocol(const std::string& name, const std::string& summary,
                       protocol_factory factory, std::vector<option_spec> options,
                       std::map<std::string, std::string> job_defaults) {
  std::lock_guard<std::mutex> guard(table_mutex());
  for (auto& o : options) {
    auto* other = find_option(o.name);
    bool bad_default = !check_option_value(o, o.default_value).empty();
    if ((other && other->type != o.type) || bad_default || o.name.empty()) {
      std::fprintf(stderr, "syncpoint: protocol '%s' not registered: option '%s' %s\n", name.c_str(),
                   o.name.c_str(),
                   bad_default ? "has a default outside its own declaration"
                               : "is declared by another protocol with another type");
      return false;
    }
  }
  return table().emplace(name, entry{summary, std::move(factory), std::move(options), std::move(job_defaults)}).second;
}

void check_protocol_options(const protocol_options& opts) {
  std::lock_guard<std::mutex> guard(table_mutex());
  for (auto& kv : opts.values()) {
    if (kv.first.rfind("job.", 0) == 0)
      continue;  // the job's context (job.model, ...), set by the runner
    auto* spec = find_option(kv.first);
    if (!spec)
      throw std::invalid_argument("unknown protocol option '" + kv.first +
                                  "' (see 'syncpoint protocols' for each protocol's options)");
    auto err = check_option_value(*spec, kv.second);
    if (!err.empty())
      throw std::invalid_argument(err);
  }
}

bool has_protocol(const std::string& name) {
  std::lock_guard<std::mutex> guard(table_mutex());
  return table().count(name) > 0;
}

std::unique_ptr<protocol> make_protocol(const std::string& name, const protocol_options& opts) {
  protocol_factory f;
  std::string known;
  protocol_options filled = opts;
  {
    std::lock_guard<std::mutex> guard(table_mutex());
    auto i = table().find(name);
    if (i != table().end()) {
      f = i->second.factory;
      for (auto& o : i->second.options)
        if (!filled.has(o.name))
          filled.set(o.name, o.default_value);
    }
    for (auto& kv : table())
      known += (known.empty() ? "" : ", ") + kv.first;
  }
  if (!f)
    throw std::invalid_argument("unknown protocol '" + name + "' (valid: " + known + ")");
  check_protocol_options(filled);
  return f(filled);
}

std::string protocol_label(const std::string& protocol, const protocol_options& given) {
  std::string inner;
  for (auto& o : protocol_option_specs(protocol)) {
    auto value = given.has(o.name) ? given.text(o.name) : o.default_value;
    if (o.short_name.empty() && value == o.default_value)
      continue;
    inner += (inner.empty() ? "" : ",") + (o.short_name.empty() ? o.name : o.short_name) + "=" + value;
  }
  return inner.empty() ? protocol : protocol + "(" + inner + ")";
}

std::vector<option_spec> protocol_option_specs(const std::string& protocol) {
  std::lock_guard<std::mutex> guard(table_mutex());
  auto i = table().find(protocol);
  return i == table().end() ? std::vector<option_spec>{} : i->second.options;
}

std::map<std::string, std::pair<option_spec, std::vector<std::string>>> all_protocol_options() {
  std::lock_guard<std::mutex> guard(table_mutex());
  std::map<std::string, std::pair<option_spec, std::vector<std::string>>> out;
  for (auto& kv : table())
    for (auto& o : kv.second.options) {
      auto& slot = out[o.name];
      if (slot.second.empty())
        slot.first = o;
      slot.second.push_back(kv.first);
    }
  return out;
}

std::map<std::string, std::string> protocol_job_defaults(const std::string& protocol) {
  std::lock_guard<std::mutex> guard(table_mutex());
  auto i = table().find(protocol);
  return i == table().end() ? std::map<std::string, std::string>{} : i->second.job_defaults;
}

std::map<std::string, std::string> protocol_catalog() {
  std::lock_guard<std::mutex> guard(table_mutex());
  std::map<std::string, std::string> out;
  for (auto& kv : table())
    out.emplace(kv.first, kv.second.summary);
  return out;
}

}  // namespace syncpoint
