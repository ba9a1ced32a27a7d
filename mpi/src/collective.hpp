// Collective agreement for the distributed entries: a failure on any rank becomes the same
// exception on every rank (never a hang waiting for a rank that threw), and the ranks' problem
// descriptions are compared before any data moves.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace kattn::distributed {

// Runs f on every rank; if it threw on any, every rank throws: InvalidArgument or Unsupported as
// the first failing rank's (lowest rank) was, with its message prefixed "rank R: ". Collective.
void agree(MPI_Comm comm, const std::function<void()>& f);

// Checks the MPI return code of `call` (the MPI function's name), throwing BackendFailure with
// MPI's error string.
void check_mpi(int rc, const char* call);

// Every rank's `mine`, in rank order (MPI_Allgather of int64 tuples of one length). Collective.
std::vector<std::vector<std::int64_t>> all_gather(MPI_Comm comm,
                                                  const std::vector<std::int64_t>& mine);

} // namespace kattn::distributed
