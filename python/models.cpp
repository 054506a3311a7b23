// A registered model seen from Python, as a worker sees it: its initial weights, and its
// gradient at given weights on a batch. What a user checks a script model with against the
// network in PyTorch (docs/python.md, "Models and losses from PyTorch").
#include "python/models.hpp"

#include "python/arrays.hpp"

#include <syncpoint/model.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace syncpoint::python {

namespace {

using floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
using labels = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

model_input input_for(const std::vector<int64_t>& shape, int64_t classes, const std::string& loss) {
  model_input in;
  in.shape = shape;
  in.classes = classes;
  in.loss = loss;
  return in;
}

py::array_t<float> initial_weights(const std::string& name, uint64_t seed, const std::vector<int64_t>& shape,
                                   int64_t classes) {
  return owned_array(make_model(name, input_for(shape, classes, ""))->initial_weights(seed));
}

py::tuple model_gradient(const std::string& name, const floats& weights, const floats& x, const labels& y,
                         int64_t classes, const std::string& loss) {
  if (x.ndim() < 2)
    throw py::value_error("examples must be a batch: [batch, example shape...], not of rank " + std::to_string(x.ndim()));
  if (y.ndim() != 1 || y.shape(0) != x.shape(0))
    throw py::value_error("labels must be one per example: [" + std::to_string(x.shape(0)) + "]");
  std::vector<int64_t> shape(x.shape() + 1, x.shape() + x.ndim());
  auto m = make_model(name, input_for(shape, classes, loss));
  if (weights.ndim() != 1 || static_cast<size_t>(weights.shape(0)) != m->size())
    throw py::value_error("the model " + name + " has " + std::to_string(m->size()) + " values; weights has " +
                          std::to_string(weights.size()));
  for (int64_t i = 0; i < y.shape(0); ++i)
    if (y.data()[i] < 0 || y.data()[i] >= classes)
      throw py::value_error("label " + std::to_string(y.data()[i]) + " is not in 0.." + std::to_string(classes - 1));
  std::vector<float> grad(m->size());
  float value = 0;
  {
    py::gil_scoped_release nogil;
    m->load(weights.data());
    batch_view b;
    b.x = x.data();
    b.y = y.data();
    b.count = x.shape(0);
    b.dim = x.size() / x.shape(0);
    b.shape = shape.data();
    b.rank = static_cast<int64_t>(shape.size());
    value = m->gradient(b, grad.data());
  }
  return py::make_tuple(value, owned_array(std::move(grad)));
}

}  // namespace

void bind_models(py::module_& m) {
  m.def("_initial_weights", &initial_weights, py::arg("model"), py::arg("seed"), py::arg("shape"), py::arg("classes"),
        "The registered model's initial weights for examples of `shape` and `classes` classes.");
  m.def("_model_gradient", &model_gradient, py::arg("model"), py::arg("weights"), py::arg("examples"),
        py::arg("labels"), py::arg("classes"), py::arg("loss"),
        "(loss, gradient) of the registered model at `weights` on a batch, as a worker computes it.");
}

}  // namespace syncpoint::python
