// Each launcher's variables, given by hand (runtime/cluster/client/launch.hpp):
// Slurm, Open MPI, MPICH, torchrun-style and a Kubernetes Indexed Job give
// the same rank, world and head; Slurm's compressed host lists expand as
// `scontrol show hostnames` does; bad or missing values are refused by name.
#include "runtime/cluster/client/launch.hpp"

#include <syncpoint/job_config.hpp>
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace syncpoint;
using namespace syncpoint::cluster;
using syncpoint::testing::refusal;

namespace {

env_lookup vars(std::map<std::string, std::string> m) {
  return [m](const std::string& name) -> std::optional<std::string> {
    auto it = m.find(name);
    return it == m.end() ? std::nullopt : std::optional(it->second);
  };
}

}  // namespace

TEST_CASE("launch: Slurm's compressed host lists expand as scontrol show hostnames does") {
  using v = std::vector<std::string>;
  CHECK(expand_nodelist("n[1-3,5],m7") == v{"n1", "n2", "n3", "n5", "m7"});
  CHECK(expand_nodelist("node[08-10]") == v{"node08", "node09", "node10"});
  CHECK(expand_nodelist("r[1-2]-n[1-2]") == v{"r1-n1", "r1-n2", "r2-n1", "r2-n2"});
  CHECK(expand_nodelist("localhost") == v{"localhost"});
  CHECK(expand_nodelist("a,b[001-002],c") == v{"a", "b001", "b002", "c"});
  CHECK(expand_nodelist("").empty());
  CHECK(refusal([] { expand_nodelist("n[1-3"); }).find("a '[' with no ']'") != std::string::npos);
  CHECK(refusal([] { expand_nodelist("n1-3]"); }).find("a ']' with no '['") != std::string::npos);
  CHECK(refusal([] { expand_nodelist("n[3-1]"); }).find("holds '3-1', not a number or a rising range") !=
        std::string::npos);
  CHECK(refusal([] { expand_nodelist("n[a-b]"); }).find("holds 'a-b'") != std::string::npos);
  CHECK(refusal([] { expand_nodelist("a,,b"); }).find("an empty name") != std::string::npos);
  CHECK(refusal([] { expand_nodelist("n[1-99999999]"); }).find("more than") != std::string::npos);
}

TEST_CASE("launch: SLURM_TASKS_PER_NODE gives each node's tasks") {
  CHECK(tasks_per_node("2(x3),1") == std::vector<int>{2, 2, 2, 1});
  CHECK(tasks_per_node("4") == std::vector<int>{4});
  for (auto bad : {"", "2(x)", "0", "2(x3", "x", "2,,1"})
    CHECK_MESSAGE(refusal([&] { tasks_per_node(bad); }).find("SLURM_TASKS_PER_NODE='") == 0, bad);
}

TEST_CASE("launch: each launcher's variables give the same rank, world and head") {
  // Rank 2 of 3 on host n2 of n[1-3], the head on n1:29500.
  auto slurm = read_launch_env(vars({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "3"}, {"SLURM_NODEID", "1"},
                                     {"SLURM_LOCALID", "1"}, {"SLURM_JOB_NODELIST", "n[1-2]"},
                                     {"SLURM_TASKS_PER_NODE", "1,2"}, {"SLURM_JOB_ID", "4711"},
                                     {"SLURM_STEP_ID", "0"}, {"SLURM_CPUS_PER_TASK", "4"},
                                     {"SLURM_GPUS_ON_NODE", "2"}}));
  CHECK(slurm.launcher == "slurm");
  CHECK(slurm.rank == 2);
  CHECK(slurm.world == 3);
  CHECK(slurm.node_index == 1);
  CHECK(slurm.local_rank == 1);
  CHECK(slurm.local_size == 2);
  CHECK(slurm.hosts == std::vector<std::string>{"n1", "n2"});
  CHECK(slurm.head_host == "n1");
  CHECK(slurm.head_port == port_of_job("4711.0"));
  CHECK(slurm.cpus_per_task == 4);
  CHECK(slurm.gpus == std::vector<int>{0, 1});
  // A second step of the allocation has another port.
  CHECK(port_of_job("4711.1") != port_of_job("4711.0"));
  CHECK(port_of_job("4711.0") >= 20000);
  CHECK(port_of_job("4711.0") < 40000);

  auto ompi = read_launch_env(vars({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "3"},
                                    {"OMPI_MCA_ess_base_jobid", "123456"}}));
  CHECK(ompi.launcher == "openmpi");
  CHECK(ompi.rank == 2);
  CHECK(ompi.world == 3);
  CHECK(ompi.head_host == "127.0.0.1");  // every rank on this host
  CHECK(ompi.head_port == port_of_job("123456"));

  auto mpich = read_launch_env(vars({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"MASTER_ADDR", "n1"},
                                     {"MASTER_PORT", "29500"}}));
  CHECK(mpich.launcher == "mpich");
  CHECK(mpich.rank == 2);
  CHECK(mpich.world == 3);
  CHECK(mpich.head_host == "n1");
  CHECK(mpich.head_port == 29500);

  auto torchrun = read_launch_env(vars({{"RANK", "2"}, {"WORLD_SIZE", "3"}, {"LOCAL_RANK", "0"},
                                        {"MASTER_ADDR", "n1"}, {"MASTER_PORT", "29500"},
                                        {"CUDA_VISIBLE_DEVICES", "3,5"}}));
  CHECK(torchrun.launcher == "torchrun");
  CHECK(torchrun.rank == 2);
  CHECK(torchrun.world == 3);
  CHECK(torchrun.head_host == "n1");
  CHECK(torchrun.head_port == 29500);
  CHECK(torchrun.gpus == std::vector<int>{0, 1});  // CUDA numbers what it is shown from 0

  auto k8s = read_launch_env(vars({{"JOB_COMPLETION_INDEX", "2"}, {"WORLD_SIZE", "3"},
                                   {"MASTER_ADDR", "train-0.train-head"}, {"MASTER_PORT", "29500"}}));
  CHECK(k8s.launcher == "kubernetes");
  CHECK(k8s.rank == 2);
  CHECK(k8s.world == 3);
  CHECK(k8s.head_host == "train-0.train-head");

  // mpirun inside an sbatch script: the ranks are mpirun's, not the batch step's SLURM_PROCID 0.
  auto nested = read_launch_env(vars({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_JOB_NODELIST", "n1"},
                                      {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "3"}}));
  CHECK(nested.launcher == "openmpi");
  CHECK(nested.rank == 1);
}

TEST_CASE("launch: bad or missing values are refused by name") {
  auto refused = [](std::map<std::string, std::string> m) { return refusal([&] { read_launch_env(vars(m)); }); };
  CHECK(refused({}).find("no launcher's variables are set") == 0);
  CHECK(refused({{"SLURM_PROCID", "0"}}).find("SLURM_NTASKS is not set") == 0);
  CHECK(refused({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "3"}, {"SLURM_JOB_NODELIST", "n1"}})
          .find("SLURM_PROCID='3': must be a rank from 0 to SLURM_NTASKS - 1 = 2") == 0);
  CHECK(refused({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}}).find("SLURM_JOB_NODELIST is not set") == 0);
  CHECK(refused({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}, {"SLURM_JOB_NODELIST", "n[1-"}})
          .find("SLURM_JOB_NODELIST='n[1-': a '[' with no ']'") == 0);  // named by the variable it came from
  CHECK(refused({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}, {"SLURM_JOB_NODELIST", "n[1-2]"},
                 {"SLURM_NODEID", "2"}})
          .find("SLURM_NODEID='2': must be a node index below the 2 hosts") == 0);
  CHECK(refused({{"OMPI_COMM_WORLD_RANK", "-1"}, {"OMPI_COMM_WORLD_SIZE", "3"}}).find("OMPI_COMM_WORLD_RANK='-1'") ==
        0);
  CHECK(refused({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "many"}})
          .find("OMPI_COMM_WORLD_SIZE='many': must be the number of ranks") == 0);
  CHECK(refused({{"PMI_RANK", "0"}}).find("PMI_SIZE is not set") == 0);
  CHECK(refused({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("WORLD_SIZE='0'") == 0);
  CHECK(refused({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}})
          .find("MASTER_PORT='70000': must be a port from 1 to 65535") == 0);
  CHECK(refused({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", ""}}).find("MASTER_ADDR is set but empty") == 0);
  CHECK(refused({{"JOB_COMPLETION_INDEX", "0"}}).find("WORLD_SIZE is not set (a Kubernetes Indexed Job") == 0);
  CHECK(refused({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"SLURM_GPUS_ON_NODE", "x"}})
          .find("SLURM_GPUS_ON_NODE='x'") == 0);
}
