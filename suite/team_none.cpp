// A build without MPI: every run is a single process (suite/team.hpp).
#include "suite/team.hpp"

namespace cnn {

std::unique_ptr<Team> make_mpi_team() { return nullptr; }
bool built_with_mpi() { return false; }

}  // namespace cnn
