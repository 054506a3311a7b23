#include "runtime/studies/sweep.hpp"

#include "core/json.hpp"
#include "core/rapidjson.hpp"
#include <syncpoint/job_config.hpp>
#include "runtime/records/run_files.hpp"


#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace syncpoint {

namespace fs = std::filesystem;

namespace {

// A value as a path component: letters, digits and . = - + kept, the rest '_'.
std::string path_safe(const std::string& s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '=' || c == '-' || c == '+' ? c : '_';
  return out;
}

std::string last_line(const std::string& path) {
  auto text = fs::exists(path) ? read_text(path) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  auto at = text.rfind('\n');
  auto line = at == std::string::npos ? text : text.substr(at + 1);
  return line.empty() ? "no message (see " + path + ")" : line;
}

}  // namespace

sweep_grid part_grid(const sweep_grid& g, size_t p) {
  auto& part = g.parts.at(p);
  sweep_grid out;
  out.base = g.base;
  out.base.insert(out.base.end(), part.base.begin(), part.base.end());
  out.axes = part.axes;
  out.axes.insert(out.axes.end(), g.axes.begin(), g.axes.end());
  return out;
}

std::vector<sweep_cell> cells_of(const sweep_grid& g) {
  if (!g.parts.empty()) {
    std::vector<sweep_cell> out;
    std::set<std::string> parts;
    char index[24];
    for (size_t p = 0; p < g.parts.size(); ++p) {
      auto& name = g.parts[p].name;
      if (name.empty())
        throw config_error("a part of the sweep has no name");
      if (!parts.insert(name).second)
        throw config_error("the sweep has two parts named '" + name + "'");
      try {
        for (auto& c : cells_of(part_grid(g, p))) {
          c.index = out.size();
          c.part = name;
          c.name = name + ": " + c.name;
          std::snprintf(index, sizeof index, "%04zu", c.index);
          c.folder = (index + ("_" + path_safe(name)) + c.folder.substr(4)).substr(0, 220);
          out.push_back(std::move(c));
        }
      } catch (const config_error& e) {
        throw config_error("part '" + name + "': " + e.what());
      }
    }
    return out;
  }
  std::set<std::string> names;
  for (auto& a : g.axes) {
    if (a.name.empty())
      throw config_error("a grid axis has no name (--grid NAME=V1,V2,...)");
    if (a.name.rfind("--", 0) == 0)
      throw config_error("grid axis '" + a.name + "': name the option without '--'");
    if (!names.insert(a.name).second)
      throw config_error("grid axis '" + a.name + "' is given twice");
    if (a.values.empty())
      throw config_error("grid axis '" + a.name + "' has no values");
    std::set<std::string> seen;
    for (auto& v : a.values) {
      if (v.empty())
        throw config_error("grid axis '" + a.name + "' has an empty value");
      if (!seen.insert(v).second)
        throw config_error("grid axis '" + a.name + "' gives the value '" + v + "' twice");
    }
  }
  size_t n = 1;
  for (auto& a : g.axes)
    n *= a.values.size();
  std::vector<sweep_cell> out;
  char index[24];
  for (size_t i = 0; i < n; ++i) {
    sweep_cell c;
    c.index = i;
    c.args = g.base;
    size_t rest = i, stride = n;
    std::string safe;
    for (auto& a : g.axes) {
      stride /= a.values.size();
      auto& v = a.values[rest / stride];
      rest %= stride;
      c.values.push_back({a.name, v});
      c.name += (c.name.empty() ? "" : " ") + a.name + "=" + v;
      safe += "_" + path_safe(a.name + "=" + v);
      c.args.push_back("--" + a.name + "=" + v);
    }
    std::snprintf(index, sizeof index, "%04zu", i);
    c.folder = index + safe.substr(0, 200);  // the index keeps cut names apart
    out.push_back(std::move(c));
  }
  return out;
}

std::string grid_json(const sweep_grid& g) {
  auto strings = [](const std::vector<std::string>& xs) { return json::array(xs, json::str); };
  auto axes = [&](const std::vector<sweep_axis>& xs) {
    return json::array(xs, [&](const sweep_axis& a) {
      return json::object().add("name", a.name).raw("values", strings(a.values)).done();
    });
  };
  auto o = json::object();
  o.add("sweep", 1).raw("base", strings(g.base)).raw("axes", axes(g.axes));
  if (!g.parts.empty())  // a sweep of one grid keeps the file it always had
    o.raw("parts", json::array(g.parts, [&](const sweep_part& p) {
      return json::object().add("name", p.name).raw("base", strings(p.base)).raw("axes", axes(p.axes)).done();
    }));
  return o.done() + "\n";
}

sweep_grid grid_from_json(const std::string& text, const std::string& source) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  if (d.HasParseError() || !d.IsObject())
    throw config_error(source + ": not a sweep's JSON object");
  auto strings = [&](const rapidjson::Value& v, const char* what) {
    if (!v.IsArray())
      throw config_error(source + ": '" + what + "' is not a list");
    std::vector<std::string> out;
    for (auto& x : v.GetArray()) {
      if (!x.IsString())
        throw config_error(source + ": '" + what + "' holds a value that is not text");
      out.push_back(x.GetString());
    }
    return out;
  };
  if (!d.HasMember("sweep") || !d["sweep"].IsInt() || d["sweep"].GetInt() != 1 || !d.HasMember("base") ||
      !d.HasMember("axes") || !d["axes"].IsArray())
    throw config_error(source + ": not a sweep file of version 1 (keys sweep, base, axes)");
  auto axes = [&](const rapidjson::Value& v) {
    if (!v.IsArray())
      throw config_error(source + ": 'axes' is not a list");
    std::vector<sweep_axis> out;
    for (auto& a : v.GetArray()) {
      if (!a.IsObject() || !a.HasMember("name") || !a["name"].IsString() || !a.HasMember("values"))
        throw config_error(source + ": an axis without a name or values");
      out.push_back({a["name"].GetString(), strings(a["values"], "values")});
    }
    return out;
  };
  sweep_grid g;
  g.base = strings(d["base"], "base");
  g.axes = axes(d["axes"]);
  if (d.HasMember("parts")) {
    if (!d["parts"].IsArray())
      throw config_error(source + ": 'parts' is not a list");
    for (auto& p : d["parts"].GetArray()) {
      if (!p.IsObject() || !p.HasMember("name") || !p["name"].IsString() || !p.HasMember("base") ||
          !p.HasMember("axes"))
        throw config_error(source + ": a part without a name, base or axes");
      g.parts.push_back({p["name"].GetString(), strings(p["base"], "base"), axes(p["axes"])});
    }
  }
  return g;
}

void claim_sweep_dir(const std::string& dir, const sweep_grid& g) {
  auto path = dir + "/sweep.json";
  auto mine = grid_json(g);
  if (fs::exists(path)) {
    auto theirs = read_text(path);
    if (theirs == mine)
      return;
    auto other = grid_from_json(theirs, path);  // a folder of something else is named as such
    std::string what = other.base != g.base ? "the options every cell shares differ"
                       : other.axes != g.axes ? "the axes differ"
                                              : "the parts differ";
    throw config_error(dir + " holds a sweep of another grid (" + what +
                       "): give another --out, or remove the folder to start over");
  }
  if (fs::exists(dir) && !fs::is_empty(dir))
    throw config_error(dir + " is not empty and holds no sweep.json: give another --out");
  fs::create_directories(dir + "/cells");
  std::ofstream(path, std::ios::binary) << mine;
}

std::string finished_cell(const std::string& dir, const sweep_cell& c) {
  auto path = dir + "/cells/" + c.folder;
  return fs::exists(path + "/summary.json") ? path : std::string();
}

namespace {
std::mutex this_program_mutex;
std::vector<std::string> this_program_argv;  // empty: this executable
}  // namespace

void set_this_program(std::vector<std::string> argv_prefix) {
  std::lock_guard<std::mutex> lock(this_program_mutex);
  this_program_argv = std::move(argv_prefix);
}

std::vector<std::string> this_program() {
  std::lock_guard<std::mutex> lock(this_program_mutex);
  return this_program_argv.empty() ? std::vector<std::string>{"/proc/self/exe"} : this_program_argv;
}

pid_t launch_process(const std::vector<std::string>& args, const std::string& stdout_path,
                     const std::string& stderr_path, const std::string& exe_given, bool own_group) {
  auto program = exe_given.empty() ? this_program() : std::vector<std::string>{exe_given};
  auto exe = program.front();
  std::vector<std::string> argv_text{program.size() > 1 ? program.front() : std::string("syncpoint")};
  argv_text.insert(argv_text.end(), program.begin() + 1, program.end());
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  // The child: only async-signal-safe calls until exec.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(127);
  if (own_group)
    setpgid(0, 0);
  int in = open("/dev/null", O_RDONLY);
  int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0)
    _exit(127);
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  execv(exe.c_str(), argv.data());
  _exit(127);
}

pid_t launch_train_process(const std::vector<std::string>& args, const std::string& out_dir,
                           const std::string& log_path, const std::string& exe, bool own_group) {
  std::vector<std::string> train{"train"};
  train.insert(train.end(), args.begin(), args.end());
  train.push_back("--progress=false");
  train.push_back("--out=" + out_dir);
  return launch_process(train, out_dir + "/stdout.txt", log_path, exe, own_group);
}

bool finish_cell(const std::string& dir, const sweep_cell& c, int wait_status) {
  auto partial = dir + "/cells/" + c.folder + ".partial", final_dir = dir + "/cells/" + c.folder;
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 || !fs::exists(partial + "/summary.json"))
    return false;
  fs::remove_all(final_dir);
  fs::rename(partial, final_dir);  // finished: the folder under its own name
  return true;
}

std::string cell_error(const std::string& dir, const sweep_cell& c, int wait_status) {
  return process_error(dir + "/cells/" + c.folder + ".partial/stderr.txt", wait_status);
}

std::string process_error(const std::string& stderr_path, int wait_status) {
  if (WIFSIGNALED(wait_status))
    return "killed by signal " + std::to_string(WTERMSIG(wait_status));
  return last_line(stderr_path);
}

bool is_cell_file(const std::string& name) {
  for (auto* f : cell_files)
    if (name == f)
      return true;
  return false;
}

std::string cell_args_refusal(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    auto& a = args[i];
    if (a == "--clock=virtual" || (a == "--clock" && i + 1 < args.size() && args[i + 1] == "virtual"))
      continue;
    // --config-file: a file on the node could set any of these.
    for (auto* option : {"--out", "--resume", "--checkpoint-dir", "--save-model", "--policy-out", "--clock",
                         "--config-file"})
      if (a == option || a.rfind(std::string(option) + "=", 0) == 0)
        return std::string("a sweep's cell may not give ") + option +
               " (the sweep places its files, and runs it on the virtual clock)";
  }
  return "";
}

std::vector<cell_outcome> run_sweep_cells(const std::string& dir, const std::vector<sweep_cell>& cells, int jobs,
                                          const cell_launcher& launch,
                                          const std::function<void(const sweep_progress&, const cell_outcome*)>& on_event) {
  using clock = std::chrono::steady_clock;
  sweep_progress p;
  p.total = cells.size();
  std::vector<const sweep_cell*> todo;
  for (auto& c : cells)
    if (finished_cell(dir, c).empty())
      todo.push_back(&c);
  p.skipped = cells.size() - todo.size();
  struct running_cell {
    const sweep_cell* cell;
    clock::time_point start;
  };
  std::map<pid_t, running_cell> running;
  std::vector<cell_outcome> out;
  std::vector<size_t> untold;  // ends told once the next cells have started, so that `running` counts them
  size_t next = 0;
  if (on_event)
    on_event(p, nullptr);
  while (next < todo.size() || !running.empty() || !untold.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < std::max(1, jobs)) {
      auto& c = *todo[next++];
      auto partial = dir + "/cells/" + c.folder + ".partial";
      fs::remove_all(partial);
      fs::create_directories(partial);
      pid_t pid = launch(c, partial, partial + "/stderr.txt");
      if (pid <= 0) {
        out.push_back({&c, false, "could not start the cell's process", 0});
        ++p.failed;
        if (on_event)
          on_event(p, &out.back());
        continue;
      }
      running[pid] = {&c, clock::now()};
      p.running = running.size();
      if (on_event && untold.empty())
        on_event(p, nullptr);
    }
    for (auto i : untold)
      if (on_event)
        on_event(p, &out[i]);
    untold.clear();
    if (running.empty())
      continue;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      throw std::runtime_error("sweep: waitpid failed");
    }
    auto it = running.find(pid);
    if (it == running.end())
      continue;  // not a cell of ours
    auto& c = *it->second.cell;
    cell_outcome o{&c, false, "", std::chrono::duration<double>(clock::now() - it->second.start).count()};
    running.erase(it);
    if (finish_cell(dir, c, status)) {
      o.ok = true;
      ++p.done;
    } else {
      o.error = cell_error(dir, c, status);
      ++p.failed;
    }
    p.running = running.size();
    out.push_back(o);
    untold.push_back(out.size() - 1);
  }
  return out;
}

}  // namespace syncpoint
