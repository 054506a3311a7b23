// A blocking loop of the user's own (<syncpoint/worker_client.hpp>) as a
// worker_loop: the loop runs on a thread of its own, and it and the worker
// actor hand one turn back and forth. step() gives the loop the turn and
// waits until its push hands it back; push() waits until the next step().
// Exactly one side runs at a time, so the virtual clock's single scheduler
// thread sees a deterministic sequence, and the loop reads the worker's
// model without a lock: the hand-over (a mutex) orders every access.
#include <syncpoint/worker_client.hpp>

#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace syncpoint {

namespace {

// Both sides' shared state, and the loop's side of it (worker_client). The
// loop's thread holds it too, so a loop left running after its worker ended
// (one that ignores the stop) still finds it.
class handover final : public worker_client {
 public:
  handover(client_loop_fn fn, const loop_context& c) : fn_(std::move(fn)), ctx_(c) {}

  // The worker's side: the loop's turn, until its push (or its end).
  step_result take_turn(const std::shared_ptr<handover>& self, model& m, const step_input& in, float* grad) {
    std::unique_lock<std::mutex> lock(mu_);
    if (user_done_)
      throw std::runtime_error(error_.empty() ? "the loop returned before the job ended" : error_);
    m_ = &m;
    in_ = in;
    grad_ = grad;
    pushed_ = false;
    result_ = {};
    bool handed_back = hand_turn(lock, self, turn::step, m);
    m_ = nullptr;
    grad_ = nullptr;
    if (!handed_back)
      throw std::runtime_error("it did not push within " + seconds_text(ctx_.timeout_s) + " s (--request-timeout)");
    if (!error_.empty())
      throw std::runtime_error(error_);
    if (!pushed_)
      throw std::runtime_error("the loop returned before the job ended (return when push() says stop)");
    ++pushes_;
    return std::move(result_);
  }

  // A sparse model's: the loop's turn until its pull(keys) names the next step's keys.
  std::vector<std::vector<uint64_t>> take_keys(const std::shared_ptr<handover>& self, model& m) {
    std::unique_lock<std::mutex> lock(mu_);
    if (user_done_)
      throw std::runtime_error(error_.empty() ? "the loop returned before the job ended" : error_);
    keys_given_ = false;
    if (!hand_turn(lock, self, turn::keys, m))
      throw std::runtime_error("it did not pull its next keys within " + seconds_text(ctx_.timeout_s) +
                               " s (--request-timeout)");
    if (!error_.empty())
      throw std::runtime_error(error_);
    if (!keys_given_)
      throw std::runtime_error("the loop returned before the job ended (return when push() says stop)");
    return std::move(keys_);
  }

  loop_state save() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {pushes_, save_ ? save_() : std::string()};
  }

  void restore(const loop_state& s) {
    pushes_ = s.position;
    if (s.position > 0)
      resumed_ = s.bytes;
  }

  // The worker is gone: a loop waiting in push() hears stop.
  void end() {
    if (!thread_.joinable())
      return;
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    m_ = nullptr;
    cv_.notify_all();
    // A loop that ignores the stop (or never pushed) cannot be interrupted:
    // it is left running rather than hanging the job's end.
    bool done = cv_.wait_for(lock, timeout(), [&] { return user_done_; });
    lock.unlock();
    if (done)
      thread_.join();
    else
      thread_.detach();
  }

  // The loop's side (its own thread, during its turn).
  const loop_context& context() const override { return ctx_; }

  pulled_weights pull() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (turn_ == turn::keys)
      throw std::logic_error("worker_client::pull(): the model has sparse tables, whose rows come with the keys of "
                             "the step: pull(keys)");
    if (m_ == nullptr)
      throw std::logic_error("worker_client::pull after the job ended");
    return {in_.version, m_->current_weights(), {}};
  }

  pulled_weights pull(const std::vector<std::vector<uint64_t>>& keys) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_)
      return {in_.version, {}, {}};
    if (turn_ != turn::keys)
      throw std::logic_error(tables_ == 0 ? "worker_client::pull(keys): the model has no sparse tables (pull() "
                                            "takes its weights)"
                                          : "worker_client::pull(keys) twice without a push between");
    if (keys.size() != tables_)
      throw std::invalid_argument("worker_client::pull(keys): keys of " + std::to_string(keys.size()) +
                                  " tables, the model has " + std::to_string(tables_));
    keys_ = keys;
    keys_given_ = true;
    user_turn_ = false;
    cv_.notify_all();
    cv_.wait(lock, [&] { return user_turn_ || stopping_; });
    if (stopping_ || m_ == nullptr)
      return {in_.version, {}, {}};
    return {in_.version, m_->current_weights(), in_.rows ? *in_.rows : std::vector<row_block>{}};
  }

  push_answer push(const std::vector<float>& grad, std::vector<row_block> row_grads, int64_t samples,
                   float loss) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (m_ != nullptr && tables_ == 0)
        throw std::logic_error("worker_client::push with row gradients: the model has no sparse tables");
      rows_ = std::move(row_grads);
    }
    return push(grad, samples, loss);
  }

  push_answer push(const std::vector<float>& grad, int64_t samples, float loss) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!stopping_ && turn_ == turn::keys)
      throw std::logic_error("worker_client::push before pull(keys): a sparse model's step pulls its keys' rows first");
    if (m_ == nullptr)
      return {true, {}, in_.version};
    if (grad.size() != m_->size())
      throw std::invalid_argument("push of a gradient of " + std::to_string(grad.size()) + " values; the model has " +
                                  std::to_string(m_->size()));
    if (samples < 1)
      throw std::invalid_argument("push of a gradient over " + std::to_string(samples) + " samples (at least 1)");
    std::copy(grad.begin(), grad.end(), grad_);
    result_.loss = loss;
    result_.samples = samples;
    if (tables_ > 0)  // a sparse model's: the loop's row gradients (none: no row moves)
      result_.row_gradients = std::move(rows_);
    rows_.clear();
    result_.metrics = std::move(reported_);
    reported_.clear();
    pushed_ = true;
    user_turn_ = false;
    cv_.notify_all();
    cv_.wait(lock, [&] { return user_turn_ || stopping_; });
    if (stopping_)
      return {true, {}, in_.version};
    return {false, in_.refused, in_.version};
  }

  int64_t batch() const override { return in_.batch; }
  uint64_t step() const override { return in_.step; }
  double lr() const override { return in_.lr; }
  void report(const std::string& name, double value) override { reported_.push_back({name, value}); }
  void on_save(std::function<std::string()> save) override {
    std::lock_guard<std::mutex> lock(mu_);
    save_ = std::move(save);
  }
  std::optional<std::string> resumed_state() const override { return resumed_; }

 private:
  client_loop_fn fn_;
  loop_context ctx_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool user_turn_ = false;   // the loop runs (else the worker does)
  bool stopping_ = false;    // the worker is gone: every wait ends
  bool user_done_ = false;   // the loop returned (or threw)
  std::string error_;        // ... what it threw
  // Valid during the loop's turn: the worker's model, what it knows, and where the gradient goes.
  model* m_ = nullptr;
  step_input in_;
  float* grad_ = nullptr;
  bool pushed_ = false;
  step_result result_;
  std::vector<metric> reported_;
  uint64_t pushes_ = 0;
  std::function<std::string()> save_;
  std::optional<std::string> resumed_;
  // A sparse model's loop: whose turn it is (its next keys, or its step), the
  // model's tables, the keys its pull(keys) named, and the row gradients of its push.
  enum class turn { none, keys, step };
  turn turn_ = turn::none;
  size_t tables_ = 0;
  bool keys_given_ = false;
  std::vector<std::vector<uint64_t>> keys_;
  std::vector<row_block> rows_;

  // The loop's turn of `kind` (its thread started at the first), until it
  // hands it back; false when it did not within the request timeout.
  bool hand_turn(std::unique_lock<std::mutex>& lock, const std::shared_ptr<handover>& self, turn kind, const model& m) {
    tables_ = m.tables().size();
    turn_ = kind;
    user_turn_ = true;
    if (!thread_.joinable())
      thread_ = std::thread([self] { self->run(); });
    cv_.notify_all();
    return cv_.wait_for(lock, timeout(), [&] { return !user_turn_; });
  }

  std::chrono::duration<double> timeout() const { return std::chrono::duration<double>(ctx_.timeout_s); }

  static std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
  }

  void run() {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return user_turn_ || stopping_; });
      if (stopping_ && !user_turn_) {
        user_done_ = true;
        cv_.notify_all();
        return;
      }
    }
    std::string error;
    try {
      fn_(*this);
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "an exception that is not a std::exception";
    }
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::move(error);
    user_done_ = true;
    user_turn_ = false;
    cv_.notify_all();
  }
};

class client_loop final : public worker_loop {
 public:
  client_loop(client_loop_fn fn, const loop_context& c) : h_(std::make_shared<handover>(std::move(fn), c)) {}
  ~client_loop() override { h_->end(); }
  step_result step(model& m, const step_input& in, float* grad) override { return h_->take_turn(h_, m, in, grad); }
  std::vector<std::vector<uint64_t>> keys(model& m, int64_t) override { return h_->take_keys(h_, m); }
  loop_state save() const override { return h_->save(); }
  void restore(const loop_state& s) override { h_->restore(s); }

 private:
  std::shared_ptr<handover> h_;
};

}  // namespace

bool register_client_loop(const std::string& name, client_loop_fn loop, evaluate_fn evaluate) {
  if (!loop)
    throw std::invalid_argument("register_client_loop('" + name + "'): no loop");
  auto fn = std::make_shared<client_loop_fn>(std::move(loop));
  return register_loop(name, loop_spec{[fn](const loop_context& c) { return std::make_unique<client_loop>(*fn, c); },
                                       std::move(evaluate)});
}

}  // namespace syncpoint
