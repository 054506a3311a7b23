// The bulk channel's client (runtime/cluster/dataplane/bulk.hpp): connect, greet the
// server, and hand back the connection it accepted.
#include "runtime/cluster/dataplane/bulk_wire.hpp"

namespace syncpoint::cluster {

// -- the client ----------------------------------------------------------------

namespace {

// A connect in progress. The caller may give up waiting (its deadline) while
// the io thread finishes it: whichever claims it first decides.
struct pending_connect {
  std::promise<bulk_connect_result> promise;
  std::atomic<int> state{0};  // 0: open, 1: answered, 2: abandoned
  void set_value(bulk_connect_result r) {
    int open = 0;
    if (state.compare_exchange_strong(open, 1)) {
      promise.set_value(std::move(r));
    } else if (r.link) {
      r.link->close();  // nobody waits for it any more
    }
  }
};

constexpr const char* no_server_ring = "the server's shared memory could not be opened here";

// The ring this side would write its floats to, offered to the server (null:
// none; the server may turn it down, and then it is not used).
template <class Stream>
void greet_server(std::shared_ptr<connection<Stream>> c, const bulk_security& security, const std::vector<char>& hello,
                  bulk_handler handler, std::shared_ptr<pending_connect> result,
                  std::shared_ptr<std::unique_ptr<shm_ring>> ring) {
  auto out = std::make_shared<std::vector<char>>(greeting(security.secret, hello, ring_offer(ring->get())));
  asio::async_write(c->stream(), asio::buffer(*out), [c, out, handler = std::move(handler), result, ring](boost::system::error_code ec, size_t) mutable {
    if (ec)
      return result->set_value({nullptr, "the greeting could not be sent: " + ec.message()});
    auto head = std::make_shared<std::array<char, 5>>();
    asio::async_read(c->stream(), asio::buffer(*head), [c, head, handler = std::move(handler), result, ring](boost::system::error_code ec, size_t) mutable {
      if (ec)
        return result->set_value({nullptr, "the server did not answer: " + ec.message()});
      auto len = std::min<uint32_t>(get<uint32_t>(head->data() + 1), max_hello);
      auto why = std::make_shared<std::string>(len + 4, '\0');
      asio::async_read(c->stream(), asio::buffer(*why), [c, head, why, handler = std::move(handler), result, ring](boost::system::error_code ec, size_t) mutable {
        uint32_t offer_len = ec ? 0 : get<uint32_t>(why->data() + why->size() - 4);
        why->resize(why->size() - 4);
        if (ec || (*head)[0] != 1 || offer_len > max_offer) {
          c->end("refused");
          return result->set_value({nullptr, ec ? "the server's answer broke off" : "refused: " + *why});
        }
        auto offer = std::make_shared<std::string>(offer_len, '\0');
        asio::async_read(c->stream(), asio::buffer(*offer), [c, offer, handler = std::move(handler), result, ring](boost::system::error_code ec, size_t) mutable {
          if (ec) {
            c->end("refused");
            return result->set_value({nullptr, "the server's answer broke off"});
          }
          // The server took this side's ring (it offers its own back) or not.
          std::unique_ptr<shm_ring> in = open_offer(*offer);
          if (!offer->empty() && !in) {
            c->end("no shared memory");
            return result->set_value({nullptr, no_server_ring});
          }
          bool shared = in != nullptr;
          if (shared)
            c->use_rings(std::move(*ring), std::move(in));
          c->start(std::move(handler));
          result->set_value({c, "", shared});  // closes it again if the caller gave up
        });
      });
    });
  });
}

// Whether the server may be this machine: loopback, or this end's own
// address (the server's ring is judged by its boot id all the same).
bool on_this_machine(const tcp::socket& s) {
  boost::system::error_code a, b;
  auto remote = s.remote_endpoint(a).address(), local = s.local_endpoint(b).address();
  return !a && !b && (remote.is_loopback() || remote == local);
}

}  // namespace

bulk_connect_result bulk_connect(bulk_io& io, const bulk_security& security, const std::string& host,
                                 uint16_t port, const std::vector<char>& hello, bulk_handler handler,
                                 uint64_t max_floats, int timeout_ms, bulk_limits limits) {
  auto handler_copy = limits.shared_memory ? handler : bulk_handler{};  // for a second try without shared memory
  auto& ctx = io.get().io;
  std::shared_ptr<asio::ssl::context> tls;
  try {
    if (security.tls.enabled())
      tls = make_tls_context(security.tls, false);
  } catch (const std::exception& e) {
    return {nullptr, std::string("TLS set-up failed: ") + e.what()};
  }
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) {
    tcp::resolver resolver(ctx);
    auto found = resolver.resolve(host, std::to_string(port), ec);
    if (ec || found.empty())
      return {nullptr, "cannot resolve '" + host + "': " + ec.message()};
    address = found.begin()->endpoint().address();
  }
  auto result = std::make_shared<pending_connect>();
  auto future = result->promise.get_future();
  auto sec = std::make_shared<bulk_security>(security);
  auto hi = std::make_shared<std::vector<char>>(hello);
  auto* owner = &io.get();
  auto ring = std::make_shared<std::unique_ptr<shm_ring>>();
  auto on_connected = [=, handler = std::move(handler)](tcp::socket s) mutable {
    s.set_option(tcp::no_delay(true));
    if (!tls && limits.shared_memory && on_this_machine(s) && !machine_boot_id().empty()) {
      std::string error;  // (none: the floats go inline)
      *ring = shm_ring::create(ring_capacity(max_floats), error);
    }
    if (!tls) {
      auto c = std::make_shared<connection<tcp::socket>>(std::move(s), max_floats, owner->gate, limits, false);
      owner->keep(c);
      greet_server(c, *sec, *hi, std::move(handler), result, ring);
      return;
    }
    auto c = std::make_shared<connection<tls_stream>>(tls_stream(std::move(s), *tls), max_floats, owner->gate, limits,
                                                      false);
    owner->keep(c);
    c->stream().async_handshake(asio::ssl::stream_base::client, [=, handler = std::move(handler)](boost::system::error_code ec) mutable {
      if (ec) {
        c->end("TLS handshake failed");
        return result->set_value({nullptr, "TLS handshake failed: " + ec.message()});
      }
      greet_server(c, *sec, *hi, std::move(handler), result, ring);
    });
  };
  auto socket = std::make_shared<tcp::socket>(ctx);
  socket->async_connect(tcp::endpoint(address, port), [=, on_connected = std::move(on_connected)](boost::system::error_code ec) mutable {
    if (ec)
      return result->set_value({nullptr, "cannot connect to " + host + ":" + std::to_string(port) + ": " + ec.message()});
    on_connected(std::move(*socket));
  });
  int open = 0;
  if (future.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready &&
      result->state.compare_exchange_strong(open, 2)) {
    asio::post(ctx, [socket] {
      boost::system::error_code ignored;
      socket->close(ignored);
    });
    return {nullptr, "no answer from " + host + ":" + std::to_string(port) + " within " +
                       std::to_string(timeout_ms) + " ms"};
  }
  auto r = future.get();
  if (!r.link && r.error == no_server_ring) {  // (a file limit, the memory map's): once more, all inline
    limits.shared_memory = false;
    return bulk_connect(io, security, host, port, hello, std::move(handler_copy), max_floats, timeout_ms, limits);
  }
  return r;
}

}  // namespace syncpoint::cluster
