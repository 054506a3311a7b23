// The data plane (runtime/cluster/dataplane/data_plane.hpp): the worker-side proxy and
// the shard-side gateway, and the frames between them. A frame's control part
// is CAF's binary serialization of the typed message without its floats.
#include "runtime/cluster/dataplane/data_plane.hpp"

#include <syncpoint/float_block.hpp>
#include "core/secret.hpp"
#include "runtime/cluster/net/endpoint.hpp"
#include "runtime/cluster/dataplane/float_packing.hpp"
#include "runtime/cluster/dataplane/pull_share.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace syncpoint::cluster {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, bulk_frame& x) {
  return f(caf::meta::type_name("bulk_frame"), x.kind, x.control, float_block{x.values});
}

namespace {

// A proxy's connection, handed to it once open, and the share it pulls
// through once another worker of the process pulls from its shard (local
// messages only).
struct link_handle {
  std::shared_ptr<bulk_link> link;
  // Set: a compressed gradient goes packed (float_packing.hpp), as the floats
  // cross a socket; each packed push counts here (data_plane::packed_pushes).
  std::shared_ptr<std::atomic<uint64_t>> packed_count;
};
struct share_handle {
  caf::actor share;
};

}  // namespace

}  // namespace syncpoint::cluster

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(syncpoint::cluster::link_handle)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(syncpoint::cluster::share_handle)

namespace syncpoint::cluster {

namespace {

using closed_atom = caf::atom_constant<caf::atom("bk_closed")>;

// push: (seq, iter, base version, samples, wire bytes, ranges, rows) + gradient;
// pull: (seq, min version, asked rows); proceed: (seq, proceed); model: (seq,
// version, rows) + weights; refused: (seq, error); packed push: a push's
// control before its rows, then (packing, values, rows) + the packed words. A
// sparse model's keys and rows (docs/sparse.md) go in the control part, as CAF
// serializes them: a few rows a key, where the dense floats need no copy.
enum frame_kind : uint32_t { push_frame = 1, pull_frame, proceed_frame, model_frame, refused_frame, packed_push_frame };

template <class... Ts>
std::vector<char> control(caf::actor_system& sys, const Ts&... xs) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  if (auto err = sink(const_cast<Ts&>(xs)...))
    throw std::runtime_error("bulk channel: cannot serialize a frame: " + sys.render(err));
  return buf;
}

template <class... Ts>
bool read_control(caf::actor_system& sys, const bulk_frame& f, Ts&... xs) {
  caf::binary_deserializer source{sys, f.control};
  return !source(xs...) && source.remaining() == 0;
}

// -- the shard's side: one gateway per connection --------------------------------

struct gateway_state {
  ps_actor shard;
  int32_t worker = 0;
  uint64_t key = 0;
  uint64_t floats = 0;  // the shard's: no packed push unpacks to more
  std::shared_ptr<bulk_link> link;
  size_t in_flight = 0;  // requests to the shard not answered yet
  static inline const char* name = "bulk_gateway";
};

caf::behavior gateway(caf::stateful_actor<gateway_state>* self, ps_actor shard, int32_t worker, uint64_t key,
                      uint64_t floats, std::shared_ptr<bulk_link> link) {
  self->state.shard = std::move(shard);
  self->state.worker = worker;
  self->state.key = key;
  self->state.floats = floats;
  self->state.link = std::move(link);
  auto& sys = self->system();
  // An answer the worker's proxy can match: the error travels as CAF serializes it.
  auto refuse = [self, &sys](uint64_t seq, const caf::error& err) {
    --self->state.in_flight;
    self->state.link->send(refused_frame, control(sys, seq, err), nullptr, 0, nullptr);
  };
  return {
    [=, &sys](bulk_frame& f) {
      auto& st = self->state;
      uint64_t seq = 0;
      if (++st.in_flight > data_plane::max_in_flight)  // a proxy asks once or twice at a time
        return st.link->close();
      if (f.kind == push_frame || f.kind == packed_push_frame) {
        gradient_push g;
        g.worker = st.worker;
        if (f.kind == push_frame) {
          if (!read_control(sys, f, seq, g.iter, g.base_version, g.samples, g.wire_bytes, g.ranges, g.rows))
            return st.link->close();
          g.grad = std::move(f.values);
        } else {
          uint8_t how = 0;
          uint64_t n = 0;
          if (!read_control(sys, f, seq, g.iter, g.base_version, g.samples, g.wire_bytes, g.ranges, how, n, g.rows) ||
              n > st.floats)
            return st.link->close();
          auto values = float_buffers::take(static_cast<size_t>(n));
          if (!unpack(static_cast<packing>(how), f.values.data(), f.values.size(), values.data(), values.size()))
            return st.link->close();  // not what a proxy packs
          float_buffers::give(std::move(f.values));
          g.grad = std::move(values);
        }
        self->request(st.shard, caf::infinite, push_atom::value, bulk_atom::value, st.key, std::move(g))
          .then(
            [=, &sys](const proceed& p) {
              --self->state.in_flight;
              self->state.link->send(proceed_frame, control(sys, seq, p), nullptr, 0, nullptr);
            },
            [=](caf::error& err) { refuse(seq, err); });
      } else if (f.kind == pull_frame) {
        uint64_t min_version = 0;
        std::vector<row_block> asked;
        if (!read_control(sys, f, seq, min_version, asked))
          return st.link->close();
        auto answer = [=, &sys](weights& w) {
          --self->state.in_flight;
          auto values = w.values.shared();
          self->state.link->send(model_frame, control(sys, seq, w.version, w.rows), values->data(), values->size(),
                                 values);
        };
        if (asked.empty())
          self->request(st.shard, caf::infinite, pull_atom::value, bulk_atom::value, st.key, st.worker, min_version)
            .then(answer, [=](caf::error& err) { refuse(seq, err); });
        else
          self
            ->request(st.shard, caf::infinite, pull_atom::value, bulk_atom::value, st.key, st.worker, min_version,
                      std::move(asked))
            .then(answer, [=](caf::error& err) { refuse(seq, err); });
      } else {
        st.link->close();  // not a frame a worker sends
      }
    },
    [=](closed_atom, const std::string&) { self->quit(); },
  };
}

// -- the worker's side: one proxy per remote shard --------------------------------

struct proxy_state {
  ps_actor shard;  // for what does not go on the bulk channel
  std::shared_ptr<bulk_link> link;
  std::shared_ptr<std::atomic<uint64_t>> packed_count;  // link_handle::packed_count
  std::string label;  // "shard 1 at host:port", for errors
  caf::actor share;   // with other workers of this process pulling from the shard (runtime/cluster/dataplane/pull_share.hpp)
  bool proven = false;  // the shard has taken this worker's key once: it may take a pull fetched by another
  uint64_t seq = 0;
  struct request {
    caf::response_promise reply;
    std::optional<uint64_t> shared;  // a pull fetched for the share: its min_version
  };
  std::unordered_map<uint64_t, request> pending;
  ~proxy_state() {
    if (link)
      link->close();
  }
  static inline const char* name = "bulk_proxy";
};

using proxy_ptr = caf::stateful_actor<proxy_state>*;

// Sends pull `seq` on the proxy's own connection (with a sparse model's keys);
// `shared`: for the share too.
void fetch(proxy_ptr self, uint64_t min_version, caf::response_promise rp, std::optional<uint64_t> shared,
           const std::vector<row_block>& asked = {}) {
  auto& st = self->state;
  auto seq = ++st.seq;
  st.link->send(pull_frame, control(self->system(), seq, min_version, asked), nullptr, 0, nullptr);
  st.pending.emplace(seq, proxy_state::request{std::move(rp), shared});
}

// A pull through the proxy: fetched on its own connection, or through the
// share when another worker of this process fetches the same version.
caf::result<weights> pull_through(proxy_ptr self, uint64_t min_version) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  if (!st.share || !st.proven) {
    fetch(self, min_version, rp, std::nullopt);
    return caf::delegated<weights>{};
  }
  self->request(st.share, caf::infinite, pull_atom::value, min_version)
    .then(
      [=](share_reply& r) mutable {
        if (r.fetch)
          fetch(self, min_version, rp, min_version);
        else
          rp.deliver(std::move(r.w));
      },
      [=](caf::error&) mutable { fetch(self, min_version, rp, std::nullopt); });  // the share went: alone
  return caf::delegated<weights>{};
}

// A worker's push on the socket: packed, if a shorter form holds a compressed
// gradient; answered when the shard's proceed comes back.
caf::result<proceed> push_through(proxy_ptr self, gradient_push& g) {
  auto& st = self->state;
  auto& sys = self->system();
  auto seq = ++st.seq;
  packed p;  // packing::none: the floats as they are
  if (st.packed_count && g.wire_bytes > 0)
    p = pack(g.grad.data(), g.grad.size());
  if (p.how != packing::none) {
    auto words = std::make_shared<const std::vector<float>>(std::move(p.words));
    st.link->send(packed_push_frame,
                  control(sys, seq, g.iter, g.base_version, g.samples, g.wire_bytes, g.ranges,
                          static_cast<uint8_t>(p.how), static_cast<uint64_t>(g.grad.size()), g.rows),
                  words->data(), words->size(), words);
    g.grad.give_back();
    st.packed_count->fetch_add(1, std::memory_order_relaxed);
  } else {
    // A slice of the worker's gradient (a view, no copy) or a vector of its own,
    // handed back once written: the next gradient's buffer.
    auto keep = g.grad.share();
    st.link->send(push_frame, control(sys, seq, g.iter, g.base_version, g.samples, g.wire_bytes, g.ranges, g.rows),
                  g.grad.data(), g.grad.size(), keep);
  }
  st.pending.emplace(seq, proxy_state::request{self->make_response_promise(), std::nullopt});
  return caf::delegated<proceed>{};
}

// The shard's answer to request `seq`: a proceed, a model or a refusal, as a message.
bool read_answer(caf::actor_system& sys, bulk_frame& f, uint64_t& seq, caf::message& answer) {
  bool ok = false;
  if (f.kind == proceed_frame) {
    proceed p;
    ok = read_control(sys, f, seq, p);
    answer = caf::make_message(p);
  } else if (f.kind == model_frame) {
    uint64_t version = 0;
    std::vector<row_block> rows;
    ok = read_control(sys, f, seq, version, rows);
    answer = caf::make_message(weights{version, handed_back_floats(std::move(f.values)), std::move(rows)});
  } else if (f.kind == refused_frame) {
    caf::error err;
    ok = read_control(sys, f, seq, err);
    answer = caf::make_message(std::move(err));
  }
  return ok;
}

// An answer from the socket to the request it names (and to the share, which
// hands a fetched model to the other workers here).
void on_answer(proxy_ptr self, bulk_frame& f) {
  auto& st = self->state;
  uint64_t seq = 0;
  caf::message answer;
  bool ok = read_answer(self->system(), f, seq, answer);
  auto i = st.pending.find(seq);
  if (!ok || i == st.pending.end()) {
    self->quit(caf::make_error(caf::sec::runtime_error, "the bulk channel to " + st.label + " sent a malformed frame"));
    return;
  }
  auto r = std::move(i->second);
  st.pending.erase(i);
  if (answer.match_element<caf::error>(0)) {
    if (r.shared)  // another worker fetches it
      self->send(st.share, fetch_failed_atom::value, *r.shared);
    r.reply.deliver(answer.get_as<caf::error>(0));
    return;
  }
  st.proven = true;
  if (r.shared)
    self->send(st.share, fetched_atom::value, *r.shared, answer.get_as<weights>(0));
  r.reply.deliver(std::move(answer));
}

// The socket broke: every request waiting on it fails, and the proxy ends.
void on_closed(proxy_ptr self, const std::string& why) {
  auto& st = self->state;
  auto err = caf::make_error(caf::sec::runtime_error,
                             "the bulk channel to " + st.label + " broke" + (why.empty() ? "" : ": " + why));
  for (auto& kv : st.pending) {
    if (kv.second.shared)
      self->send(st.share, fetch_failed_atom::value, *kv.second.shared);
    kv.second.reply.deliver(err);
  }
  st.pending.clear();
  self->quit(err);
}

caf::behavior proxy(proxy_ptr self, ps_actor shard, std::string name) {
  self->state.shard = std::move(shard);
  self->state.label = std::move(name);
  return {
    [=](link_handle& h) {  // (from data_plane::proxied) the connection, once open
      self->state.link = std::move(h.link);
      self->state.packed_count = std::move(h.packed_count);
    },
    [=](share_handle& h) {  // (from data_plane::proxied) another worker here pulls from the shard too
      self->state.share = std::move(h.share);
    },
    [=](push_atom, gradient_push& g) -> caf::result<proceed> { return push_through(self, g); },
    [=](pull_atom, uint64_t min_version) -> caf::result<weights> { return pull_through(self, min_version); },
    // A sparse model's pull: its keys are this worker's own, so never through the share.
    [=](pull_atom, uint64_t min_version, const std::vector<row_block>& asked) -> caf::result<weights> {
      auto rp = self->make_response_promise();
      fetch(self, min_version, rp, std::nullopt, asked);
      return caf::delegated<weights>{};
    },
    // A fragment's pull: on a socket the slice crosses whole (only the link model charges a fragment).
    [=](pull_atom, uint64_t min_version, const std::vector<uint64_t>&) -> caf::result<weights> {
      return pull_through(self, min_version);
    },
    // A resumed worker's exchange in flight goes on CAF (the sender stays the worker).
    [=](push_atom, resume_atom a, uint64_t iter) { return self->delegate(self->state.shard, push_atom::value, a, iter); },
    [=](pull_atom, resume_atom a, uint64_t x) { return self->delegate(self->state.shard, pull_atom::value, a, x); },
    [=](bulk_frame& f) { on_answer(self, f); },
    [=](closed_atom, const std::string& why) { on_closed(self, why); },
  };
}

// The hello: which shard (its actor id in its process), which worker, and its key.
std::vector<char> hello_of(caf::actor_id shard, int32_t worker, uint64_t key) {
  std::vector<char> out(sizeof shard + sizeof worker + sizeof key);
  std::memcpy(out.data(), &shard, sizeof shard);
  std::memcpy(out.data() + sizeof shard, &worker, sizeof worker);
  std::memcpy(out.data() + sizeof shard + sizeof worker, &key, sizeof key);
  return out;
}

// Frames and the end of a connection, as messages to the actor that owns it.
bulk_handler to_actor(caf::actor who) {
  return {[who](bulk_frame&& f) { caf::anon_send(who, std::move(f)); },
          [who](const std::string& why) { caf::anon_send(who, closed_atom::value, why); }, 0};
}

}  // namespace

std::string bulk_endpoint(const std::string& host, uint16_t port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

data_plane::data_plane(caf::actor_system& sys, bulk_security security, std::function<void(const std::string&)> log,
                       const std::string& host, bulk_limits limits)
  : sys_(sys), security_(std::move(security)), log_(std::move(log)), limits_(limits) {
  // SYNCPOINT_BULK_SHM=0: every float through TCP, also between co-located
  // processes (a comparison, or a /dev/shm to keep free).
  if (const char* shm = std::getenv("SYNCPOINT_BULK_SHM"); shm && std::string(shm) == "0")
    limits_.shared_memory = false;
  // SYNCPOINT_BULK_PACK=0: a compressed gradient's floats go as they are (a comparison).
  if (const char* pack = std::getenv("SYNCPOINT_BULK_PACK"); pack && std::string(pack) == "0")
    pack_ = false;
  server_ = std::make_unique<bulk_server>(
    io_, security_, [this](const std::vector<char>& hello, std::shared_ptr<bulk_link> link) { return accept(hello, link); },
    max_block_floats, log_, host, limits_);
}

data_plane::~data_plane() {
  server_.reset();
}

uint16_t data_plane::port() const {
  return server_->port();
}

void data_plane::serve(const ps_actor& shard, uint64_t floats, std::vector<uint64_t> keys) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto i = shards_.begin(); i != shards_.end();)  // forget those that quit
    i = caf::actor_cast<caf::strong_actor_ptr>(i->second.shard) ? std::next(i) : shards_.erase(i);
  shards_[shard.id()] = {shard.address(), floats, std::move(keys)};
}

void data_plane::share_pulls(const ps_actor& shard, const caf::actor& proxy) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto alive = [](const caf::actor_addr& a) { return static_cast<bool>(caf::actor_cast<caf::strong_actor_ptr>(a)); };
  for (auto i = shares_.begin(); i != shares_.end();) {  // forget the proxies gone, and shards nobody pulls from
    auto& ps = i->second.proxies;
    ps.erase(std::remove_if(ps.begin(), ps.end(), [&](auto& a) { return !alive(a); }), ps.end());
    i = ps.empty() ? shares_.erase(i) : std::next(i);
  }
  auto& s = shares_[shard.address()];
  s.proxies.push_back(proxy.address());
  if (s.proxies.size() < 2)
    return;  // alone, a proxy pulls straight (no hop through a share)
  if (!s.share)
    s.share = spawn_pull_share(sys_, shard);
  for (auto& a : s.proxies)
    if (auto p = caf::actor_cast<caf::actor>(a))
      caf::anon_send(p, share_handle{s.share});
}

std::variant<bulk_handler, std::string> data_plane::accept(const std::vector<char>& hello,
                                                          std::shared_ptr<bulk_link> link) {
  caf::actor_id id = 0;
  int32_t worker = 0;
  uint64_t key = 0;
  if (hello.size() != sizeof id + sizeof worker + sizeof key)
    return "a malformed hello";
  std::memcpy(&id, hello.data(), sizeof id);
  std::memcpy(&worker, hello.data() + sizeof id, sizeof worker);
  std::memcpy(&key, hello.data() + sizeof id + sizeof worker, sizeof key);
  ps_actor shard;
  uint64_t floats = 0;
  bool keyed = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto i = shards_.find(id);
    if (i != shards_.end()) {
      shard = caf::actor_cast<ps_actor>(i->second.shard);
      floats = i->second.floats;
      auto& keys = i->second.keys;
      keyed = worker >= 0 && static_cast<size_t>(worker) < keys.size() && keys[static_cast<size_t>(worker)] != 0 &&
              same_key(key, keys[static_cast<size_t>(worker)]);
    }
  }
  if (!shard)
    return "no shard " + std::to_string(id) + " here";
  if (!keyed)  // before anything is made for the connection; the shard checks again on every push and pull
    return "not worker " + std::to_string(worker) + "'s key for shard " + std::to_string(id);
  auto g = sys_.spawn(gateway, shard, worker, key, floats, link);
  auto h = to_actor(caf::actor_cast<caf::actor>(g));
  h.max_floats = floats;  // a gradient slice is never longer than the shard
  return h;
}

data_plane::copy_proxy data_plane::proxy_for(const ps_actor& copy, const std::string& endpoint, uint64_t floats,
                                              const std::string& what, int32_t worker, uint64_t key,
                                              const std::string& head_host, bool even_here) {
  copy_proxy out;
  if (endpoint.empty() || !copy || (copy.node() == sys_.node() && !even_here))
    return out;  // no endpoint, or in this process: CAF passes a pointer
  auto text = endpoint;
  if (text.front() == ':')  // the head's own: on the host this process reaches it at
    text = (head_host.find(':') != std::string::npos ? "[" + head_host + "]" : head_host) + text;
  auto at = parse_endpoint(text);
  auto name = what + " at " + text;
  if (!at) {
    out.note = name + ": not an endpoint";
    return out;
  }
  auto p = sys_.spawn(proxy, copy, name);
  auto c = bulk_connect(io_, security_, at->host, at->port, hello_of(copy.id(), worker, key), to_actor(p), floats,
                        5000, limits_);
  if (!c.link) {
    caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
    out.note = name + ": " + c.error + " (its pushes and pulls go on CAF)";
    return out;
  }
  caf::anon_send(p, link_handle{c.link, pack_ && !c.shared_memory ? packed_ : nullptr});
  share_pulls(copy, p);
  out.proxy = caf::actor_cast<ps_actor>(p);
  out.in_memory = c.shared_memory;
  return out;
}

}  // namespace syncpoint::cluster
