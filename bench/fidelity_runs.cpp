#include "bench/fidelity_runs.hpp"

#include "runtime/report/sweep_figures.hpp"
#include "runtime/studies/sweep_spec.hpp"
#include "runtime/studies/sweep.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace syncpoint::bench {

namespace {

namespace fs = std::filesystem;

// A run's identity: its options in any order.
std::string key_of(std::vector<std::string> args) {
  std::sort(args.begin(), args.end());
  std::string out;
  for (auto& a : args)
    out += a + '\n';
  return out;
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw std::runtime_error("a train option's value holds a control character: " + s);
    out += c == '"' || c == '\\' ? std::string{'\\', c} : std::string{c};
  }
  return out + '"';
}

std::string stage_file(const std::string& dir, int n) { return dir + "/stage-" + std::to_string(n) + ".toml"; }

}  // namespace

train_args& train_args::set(const std::string& name, const std::string& value) {
  for (auto& [n, v] : items)
    if (n == name) {
      v = value;
      return *this;
    }
  items.emplace_back(name, value);
  return *this;
}

std::vector<std::string> train_args::text() const {
  std::vector<std::string> out;
  for (auto& [n, v] : items)
    out.push_back("--" + n + "=" + v);
  return out;
}

fidelity_runs::fidelity_runs(std::string dir) : dir_(std::move(dir)) {
  for (int n = 1; fs::exists(stage_file(dir_, n)); ++n) {
    stages_ = n;
    for (auto& c : cells_of(read_sweep_spec(stage_file(dir_, n)).full_grid()))
      planned_.insert(key_of(c.args));
    auto folder = dir_ + "/stage-" + std::to_string(n);
    if (!fs::exists(folder + "/sweep.json")) {
      if (unfinished_.empty())
        unfinished_ = stage_file(dir_, n);
      continue;
    }
    auto sweep = report::load_sweep(folder);
    for (size_t i = 0; i < sweep.cells.size(); ++i) {
      if (sweep.summaries[i])
        done_.emplace(key_of(sweep.cells[i].args), *sweep.summaries[i]);
      else if (unfinished_.empty())
        unfinished_ = stage_file(dir_, n);
    }
  }
}

void fidelity_runs::want(const std::vector<run_request>& rs) {
  for (auto& r : rs) {
    auto key = key_of(r.args.text());
    if (!done_.count(key) && missing_keys_.insert(key).second)
      missing_.push_back(r);
  }
}

std::vector<run_summary> fidelity_runs::need(const std::vector<run_request>& rs) {
  want(rs);
  std::vector<run_summary> out;
  for (auto& r : rs) {
    auto at = done_.find(key_of(r.args.text()));
    if (at == done_.end())
      throw pending{};
    out.push_back(at->second);
  }
  return out;
}

std::string fidelity_runs::write_next_stage(const std::string& header) const {
  for (auto& r : missing_)
    if (planned_.count(key_of(r.args.text())))
      throw std::runtime_error("the run '" + r.part + "' was planned in a stage of " + dir_ +
                               " that finished without it: were options added to its sweep?");
  // Runs that differ only in the protocol share a part, the protocols its axis.
  struct group {
    std::string name;
    train_args args;  // without the protocol
    std::vector<std::string> protocols;
    bool cnn = false;
  };
  std::vector<group> groups;
  for (auto& r : missing_) {
    train_args rest;
    std::string protocol;
    for (auto& [n, v] : r.args.items)
      if (n == "protocol")
        protocol = v;
      else
        rest.items.emplace_back(n, v);
    auto same = [&](const group& g) { return g.name == r.part && g.args.items == rest.items; };
    auto at = std::find_if(groups.begin(), groups.end(), same);
    if (at == groups.end()) {
      groups.push_back({r.part, rest, {}, false});
      for (auto& [n, v] : rest.items)
        groups.back().cnn |= n == "model" && v == "cnn";
      at = groups.end() - 1;
    }
    at->protocols.push_back(protocol);
  }
  // The CNN's runs take 4–8 times the MLP's: first, so that no core idles
  // through the end of a stage while one runs alone.
  std::stable_sort(groups.begin(), groups.end(), [](const group& a, const group& b) { return a.cnn > b.cnn; });
  std::map<std::string, int> uses;
  std::ostringstream out;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);)
    out << "# " << line << "\n";
  for (auto& g : groups) {
    auto name = g.name;
    if (int n = ++uses[g.name]; n > 1)
      name += " (" + std::to_string(n) + ")";
    out << "\n[[part]]\nname = " << toml_string(name) << "\n[part.train]\n";
    for (auto& [n, v] : g.args.items)
      out << n << " = " << toml_string(v) << "\n";
    out << "[part.grid]\nprotocol = [";
    for (size_t i = 0; i < g.protocols.size(); ++i)
      out << (i ? ", " : "") << toml_string(g.protocols[i]);
    out << "]\n";
  }
  fs::create_directories(dir_);
  auto path = stage_file(dir_, stages_ + 1);
  // Written whole or not at all: a stage file is offered again until its sweep finishes.
  {
    std::ofstream file(path + ".tmp");
    file << out.str();
    if (!file.flush())
      throw std::runtime_error("cannot write " + path + ".tmp");
  }
  fs::rename(path + ".tmp", path);
  return path;
}

std::string build_fingerprint() {
  auto here = fs::read_symlink("/proc/self/exe").parent_path();
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (auto name : {"syncpoint", "libsyncpoint.so"}) {
    std::ifstream in(here / name, std::ios::binary);
    if (!in)
      continue;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0)
      for (std::streamsize i = 0; i < in.gcount(); ++i)
        h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
  }
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string runs_build(const std::string& dir) {
  std::ifstream in(dir + "/build.txt");
  std::string line;
  std::getline(in, line);
  return line;
}

bool keep_runs_of(const std::string& dir, const std::string& build) {
  bool removed = false;
  if (fs::exists(dir) && runs_build(dir) != build) {
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind("stage-", 0) == 0) {
        fs::remove_all(e.path());
        removed = true;
      }
  }
  fs::create_directories(dir);
  std::ofstream(dir + "/build.txt") << build << "\n";
  return removed;
}

}  // namespace syncpoint::bench
