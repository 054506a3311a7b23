// Protocols written in Python (subclasses of syncpoint.Protocol): a C++
// protocol whose callbacks call the Python object's methods, holding the GIL
// for each. The coordinator is one actor, so its calls come one at a time, in
// the order of the run's events: a virtual-clock run of a Python protocol is
// the same bytes every time, as a C++ protocol's is.
//
// The coordinator_api reaches Python as a handle that is valid during the
// callback only: one kept past it answers RuntimeError, never a dangling call.
#include "python/protocols.hpp"

#include "python/loops.hpp"
#include <syncpoint/protocol.hpp>
#include <syncpoint/protocol_archive.hpp>

#include <pybind11/stl.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <stdexcept>

namespace py = pybind11;

namespace syncpoint::python {

namespace {

// The coordinator_api of one callback.
struct api_handle {
  coordinator_api* api = nullptr;
  coordinator_api& get() const {
    if (!api)
      throw std::runtime_error("this coordinator_api was a callback's: it is valid only until the callback returns");
    return *api;
  }
};

// A name among `known`, as the enum value; a ValueError from `where` otherwise.
template <class Enum>
Enum named(const std::string& where, const std::string& name, std::initializer_list<std::pair<const char*, Enum>> known) {
  std::string listed;
  for (auto& [n, v] : known) {
    if (name == n)
      return v;
    listed += (listed.empty() ? "" : ", ") + std::string(n);
  }
  throw py::value_error(where + ": '" + name + "' is not one of " + listed);
}

template <class Enum>
const char* name_of(Enum value, std::initializer_list<std::pair<const char*, Enum>> known) {
  for (auto& [n, v] : known)
    if (v == value)
      return n;
  return "?";
}

ps_mode mode_of(const std::string& name) {
  return named<ps_mode>("set_mode", name,
                        {{"immediate", ps_mode::immediate}, {"buffered", ps_mode::buffered},
                         {"gated", ps_mode::gated}, {"delayed", ps_mode::delayed}});
}

const std::initializer_list<std::pair<const char*, push_kind>> push_kinds{{"gradient", push_kind::gradient},
                                                                          {"outer", push_kind::outer}};
const std::initializer_list<std::pair<const char*, fragment_layout>> layouts{
  {"strided", fragment_layout::strided}, {"contiguous", fragment_layout::contiguous}};

// One of local_work's fields as set_local_work's keyword: its name, how a value sets it, how it reads.
struct work_field {
  const char* name;
  void (*set)(local_work&, py::handle);
  py::object (*get)(const local_work&);
};

// Every field once (include/syncpoint/local_work.hpp): set_local_work, local_work_of and the
// refusal of an unknown keyword all read this list.
#define SYNCPOINT_WORK_FIELD(NAME, TYPE, MEMBER)                                           \
  work_field {                                                                             \
    NAME, [](local_work& w, py::handle v) { w.MEMBER = v.cast<TYPE>(); },                  \
      [](const local_work& w) { return py::object(py::cast(w.MEMBER)); }                   \
  }
const work_field work_fields[] = {
  SYNCPOINT_WORK_FIELD("steps", uint32_t, steps),
  {"inner", [](local_work& w, py::handle v) { w.inner.type = parse_inner_kind(v.cast<std::string>()); },
   [](const local_work& w) { return py::object(py::str(to_string(w.inner.type))); }},
  SYNCPOINT_WORK_FIELD("inner_lr", double, inner.lr),
  SYNCPOINT_WORK_FIELD("inner_momentum", double, inner.momentum),
  SYNCPOINT_WORK_FIELD("inner_weight_decay", double, inner.weight_decay),
  SYNCPOINT_WORK_FIELD("inner_beta1", double, inner.beta1),
  SYNCPOINT_WORK_FIELD("inner_beta2", double, inner.beta2),
  SYNCPOINT_WORK_FIELD("inner_eps", double, inner.eps),
  SYNCPOINT_WORK_FIELD("inner_schedule", std::string, inner.schedule),
  SYNCPOINT_WORK_FIELD("inner_warmup", double, inner.warmup),
  {"push", [](local_work& w, py::handle v) { w.push = named("set_local_work: push", v.cast<std::string>(), push_kinds); },
   [](const local_work& w) { return py::object(py::str(name_of(w.push, push_kinds))); }},
  SYNCPOINT_WORK_FIELD("alpha", double, alpha),
  SYNCPOINT_WORK_FIELD("fragments", uint32_t, fragments),
  SYNCPOINT_WORK_FIELD("fragment", uint32_t, fragment),
  {"layout",
   [](local_work& w, py::handle v) { w.layout = named("set_local_work: layout", v.cast<std::string>(), layouts); },
   [](const local_work& w) { return py::object(py::str(name_of(w.layout, layouts))); }},
  SYNCPOINT_WORK_FIELD("overlap", uint32_t, overlap),
};
#undef SYNCPOINT_WORK_FIELD

// set_local_work's keywords, each the field of that name (unnamed ones keep their defaults).
local_work local_work_of(const py::kwargs& kw) {
  local_work w;
  for (auto& [key, value] : kw) {
    auto k = key.cast<std::string>();
    auto* f = std::find_if(std::begin(work_fields), std::end(work_fields), [&](auto& x) { return k == x.name; });
    if (f == std::end(work_fields)) {
      std::string listed;
      for (auto& x : work_fields)
        listed += (listed.empty() ? "" : ", ") + std::string(x.name);
      throw py::type_error("set_local_work: no field '" + k + "' (" + listed + ")");
    }
    f->set(w, value);
  }
  return w;
}

py::dict local_work_dict(const local_work& w) {
  py::dict d;
  for (auto& f : work_fields)
    d[f.name] = f.get(w);
  return d;
}

// The options a job gave, typed as the protocol declared them.
py::dict typed_options(const protocol_options& opts, const std::vector<option_spec>& declared) {
  py::dict out;
  for (auto& o : declared) {
    if (!opts.has(o.name))
      continue;
    if (o.type == option_spec::kind::integer)
      out[py::str(o.name)] = opts.integer(o.name);
    else if (o.type == option_spec::kind::real)
      out[py::str(o.name)] = opts.real(o.name);
    else
      out[py::str(o.name)] = opts.text(o.name);
  }
  return out;
}

class python_protocol : public protocol {
 public:
  explicit python_protocol(py::object self) : self_(std::move(self)) {}

  ~python_protocol() override {
    if (!Py_IsInitialized()) {  // the interpreter is gone: its object goes with it
      self_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    self_ = py::object();
  }

  void on_start(coordinator_api& c) override { call(c, "on_start"); }
  void on_push(coordinator_api& c, worker_id w) override { call(c, "on_push", w); }
  void on_lost(coordinator_api& c, worker_id w) override { call(c, "on_lost", w); }
  void on_joined(coordinator_api& c, worker_id w) override { call(c, "on_joined", w); }
  void on_timer(coordinator_api& c, uint64_t tag) override { call(c, "on_timer", tag); }

  // Python's checkpoint() returns bytes, and restore(bytes) takes them back; a class that does
  // not define checkpoint() cannot be checkpointed, as a C++ protocol without checkpoint().
  void checkpoint(protocol_archive& ar) override {
    std::string bytes, failure;
    bool defined = false;
    {
      py::gil_scoped_acquire gil;
      try {
        defined = !py::getattr(self_, "checkpoint").attr("__func__").is(python_base().attr("checkpoint"));
        if (defined && !ar.loading())
          bytes = py::bytes(self_.attr("checkpoint")());
      } catch (py::error_already_set& e) {
        failure = python_error_line(e);
      }
    }
    if (!failure.empty())
      throw std::runtime_error("checkpoint(): " + failure);
    if (!defined) {
      protocol::checkpoint(ar);  // refuses
      return;
    }
    ar(bytes);
    if (!ar.loading())
      return;
    py::gil_scoped_acquire gil;
    try {
      self_.attr("restore")(py::bytes(bytes));
    } catch (py::error_already_set& e) {
      failure = python_error_line(e);
    }
    if (!failure.empty())
      throw std::runtime_error("restore(): " + failure);
  }

 private:
  static py::object python_base() { return py::module_::import("syncpoint").attr("Protocol"); }

  template <class... Args>
  void call(coordinator_api& c, const char* method, Args... args) {
    std::string failure;
    {
      py::gil_scoped_acquire gil;
      // A thread's first acquire makes it a Python thread state, which the release would throw
      // away again: kept, a call costs the GIL and the call (bench/python_overhead.py).
      static thread_local bool kept = false;
      if (!kept) {
        gil.inc_ref();
        kept = true;
      }
      auto handle = std::make_shared<api_handle>(api_handle{&c});
      try {
        self_.attr(method)(py::cast(handle), args...);
      } catch (py::error_already_set& e) {
        failure = std::string(method) + "(): " + python_error_line(e);
      }
      handle->api = nullptr;
    }
    if (!failure.empty())
      throw std::runtime_error(failure);  // the run ends: protocol_failed, with this line
  }

  py::object self_;
};

option_spec::kind kind_of(const std::string& type) {
  if (type == "integer")
    return option_spec::kind::integer;
  if (type == "number")
    return option_spec::kind::real;
  if (type == "text")
    return option_spec::kind::text;
  throw py::value_error("an option's type is integer, number or text, not '" + type + "'");
}

bool register_python_protocol(const std::string& name, const std::string& summary, py::object cls,
                              const std::vector<py::tuple>& options,
                              const std::map<std::string, std::string>& job_defaults) {
  std::vector<option_spec> declared;
  for (auto& o : options) {  // ProtocolOption(name, type, default, help, choices, min, max, short_name)
    option_spec s;
    s.name = o[0].cast<std::string>();
    s.type = kind_of(o[1].cast<std::string>());
    s.default_value = o[2].is_none() ? "" : py::str(o[2]).cast<std::string>();
    s.help = o[3].cast<std::string>();
    s.choices = o[4].cast<std::vector<std::string>>();
    s.min = o[5].cast<double>();
    s.max = o[6].cast<double>();
    s.short_name = o.size() > 7 && !o[7].is_none() ? o[7].cast<std::string>() : "";
    declared.push_back(std::move(s));
  }
  auto kept = cls.release();  // for the process's life: the registry outlives the interpreter
  return register_protocol(
    name, summary,
    [kept, declared](const protocol_options& opts) -> std::unique_ptr<protocol> {
      py::gil_scoped_acquire gil;
      std::string failure;
      try {
        return std::make_unique<python_protocol>(kept(typed_options(opts, declared)));
      } catch (py::error_already_set& e) {
        failure = python_error_line(e);
      }
      throw std::invalid_argument("the protocol could not be made: " + failure);
    },
    declared, job_defaults);
}

}  // namespace

void bind_protocols(py::module_& m) {
  py::class_<api_handle, std::shared_ptr<api_handle>>(
    m, "CoordinatorAPI", "What a protocol sees and does (coordinator_api); valid during the callback it came with.")
    .def("workers", [](const api_handle& h) { return h.get().workers(); }, "Worker ids are 0 .. workers()-1.")
    .def("live", [](const api_handle& h, worker_id w) { return h.get().live(w); }, py::arg("w"))
    .def("live_workers", [](const api_handle& h) { return h.get().live_workers(); })
    .def("live_count", [](const api_handle& h) { return h.get().live_count(); })
    .def("waiting_count", [](const api_handle& h) { return h.get().waiting_count(); })
    .def("min_clock", [](const api_handle& h) { return h.get().min_clock(); })
    .def("clock", [](const api_handle& h, worker_id w) { return h.get().clock(w); }, py::arg("w"),
         "Gradients worker w has pushed (the push being handled included).")
    .def("now", [](const api_handle& h) { return h.get().now(); }, "Seconds since the start, on the run's clock.")
    .def("waiting", [](const api_handle& h, worker_id w) { return h.get().waiting(w); }, py::arg("w"))
    .def("release", [](const api_handle& h, worker_id w, bool pull) { h.get().release(w, pull); }, py::arg("w"),
         py::arg("pull") = true, "Lets w start its next iteration (pulling the newest version first).")
    .def("release_at", [](const api_handle& h, worker_id w, double t, bool pull) { h.get().release_at(w, t, pull); },
         py::arg("w"), py::arg("t"), py::arg("pull") = true)
    .def("commit", [](const api_handle& h) { h.get().commit(); }, "The PS applies its buffered pushes as one update.")
    .def("set_mode", [](const api_handle& h, const std::string& mode) { h.get().set_mode(mode_of(mode)); },
         py::arg("mode"), "'immediate', 'buffered', 'gated' or 'delayed'.")
    .def("publish", [](const api_handle& h) { h.get().publish(); })
    .def("set_worker_behavior",
         [](const api_handle& h, bool local_step, bool overlap) { h.get().set_worker_behavior(local_step, overlap); },
         py::arg("local_step"), py::arg("overlap"))
    .def("set_timer", [](const api_handle& h, double t, uint64_t tag) { h.get().set_timer(t, tag); }, py::arg("t"),
         py::arg("tag"), "Calls on_timer(c, tag) at time t (seconds on the run's clock).")
    .def("set_batch", [](const api_handle& h, worker_id w, uint32_t b) { h.get().set_batch(w, b); }, py::arg("w"),
         py::arg("batch"))
    .def("batch", [](const api_handle& h, worker_id w) { return h.get().batch(w); }, py::arg("w"))
    .def("samples", [](const api_handle& h) { return h.get().samples(); })
    .def("sample_budget", [](const api_handle& h) { return h.get().sample_budget(); })
    .def("time_budget", [](const api_handle& h) { return h.get().time_budget(); })
    .def("run_fraction", [](const api_handle& h) { return h.get().run_fraction(); })
    .def("set_momentum",
         [](const api_handle& h, double mu, bool clear, uint32_t ramp) { h.get().set_momentum(mu, clear, ramp); },
         py::arg("mu"), py::arg("clear") = false, py::arg("ramp_steps") = 0)
    .def("base_momentum", [](const api_handle& h) { return h.get().base_momentum(); })
    .def("mark", [](const api_handle& h, const std::string& kind, const std::string& note,
                    double value) { h.get().mark(kind, note, value); },
         py::arg("kind"), py::arg("note"), py::arg("value") = 0.0, "Writes an event into the trace.")
    .def("evaluate", [](const api_handle& h) { h.get().evaluate(); })
    .def(
      "set_local_work",
      [](const api_handle& h, worker_id w, const py::kwargs& kw) { h.get().set_local_work(w, local_work_of(kw)); },
      py::arg("w"),
      "What w does between its exchanges from its next release on: set_local_work(w, steps=10, inner='sgd', "
      "inner_lr=0.05, push='outer', ...), the fields of local_work (unnamed ones take their defaults).")
    .def("local_work_of", [](const api_handle& h, worker_id w) { return local_work_dict(h.get().local_work_of(w)); },
         py::arg("w"), "What w was last given, as set_local_work's keywords.");
  m.def("_register_protocol", &register_python_protocol, py::arg("name"), py::arg("summary"), py::arg("cls"),
        py::arg("options"), py::arg("job_defaults"), "Registers a Python protocol class; False if the name is taken.");
}

}  // namespace syncpoint::python
