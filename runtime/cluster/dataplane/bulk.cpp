// The bulk channel's transport (runtime/cluster/dataplane/bulk.hpp) on Boost.Asio: one
// io_context thread per process; a connection is a template over its stream
// (a TCP socket, or OpenSSL over one), so the plain path has no TLS layer.
// This file: the io thread and the server; bulk_connect.cpp: the client.
#include "runtime/cluster/dataplane/bulk_wire.hpp"
#include "runtime/cluster/net/file_limit.hpp"

#include <list>

namespace syncpoint::cluster {

bulk_io::bulk_io() : impl_(std::make_unique<impl>()) {
  impl_->thread = std::thread([i = impl_.get()] {
    i->io.run();
    i->ran.set_value();
  });
}

namespace {

void end_every_link(bulk_io::impl& i) {
  std::vector<std::weak_ptr<link_base>> links;
  {
    std::lock_guard<std::mutex> guard(i.mutex);
    links.swap(i.links);
  }
  for (auto& w : links)
    if (auto l = w.lock())
      l->end("this process is shutting down");
}

}  // namespace

bulk_io::~bulk_io() {
  // Every connection ends, so that its owner hears it (actors waiting on it
  // quit); then the thread runs out of work. A handshake's timer or a peer
  // that does not let go is cut short after a second.
  asio::post(impl_->io, [i = impl_.get()] { end_every_link(*i); });
  impl_->work.reset();
  if (impl_->ran.get_future().wait_for(std::chrono::seconds(1)) != std::future_status::ready)
    impl_->io.stop();
  {
    std::lock_guard<std::mutex> guard(impl_->gate->mutex);
    impl_->gate->open = false;  // nothing is posted from now on
  }
  impl_->thread.join();
  // A handler left in the context would keep its connection, and the
  // connection the context: a cycle that is never freed. So what was posted
  // after the thread's last handler, or cut short by the stop, runs here
  // (this thread is the context's only one now) until nothing is ready.
  impl_->io.restart();
  end_every_link(*impl_);
  impl_->io.poll();
}

// -- the server ----------------------------------------------------------------

struct bulk_server::impl : std::enable_shared_from_this<bulk_server::impl> {
  impl(bulk_io::impl& owner, bulk_security sec, bulk_accept acc, uint64_t max, std::function<void(const std::string&)> lg,
       bulk_limits lim)
    : owner(owner), io(owner.io), acceptor(owner.io), retry(owner.io), security(std::move(sec)), accept(std::move(acc)),
      max_floats(max), log(std::move(lg)), limits(lim) {}

  bulk_io::impl& owner;
  asio::io_context& io;
  tcp::acceptor acceptor;
  asio::steady_timer retry;  // an accept that failed (no file descriptor left) is tried again after a pause
  bulk_security security;
  std::shared_ptr<asio::ssl::context> tls;
  bulk_accept accept;
  uint64_t max_floats;
  std::function<void(const std::string&)> log;
  bulk_limits limits;
  std::list<std::weak_ptr<link_base>> mine;  // its connections, oldest first (the io thread's)
  bool warned = false;                        // of a connection over the limits, since the last one in

  void say(const std::string& line) {
    if (log)
      log(line);
  }

  // Room for one more connection: the ended ones go, and at a limit the
  // oldest not yet through its hello is closed. False if none can be.
  bool make_room() {
    size_t open = 0, greeting = 0;
    for (auto i = mine.begin(); i != mine.end();) {
      auto c = i->lock();
      if (!c || c->ended()) {
        i = mine.erase(i);
        continue;
      }
      ++open;
      greeting += c->started() ? 0 : 1;
      ++i;
    }
    if (open < limits.max_connections && greeting < limits.max_greeting)
      return true;
    for (auto& w : mine)
      if (auto c = w.lock(); c && !c->started() && !c->ended()) {
        c->end("closed to make room: no hello yet");
        return true;
      }
    return false;
  }

  void next() {
    acceptor.async_accept([self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted)
        return;  // the server is gone
      if (ec) {  // e.g. no file descriptor left: not again at once, which would spin
        self->say("bulk channel: cannot accept a connection: " + ec.message());
        self->retry.expires_after(std::chrono::milliseconds(100));
        self->retry.async_wait([self](boost::system::error_code e) {
          if (!e)
            self->next();
        });
        return;
      }
      if (!self->make_room()) {
        if (!self->warned)
          self->say("bulk channel: refused a connection: " + std::to_string(self->limits.max_connections) +
                    " connections are open");
        self->warned = true;
        boost::system::error_code ignored;
        s.close(ignored);
      } else {
        s.set_option(tcp::no_delay(true));
        if (self->tls) {
          auto c = std::make_shared<connection<tls_stream>>(tls_stream(std::move(s), *self->tls), self->max_floats,
                                                             self->owner.gate, self->limits, true);
          self->admit(c);
        } else {
          auto c = std::make_shared<connection<tcp::socket>>(std::move(s), self->max_floats, self->owner.gate,
                                                             self->limits, true);
          self->admit(c);
        }
      }
      self->next();
    });
  }

  template <class Stream>
  void admit(std::shared_ptr<connection<Stream>> c) {
    owner.keep(c);
    mine.push_back(c);
    handshake(c);
  }

  template <class Stream>
  void handshake(std::shared_ptr<connection<Stream>> c) {
    auto deadline = std::make_shared<asio::steady_timer>(acceptor.get_executor(), limits.greeting);
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", std::chrono::duration<double>(limits.greeting).count());
    deadline->async_wait([c, secs = std::string(secs)](boost::system::error_code ec) {
      if (!ec)
        c->end("no handshake within " + secs + " s");
    });
    auto greet = [self = shared_from_this(), c, deadline] { self->read_greeting(c, deadline); };
    if constexpr (std::is_same_v<Stream, tls_stream>) {
      c->stream().async_handshake(asio::ssl::stream_base::server, [self = shared_from_this(), c, greet](boost::system::error_code ec) {
        if (ec) {
          self->say("bulk channel: refused a connection: TLS handshake failed: " + ec.message());
          c->end("TLS handshake failed");
          return;
        }
        greet();
      });
    } else {
      greet();
    }
  }

  template <class Stream>
  void read_greeting(std::shared_ptr<connection<Stream>> c, std::shared_ptr<asio::steady_timer> deadline) {
    auto buf = std::make_shared<std::vector<char>>(sizeof magic + 4);
    asio::async_read(c->stream(), asio::buffer(*buf), [self = shared_from_this(), c, buf, deadline](boost::system::error_code ec, size_t) {
      if (ec)
        return c->end("no greeting");
      if (std::memcmp(buf->data(), magic, sizeof magic) != 0) {
        self->say("bulk channel: refused a connection that is not a syncpoint bulk channel");
        return c->end("not a bulk channel");
      }
      auto token_len = get<uint32_t>(buf->data() + sizeof magic);
      if (token_len > max_token)
        return c->end("token too long");
      buf->assign(token_len + 4, 0);
      asio::async_read(c->stream(), asio::buffer(*buf), [self, c, buf, deadline](boost::system::error_code ec, size_t) {
        if (ec)
          return c->end("no token");
        std::string token(buf->data(), buf->size() - 4);
        auto hello_len = get<uint32_t>(buf->data() + buf->size() - 4);
        if (hello_len > max_hello)
          return c->end("hello too long");
        auto hello = std::make_shared<std::vector<char>>(hello_len + 4);
        asio::async_read(c->stream(), asio::buffer(*hello), [self, c, hello, token, deadline](boost::system::error_code ec, size_t) {
          if (ec)
            return c->end("no hello");
          auto offer_len = get<uint32_t>(hello->data() + hello->size() - 4);
          hello->resize(hello->size() - 4);
          if (offer_len > max_offer)
            return c->end("offer too long");
          auto offer = std::make_shared<std::string>(offer_len, '\0');
          asio::async_read(c->stream(), asio::buffer(*offer), [self, c, hello, token, offer, deadline](boost::system::error_code ec, size_t) {
            if (ec)
              return c->end("no offer");
            deadline->cancel();
            self->judge(c, *hello, token, *offer);
          });
        });
      });
    });
  }

  // The hello's verdict and the answer, with shared memory where both sides can.
  template <class Stream>
  void judge(std::shared_ptr<connection<Stream>> c, const std::vector<char>& hello, const std::string& token,
             const std::string& offer) {
    std::string refusal;
    std::optional<bulk_handler> handler;
    if (!same_secret(token, security.secret)) {
      refusal = "wrong token";
    } else {
      auto verdict = accept(hello, c);
      if (auto* why = std::get_if<std::string>(&verdict))
        refusal = *why;
      else
        handler = std::move(std::get<bulk_handler>(verdict));
    }
    if (!refusal.empty())
      say("bulk channel: refused a connection: " + refusal);
    std::unique_ptr<shm_ring> in, out;
    if (handler && !tls && limits.shared_memory && (in = open_offer(offer))) {
      std::string error;
      out = shm_ring::create(ring_capacity(handler->max_floats ? handler->max_floats : max_floats), error);
      if (!out)
        in.reset();  // both ways or neither
    }
    auto reply = std::make_shared<std::vector<char>>(answer(refusal, ring_offer(out.get())));
    c->use_rings(std::move(out), std::move(in));
    asio::async_write(c->stream(), asio::buffer(*reply), [self = shared_from_this(), c, reply, handler, refusal](boost::system::error_code ec, size_t) mutable {
      if (ec || !refusal.empty())
        return c->end(refusal.empty() ? "the answer could not be sent" : refusal);
      self->warned = false;
      c->start(std::move(*handler));
    });
  }
};

bulk_server::bulk_server(bulk_io& io, bulk_security security, bulk_accept accept, uint64_t max_floats,
                         std::function<void(const std::string&)> log, const std::string& host, bulk_limits limits)
  : impl_(std::make_shared<impl>(io.get(), std::move(security), std::move(accept), max_floats, std::move(log), limits)) {
  impl_->limits.max_connections = connection_cap(impl_->limits.max_connections);  // CAF's connections, files: the rest
  if (impl_->security.tls.enabled())
    impl_->tls = make_tls_context(impl_->security.tls, true);
  tcp::endpoint at(asio::ip::make_address(host), 0);
  impl_->acceptor.open(at.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(at);
  impl_->acceptor.listen();
  asio::post(impl_->acceptor.get_executor(), [i = impl_] { i->next(); });
}

bulk_server::~bulk_server() {
  if (impl_->io.stopped()) {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    return;
  }
  std::promise<void> done;
  asio::post(impl_->acceptor.get_executor(), [i = impl_, &done] {
    boost::system::error_code ignored;
    i->acceptor.close(ignored);
    done.set_value();
  });
  done.get_future().wait();
}

uint16_t bulk_server::port() const {
  return impl_->acceptor.local_endpoint().port();
}

}  // namespace syncpoint::cluster
