// A peer that is not a proper syncpoint node, for the cluster tests:
//   impostor interface HOST:PORT   looks the head up as an actor with another
//                                  interface (an older head) through CAF's remote_actor<T>
//   impostor schema HOST:PORT      registers as a node with another schema fingerprint
//   impostor garbage HOST:PORT     sends bytes that are no CAF message at all
//   impostor stranger HOST:PORT    sends the head messages only its own process may send
// Prints what the head or CAF answered; exit 2 when refused, 0 when accepted.
#include "runtime/cluster/connect.hpp"

#include <caf/io/middleman.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

using namespace syncpoint;
using namespace syncpoint::cluster;

namespace {

// The head as an older build declared it.
using old_head_actor = caf::typed_actor<
  caf::replies_to<register_atom, std::string, int32_t>::with<std::string>>;

int garbage(const endpoint& at) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(at.port);
  inet_pton(AF_INET, at.host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::printf("cannot connect\n");
    return 1;
  }
  std::string junk(4096, '\0');
  for (size_t i = 0; i < junk.size(); ++i)
    junk[i] = static_cast<char>((i * 7919 + 13) & 0xff);
  auto sent = write(fd, junk.data(), junk.size());
  usleep(300000);
  close(fd);
  std::printf("sent %zd bytes of garbage\n", sent);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: impostor interface|schema|garbage|stranger HOST:PORT\n");
    return 64;
  }
  std::string mode = argv[1];
  auto at = parse_endpoint(argv[2]);
  if (!at)
    return 64;
  if (mode == "garbage")
    return garbage(*at);
  caf::actor_system_config cfg;
  configure_cluster(cfg);
  caf::actor_system sys{cfg};
  if (mode == "interface") {
    auto h = sys.middleman().remote_actor<old_head_actor>(at->host, at->port);
    if (!h) {
      std::printf("refused: %s\n", sys.render(h.error()).c_str());
      return 2;
    }
    std::printf("accepted\n");
    return 0;
  }
  auto head = connect_head(sys, *at, std::chrono::seconds(5));
  if (!head) {
    std::printf("cannot connect: %s\n", sys.render(head.error()).c_str());
    return 1;
  }
  caf::scoped_actor self{sys};
  int rc = 0;
  if (mode == "schema") {
    self->request(*head, std::chrono::seconds(5), register_atom::value,
                  node_hello{"impostor", 1, "0123456789abcdef"}, caf::actor_cast<node_actor>(self.ptr()))
      .receive([&](const std::string&) { std::printf("accepted\n"); },
               [&](caf::error& e) {
                 std::printf("refused: %s\n", sys.render(e).c_str());
                 rc = 2;
               });
    return rc;
  }
  if (mode == "stranger") {
    self->request(*head, std::chrono::seconds(5), shutdown_atom::value)
      .receive([&](bool) { std::printf("accepted\n"); },
               [&](caf::error& e) {
                 std::printf("refused: %s\n", sys.render(e).c_str());
                 rc = 2;
               });
    return rc;
  }
  return 64;
}
