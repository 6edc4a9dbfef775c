// The MPI reducer for distributed training: the power-limit optimizer of every
// rank combines its measurements with MPI_Allreduce. Part of the optional
// library zeus_mpi (built when CMake finds MPI); link zeus_mpi to use it.
#pragma once

// The C API is all this needs; skip the deprecated C++ bindings, which would
// need libmpi_cxx at link time.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "zeus/optimizer/power_limit/reducer.h"

namespace zeus::power_limit {

// All-reduce over an MPI communicator (MPI_COMM_WORLD by default). MPI must be
// initialized before construction and finalized after the last use. Calls are
// collective: every rank of the communicator must make them in the same order.
// Thread-safety follows the MPI library's thread level; call it from one thread.
class MpiReducer final : public Reducer {
 public:
  explicit MpiReducer(MPI_Comm comm = MPI_COMM_WORLD);
  double all_reduce_sum(double local) override;
  double all_reduce_max(double local) override;
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }

 private:
  double all_reduce(double local, MPI_Op op, const char* what);
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace zeus::power_limit
