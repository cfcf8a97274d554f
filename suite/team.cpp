#include "suite/team.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

#include "common/errors.hpp"
#include "suite/binding.hpp"

namespace cnn {

// suite/team_mpi.cpp where the build has MPI; nullptr otherwise.
std::unique_ptr<Team> make_mpi_team();

namespace {

class SoloTeam final : public Team {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  bool is_mpi() const override { return false; }
  void barrier() override {}
  double max(double value) override { return value; }
  std::vector<std::string> gather(const std::string& text) override { return {text}; }
  std::vector<std::string> local_all_gather(const std::string& text) override { return {text}; }
  void agree(int exit_code, const std::string& message) override {
    if (exit_code != 0) throw AgreedError(exit_code, message);
  }
  void abort(int) override {}
};

}  // namespace

bool launched_by_mpi(const char* const* envp) noexcept {
  static const char* const names[] = {"OMPI_COMM_WORLD_SIZE=", "PMIX_RANK=", "PMI_RANK="};
  for (const char* const* e = envp; e && *e; ++e)
    for (const char* name : names)
      if (std::strncmp(*e, name, std::strlen(name)) == 0) return true;
  return false;
}

std::unique_ptr<Team> make_team() {
  if (launched_by_mpi(::environ)) {
    if (built_with_mpi() && launcher_local_rank() >= 0) (void)narrow_visible_gpus(launcher_local_rank());
    if (std::unique_ptr<Team> mpi = make_mpi_team()) return mpi;
    std::fprintf(stderr, "suite: note: started by an MPI launcher, but this suite was built without MPI: each "
                         "process runs alone and writes its own report\n");
  }
  return std::make_unique<SoloTeam>();
}

std::pair<int, std::string> current_error() {
  try {
    throw;
  } catch (const SuiteError& e) {
    return {e.exit_code(), e.what()};
  } catch (const std::bad_alloc&) {
    return {kExitOther, "out of host memory (try fewer --images or a smaller --batch)"};
  } catch (const std::exception& e) {
    return {kExitOther, e.what()};
  } catch (...) {
    return {kExitOther, "unknown error"};
  }
}

}  // namespace cnn
