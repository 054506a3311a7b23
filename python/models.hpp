// The model functions of the extension `syncpoint._syncpoint` (syncpoint/__init__.py wraps them).
#pragma once

#include <pybind11/pybind11.h>

namespace syncpoint::python {

/// _initial_weights, _model_gradient.
void bind_models(pybind11::module_& m);

}  // namespace syncpoint::python
