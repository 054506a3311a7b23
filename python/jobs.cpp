// train() runs in this process, through the job API (include/syncpoint/job.hpp),
// so that its result keeps the final weights and Ctrl-C can stop it cleanly
// (job_options::stop_when). Its options go through `syncpoint train`'s own
// option table: the same names, checks and words. With a process a worker,
// the job goes to a head on loopback that Python started (syncpoint/local.py)
// through the library's submit() (include/syncpoint/cluster.hpp), and comes
// back as the same result.
#include "python/jobs.hpp"

#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "core/build_info.hpp"
#include "python/interruptible.hpp"
#include "runtime/records/model_file.hpp"
#include "runtime/records/run_files.hpp"
#include "runtime/studies/sweep.hpp"
#include <syncpoint/cluster.hpp>
#include <syncpoint/command.hpp>
#include <syncpoint/job.hpp>
#include <syncpoint/protocol.hpp>
#include <syncpoint/summary.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace py = pybind11;

namespace syncpoint::python {

namespace {

// The final weights as a float32 array that owns them: no copy when nothing else holds them.
py::array_t<float> weights_array(const shared_floats& values) {
  auto owner = std::make_unique<shared_floats::pointer>(values.shared());
  auto* data = const_cast<float*>((*owner)->data());  // ours alone once the run has ended (below)
  py::capsule keep(owner.get(), [](void* p) { delete static_cast<shared_floats::pointer*>(p); });
  auto n = static_cast<py::ssize_t>(values.size());
  if (owner->use_count() > 2)  // `values` and `owner`: anyone else would see our writes
    return py::array_t<float>(n, values.data());
  owner.release();
  return py::array_t<float>({n}, {static_cast<py::ssize_t>(sizeof(float))}, data, keep);
}

py::list trace_rows(const std::vector<trace_event>& trace) {
  py::list rows;
  for (auto& e : trace)
    rows.append(py::make_tuple(e.kind, e.worker, static_cast<double>(e.t0) * 1e-9, static_cast<double>(e.t1) * 1e-9,
                               e.iter, e.version, e.value, e.note));
  return rows;
}

struct train_run {
  run_result result;
  std::string stopped;  // why it ended early, if it did
};

// A head on loopback and its token, which start_cluster(workers) returned.
struct local_head {
  std::string address;
  std::string token;
};

// The job run by the head at `at`, its workers each in a process of its own.
run_result run_on_head(const job_config& cfg, const local_head& at, const std::function<std::string()>& stop_when) {
  submit_options how;
  how.head = at.address;
  how.token = at.token;
  how.stop_when = stop_when;
  how.head_wait = std::chrono::seconds(0);  // the head is this run's own: it has no journal to come back from
  caf::actor_system_config sys_cfg;
  configure_submitter(sys_cfg, how);
  caf::actor_system sys{sys_cfg};
  auto run = submit(sys, cfg, how);
  if (run.state == "failed" || !run.ran)
    throw std::runtime_error("the job failed in its worker processes: " + run.message);
  return std::move(run.result);
}

py::object train(const std::vector<std::string>& args, const py::object& start_cluster) {
  cli::options opts(cli::options::command::train);
  if (auto err = opts.parse_args(args); !err.empty())
    throw py::value_error(err);
  if (opts.help_printed())
    return py::none();
  auto cfg = opts.job();
  if (auto misfit = cli::check_options_fit(cfg, {cfg.protocol}); !misfit.empty())
    throw py::value_error(misfit);
  validate(cfg);  // config_error is a ValueError
  cli::check_save_model(opts);
  auto label = cli::run_label(cfg);
  std::optional<local_head> head;
  if (!start_cluster.is_none()) {
    if (cfg.clock != clock_kind::real)
      throw py::value_error("worker_processes=True runs the workers in processes of their own, on the real clock: "
                            "give clock=\"real\" (the virtual clock runs a job in one process)");
    auto started = start_cluster(cfg.workers).cast<std::pair<std::string, std::string>>();
    head = local_head{started.first, started.second};
  }
  std::atomic<bool> interrupted{false};
  const std::string interrupted_why = "interrupted (KeyboardInterrupt)";
  auto run = run_interruptible(
    [&] {
      cli::progress_display shown(cfg.progress);
      shown.begin(label);
      auto stop_when = [&] { return interrupted ? interrupted_why : std::string(); };
      train_run out;
      auto quiet = cfg;  // its files are written below, unless a fault of the program's loop ended it
      quiet.out_dir.clear();
      if (head) {
        out.result = run_on_head(quiet, *head, stop_when);
      } else {
        caf::actor_system_config sys_cfg;
        configure(sys_cfg, cfg);
        caf::actor_system sys{sys_cfg};
        job_options jopts;
        jopts.on_progress = shown.callback();
        jopts.stop_when = stop_when;
        auto j = job::spawn(sys, quiet, std::move(jopts));
        j.start();
        out.result = j.wait();
      }
      shown.end();
      if (interrupted)
        out.stopped = interrupted_why;
      for (auto& f : out.result.failures)
        if (f.find("user_loop_failed") != std::string::npos)
          return out;  // raised as RunFailed, with nothing written (syncpoint/__init__.py)
      if (!cfg.out_dir.empty()) {
        write_run(cfg.out_dir, out.result);
        auto p = current_provenance(cli::command_line("train", args), cfg);
        p.label = label;
        if (head)
          p.machine["ran on"] = "this machine, a process a worker: a head on " + head->address + " and " +
                                std::to_string(cfg.workers) + " nodes of one slot";
        write_provenance(cfg.out_dir, p);
      }
      if (!opts.save_model.empty())
        save_model_file(opts.save_model, out.result.final_model);  // (check_save_model before the run)
      return out;
    },
    interrupted);
  auto& r = run.result;
  py::dict d;
  d["label"] = label;
  d["summary_json"] = to_json(r.summary);
  d["trace"] = trace_rows(r.trace);
  d["failures"] = r.failures;
  d["version"] = r.final_model.version;
  d["final_weights"] = weights_array(r.final_model.values);
  r.final_model = {};
  d["stopped"] = run.stopped.empty() ? py::object(py::none()) : py::str(run.stopped);
  d["out"] = cfg.out_dir;
  return d;
}

const char* kind_name(option_spec::kind k) {
  return k == option_spec::kind::integer ? "integer" : k == option_spec::kind::real ? "number" : "text";
}

py::list protocols() {
  py::list out;
  for (auto& [name, summary] : protocol_catalog()) {
    py::list options;
    for (auto& o : protocol_option_specs(name)) {
      py::dict d;
      d["name"] = o.name;
      d["type"] = kind_name(o.type);
      d["default"] = o.default_value;
      d["help"] = o.help;
      d["choices"] = o.choices;
      d["min"] = o.min;
      d["max"] = o.max;
      options.append(d);
    }
    py::dict p;
    p["name"] = name;
    p["summary"] = summary;
    p["options"] = options;
    out.append(p);
  }
  return out;
}

int command(std::vector<std::string> argv) {
  std::vector<char*> ptrs;
  for (auto& a : argv)
    ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  py::gil_scoped_release nogil;  // Python loops and protocols take it on the job's threads
  return command_main(static_cast<int>(argv.size()), ptrs.data());
}

}  // namespace

void bind_jobs(py::module_& m) {
  m.def("_train", &train, py::arg("args"), py::arg("start_cluster") = py::none(),
        "Runs `syncpoint train ARGS...` in this process; returns the result's parts as a dict. With "
        "start_cluster(workers) -> (HOST:PORT, token), checks the options, calls it, and runs the job on that "
        "head instead (its workers in the nodes it started).");
  m.def("_protocols", &protocols, "Every registered protocol: name, summary and declared options.");
  m.def("_command_main", &command, py::arg("argv"),
        "The `syncpoint` command with argv (argv[0] the program's name); returns its exit status.");
  m.def("_set_this_program", &set_this_program, py::arg("argv_prefix"),
        "What runs this process's command again (compare's and sweeps' children, a node's cells).");
  m.def("_version", [] { return std::string(build_text()); }, "syncpoint's version and build.");
}

}  // namespace syncpoint::python
