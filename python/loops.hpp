// The loop functions of the extension `syncpoint._syncpoint` (syncpoint/__init__.py wraps them).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace syncpoint::python {

/// WorkerClient, PushAnswer, _register_client_loop, _register_weights.
void bind_loops(pybind11::module_& m);

/// "Type: message" of the Python exception being handled (the traceback's last line). Call with the GIL held.
std::string python_error_line(const pybind11::error_already_set& e);

}  // namespace syncpoint::python
