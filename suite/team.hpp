// The ranks of one suite invocation: a single process, or the ranks of an MPI job (`mpirun -n R suite ...`).
// The runner talks to this interface only; MPI itself is in suite/team_mpi.cpp, built where CMake finds it.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/errors.hpp"

namespace cnn {

// An error that every rank of the job has agreed on (Team::agree): each rank ends with its exit code.
struct AgreedError : SuiteError {
  using SuiteError::SuiteError;
};

class Team {
 public:
  virtual ~Team() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // among the ranks of this node (MPI_COMM_TYPE_SHARED)
  virtual int local_size() const = 0;
  virtual bool is_mpi() const = 0;     // started by an MPI launcher, even with one rank
  virtual void barrier() = 0;
  virtual double max(double value) = 0;
  // Every rank's text, in rank order, on rank 0 (empty elsewhere).
  virtual std::vector<std::string> gather(const std::string& text) = 0;
  // Every local rank's text, in local rank order, on every rank of the node.
  virtual std::vector<std::string> local_all_gather(const std::string& text) = 0;
  // Collective: when any rank brings a non-zero exit code, every rank throws the AgreedError of the lowest
  // such rank, its message prefixed "rank K: " unless every rank failed.
  virtual void agree(int exit_code, const std::string& message) = 0;
  // Ends the whole job from one rank, for an error the others cannot know of (MPI_Abort); a single
  // process just returns.
  virtual void abort(int exit_code) = 0;
};

bool built_with_mpi();

// An MPI team when this build has MPI and the process was started by a launcher (OMPI_COMM_WORLD_SIZE,
// PMIX_RANK or PMI_RANK in the environment), else a single process; a plain `suite` never initialises MPI.
std::unique_ptr<Team> make_team();

// Whether the environment says an MPI launcher started this process (no allocation: usable in .preinit).
bool launched_by_mpi(const char* const* envp) noexcept;

// Runs `step` on every rank and agrees on its outcome: an exception on any rank (SuiteError, out of memory,
// anything else) becomes the same SuiteError on every rank (Team::agree), so that no rank is left waiting
// in a collective that the failing one never reaches.
template <typename Step>
void collectively(Team& team, Step&& step);

// The exit code and message that an exception in flight stands for (call inside a catch block).
std::pair<int, std::string> current_error();

template <typename Step>
void collectively(Team& team, Step&& step) {
  int code = 0;
  std::string message;
  try {
    step();
  } catch (...) {
    std::tie(code, message) = current_error();
  }
  team.agree(code, message);
}

}  // namespace cnn
