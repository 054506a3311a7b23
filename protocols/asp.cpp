// ASP — asynchronous parallel (PROTOCOLS.md, "ASP").
// Each push is applied on arrival; the worker is released at once and pulls
// whatever version is current.
#include <syncpoint/protocol_archive.hpp>

namespace syncpoint {

class asp : public protocol {
 public:
  explicit asp(const protocol_options&) {}

  void on_push(coordinator_api& c, worker_id w) override { c.release(w); }
  void checkpoint(protocol_archive&) override {}  // nothing of its own
};

SYNCPOINT_REGISTER_PROTOCOL("asp", "asynchronous: nobody waits", asp);

}  // namespace syncpoint
