// Who this process is in a launched job (issue 46): its rank, the world, and
// where the head is, read from whichever launcher started it. syncpoint uses
// no launcher's library: it reads the variables each one sets.
//
//   auto env = read_launch_env(process_env());   // throws config_error naming a bad variable
//   if (env.rank == 0) { /* the head: submits the job */ }
//   else { /* a node: joins env.head_host:env.head_port */ }
//
// Which launcher, first match wins (a more specific launcher inside a Slurm
// allocation sets its own variables, and inherits the batch step's SLURM_*):
//   openmpi     OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
//   mpich       PMI_RANK, PMI_SIZE (Hydra's mpiexec)
//   torchrun    RANK, WORLD_SIZE, LOCAL_RANK (and Kubeflow's PyTorchJob)
//   slurm       SLURM_PROCID, SLURM_NTASKS, SLURM_NODEID, SLURM_LOCALID,
//               SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE
//   kubernetes  JOB_COMPLETION_INDEX (an Indexed Job), WORLD_SIZE or the job's completions
// The head is MASTER_ADDR:MASTER_PORT when set (torchrun's names; a
// Kubernetes manifest sets them to the head pod's Service name), else the
// first host of Slurm's node list, else this machine when the launcher says
// every rank is on it. Without MASTER_PORT the port is derived from the job's
// id (SLURM_JOB_ID and SLURM_STEP_ID, Open MPI's job id), so two jobs of one
// allocation do not collide.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint::cluster {

/// A variable's value (nothing: not set).
using env_lookup = std::function<std::optional<std::string>(const std::string& name)>;

/// This process's environment.
env_lookup process_env();

struct launch_env {
  std::string launcher;        ///< openmpi, mpich, torchrun, slurm, kubernetes
  int rank = 0;                ///< 0: the head
  int world = 1;               ///< ranks in the job
  int local_rank = 0;          ///< among the ranks on this host
  int local_size = 1;          ///< ranks on this host (Slurm: this node's tasks)
  int node_index = -1;         ///< Slurm's SLURM_NODEID (-1: the launcher does not say)
  std::vector<std::string> hosts;  ///< Slurm's node list, expanded (empty: the launcher does not say)
  std::string head_host;       ///< where rank 0 listens ("": the launcher does not say; --head must)
  int head_port = 0;           ///< 0: the launcher does not say (--head or --port must)
  std::string job_id;          ///< the launcher's id of the job ("": none)
  int cpus_per_task = 0;       ///< SLURM_CPUS_PER_TASK (0: not set)
  std::vector<int> gpus;       ///< CUDA_VISIBLE_DEVICES, else SLURM_GPUS_ON_NODE's count as 0..n-1
};

/// What the launcher that started this process set; throws config_error
/// naming the variable that is missing or holds a bad value, and when no
/// launcher's variables are set at all.
launch_env read_launch_env(const env_lookup& env);

/// Slurm's compressed host list, as `scontrol show hostnames` expands it:
/// "n[1-3,5],m7" -> n1 n2 n3 n5 m7. Ranges keep their zero padding
/// ("n[08-10]" -> n08 n09 n10), and the bracket groups of one name multiply
/// ("r[1-2]-n[1-2]" -> r1-n1 r1-n2 r2-n1 r2-n2). Throws config_error on an
/// unbalanced bracket or a bad range.
/// `source` names the list in a refusal ("SLURM_JOB_NODELIST": "SLURM_JOB_NODELIST='n[1-': ...").
std::vector<std::string> expand_nodelist(const std::string& list, const std::string& source = "host list");

/// Slurm's SLURM_TASKS_PER_NODE ("2(x3),1": three nodes of 2 tasks, then
/// one of 1) as a count per node. Throws config_error.
std::vector<int> tasks_per_node(const std::string& text);

/// A port in 20000..39999 from a job's id: equal ids give equal ports.
int port_of_job(const std::string& job_id);

}  // namespace syncpoint::cluster
