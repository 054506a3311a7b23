// The job functions of the extension `syncpoint._syncpoint` (syncpoint/__init__.py wraps them).
#pragma once

#include <pybind11/pybind11.h>

namespace syncpoint::python {

/// _train, _protocols, _command_main, _version.
void bind_jobs(pybind11::module_& m);

}  // namespace syncpoint::python
