// The cluster's security, with real processes on loopback: the token, TLS
// with certificates from a CA made for the test, and the default address.
#include "runtime/cluster/net/file_limit.hpp"
#include "tests/cluster_fixture.hpp"
#include "tests/http_client.hpp"
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <thread>

using namespace syncpoint;
using namespace syncpoint::testing;
using namespace std::chrono_literals;

TEST_CASE("cluster: with a token the head refuses nodes, jobs and status requests without it, and logs them") {
  temp_dir files;
  auto token_file = files.path() + "/token";
  std::ofstream(token_file) << "s3cret-token\n";
  cluster c({"--token-file", token_file});
  CHECK(c.head->out().find("token required") != std::string::npos);
  auto refused = [&](std::unique_ptr<process> p, const std::string& says) {
    CHECK_MESSAGE(p->wait(20s) == 2, (p->out() + p->err()));
    CHECK_MESSAGE((p->out() + p->err()).find(says) != std::string::npos, (p->out() + p->err()));
  };
  refused(c.run("node", {"--join", c.address(), "--name", "none"}, "n-none"), "no token given");
  refused(c.run("node", {"--join", c.address(), "--name", "bad", "--token", "guess"}, "n-bad"), "wrong token");
  refused(c.run("status", {"--head", c.address()}, "s-none"), "no token given");
  refused(c.submit(cat(small_job("asp", 1, 1), {"--token", "guess"}), "sub-bad"), "wrong token");
  refused(c.run("sweep", {"--head", c.address(), "--grid", "protocol=bsp,asp", "--dataset", "synthetic", "--model",
                          "softmax", "--epochs", "1", "--out", files / "sweep"}, "sw-none"), "no token given");
  refused(c.run("node", {"--join", c.address(), "--token", "a", "--token-file", token_file}, "n-both"),
          "not both");
  // The right token, given either way, is accepted.
  auto node = c.run("node", {"--join", c.address(), "--name", "good", "--slots", "1", "--token", "s3cret-token"},
                    "n-good");
  REQUIRE_MESSAGE(node->wait_for("joined the head", hang_deadline), node->err());
  auto s = c.run("status", {"--head", c.address(), "--token-file", token_file}, "s-good");
  CHECK(s->wait(hang_deadline) == 0);
  CHECK(s->out().find(" good ") != std::string::npos);
  CHECK(s->out().find(" bad ") == std::string::npos);
  auto ok = c.submit(cat(small_job("asp", 1, 1), {"--token", "s3cret-token", "--out", files / "run"}), "sub-good");
  CHECK_MESSAGE(ok->wait(60s) == 0, ok->err());
  // The command recorded for the report keeps the token out.
  auto recorded = slurp(files / "run/run.json");
  CHECK(recorded.find("--token '***'") != std::string::npos);
  CHECK(recorded.find("s3cret") == std::string::npos);
  // Each refusal is in the head's log, with what was refused.
  auto log = c.head->err();
  CHECK_MESSAGE(log.find("refused node 'none' registering from") != std::string::npos, log);
  CHECK(log.find(": no token") != std::string::npos);
  CHECK(log.find("refused node 'bad' registering from") != std::string::npos);
  CHECK(log.find("refused a job submitted from") != std::string::npos);
  CHECK(log.find("refused a status request from") != std::string::npos);
}

TEST_CASE("cluster: with --tls only certificates from the cluster's CA connect, and a stranger disconnects nobody") {
  if (std::system("command -v openssl > /dev/null 2>&1") != 0) {
    MESSAGE("openssl is not installed: the TLS test is skipped");
    return;
  }
  // Two CAs; the head, a node and the submitter have certificates from the first, a stranger from the second.
  temp_dir pki;
  auto sh = [&](const std::string& cmd) {
    REQUIRE_MESSAGE(std::system(("cd " + pki.path() + " && { " + cmd + "; } > /dev/null 2>&1").c_str()) == 0, cmd);
  };
  for (auto ca : {"ca1", "ca2"})
    sh(std::string("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=") + ca + " -keyout " + ca +
       ".key -out " + ca + ".pem");
  for (auto [who, ca] : {std::pair{"head", "ca1"}, std::pair{"node", "ca1"}, std::pair{"client", "ca1"},
                         std::pair{"stranger", "ca2"}})
    sh(std::string("openssl req -newkey rsa:2048 -nodes -subj /CN=") + who + " -keyout " + who + ".key -out " +
       who + ".csr && openssl x509 -req -days 2 -in " + who + ".csr -CA " + ca + ".pem -CAkey " + ca +
       ".key -CAcreateserial -out " + who + ".pem");
  auto tls = [&](const std::string& who, const std::string& ca = "ca1") {
    return std::vector<std::string>{"--tls", "--cert", pki / (who + ".pem"), "--key", pki / (who + ".key"),
                                    "--ca", pki / (ca + ".pem")};
  };
  temp_dir dir;
  process head(cat({syncpoint_binary(), "head", "--port", "0", "--dashboard", "any"}, tls("head")), dir.path(),
               "tls-head");
  REQUIRE_MESSAGE(head.wait_for("listening on", hang_deadline), head.err());
  CHECK(head.out().find("TLS: peers need a certificate signed by") != std::string::npos);
  auto address = "127.0.0.1:" + std::to_string(head_port(head));
  process node(cat({syncpoint_binary(), "node", "--join", address, "--name", "n1", "--slots", "1"}, tls("node")),
               dir.path(), "tls-node");
  REQUIRE_MESSAGE(node.wait_for("joined the head", hang_deadline), node.err());
  auto refused = [&](std::vector<std::string> argv, const std::string& name, const std::string& says) {
    process p(argv, dir.path(), name);
    CHECK_MESSAGE(p.wait(hang_deadline) == 2, (p.out() + p.err()));
    CHECK_MESSAGE(p.err().find(says) != std::string::npos, (p.out() + p.err()));
  };
  // A certificate from another CA, and no TLS at all: both fail the handshake, fast.
  refused(cat({syncpoint_binary(), "node", "--join", address, "--name", "s1"}, tls("stranger")), "tls-stranger",
          "closed the connection during the handshake");
  refused({syncpoint_binary(), "node", "--join", address, "--name", "s2"}, "tls-plain",
          "closed the connection during the handshake");
  refused(cat({syncpoint_binary(), "status", "--head", address}, tls("stranger")), "tls-stranger-status",
          "closed the connection during the handshake");
  // Missing files are refused before any connection.
  refused({syncpoint_binary(), "node", "--join", address, "--tls", "--cert", pki / "node.pem", "--key",
           pki / "node.key"}, "tls-no-ca", "--tls needs --ca FILE");
  refused({syncpoint_binary(), "node", "--join", address, "--cert", pki / "node.pem"}, "tls-no-flag",
          "need --tls");
  // A key that is not the certificate's is refused before any connection (CAF would end the process on one).
  refused(cat({syncpoint_binary(), "node", "--join", address, "--tls", "--cert", pki / "node.pem", "--key",
               pki / "client.key"}, {"--ca=" + pki / "ca1.pem"}), "tls-wrong-key", "does not belong to --cert");
  // An encrypted key (never prompted for), a key given as the certificate, a request given as the CA.
  sh("openssl pkey -in node.key -aes128 -passout pass:secret -out node-encrypted.key");
  refused({syncpoint_binary(), "node", "--join", address, "--tls", "--cert", pki / "node.pem", "--key",
           pki / "node-encrypted.key", "--ca", pki / "ca1.pem"}, "tls-encrypted-key",
          "is not a usable private key (encrypted keys are not supported)");
  refused({syncpoint_binary(), "node", "--join", address, "--tls", "--cert", pki / "node.key", "--key",
           pki / "node.key", "--ca", pki / "ca1.pem"}, "tls-key-as-cert",
          "--cert '" + pki / "node.key" + "' is not a usable certificate");
  refused({syncpoint_binary(), "node", "--join", address, "--tls", "--cert", pki / "node.pem", "--key",
           pki / "node.key", "--ca", pki / "node.csr"}, "tls-csr-as-ca",
          "--ca '" + pki / "node.csr" + "' is not a usable CA certificate");
  // The node that belongs is still connected: status lists it, and a job runs on
  // it (the only node) over TLS, which needs its connection to the head.
  REQUIRE(node.running());
  process status(cat({syncpoint_binary(), "status", "--head", address}, tls("client")), dir.path(), "tls-status");
  CHECK(status.wait(hang_deadline) == 0);
  CHECK_MESSAGE(status.out().find(" n1 ") != std::string::npos, status.out());
  process job(cat(cat({syncpoint_binary(), "submit", "--head", address}, small_job("asp", 1, 1)), tls("client")),
              dir.path(), "tls-job");
  CHECK_MESSAGE(job.wait(hang_deadline) == 0, job.err());
  CHECK(node.running());
  CHECK(head.err().find("was lost") == std::string::npos);
  // The dashboard speaks HTTPS with the head's certificate, and nothing else.
  REQUIRE_MESSAGE(head.wait_for("dashboard: https://127.0.0.1:", hang_deadline), head.out());
  auto out = head.out();
  int dashboard = std::atoi(out.c_str() + out.find("dashboard: https://127.0.0.1:") + 29);
  auto page = https_get(dashboard, "/api/cluster", pki / "ca1.pem");
  CHECK(page.status == 200);
  CHECK_MESSAGE(page.body.find("\"name\": \"n1\"") != std::string::npos, page.body);
  CHECK(http_get(dashboard, "/api/cluster").status == 0);  // plain HTTP: no answer
  CHECK_THROWS(https_get(dashboard, "/", pki / "ca2.pem"));  // a certificate another CA did not sign
}

TEST_CASE("cluster: the head listens on 127.0.0.1 unless --host says otherwise, and says so") {
  temp_dir dir;
  process head({syncpoint_binary(), "head", "--port", "0", "--dashboard", "any"}, dir.path(), "head-default");
  REQUIRE_MESSAGE(head.wait_for("listening on", hang_deadline), head.err());
  CHECK(head.out().find("listening on 127.0.0.1:") != std::string::npos);
  CHECK(head.out().find("this machine only; --host 0.0.0.0 to accept nodes from other machines") != std::string::npos);
  CHECK(head.out().find("no token: anyone who can connect may join") != std::string::npos);
  REQUIRE_MESSAGE(head.wait_for("dashboard: http://127.0.0.1:", hang_deadline), head.out());
}


TEST_CASE("cluster: a head or node listening beyond loopback without a token or TLS warns at start, one on "
          "loopback or with a token does not") {
  temp_dir dir;
  process open_head({syncpoint_binary(), "head", "--host", "0.0.0.0", "--port", "0", "--dashboard", "off"},
                    dir.path(), "head-open");
  REQUIRE_MESSAGE(open_head.wait_for("WARNING", hang_deadline, true), open_head.err());
  CHECK_MESSAGE(open_head.err().find("syncpoint head: WARNING: listening on 0.0.0.0, beyond this machine, with no "
                                     "token and no TLS") != std::string::npos,
                open_head.err());
  // A node told to listen on every interface, without a token, says so too.
  auto port = head_port(open_head);
  process node({syncpoint_binary(), "node", "--join", "127.0.0.1:" + std::to_string(port), "--name", "n", "--slots",
                "1", "--host", "0.0.0.0"},
               dir.path(), "node-open");
  REQUIRE_MESSAGE(node.wait_for("joined the head", hang_deadline), node.err());
  CHECK_MESSAGE(node.out().find("bulk channel on 0.0.0.0:") != std::string::npos, node.out());
  CHECK_MESSAGE(node.err().find("syncpoint node: WARNING: the bulk channel listens on 0.0.0.0, beyond this machine, "
                                "with no token and no TLS") != std::string::npos,
                node.err());
  // On loopback (the default), or with a token: no warning.
  temp_dir files;
  std::ofstream(files.path() + "/token") << "s3cret\n";
  process quiet({syncpoint_binary(), "head", "--host", "0.0.0.0", "--port", "0", "--dashboard", "off",
                 "--token-file", files.path() + "/token"},
                dir.path(), "head-token");
  process local({syncpoint_binary(), "head", "--port", "0", "--dashboard", "off"}, dir.path(), "head-local");
  REQUIRE_MESSAGE(quiet.wait_for("bulk channel on", hang_deadline), quiet.out());
  REQUIRE_MESSAGE(local.wait_for("bulk channel on 127.0.0.1:", hang_deadline), local.out());
  CHECK(quiet.err().find("WARNING") == std::string::npos);
  CHECK(local.err().find("WARNING") == std::string::npos);
}

TEST_CASE("cluster: 1,000 connections to a node's bulk port that never say hello leave a running job training to "
          "its accuracy") {
  raise_file_limit();  // this process's 1,000 sockets
  cluster c;
  c.node("a", 2);
  auto& b = c.node("b", 2);
  REQUIRE_MESSAGE(b.wait_for("bulk channel on 127.0.0.1:", hang_deadline), b.out());
  auto out = b.out();
  int bulk = std::atoi(out.c_str() + out.find("bulk channel on 127.0.0.1:") + 26);
  REQUIRE(bulk > 0);
  // Node a's workers reach the shard on b over b's bulk port.
  auto sub = c.submit(cat(open_job("asp", 4), {"--ps-placement", "nodes"}), "submit");
  auto at = await(*sub, "] eval ");
  CHECK_MESSAGE(c.nodes["a"]->err().find(": shard 1 on the bulk channel") != std::string::npos, c.nodes["a"]->err());
  std::vector<int> silent;
  for (int i = 0; i < 1000; ++i) {
    int fd = http_connect(bulk);  // a TCP connection that sends nothing
    if (fd >= 0)
      silent.push_back(fd);
  }
  CHECK(silent.size() == 1000);
  // The job goes on: evaluations come, and reach its accuracy.
  await_accuracy(*sub, 0.8, at);
  for (int fd : silent)
    ::close(fd);
  CHECK(b.running());
  interrupt(*sub);
}
