#include "runtime/job/checkpointing.hpp"

#include "actors/parameter_server.hpp"
#include <syncpoint/model.hpp>
#include "protocols/protocol_state.hpp"

#include <caf/detail/test_actor_clock.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

namespace syncpoint {

namespace {

std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

caf::detail::test_actor_clock& virtual_clock_of(caf::actor_system& sys) {
  return dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler()).clock();
}

// Which actor a timer is for: a worker's id, or the PS's (a shard's copy's)
// or coordinator's role.
std::map<caf::actor_id, std::pair<worker_id, uint32_t>> roles(const job_actors& job,
                                                             const std::vector<caf::actor>& copies) {
  std::map<caf::actor_id, std::pair<worker_id, uint32_t>> out{
    {job.core.coordinator.id(), {saved_timer::coordinator, 0}}};
  auto per = copies.size() / job.core.ps.size();
  for (size_t j = 0; j < copies.size(); ++j)
    if (copies[j])
      out[copies[j].id()] = {saved_timer::shard(j / per), static_cast<uint32_t>(j % per)};
  for (size_t i = 0; i < job.workers.size(); ++i)
    out[job.workers[i].id()] = {static_cast<worker_id>(i), 0};
  return out;
}

saved_timer timer_of(const caf::message& msg) {
  saved_timer t;
  if (msg.match_elements<computed_atom>()) {
    t.what = computed_atom::value;
  } else if (msg.match_elements<timeout_atom>()) {
    t.what = timeout_atom::value;
  } else if (msg.match_elements<link_atom, uint64_t>() || msg.match_elements<timeout_atom, uint64_t>()) {
    t.what = msg.get_as<caf::atom_value>(0);
    t.has_id = true;
    t.id = msg.get_as<uint64_t>(1);
  } else {
    throw config_error("cannot checkpoint this run: a pending timer carries " + to_string(msg) +
                       ", which the checkpoint does not know");
  }
  return t;
}

// Receives `out`; the error instead, if the actor answered with one.
template <class Handle, class T>
caf::error take(Handle& h, T& out) {
  caf::error err;
  h.receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { err = std::move(e); });
  return err;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> run_settings(const job_plan& plan, double iter_cost_ms) {
  auto& cfg = plan.cfg;
  std::vector<std::pair<std::string, std::string>> s = {{"protocol", cfg.protocol}};
  for (auto& [name, value] : cfg.protocol_opts.values())
    s.emplace_back(name, value);
  s.insert(s.end(), {{"workers", std::to_string(cfg.workers)},
                     {"model", cfg.model},
                     {"dataset", cfg.dataset},
                     {"train-limit", std::to_string(cfg.train_limit)},
                     {"test-limit", std::to_string(cfg.test_limit)},
                     {"lr", exact(cfg.lr)},
                     {"momentum", exact(cfg.momentum)},
                     {"momentum-rule", cfg.momentum_rule},
                     {"sparse-sync", cfg.sparse_sync},
                     {"weight-decay", exact(cfg.weight_decay)},
                     {"optimizer", cfg.optimizer},
                     {"beta1", exact(cfg.beta1)},
                     {"beta2", exact(cfg.beta2)},
                     {"eps", exact(cfg.eps)},
                     // The schedule as it runs: its length follows --epochs unless --lr-epochs fixes it.
                     {"lr-schedule", describe(plan.schedule)},
                     {"clip-norm", exact(cfg.clip_norm)},
                     {"batch", std::to_string(cfg.batch)},
                     {"seed", std::to_string(cfg.seed)},
                     {"clock", to_string(cfg.clock)},
                     {"straggler", cfg.straggler},
                     {"iter-cost", exact(iter_cost_ms)},
                     {"ps-bandwidth", exact(cfg.ps_bandwidth)},
                     {"latency", exact(cfg.latency_ms)},
                     {"eval-every", exact(cfg.eval_every)},
                     {"fail-worker", cfg.internals.fail_worker < 0 ? std::string("none")
                                                         : std::to_string(cfg.internals.fail_worker) + "@" +
                                                             std::to_string(cfg.internals.fail_at_iter)}});
  if (cfg.compress != "none")  // (absent otherwise: the checkpoints from before --compress resume)
    s.emplace_back("compress", cfg.compress);
  return s;
}

namespace {

class checkpoint_file_sink : public checkpoint_sink {
 public:
  checkpoint_file_sink(const job_config& cfg, checkpoint_state&& state)
    : dir_(cfg.checkpoint_dir), keep_(static_cast<size_t>(cfg.checkpoint_keep)), protocol_(cfg.protocol),
      time_ns_(state.time_ns),
      out_(dir_, {{checkpoint_format, cfg.model, state.ps.w.size(), cfg.protocol}, std::move(state)}) {}
  void add(const saved_rows& chunk) override { out_.add(chunk); }
  std::string commit() override {
    auto file = out_.commit();
    prune_checkpoints(dir_, keep_);
    return checkpoint_line(protocol_, time_ns_, file);
  }

 private:
  std::string dir_;
  size_t keep_;
  std::string protocol_;
  int64_t time_ns_;
  checkpoint_stream out_;
};

}  // namespace

checkpoint_opener checkpoint_writer(const job_plan& plan, std::vector<std::pair<std::string, std::string>> settings) {
  return [plan, settings = std::move(settings)](checkpoint_state& s) -> std::unique_ptr<checkpoint_sink> {
    s.settings = settings;
    return std::make_unique<checkpoint_file_sink>(plan.cfg, std::move(s));
  };
}

void check_checkpointable(const job_plan& plan) {
  auto& cfg = plan.cfg;
  try {
    auto p = make_protocol(cfg.protocol, plan.protocol);
    save_protocol_state(*p, cfg.protocol);
    make_model(cfg.model, plan.input)->current_weights();
  } catch (const std::logic_error& e) {
    throw config_error(std::string(cfg.checkpoint_every_s > 0 ? "--checkpoint-every: " : "--checkpoint-dir: ") +
                       e.what());
  }
  // The folder must take files now, not fail at the first checkpoint.
  std::error_code ec;
  std::filesystem::create_directories(cfg.checkpoint_dir, ec);
  auto probe = std::filesystem::path(cfg.checkpoint_dir) / ".checkpoint.tmp";
  if (ec || !std::ofstream(probe))
    throw config_error("--checkpoint-dir " + cfg.checkpoint_dir + ": cannot write there" +
                       (ec ? " (" + ec.message() + ")" : std::string()));
  std::filesystem::remove(probe, ec);
}

resume_point load_resume_point(const job_plan& plan) {
  auto& cfg = plan.cfg;
  auto train_size = plan.train_size;
  resume_point r;
  std::error_code ec;  // a folder's newest checkpoint, or the file named
  r.file = std::filesystem::is_regular_file(cfg.resume_dir, ec) ? cfg.resume_dir : newest_checkpoint(cfg.resume_dir);
  if (r.file.empty())
    throw config_error("--resume " + cfg.resume_dir + ": no checkpoint there (checkpoint-*.bin)");
  r.point = read_checkpoint(r.file, {checkpoint_format, cfg.model, plan.model_size, cfg.protocol});
  auto& st = r.point.state;
  std::map<std::string, std::string> saved(st.settings.begin(), st.settings.end());
  r.iter_cost_ms = saved.count("iter-cost") ? std::strtod(saved["iter-cost"].c_str(), nullptr) : 0;
  auto refuse = [&](const std::string& what) {
    throw config_error("--resume: " + what + " (checkpoint '" + r.file + "')");
  };
  auto now = run_settings(plan, cfg.iter_cost_ms > 0 ? cfg.iter_cost_ms : r.iter_cost_ms);
  std::map<std::string, std::string> given(now.begin(), now.end());
  for (auto& [name, value] : saved)
    if (!given.count(name))
      refuse("the checkpointed run had --" + name + " " + value + ", this command does not give it");
  for (auto& [name, value] : now) {
    auto i = saved.find(name);
    if (i == saved.end())
      refuse("--" + name + " " + value + " is not an option of the checkpointed run");
    if (i->second != value)
      refuse("--" + name + " is " + (value.empty() ? "unset" : value) + " here but " +
             (i->second.empty() ? "unset" : i->second) +
             " in the checkpointed run; only the limits (--epochs, --max-time, --target-accuracy) may change");
  }
  auto& limits = plan.cfg;
  if (plan.sample_budget > 0 && st.samples >= plan.sample_budget)
    refuse("--epochs " + exact(limits.epochs) + " is already reached at the checkpoint (" +
           exact(static_cast<double>(st.samples) / static_cast<double>(train_size)) + " epochs done); raise it");
  if (limits.max_time_s > 0 && static_cast<double>(st.time_ns) * 1e-9 >= limits.max_time_s)
    refuse("--max-time " + exact(limits.max_time_s) + " is already reached at the checkpoint (t = " +
           exact(static_cast<double>(st.time_ns) * 1e-9) + " s); raise it");
  return r;
}

std::optional<checkpoint_state> gather_checkpoint(caf::actor_system& sys, caf::scoped_actor& driver,
                                                  const job_actors& job, time_point origin) {
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  checkpoint_state s;
  auto refuse = [&](const caf::error& err, const std::string& who) {
    throw config_error("cannot checkpoint this run: " + who + sys.render(err));
  };
  auto co = driver->request(job.core.coordinator, caf::infinite, save_atom::value);
  // The copies as the coordinator has them: one made in a lost one's place (--ps-rereplicate) among them.
  auto group = driver->request(job.core.coordinator, caf::infinite, copy_atom::value);
  sched.run();
  if (auto err = take(co, s.coordinator)) {
    bool ending = err == caf::sec::request_receiver_down
                  || (err.category() == caf::atom("syncpoint") && err.code() == static_cast<uint8_t>(sp_error::not_now));
    if (ending)
      return std::nullopt;  // the run is ending, or has ended
    refuse(err, "");
  }
  std::vector<caf::actor> copies;
  if (auto err = take(group, copies))
    refuse(err, "the coordinator's shard copies: ");
  // Every live copy of every shard (a replica's link is its own).
  using ps_reply = decltype(driver->request(job.core.ps.lead(), caf::infinite, save_atom::value));
  auto& lost = s.coordinator.copy_lost;
  std::vector<std::optional<ps_reply>> shards;
  for (size_t j = 0; j < copies.size(); ++j)
    if (j < lost.size() && lost[j])
      shards.emplace_back();
    else
      shards.push_back(driver->request(caf::actor_cast<ps_actor>(copies[j]), caf::infinite, save_atom::value));
  auto tracer = driver->request(job.core.tracer, caf::infinite, save_atom::value);
  using worker_reply = decltype(driver->request(job.workers.front(), caf::infinite, save_atom::value));
  std::vector<std::pair<size_t, worker_reply>> workers;
  for (size_t i = 0; i < job.workers.size(); ++i)
    if (!s.coordinator.gone.at(i))
      workers.emplace_back(i, driver->request(job.workers[i], caf::infinite, save_atom::value));
  sched.run();
  std::vector<std::optional<saved_ps>> parts(shards.size());
  auto per = shards.size() / job.core.ps.size();
  for (size_t j = 0; j < shards.size(); ++j)
    if (shards[j]) {
      parts[j].emplace();
      if (auto err = take(*shards[j], *parts[j]))
        refuse(err, per > 1                 ? "copy " + std::to_string(j % per) + " of shard " +
                                                std::to_string(j / per) + " of the parameter server: "
                    : shards.size() > 1 ? "shard " + std::to_string(j) + " of the parameter server: "
                                        : std::string("the parameter server: "));
    }
  try {
    s.ps = merge_copies(std::move(parts), job.core.ps.bounds, s.coordinator.serving);
  } catch (const std::invalid_argument& e) {
    throw config_error(std::string("cannot checkpoint this run: ") + e.what());
  }
  if (auto err = take(tracer, s.trace))
    refuse(err, "the tracer: ");
  s.workers.resize(job.workers.size());
  for (size_t i = 0; i < s.workers.size(); ++i)
    s.workers[i].id = static_cast<worker_id>(i);
  for (auto& [i, reply] : workers)
    if (auto err = take(reply, s.workers[i]))
      refuse(err, "worker " + std::to_string(i) + ": ");
  auto& clock = virtual_clock_of(sys);
  auto who = roles(job, copies);
  using clock_base = caf::detail::simple_actor_clock;
  for (auto& [due, event] : clock.schedule()) {
    if (event->subtype != clock_base::actor_msg_type)
      throw config_error("cannot checkpoint this run: a timeout of a kind the checkpoint does not know is pending");
    auto& m = static_cast<const clock_base::actor_msg&>(*event);
    auto to = m.receiver ? who.find(m.receiver->id()) : who.end();
    if (to == who.end())
      throw config_error("cannot checkpoint this run: a timer of an actor outside the job is pending");
    auto t = timer_of(m.content->copy_content_to_message());
    std::tie(t.to, t.copy) = to->second;
    t.due = std::chrono::duration_cast<std::chrono::nanoseconds>(due - origin).count();
    s.timers.push_back(t);
  }
  s.time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(clock.now() - origin).count();
  s.samples = s.coordinator.samples;
  return s;
}

void gather_rows(caf::actor_system& sys, caf::scoped_actor& driver, const job_actors& job,
                 const saved_coordinator& saved, checkpoint_sink& out) {
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  auto group = driver->request(job.core.coordinator, caf::infinite, copy_atom::value);
  sched.run();
  std::vector<caf::actor> group_copies;
  if (auto err = take(group, group_copies))
    throw config_error("cannot checkpoint this run: the coordinator's shard copies: " + sys.render(err));
  std::vector<ps_actor> copies;
  for (auto& c : group_copies)
    copies.push_back(caf::actor_cast<ps_actor>(c));
  for (size_t k = 0; k < job.core.ps.size(); ++k) {
    auto shard = serving_copy(copies, saved, k, job.core.ps.size());
    uint32_t table = 0;
    uint64_t from = 0;
    for (;;) {
      auto reply = driver->request(shard, caf::infinite, save_atom::value, table, from);
      sched.run();
      saved_rows chunk;
      if (auto err = take(reply, chunk))
        throw config_error("cannot checkpoint this run: shard " + std::to_string(k) + "'s rows: " + sys.render(err));
      if (table >= chunk.tables)
        break;
      out.add(chunk);
      from = chunk.next;
      if (chunk.last) {
        ++table;
        from = 0;
      }
    }
  }
}

void restore_timers(caf::actor_system& sys, const job_actors& job, time_point origin,
                    const std::vector<saved_timer>& timers, const saved_coordinator& saved) {
  auto& clock = virtual_clock_of(sys);
  auto& ps = job.core.ps;
  auto copies = every_copy(ps);
  auto per = copies.size() / ps.size();
  for (auto& t : timers) {
    std::vector<caf::strong_actor_ptr> to;
    auto shard = std::find_if(ps.shards.begin(), ps.shards.end(), [&](const ps_actor& a) {
      return saved_timer::shard(static_cast<size_t>(&a - ps.shards.data())) == t.to;
    });
    if (shard != ps.shards.end()) {  // each copy restored from the copy the timer was for
      auto k = static_cast<size_t>(shard - ps.shards.begin());
      for (size_t r = 0; r < per; ++r)
        if (saved_copy_of(saved, k, r, per) == t.copy)
          to.push_back(caf::actor_cast<caf::strong_actor_ptr>(copies[k * per + r]));
    } else if (t.to == saved_timer::coordinator) {
      to.push_back(caf::actor_cast<caf::strong_actor_ptr>(job.core.coordinator));
    } else if (t.to >= 0 && static_cast<size_t>(t.to) < job.workers.size()) {
      to.push_back(caf::actor_cast<caf::strong_actor_ptr>(job.workers[static_cast<size_t>(t.to)]));
    } else {
      throw config_error("the checkpoint has a timer for worker " + std::to_string(t.to) + ", which the job lacks");
    }
    for (auto& actor : to) {
      auto msg = t.has_id ? caf::make_message(t.what, t.id) : caf::make_message(t.what);
      // As delayed_send(self, ...) sends it: from the actor to itself.
      clock.schedule_message(origin + std::chrono::nanoseconds(t.due), actor,
                             caf::make_mailbox_element(actor, caf::make_message_id(), {}, std::move(msg)));
    }
  }
}

void set_virtual_time(caf::actor_system& sys, time_point origin, int64_t time_ns) {
  virtual_clock_of(sys).current_time = origin + std::chrono::nanoseconds(time_ns);
}

}  // namespace syncpoint
