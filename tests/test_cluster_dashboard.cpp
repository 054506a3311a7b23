// The head's live dashboard and /metrics (docs/dashboard.md), against a real
// head, two nodes and a job, over HTTP on loopback: Prometheus text of a
// running job, its counters equal to the summary once it ends, the JSON API
// against `status`, the token, and hostile requests while a job trains.
#include "runtime/cluster/net/file_limit.hpp"
#include "tests/cluster_fixture.hpp"
#include "tests/http_client.hpp"
#include "tests/prometheus_text.hpp"

#include "core/rapidjson.hpp"

#include <set>
#include <thread>

using namespace syncpoint;
using namespace syncpoint::testing;

namespace {

// Reads `path` until `ready` holds for its answer: the event (the watcher's
// figures reached the hub, which publishes them within a second or two);
// the deadline is a hang's.
template <class Ready>
http_reply await_page(int port, const std::string& path, Ready ready, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + hang_deadline;
  http_reply r;
  while (std::chrono::steady_clock::now() < deadline) {
    r = http_get(port, path);
    if (ready(r))
      return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("waited for " << what << " at " << path << "; last answer " << r.status << ":\n" << r.body);
  return r;
}

rapidjson::Document json_of(const http_reply& r) {
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_MESSAGE(!d.HasParseError(), r.body);
  return d;
}

// The words of `status`'s table lines under "nodes (N):" or "jobs (N):".
std::vector<std::vector<std::string>> status_rows(const std::string& text, const std::string& table) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(text);
  bool inside = false, header = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(table + " (", 0) == 0) {
      inside = header = true;
      continue;
    }
    if (!inside)
      continue;
    if (line.empty() || line[0] != ' ')
      break;
    if (std::exchange(header, false))
      continue;  // the column names
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string w; words >> w;)
      row.push_back(w);
    out.push_back(row);
  }
  return out;
}

size_t count_lines(const std::string& text, const std::vector<std::string>& needles) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    n += std::all_of(needles.begin(), needles.end(), [&](auto& s) { return line.find(s) != std::string::npos; });
  return n;
}

}  // namespace

TEST_CASE("dashboard: /metrics of a running job is Prometheus text, and once it ends its counters equal its summary") {
  cluster c;
  c.node("a", 1);
  c.node("b", 1);
  int port = c.dashboard_port();
  auto sub = c.submit(cat(open_job("bsp", 2), {"--out", c.dir / "run"}), "sub");
  await(*sub, "] eval ");  // the run is under way, and stays so until it is interrupted

  // Running: the job's figures, from both workers.
  prom_text p;
  await_page(port, "/metrics", [&](const http_reply& r) {
    p = parse_prometheus(r.body);  // throws (fails the test) on anything a scraper would refuse
    auto pushes = p.find("syncpoint_worker_pushes_total", {{"job", "1"}});
    return pushes.size() == 2 && pushes[0].value > 0 && pushes[1].value > 0;
  }, "both workers' pushes");
  CHECK(p.value("syncpoint_job_info", {{"job", "1"}, {"protocol", "bsp"}, {"state", "running"}}) == 1);
  CHECK(p.value("syncpoint_job_workers_live", {{"job", "1"}}) == 2);
  CHECK(p.value("syncpoint_node_slots", {{"node", "a"}, {"state", "used"}}) == 1);
  CHECK(p.value("syncpoint_node_heartbeat_age_seconds", {{"node", "b"}}) < 60);
  CHECK(p.value("syncpoint_worker_pull_latency_seconds_count", {{"job", "1"}, {"worker", "0"}}) > 0);
  CHECK(p.value("syncpoint_job_staleness_versions_count", {{"job", "1"}}) > 0);
  CHECK(p.value("syncpoint_job_learning_rate", {{"job", "1"}}) == 0.1);
  CHECK(p.value("syncpoint_job_shard_version", {{"job", "1"}, {"shard", "0"}}) > 0);

  // The JSON API lists the nodes and jobs `status` lists.
  auto api = json_of(http_get(port, "/api/cluster"));
  auto status = c.status();
  std::set<std::string> listed, shown;
  for (auto& row : status_rows(status, "nodes"))  // NAME HOST RANK ADDRESS ... (rank "-": started by hand)
    listed.insert(row.at(0) + " " + row.at(1) + " " + row.at(2) + " " + row.at(3));
  for (auto& n : api["nodes"].GetArray())
    shown.insert(std::string(n["name"].GetString()) + " " + n["host"].GetString() + " " +
                 (n["rank"].IsNull() ? "-" : "?") + " " + n["address"].GetString());
  std::string both;
  for (auto& x : listed)
    both += "status: " + x + "\n";
  for (auto& x : shown)
    both += "api: " + x + "\n";
  CHECK_MESSAGE(listed == shown, both);
  CHECK(shown.size() == 2);
  auto jobs = status_rows(status, "jobs");
  REQUIRE(jobs.size() == 1);
  REQUIRE(api["jobs"].Size() == 1);
  CHECK(jobs[0].at(0) == std::to_string(api["jobs"][0]["id"].GetUint64()));
  CHECK(jobs[0].at(1) == api["jobs"][0]["protocol"].GetString());
  CHECK(std::find(jobs[0].begin(), jobs[0].end(), api["jobs"][0]["state"].GetString()) != jobs[0].end());
  auto page = json_of(http_get(port, "/api/jobs/1"));
  CHECK(page["live"]["timeline"]["workers"].Size() == 2);
  CHECK(page["live"]["series"]["accuracy"].Size() >= 1);

  // Ended: the last figures are the whole trace's, and the head keeps the job's files.
  interrupt(*sub);
  await_page(port, "/api/jobs/1", [](const http_reply& r) {
    return r.status == 200 && r.body.find("\"files\": [\"summary.json\"") != std::string::npos;
  }, "the ended job's files");
  p = parse_prometheus(http_get(port, "/metrics").body);
  auto summary = slurp(c.dir / "run/summary.json");
  auto samples = json_number(summary, "samples");
  REQUIRE(samples > 0);
  CHECK(p.value("syncpoint_job_info", {{"job", "1"}, {"state", "stopped"}}) == 1);
  CHECK(p.value("syncpoint_job_samples_total", {{"job", "1"}}) == samples);
  CHECK(p.sum("syncpoint_worker_samples_total", {{"job", "1"}}) == samples);
  auto trace = slurp(c.dir / "run/trace.jsonl");
  for (int w : {0, 1}) {
    auto who = "\"worker\": " + std::to_string(w) + ",";
    auto worker = std::map<std::string, std::string>{{"job", "1"}, {"worker", std::to_string(w)}};
    CHECK(p.value("syncpoint_worker_pushes_total", worker) == count_lines(trace, {"\"kind\": \"push\"", who}));
    CHECK(p.value("syncpoint_worker_pulls_total", worker) == count_lines(trace, {"\"kind\": \"pull\"", who}));
  }
  CHECK(p.value("syncpoint_job_staleness_versions_count", {{"job", "1"}}) == count_lines(trace, {"\"kind\": \"apply\""}));
  CHECK(http_get(port, "/jobs/1/files/summary.json").body == summary);  // the submitter's, byte for byte
  CHECK(http_get(port, "/jobs/1/files/trace.jsonl").body == trace);
  auto report = http_get(port, "/jobs/1/files/report.html");
  CHECK(report.status == 200);
  CHECK(report.body.find("Protocol comparison") != std::string::npos);

  // The dashboard's actors end with the head: Ctrl-C on it ends the process, cleanly.
  c.head->signal(SIGINT);
  CHECK_MESSAGE(c.head->wait(hang_deadline) == 0, c.head->err());
}

TEST_CASE("dashboard: a sparse job's tables show on /metrics and its page, each on each shard: rows, bytes, evictions, "
          "hits and misses") {
  cluster c;
  c.node("a", 1);
  c.node("b", 1);
  int port = c.dashboard_port();
  auto sub = c.submit({"--protocol", "asp", "--workers", "2", "--model", "ctr:fields=4,width=4,hidden=8,lru=40",
                       "--dataset", "clicks:keys=400,fields=4,numeric=2", "--train-limit", "2000", "--test-limit",
                       "200", "--batch", "16", "--epochs", "100000", "--max-time", "900", "--ps-shards", "2",
                       "--eval-every", "0.5", "--out", c.dir / "run"},
                      "sub");
  await(*sub, "] eval ");  // under way, and so until it is interrupted
  prom_text p;
  await_page(port, "/metrics", [&](const http_reply& r) {
    p = parse_prometheus(r.body);
    auto rows = p.find("syncpoint_table_rows", {{"job", "1"}, {"table", "ids"}});
    return rows.size() == 2 && rows[0].value > 0 && rows[1].value > 0 &&
           p.sum("syncpoint_table_evictions_total", {{"job", "1"}}) > 0;
  }, "both shards' rows of table 'ids', and evictions");
  for (auto shard : {"0", "1"}) {
    std::map<std::string, std::string> at{{"job", "1"}, {"table", "ids"}, {"shard", shard}};
    auto rows = p.value("syncpoint_table_rows", at);
    CHECK(rows <= 40);  // lru=40 a shard
    CHECK(p.value("syncpoint_table_bytes", at) == rows * 4 * sizeof(float));  // sgd: the values alone
    auto hit = at, miss = at;
    hit["result"] = "hit";
    miss["result"] = "miss";
    CHECK(p.value("syncpoint_table_lookups_total", hit) > 0);
    CHECK(p.value("syncpoint_table_lookups_total", miss) > 0);
  }
  auto page = json_of(http_get(port, "/api/jobs/1"));
  REQUIRE(page["live"]["tables"].Size() == 2);
  CHECK(std::string(page["live"]["tables"][1][0]["name"].GetString()) == "ids");
  CHECK(page["live"]["tables"][1][0]["hits"].GetUint64() > 0);
  interrupt(*sub);
}

TEST_CASE("dashboard: with --token every request needs it, as a bearer header or the login's cookie") {
  cluster c({"--token", "s3cret"});
  int port = c.dashboard_port();
  for (auto* path : {"/", "/api/cluster", "/metrics", "/jobs/1"})
    CHECK_MESSAGE(http_get(port, path).status == 401, path);
  CHECK(http_get(port, "/metrics", {"Authorization: Bearer wrong"}).status == 401);
  auto metrics = http_get(port, "/metrics", {"Authorization: Bearer s3cret"});
  CHECK(metrics.status == 200);
  CHECK_NOTHROW(parse_prometheus(metrics.body));
  auto form = http_get(port, "/");
  CHECK(form.body.find("name=\"token\"") != std::string::npos);
  CHECK(http_request_to(port, "POST", "/login", {"Content-Type: application/x-www-form-urlencoded"}, "token=guess")
          .status == 401);
  auto login = http_request_to(port, "POST", "/login", {"Content-Type: application/x-www-form-urlencoded"},
                               "token=s3cret&next=%2F");
  REQUIRE(login.status == 303);
  auto cookie = login.header("set-cookie");
  auto session = cookie.substr(0, cookie.find(';'));
  auto page = http_get(port, "/", {"Cookie: " + session});
  CHECK(page.status == 200);
  CHECK(page.body.find("syncpoint cluster") != std::string::npos);
  CHECK(http_get(port, "/api/cluster", {"Cookie: " + session}).status == 200);
}

TEST_CASE("dashboard: 1,000 idle connections, from other addresses or the client's own, do not shut an authenticated "
          "client out of the page and /metrics") {
  raise_file_limit();  // this process's 1,000 sockets
  cluster c({"--token", "s3cret"});
  int port = c.dashboard_port();
  const std::vector<std::string> bearer{"Authorization: Bearer s3cret"};
  // Opened and left silent: from 50 addresses (20 each), then from one, then from the client's own
  // (as every user's are behind a reverse proxy).
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    auto from = "127.0.0." + std::to_string(10 + i % 50);
    idle.push_back(http_connect(port, std::chrono::seconds(120), from.c_str()));
    REQUIRE(idle.back() >= 0);
  }
  CHECK(http_get(port, "/", bearer).status == 200);
  auto metrics = http_get(port, "/metrics", bearer);
  CHECK(metrics.status == 200);
  CHECK_NOTHROW(parse_prometheus(metrics.body));
  for (int i = 0; i < 1000; ++i) {
    idle.push_back(http_connect(port, std::chrono::seconds(120), "127.0.0.3"));
    REQUIRE(idle.back() >= 0);
  }
  CHECK(http_get(port, "/", bearer).status == 200);
  CHECK(http_get(port, "/metrics", bearer).status == 200);
  for (int i = 0; i < 1000; ++i) {
    idle.push_back(http_connect(port, std::chrono::seconds(120), "127.0.0.1"));
    REQUIRE(idle.back() >= 0);
  }
  CHECK(http_get(port, "/", bearer).status == 200);
  CHECK(http_get(port, "/metrics", bearer).status == 200);
  for (int fd : idle)
    ::close(fd);
  CHECK(c.head->running());
}

TEST_CASE("dashboard: hostile requests are answered or refused, the head stays up, and a job training meanwhile goes on") {
  cluster c;
  c.node("a", 2);
  int port = c.dashboard_port();
  auto sub = c.submit(open_job("asp", 2), "sub");
  await(*sub, "] eval ");

  // Too big, malformed, another method, a path out of the site, a job that does not exist.
  CHECK(http_raw(port, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n").status == 431);
  CHECK(http_request_to(port, "POST", "/login", {}, std::string(5000, 'x')).status == 413);
  CHECK(http_raw(port, "GARBAGE\r\n\r\n").status == 400);
  CHECK(http_request_to(port, "DELETE", "/api/jobs/1").status == 405);
  for (auto* path : {"/jobs/1/files/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/jobs/1/files/%2e%2e%2fx",
                     "/api/jobs/999", "/jobs/999", "/api/jobs/1%00", "/api/jobs/99999999999999999999"})
    CHECK_MESSAGE(http_get(port, path).status == 404, path);

  // A slow client: half a request, then nothing. Others are served meanwhile;
  // it is closed when its time to send the request is over.
  int slow = http_connect(port);
  REQUIRE(slow >= 0);
  http_send(slow, "GET / HTTP/1.1\r\nHost: x\r\n");
  CHECK(http_get(port, "/api/cluster").status == 200);
  char byte;
  CHECK(::recv(slow, &byte, 1, 0) == 0);  // the server's close (-1 would be this test's own deadline)
  ::close(slow);

  // 1,000 connections at once: each is answered (200) or told the dashboard is full (503).
  raise_file_limit();  // this process's 1,000 sockets
  std::vector<int> many;
  for (int i = 0; i < 1000; ++i) {
    int fd = http_connect(port);
    REQUIRE(fd >= 0);
    http_send(fd, "GET /api/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    many.push_back(fd);
  }
  std::map<int, int> answers;
  for (int fd : many) {
    ++answers[parse_reply(http_read_all(fd)).status];
    ::close(fd);
  }
  CHECK(answers[200] + answers[503] == 1000);
  CHECK(answers[200] > 0);
  MESSAGE("1000 connections at once: " << answers[200] << " answered, " << answers[503] << " told 503");

  // The head, its dashboard and the job are fine: the job evaluates again, then ends as asked.
  CHECK(c.head->running());
  CHECK(http_get(port, "/api/cluster").status == 200);
  await(*sub, "] eval ", sub->err().size());
  interrupt(*sub);
  await_page(port, "/api/jobs/1", [](const http_reply& r) { return r.body.find("\"state\": \"stopped\"") != std::string::npos; },
             "the job stopped");
}
