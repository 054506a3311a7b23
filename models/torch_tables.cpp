// A LibTorch model's sparse tables (<syncpoint/torch_model.hpp>): each
// ps_embedding holds the rows of one pull, as a leaf tensor indexed by the
// batch's keys, and hands back their gradient after the backward pass.
#include <syncpoint/torch_model.hpp>

#include <stdexcept>

namespace syncpoint {

torch::Tensor ps_embedding_impl::forward(const torch::Tensor& keys) {
  if (!weight_.defined())
    throw std::logic_error("ps_embedding '" + spec_.name + "': no rows loaded (a sparse model computes on the rows "
                           "its keys() named, which the worker pulls)");
  auto ids = keys.to(torch::kCPU, torch::kLong).contiguous();
  auto local = torch::empty(ids.sizes(), torch::kLong);
  const auto* k = ids.data_ptr<int64_t>();
  auto* l = local.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    auto at = local_.find(static_cast<uint64_t>(k[i]));
    if (at == local_.end())
      throw std::invalid_argument("ps_embedding '" + spec_.name + "': key " + std::to_string(k[i]) +
                                  " was not pulled (the model's keys() did not name it)");
    l[i] = at->second;
  }
  auto rows = weight_.index_select(0, local.view({-1}).to(weight_.device()));
  auto shape = ids.sizes().vec();
  shape.push_back(static_cast<int64_t>(spec_.width));
  return rows.view(shape);
}

void ps_embedding_impl::load(const row_block& rows, torch::Device device) {
  auto n = static_cast<int64_t>(rows.keys.size());
  if (rows.values.size() != rows.keys.size() * spec_.width)
    throw std::invalid_argument("ps_embedding '" + spec_.name + "': " + std::to_string(rows.values.size()) +
                                " floats for " + std::to_string(n) + " rows of width " + std::to_string(spec_.width));
  keys_ = rows.keys;
  local_.clear();
  local_.reserve(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i)
    local_.emplace(keys_[i], static_cast<int64_t>(i));
  auto host = torch::from_blob(const_cast<float*>(rows.values.data()), {n, static_cast<int64_t>(spec_.width)});
  weight_ = (device.is_cpu() ? host.clone() : host.to(device)).requires_grad_(true);
}

row_block ps_embedding_impl::gradient() const {
  row_block out;
  out.keys = keys_;
  out.values.assign(keys_.size() * spec_.width, 0.0f);
  if (weight_.defined() && weight_.grad().defined()) {
    auto g = weight_.grad().to(torch::kCPU).contiguous();
    std::copy(g.data_ptr<float>(), g.data_ptr<float>() + g.numel(), out.values.begin());
  }
  return out;
}

void ps_embedding_impl::clear_gradient() {
  if (weight_.defined())
    weight_.mutable_grad() = torch::Tensor();
}

std::vector<table_spec> torch_model::tables() const {
  std::vector<table_spec> out;
  for (auto& e : embeddings_)
    out.push_back(e->spec());
  return out;
}

std::vector<std::vector<uint64_t>> torch_model::keys(const batch_view& b) {
  return keys(torch::from_blob(const_cast<float*>(b.x), b.sizes()));
}

std::vector<std::vector<uint64_t>> torch_model::keys(const torch::Tensor& x) {
  if (embeddings_.empty())
    return {};
  if (keys_)
    return keys_(x);
  if (embeddings_.size() != 1)
    throw std::logic_error("a module of " + std::to_string(embeddings_.size()) +
                           " ps_embeddings needs torch_model::set_keys to say which keys each reads");
  auto ids = x.to(torch::kCPU, torch::kLong).contiguous();
  const auto* k = ids.data_ptr<int64_t>();
  std::vector<uint64_t> out;
  out.reserve(static_cast<size_t>(ids.numel()));
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (k[i] < 0)
      throw std::invalid_argument("ps_embedding '" + embeddings_[0]->spec().name + "': a negative key (" +
                                  std::to_string(k[i]) + ") in the examples");
    out.push_back(static_cast<uint64_t>(k[i]));
  }
  return {std::move(out)};
}

void torch_model::load_rows(std::vector<row_block> rows) {
  if (embeddings_.empty())
    model::load_rows(std::move(rows));  // refuses: no tables
  for (auto& block : rows) {
    if (block.table >= embeddings_.size())
      throw std::invalid_argument("rows of table " + std::to_string(block.table) + " for a model of " +
                                  std::to_string(embeddings_.size()) + " tables");
    embeddings_[block.table]->load(block, device_);
  }
}

void torch_model::find_embeddings() {
  for (auto& m : module_->modules(/*include_self=*/true))
    if (auto e = std::dynamic_pointer_cast<ps_embedding_impl>(m))
      embeddings_.push_back(e);
}

void torch_model::clear_row_gradients() {
  for (auto& e : embeddings_)
    e->clear_gradient();
}

void torch_model::take_row_gradients() {
  row_grads_.clear();
  for (size_t t = 0; t < embeddings_.size(); ++t) {
    row_grads_.push_back(embeddings_[t]->gradient());
    row_grads_.back().table = static_cast<uint32_t>(t);
  }
}

}  // namespace syncpoint
