// The ranks of an MPI job (suite/team.hpp): MPI_COMM_WORLD, and its ranks that share this node's memory.
#include <mpi.h>

#include <numeric>

#include "common/errors.hpp"
#include "suite/team.hpp"

namespace cnn {
namespace {

class MpiTeam final : public Team {
 public:
  MpiTeam() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_);
    MPI_Comm_rank(node_, &local_rank_);
    MPI_Comm_size(node_, &local_size_);
  }
  ~MpiTeam() override {
    MPI_Comm_free(&node_);
    MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  bool is_mpi() const override { return true; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  double max(double value) override { return reduce(value, MPI_MAX); }

  std::vector<std::string> gather(const std::string& text) override {
    int length = int(text.size());
    std::vector<int> lengths(rank_ == 0 ? size_ : 0), offsets(lengths.size());
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank_ == 0) std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
    std::string all(rank_ == 0 ? std::size_t(offsets.back() + lengths.back()) : 0, '\0');
    MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    return split(all, lengths, offsets);
  }

  std::vector<std::string> local_all_gather(const std::string& text) override {
    int length = int(text.size());
    std::vector<int> lengths(static_cast<std::size_t>(local_size_)), offsets(lengths.size());
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, node_);
    std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
    std::string all(std::size_t(offsets.back() + lengths.back()), '\0');
    MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, node_);
    return split(all, lengths, offsets);
  }

  // The lowest failing rank tells the others its code and message; no rank calls MPI_Abort, so each one
  // ends on its own with the same exit code, and mpirun returns it.
  void agree(int exit_code, const std::string& message) override {
    const int mine = exit_code != 0 ? rank_ : size_, failed = exit_code != 0;
    int first = size_, failures = 0;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size_) return;
    MPI_Allreduce(&failed, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int code = exit_code;
    MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
    int length = int(message.size());
    MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
    std::string text = rank_ == first ? message : std::string(std::size_t(length), '\0');
    MPI_Bcast(text.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
    // The rank is named where it matters: not when every rank failed alike (a usage error, say).
    throw AgreedError(code, failures < size_ ? "rank " + std::to_string(first) + ": " + text : text);
  }
  void abort(int exit_code) override { MPI_Abort(MPI_COMM_WORLD, exit_code); }

 private:
  double reduce(double value, MPI_Op op) {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
    return out;
  }
  static std::vector<std::string> split(const std::string& all, const std::vector<int>& lengths,
                                        const std::vector<int>& offsets) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lengths.size(); ++i) out.push_back(all.substr(std::size_t(offsets[i]), std::size_t(lengths[i])));
    return out;
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  MPI_Comm node_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<Team> make_mpi_team() { return std::make_unique<MpiTeam>(); }
bool built_with_mpi() { return true; }

}  // namespace cnn
