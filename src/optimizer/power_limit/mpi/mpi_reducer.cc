#include "zeus/optimizer/power_limit/mpi/mpi_reducer.h"

#include <fmt/format.h>

#include "zeus/util/error.h"

namespace zeus::power_limit {
namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace

MpiReducer::MpiReducer(MPI_Comm comm) : comm_(comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    throw_error(ErrorCode::kFailedPrecondition,
                "MpiReducer needs MPI to be initialized: call MPI_Init first");
  }
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

double MpiReducer::all_reduce(double local, MPI_Op op, const char* what) {
  double out = 0.0;
  const int rc = MPI_Allreduce(&local, &out, 1, MPI_DOUBLE, op, comm_);
  if (rc != MPI_SUCCESS) {
    throw_error(ErrorCode::kInternal, fmt::format("MPI_Allreduce ({}) failed on rank {}: {}", what,
                                                  rank_, mpi_error_text(rc)));
  }
  return out;
}

double MpiReducer::all_reduce_sum(double local) { return all_reduce(local, MPI_SUM, "sum"); }

double MpiReducer::all_reduce_max(double local) { return all_reduce(local, MPI_MAX, "max"); }

}  // namespace zeus::power_limit
