// Where each rank of an MPI job runs: its share of the node's cores and its GPU (README, "Under MPI").
#pragma once

#include <string>
#include <vector>

#include "suite/team.hpp"

namespace cnn {

struct RankBinding {
  int rank = 0, local_rank = 0;
  std::string host;
  std::vector<int> cpus;  // the CPUs this rank may run on
  std::string gpu;        // the device it sees as its CUDA device 0 ("none" where the node has no GPU)
};

// Binds this rank of an MPI team, before any library has started threads or initialised a GPU: when every
// rank of the node was given the same CPUs (the launcher bound none of them), each takes local_rank's
// contiguous block of them; a launcher's own binding (different sets) is kept. The node-local rank picks a
// GPU round robin (ranks share one when the node has fewer), from CUDA_VISIBLE_DEVICES where that is set,
// and narrows CUDA_VISIBLE_DEVICES to it. A single process is left as it is.
RankBinding bind_rank(Team& team);

// local_rank's block of `allowed`, split into local_size contiguous blocks, the remainder spread over the
// first ones; with fewer CPUs than ranks, ranks share them round robin (one each).
std::vector<int> cpu_share(const std::vector<int>& allowed, int local_rank, int local_size);

// "0-3,8,10-11"
std::string cpu_list_text(const std::vector<int>& cpus);

// Narrows CUDA_VISIBLE_DEVICES to local_rank's GPU (gpu_for) and returns it; "" where there is none.
// Idempotent: once narrowed, every later call picks the same GPU. make_team calls it with the launcher's
// node-local rank before MPI_Init, since a CUDA-aware MPI may initialise CUDA there; bind_rank again with MPI's.
std::string narrow_visible_gpus(int local_rank);

// The launcher's node-local rank from the environment (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
// SLURM_LOCALID), -1 where none says it.
int launcher_local_rank();

// The GPU of local_rank: from the comma-separated `visible` list (CUDA_VISIBLE_DEVICES; nullptr: unset)
// or, without one, from `devices` GPUs numbered 0..devices-1; "" when there is none.
std::string gpu_for(const char* visible, int devices, int local_rank);

}  // namespace cnn
