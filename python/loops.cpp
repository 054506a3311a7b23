// Loops written in Python (@syncpoint.client_loop): each worker's loop runs
// on the thread syncpoint gives it, holding the GIL while Python runs and
// releasing it while the worker exchanges with the PS (pull, push), so the
// workers' Python code takes turns on the interpreter and their exchanges
// overlap it. The protocol, the link model and the clock stay the runtime's:
// a virtual-clock run with a Python loop is the same bytes every time.
#include "python/loops.hpp"

#include "python/arrays.hpp"

#include <syncpoint/model.hpp>
#include <syncpoint/worker_client.hpp>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <stdexcept>

namespace py = pybind11;

namespace syncpoint::python {

std::string python_error_line(const py::error_already_set& e) {
  std::string type = py::str(e.type().attr("__name__"));
  std::string text = py::str(e.value());
  return text.empty() ? type : type + ": " + text;
}

namespace {

using floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
using ids = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

// A table's keys from Python: non-negative 64-bit ids.
std::vector<uint64_t> keys_of(const ids& a, size_t table) {
  std::vector<uint64_t> out(static_cast<size_t>(a.size()));
  for (py::ssize_t i = 0; i < a.size(); ++i) {
    if (a.data()[i] < 0)
      throw py::value_error("table " + std::to_string(table) + ": key " + std::to_string(a.data()[i]) +
                            " is negative (keys are 0 .. 2^63 - 1)");
    out[static_cast<size_t>(i)] = static_cast<uint64_t>(a.data()[i]);
  }
  return out;
}

// Rows to Python: per table (keys as int64, values), each array owning its vector.
py::list rows_to_python(std::vector<row_block>& rows) {
  py::list out;
  for (auto& b : rows) {
    std::vector<int64_t> k(b.keys.begin(), b.keys.end());
    auto* owner = new std::vector<int64_t>(std::move(k));
    py::capsule keep(owner, [](void* p) { delete static_cast<std::vector<int64_t>*>(p); });
    py::array_t<int64_t> keys({static_cast<py::ssize_t>(owner->size())}, {static_cast<py::ssize_t>(sizeof(int64_t))},
                              owner->data(), keep);
    out.append(py::make_tuple(keys, owned_array(std::move(b.values))));
  }
  return out;
}

// A Python object kept for the process's life: a registry's entries outlive the interpreter's
// finalization, when dropping a reference would crash.
py::handle kept(py::object o) {
  return o.release();
}

bool register_python_loop(const std::string& name, py::object fn) {
  auto loop = kept(std::move(fn));
  return register_client_loop(name, [loop](worker_client& ps) {
    std::string failure;
    {
      py::gil_scoped_acquire gil;
      try {
        loop(py::cast(&ps, py::return_value_policy::reference));
      } catch (py::error_already_set& e) {
        failure = python_error_line(e);
      }
    }
    if (!failure.empty())
      throw std::runtime_error(failure);  // the worker ends the run: user_loop_failed, with this line
  });
}

}  // namespace

void bind_loops(py::module_& m) {
  py::class_<push_answer>(m, "PushAnswer", "What the protocol said to a push.")
    .def_readonly("stop", &push_answer::stop, "The job is over: return from the loop.")
    .def_readonly("refused", &push_answer::refused, "Not empty: the PS dropped this gradient, and why.")
    .def_readonly("version", &push_answer::version, "The version pull() gives now.")
    .def("__repr__", [](const push_answer& a) {
      return "<PushAnswer stop=" + std::string(a.stop ? "True" : "False") + " version=" + std::to_string(a.version) +
             (a.refused.empty() ? "" : " refused=" + a.refused) + ">";
    });
  py::class_<worker_client>(m, "WorkerClient", py::dynamic_attr(),
                            "One worker's handle on its job, given to a loop (valid only while the loop runs).")
    .def_property_readonly("worker", [](const worker_client& c) { return c.context().worker; }, "This worker's id.")
    .def_property_readonly("workers", [](const worker_client& c) { return c.context().workers; }, "The job's workers.")
    .def_property_readonly("seed", [](const worker_client& c) { return c.context().seed; }, "The job's seed.")
    .def_property_readonly("batch", &worker_client::batch, "The batch size now.")
    .def_property_readonly("step", &worker_client::step, "Gradients this worker pushed so far.")
    .def_property_readonly("lr", &worker_client::lr, "The learning rate the protocol's last release named (0: none).")
    .def(
      "_pull",
      [](worker_client& c) {
        pulled_weights w;
        {
          py::gil_scoped_release nogil;
          w = c.pull();
        }
        return py::make_tuple(w.version, owned_array(std::move(w.values)));
      },
      "(version, values) of the weights the protocol released to this worker.")
    .def(
      "_pull_keys",
      [](worker_client& c, const std::vector<ids>& keys) {
        std::vector<std::vector<uint64_t>> asked;
        for (size_t t = 0; t < keys.size(); ++t)
          asked.push_back(keys_of(keys[t], t));
        pulled_weights w;
        {
          py::gil_scoped_release nogil;
          w = c.pull(asked);
        }
        return py::make_tuple(w.version, owned_array(std::move(w.values)), rows_to_python(w.rows));
      },
      "(version, values, [(keys, rows) a table]) of the weights and the keys' rows, one version.")
    .def(
      "_push_rows",
      [](worker_client& c, const floats& grad, const std::vector<std::pair<ids, floats>>& rows, int64_t samples,
         float loss) {
        std::vector<row_block> blocks;
        for (size_t t = 0; t < rows.size(); ++t)
          blocks.push_back({static_cast<uint32_t>(t), keys_of(rows[t].first, t),
                            std::vector<float>(rows[t].second.data(), rows[t].second.data() + rows[t].second.size())});
        py::gil_scoped_release nogil;
        std::vector<float> g(grad.data(), grad.data() + grad.size());
        return c.push(g, std::move(blocks), samples, loss);
      },
      py::arg("grad"), py::arg("rows"), py::arg("samples"), py::arg("loss") = 0.0f)
    .def(
      "_push",
      [](worker_client& c, const floats& grad, int64_t samples, float loss) {
        // Without the GIL from here: the copy into the client's vector (a model's length of floats)
        // would hold the job's other Python loops up. The caller's array outlives the call.
        py::gil_scoped_release nogil;
        std::vector<float> g(grad.data(), grad.data() + grad.size());
        return c.push(g, samples, loss);
      },
      py::arg("grad"), py::arg("samples"), py::arg("loss") = 0.0f)
    .def("report", &worker_client::report, py::arg("name"), py::arg("value"),
         "Adds a number to the trace with the next push.");
  m.def("_register_client_loop", &register_python_loop, py::arg("name"), py::arg("fn"),
        "Registers a Python function of a WorkerClient as the loop `name`; False if the name is taken.");
  m.def(
    "_register_weights",
    [](const std::string& name, size_t n) { return register_model(name, [n] { return weights_only(n); }); },
    py::arg("name"), py::arg("size"), "Registers a model of `size` zeros that only a loop trains.");
}

}  // namespace syncpoint::python
