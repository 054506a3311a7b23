// The protocol functions of the extension `syncpoint._syncpoint` (syncpoint/__init__.py wraps them).
#pragma once

#include <pybind11/pybind11.h>

namespace syncpoint::python {

/// CoordinatorAPI, _register_protocol.
void bind_protocols(pybind11::module_& m);

}  // namespace syncpoint::python
