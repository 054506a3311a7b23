// The Kubernetes manifests (deploy/kubernetes/) and the Containerfile
// (deploy/container/), checked offline: `kubectl apply --dry-run=client`
// needs a server, so the fields syncpoint relies on are read with a YAML
// parser (yaml-cpp) and checked against each other and against the command.
// What is checked is listed in docs/launch.md, "Kubernetes".
#include "tests/helpers.hpp"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace syncpoint::testing;

namespace {

const std::string deploy = std::string(SYNCPOINT_SOURCE_DIR) + "/deploy/";

// Every document of every manifest, by kind.
std::map<std::string, YAML::Node> manifests() {
  std::map<std::string, YAML::Node> out;
  for (auto file : {"secret.yaml", "service.yaml", "pvc.yaml", "job.yaml"}) {
    for (auto& doc : YAML::LoadAllFromFile(deploy + "kubernetes/" + file)) {
      INFO(file);
      REQUIRE(doc["apiVersion"].IsScalar());
      REQUIRE(doc["kind"].IsScalar());
      REQUIRE(doc["metadata"]["name"].IsScalar());
      out[doc["kind"].as<std::string>()] = doc;
    }
  }
  return out;
}

std::string env_value(const YAML::Node& container, const std::string& name) {
  for (auto e : container["env"])
    if (e["name"].as<std::string>() == name)
      return e["value"] ? e["value"].as<std::string>() : "";
  return "(not set)";
}

// The long options a command's --help lists.
std::set<std::string> options_of(const std::string& command) {
  auto r = run_shell(std::string(SYNCPOINT_CLI) + " " + command + " --help");
  REQUIRE(r.status == 0);
  std::set<std::string> out;
  std::regex opt("--[a-z][a-z0-9-]*");
  for (std::sregex_iterator it(r.output.begin(), r.output.end(), opt), end; it != end; ++it)
    out.insert(it->str());
  return out;
}

// The words of the `apt-get install` lines of a shell text (continued lines joined).
std::set<std::string> packages_in(std::string text, const std::string& from, const std::string& to) {
  auto a = text.find(from), b = text.find(to, a);
  REQUIRE(a != std::string::npos);
  text = text.substr(a, b == std::string::npos ? std::string::npos : b - a);
  std::set<std::string> out;
  std::regex word("[a-z0-9][a-z0-9+.-]+");
  for (std::sregex_iterator it(text.begin(), text.end(), word), end; it != end; ++it)
    out.insert(it->str());
  return out;
}

}  // namespace

TEST_CASE("deploy: the Kubernetes Job, Service, Secret and volume fit together and run syncpoint launch") {
  auto m = manifests();
  REQUIRE(m.count("Job"));
  REQUIRE(m.count("Service"));
  REQUIRE(m.count("Secret"));
  REQUIRE(m.count("PersistentVolumeClaim"));
  auto job = m["Job"], service = m["Service"], secret = m["Secret"], pvc = m["PersistentVolumeClaim"];
  CHECK(job["apiVersion"].as<std::string>() == "batch/v1");
  auto spec = job["spec"];
  CHECK(spec["completionMode"].as<std::string>() == "Indexed");  // JOB_COMPLETION_INDEX is each pod's rank
  auto pod = spec["template"]["spec"];
  REQUIRE(pod["containers"].size() == 1);
  auto c = pod["containers"][0];
  // The world: WORLD_SIZE is the number of pods, and they all run at once (the head waits for the others).
  int world = std::stoi(env_value(c, "WORLD_SIZE"));
  CHECK(spec["completions"].as<int>() == world);
  CHECK(spec["parallelism"].as<int>() == world);
  CHECK(pod["restartPolicy"].as<std::string>() == "Never");
  // The head: pod 0 by the headless Service's DNS name, on the Service's port.
  CHECK(service["spec"]["clusterIP"].as<std::string>() == "None");
  CHECK(pod["subdomain"].as<std::string>() == service["metadata"]["name"].as<std::string>());
  for (auto kv : service["spec"]["selector"])
    CHECK(spec["template"]["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>() ==
          kv.second.as<std::string>());
  CHECK(env_value(c, "MASTER_ADDR") ==
        job["metadata"]["name"].as<std::string>() + "-0." + service["metadata"]["name"].as<std::string>());
  CHECK(env_value(c, "MASTER_PORT") == service["spec"]["ports"][0]["port"].as<std::string>());
  CHECK(c["ports"][0]["containerPort"].as<std::string>() == env_value(c, "MASTER_PORT"));
  // The token: from the Secret, by a variable, never on the command line.
  bool token = false;
  for (auto e : c["env"])
    if (e["name"].as<std::string>() == "SYNCPOINT_TOKEN") {
      auto ref = e["valueFrom"]["secretKeyRef"];
      CHECK(ref["name"].as<std::string>() == secret["metadata"]["name"].as<std::string>());
      CHECK(secret["stringData"][ref["key"].as<std::string>()].IsScalar());
      token = true;
    }
  CHECK(token);
  // The command: syncpoint launch, its options and the job's, each one the command knows.
  std::vector<std::string> cmd;
  for (auto w : c["command"])
    cmd.push_back(w.as<std::string>());
  REQUIRE(cmd.size() > 3);
  CHECK(cmd[0] == "syncpoint");
  CHECK(cmd[1] == "launch");
  auto dashes = std::find(cmd.begin(), cmd.end(), "--");
  REQUIRE(dashes != cmd.end());
  CHECK(std::find(cmd.begin(), cmd.end(), "--token") == cmd.end());
  auto launch = options_of("launch"), submit = options_of("submit");
  for (auto it = cmd.begin() + 2; it != cmd.end(); ++it)
    if (it->rfind("--", 0) == 0 && *it != "--")
      CHECK_MESSAGE((it < dashes ? launch : submit).count(*it) == 1, *it << " is not an option of syncpoint "
                                                                        << (it < dashes ? "launch" : "submit"));
  // The results: written under the volume every pod mounts from the claim.
  std::string mount;
  for (auto v : pod["volumes"])
    if (v["persistentVolumeClaim"]["claimName"].as<std::string>() == pvc["metadata"]["name"].as<std::string>())
      for (auto vm : c["volumeMounts"])
        if (vm["name"].as<std::string>() == v["name"].as<std::string>())
          mount = vm["mountPath"].as<std::string>();
  REQUIRE(!mount.empty());
  for (auto flag : {"--out", "--checkpoint-dir"}) {
    auto at = std::find(dashes, cmd.end(), flag);
    REQUIRE_MESSAGE(at + 1 < cmd.end(), flag);
    CHECK_MESSAGE((at + 1)->rfind(mount + "/", 0) == 0, flag << " " << *(at + 1) << " is not under " << mount);
  }
  CHECK(pvc["spec"]["accessModes"][0].as<std::string>() == "ReadWriteMany");
}

TEST_CASE("deploy: the Containerfile builds on Debian 12 with every -dev package setup installs, and runs the .deb") {
  std::ifstream in(deploy + "container/Containerfile");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  auto file = text.str();
  CHECK(file.find("\nFROM debian:12 AS build\n") != std::string::npos);
  CHECK(std::regex_search(file, std::regex("\nFROM debian:12\n")));  // the image itself
  CHECK(file.find("cpack -G DEB") != std::string::npos);
  CHECK(file.find("/tmp/syncpoint_*_amd64.deb") != std::string::npos);  // cmake/package.cmake's name
  CHECK(file.find("ENTRYPOINT [\"syncpoint\"]") != std::string::npos);
  std::ifstream setup_in(std::string(SYNCPOINT_SOURCE_DIR) + "/scripts/setup.sh");
  std::stringstream setup;
  setup << setup_in.rdbuf();
  auto built_with = packages_in(file, "FROM debian:12 AS build", "COPY");
  auto setup_packages = packages_in(setup.str(), "packages=(", "missing=()");
  int dev = 0;
  for (auto& p : setup_packages)
    if (p.size() > 4 && p.compare(p.size() - 4, 4, "-dev") == 0 && p.rfind("libclang-rt", 0) != 0) {
      ++dev;
      CHECK_MESSAGE(built_with.count(p) == 1, "the Containerfile's build stage lacks " << p << " (scripts/setup.sh)");
    }
  CHECK(dev >= 10);
}
