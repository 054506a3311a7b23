// The built-in "ctr" model (docs/sparse.md): a click-through-rate model in
// DLRM's shape. Each example is `numeric` floats, then `fields` categorical
// ids (exact integers in floats: --dataset clicks). Each id is a key of one
// sparse table, (field + 1) << 40 | id, whose row is the id's embedding; the
// MLP takes the numeric features, the embeddings and their pairwise dot
// products (DLRM's interaction), through one hidden ReLU layer to a logit
// per class. Eigen, gradients by hand: no LibTorch, so it runs in any build.
//
// With the option `table=dense` (and `vocab=N`, the ids of a field) the same
// table lives in the dense vector instead, after the MLP: the same network,
// the same first rows (initial_row), pushed and pulled whole. A sparse job
// and this one compute the same floats (tests/test_sparse_jobs.cpp).
#include <syncpoint/messages.hpp>
#include <syncpoint/model.hpp>

#include "models/auc.hpp"
#include "models/name_options.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <unordered_map>

namespace syncpoint {

namespace {

using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using cmatrix_map = Eigen::Map<const matrix>;
using matrix_map = Eigen::Map<matrix>;

struct ctr_options {
  int64_t fields = 26;
  int64_t width = 16;
  int64_t hidden = 64;
  bool dense_table = false;
  int64_t vocab = 0;  // table=dense: ids 0 .. vocab - 1 of each field
  row_optimizer optimizer = row_optimizer::sgd;
  uint64_t keys = 0;  // the distinct ids it may see, all fields (0: unknown): the table's expected_keys
  row_capacity capacity = row_capacity::unbounded;
  uint64_t limit = 0;  // lru, lfu: rows kept; ttl: steps untouched
  uint32_t admit = 1;  // a row at an id's Nth sighting
};

ctr_options parse_options(const std::string& spec) {
  ctr_options o;
  auto bad = [](const std::string& what) {
    throw std::invalid_argument("ctr: '" + what + "' is not one of fields=N, width=N, hidden=N, opt=sgd|adagrad|adam, "
                                "keys=N, lru=N, lfu=N, ttl=STEPS, admit=N, table=sparse|dense, vocab=N");
  };
  for (auto& option : name_options(spec, "ctr", "fields, width, hidden, opt, keys, lru, lfu, ttl, admit, table, vocab")) {
    const std::string &name = option.first, &value = option.second;
    const auto item = name + "=" + value;
    auto number = [&] {
      char* end = nullptr;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v < 1 || v > (1LL << 40))
        bad(item);
      return static_cast<int64_t>(v);
    };
    if (name == "fields")
      o.fields = number();
    else if (name == "width")
      o.width = number();
    else if (name == "hidden")
      o.hidden = number();
    else if (name == "vocab")
      o.vocab = number();
    else if (name == "keys")
      o.keys = static_cast<uint64_t>(number());
    else if (name == "lru" || name == "lfu" || name == "ttl") {
      o.capacity = name == "lru" ? row_capacity::lru : name == "lfu" ? row_capacity::lfu : row_capacity::ttl;
      o.limit = static_cast<uint64_t>(number());
    } else if (name == "admit")
      o.admit = static_cast<uint32_t>(number());
    else if (name == "table" && (value == "sparse" || value == "dense"))
      o.dense_table = value == "dense";
    else if (name == "opt" && value == "sgd")
      o.optimizer = row_optimizer::sgd;
    else if (name == "opt" && value == "adagrad")
      o.optimizer = row_optimizer::adagrad;
    else if (name == "opt" && value == "adam")
      o.optimizer = row_optimizer::adam;
    else
      bad(item);
  }
  if (o.dense_table && o.vocab == 0)
    throw std::invalid_argument("ctr: table=dense holds each field's ids densely: give vocab=N (ids 0 .. N-1)");
  return o;
}

uint64_t key_of(int64_t field, uint64_t id) {
  return (static_cast<uint64_t>(field + 1) << 40) | id;
}

class ctr_model : public model {
 public:
  ctr_model(ctr_options o, int64_t features, int64_t classes)
    : o_(o), numeric_(features - o.fields), classes_(classes),
      in_(numeric_ + o.fields * o.width + o.fields * (o.fields - 1) / 2) {
    spec_.name = "ids";
    spec_.width = static_cast<uint32_t>(o.width);
    spec_.init = row_init::normal;
    spec_.init_scale = 0.05;
    spec_.optimizer = o.optimizer;
    spec_.expected_keys = o.keys;
    spec_.capacity = o.capacity;
    spec_.max_rows = o.capacity == row_capacity::ttl ? 0 : o.limit;
    spec_.ttl_steps = o.capacity == row_capacity::ttl ? o.limit : 0;
    spec_.admit_after = o.admit;
    mlp_ = static_cast<size_t>(o.hidden * in_ + o.hidden + classes * o.hidden + classes);
    w_.assign(size(), 0.0f);
  }

  size_t size() const override {
    return mlp_ + (o_.dense_table ? static_cast<size_t>(o_.fields * o_.vocab * o_.width) : 0);
  }

  std::vector<size_t> tensor_sizes() const override {
    std::vector<size_t> s{static_cast<size_t>(o_.hidden * in_), static_cast<size_t>(o_.hidden),
                          static_cast<size_t>(classes_ * o_.hidden), static_cast<size_t>(classes_)};
    if (o_.dense_table)
      s.push_back(size() - mlp_);
    return s;
  }

  std::vector<float> initial_weights(uint64_t seed) override {
    std::vector<float> w(size(), 0.0f);
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> first(0.0f, std::sqrt(2.0f / static_cast<float>(in_)));
    std::normal_distribution<float> second(0.0f, std::sqrt(1.0f / static_cast<float>(o_.hidden)));
    auto n1 = static_cast<size_t>(o_.hidden * in_);
    for (size_t i = 0; i < n1; ++i)
      w[i] = first(rng);
    auto w2 = n1 + static_cast<size_t>(o_.hidden);
    for (size_t i = 0; i < static_cast<size_t>(classes_ * o_.hidden); ++i)
      w[w2 + i] = second(rng);
    if (o_.dense_table)  // the rows a sparse table would start from
      for (int64_t f = 0; f < o_.fields; ++f)
        for (int64_t id = 0; id < o_.vocab; ++id) {
          auto row = initial_row(spec_, seed, key_of(f, static_cast<uint64_t>(id)));
          std::copy(row.begin(), row.end(), w.begin() + static_cast<std::ptrdiff_t>(dense_row(f, id)));
        }
    return w;
  }

  void load(const float* w) override { std::copy(w, w + size(), w_.begin()); }
  void local_step(const float* grad, float lr) override {
    for (size_t i = 0; i < w_.size(); ++i)
      w_[i] -= lr * grad[i];
  }
  std::vector<float> current_weights() const override { return w_; }

  std::vector<table_spec> tables() const override {
    if (o_.dense_table)
      return {};
    return {spec_};
  }

  std::vector<std::vector<uint64_t>> keys(const batch_view& b) override {
    if (o_.dense_table)
      return {};
    std::vector<uint64_t> out;
    out.reserve(static_cast<size_t>(b.count * o_.fields));
    for (int64_t n = 0; n < b.count; ++n)
      for (int64_t f = 0; f < o_.fields; ++f)
        out.push_back(key_of(f, id_of(b, n, f)));
    return {std::move(out)};
  }

  void load_rows(std::vector<row_block> rows) override {
    if (o_.dense_table)
      throw std::logic_error("ctr: table=dense holds its table in the weights: it takes no rows");
    if (rows.size() != 1 || rows[0].values.size() != rows[0].keys.size() * spec_.width)
      throw std::invalid_argument("ctr: rows of its one table, " + std::to_string(spec_.width) + " floats a key");
    rows_ = std::move(rows);
    where_.clear();
    for (size_t i = 0; i < rows_[0].keys.size(); ++i)
      where_[rows_[0].keys[i]] = i;
    grads_ = {{0, rows_[0].keys, std::vector<float>(rows_[0].values.size(), 0.0f)}};
  }

  const std::vector<row_block>& row_gradients() const override {
    if (o_.dense_table)
      throw std::logic_error("ctr: table=dense has no row gradients: its table's gradient is in the dense one");
    return grads_;
  }

  float gradient(const batch_view& b, float* grad) override {
    auto z = inputs(b);
    matrix a1, h1, logits;
    forward(z, a1, h1, logits);
    const auto batch = b.count;
    // Softmax cross-entropy, averaged over the batch.
    matrix d = logits;
    float loss = 0;
    for (int64_t n = 0; n < batch; ++n) {
      auto row = d.row(n);
      float top = row.maxCoeff();
      row = (row.array() - top).exp();
      float sum = row.sum();
      row /= sum;
      loss -= std::log(std::max(row(b.y[n]), 1e-30f));
      row(b.y[n]) -= 1.0f;
    }
    d /= static_cast<float>(batch);
    std::fill(grad, grad + size(), 0.0f);
    auto [w1, b1, w2, b2] = layers(w_.data());
    auto [g1, gb1, g2, gb2] = layers(grad);
    g2.noalias() = d.transpose() * h1;
    gb2 = d.colwise().sum().transpose();
    matrix dh = (d * w2).array() * (a1.array() > 0.0f).cast<float>();
    g1.noalias() = dh.transpose() * z;
    gb1 = dh.colwise().sum().transpose();
    matrix dz = dh * w1;
    if (!o_.dense_table)
      std::fill(grads_[0].values.begin(), grads_[0].values.end(), 0.0f);
    row_gradients_into(b, dz, grad);
    return loss / static_cast<float>(batch);
  }

  void predict(const batch_view& b, int64_t* labels) override {
    auto z = inputs(b);
    matrix a1, h1, logits;
    forward(z, a1, h1, logits);
    for (int64_t n = 0; n < b.count; ++n)
      logits.row(n).maxCoeff(&labels[n]);
  }

  // Accuracy, then (two classes) the AUC of the click probability and the log loss.
  std::vector<metric> evaluate(const dataset& test) override {
    std::vector<std::pair<double, int64_t>> scored;
    double logloss = 0;
    int64_t right = 0;
    for (int64_t start = 0; start < test.size; start += 1024) {
      auto b = test.view(start, std::min<int64_t>(1024, test.size - start));
      auto z = inputs(b);
      matrix a1, h1, logits;
      forward(z, a1, h1, logits);
      for (int64_t n = 0; n < b.count; ++n) {
        auto row = logits.row(n);
        Eigen::Index top = 0;
        row.maxCoeff(&top);
        right += top == b.y[n];
        Eigen::VectorXf p = (row.array() - row.maxCoeff()).exp().transpose();
        p /= p.sum();
        logloss -= std::log(std::max(p(b.y[n]), 1e-30f));
        if (classes_ == 2)
          scored.emplace_back(p(1), b.y[n]);
      }
    }
    auto n = static_cast<double>(std::max<int64_t>(test.size, 1));
    std::vector<metric> out{{"accuracy", static_cast<double>(right) / n}};
    if (classes_ == 2)
      out.push_back({"auc", auc_of(std::move(scored))});
    out.push_back({"logloss", logloss / n});
    return out;
  }

 private:
  ctr_options o_;
  int64_t numeric_, classes_, in_;
  size_t mlp_ = 0;
  table_spec spec_;
  std::vector<float> w_;
  std::vector<row_block> rows_, grads_;
  std::unordered_map<uint64_t, size_t> where_;  // a loaded key's place in rows_[0]

  struct views {
    Eigen::Map<matrix> w1;
    Eigen::Map<Eigen::VectorXf> b1;
    Eigen::Map<matrix> w2;
    Eigen::Map<Eigen::VectorXf> b2;
  };
  views layers(float* p) const {
    auto h = o_.hidden;
    return {Eigen::Map<matrix>(p, h, in_), Eigen::Map<Eigen::VectorXf>(p + h * in_, h),
            Eigen::Map<matrix>(p + h * in_ + h, classes_, h),
            Eigen::Map<Eigen::VectorXf>(p + h * in_ + h + classes_ * h, classes_)};
  }
  views layers(const float* p) const { return layers(const_cast<float*>(p)); }

  size_t dense_row(int64_t f, int64_t id) const {
    return mlp_ + static_cast<size_t>((f * o_.vocab + id) * o_.width);
  }

  uint64_t id_of(const batch_view& b, int64_t n, int64_t f) const {
    float v = b.x[n * b.dim + numeric_ + f];
    if (!(v >= 0) || v != std::floor(v) || v >= 16777216.0f || (o_.dense_table && v >= static_cast<float>(o_.vocab)))
      throw std::invalid_argument("ctr: field " + std::to_string(f) + " of example " + std::to_string(n) + " is " +
                                  std::to_string(v) + ", not an id in 0.." +
                                  std::to_string(o_.dense_table ? o_.vocab - 1 : 16777215));
    return static_cast<uint64_t>(v);
  }

  // Where example n's field f reads its row, and where its gradient goes.
  const float* row_of(const batch_view& b, int64_t n, int64_t f) const {
    auto id = id_of(b, n, f);
    if (o_.dense_table)
      return w_.data() + dense_row(f, static_cast<int64_t>(id));
    auto it = where_.find(key_of(f, id));
    if (it == where_.end())
      throw std::invalid_argument("ctr: no row for id " + std::to_string(id) + " of field " + std::to_string(f) +
                                  " (load_rows did not give its key)");
    return rows_[0].values.data() + it->second * spec_.width;
  }
  float* grad_of(const batch_view& b, int64_t n, int64_t f, float* grad) {
    auto id = id_of(b, n, f);
    if (o_.dense_table)
      return grad + dense_row(f, static_cast<int64_t>(id));
    return grads_[0].values.data() + where_.at(key_of(f, id)) * spec_.width;
  }

  // The MLP's input: numeric features, embeddings, their pairwise dot products.
  matrix inputs(const batch_view& b) const {
    const auto F = o_.fields, d = o_.width;
    if (b.dim != numeric_ + F)
      throw std::invalid_argument("ctr: examples of " + std::to_string(b.dim) + " floats, not " +
                                  std::to_string(numeric_ + F));
    matrix z(b.count, in_);
    std::vector<const float*> e(static_cast<size_t>(F));
    for (int64_t n = 0; n < b.count; ++n) {
      float* out = z.data() + n * in_;
      std::copy(b.x + n * b.dim, b.x + n * b.dim + numeric_, out);
      for (int64_t f = 0; f < F; ++f) {
        e[static_cast<size_t>(f)] = row_of(b, n, f);
        std::copy(e[static_cast<size_t>(f)], e[static_cast<size_t>(f)] + d, out + numeric_ + f * d);
      }
      float* dots = out + numeric_ + F * d;
      for (int64_t f = 0; f < F; ++f)
        for (int64_t g = f + 1; g < F; ++g) {
          float s = 0;
          for (int64_t j = 0; j < d; ++j)
            s += e[static_cast<size_t>(f)][j] * e[static_cast<size_t>(g)][j];
          *dots++ = s;
        }
    }
    return z;
  }

  void forward(const matrix& z, matrix& a1, matrix& h1, matrix& logits) const {
    auto [w1, b1, w2, b2] = layers(w_.data());
    a1.noalias() = z * w1.transpose();
    a1.rowwise() += b1.transpose();
    h1 = a1.cwiseMax(0.0f);
    logits.noalias() = h1 * w2.transpose();
    logits.rowwise() += b2.transpose();
  }

  // Each example's part of the input gradient goes to its rows: an
  // embedding's own place, and both sides of each dot product.
  void row_gradients_into(const batch_view& b, const matrix& dz, float* grad) {
    const auto F = o_.fields, d = o_.width;
    std::vector<float> de(static_cast<size_t>(F * d));
    std::vector<const float*> e(static_cast<size_t>(F));
    for (int64_t n = 0; n < b.count; ++n) {
      const float* in = dz.data() + n * in_;
      std::copy(in + numeric_, in + numeric_ + F * d, de.begin());
      for (int64_t f = 0; f < F; ++f)
        e[static_cast<size_t>(f)] = row_of(b, n, f);
      const float* dots = in + numeric_ + F * d;
      for (int64_t f = 0; f < F; ++f)
        for (int64_t g = f + 1; g < F; ++g) {
          float s = *dots++;
          for (int64_t j = 0; j < d; ++j) {
            de[static_cast<size_t>(f * d + j)] += s * e[static_cast<size_t>(g)][j];
            de[static_cast<size_t>(g * d + j)] += s * e[static_cast<size_t>(f)][j];
          }
        }
      for (int64_t f = 0; f < F; ++f) {
        float* out = grad_of(b, n, f, grad);
        for (int64_t j = 0; j < d; ++j)
          out[j] += de[static_cast<size_t>(f * d + j)];
      }
    }
  }
};

}  // namespace

std::unique_ptr<model> make_ctr(const model_input& in) {
  auto o = parse_options(in.options);
  if (in.shape.size() != 1 || in.shape[0] < o.fields)
    throw std::invalid_argument("ctr: takes examples of numeric features then " + std::to_string(o.fields) +
                                " categorical ids (--dataset clicks), not examples of shape " + shape_text(in.shape));
  if (in.classes < 2)
    throw std::invalid_argument("ctr: needs 2 classes or more (click or not), not " + std::to_string(in.classes));
  return std::make_unique<ctr_model>(o, in.shape[0], in.classes);
}

}  // namespace syncpoint
