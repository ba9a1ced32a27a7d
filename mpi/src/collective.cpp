#include "collective.hpp"

#include <climits>

#include "kokkosattn/errors.hpp"

namespace kattn::distributed {
namespace {

// The kinds of failure a rank reports, in the order of precedence none < ... (the codes travel
// as ints).
enum Kind : int { kNone = 0, kInvalid = 1, kUnsupported = 2, kOther = 3 };

} // namespace

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw BackendFailure(std::string("distributed: ") + call + " failed: " + std::string(text, len));
}

void agree(MPI_Comm comm, const std::function<void()>& f) {
  int kind = kNone;
  std::string what;
  try {
    f();
  } catch (const InvalidArgument& e) {
    kind = kInvalid, what = e.what();
  } catch (const Unsupported& e) {
    kind = kUnsupported, what = e.what();
  } catch (const std::exception& e) {
    kind = kOther, what = e.what();
  }
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  // The lowest failing rank speaks for all.
  int mine = kind == kNone ? INT_MAX : rank, first = INT_MAX;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == INT_MAX)
    return;
  int head[2] = {kind, static_cast<int>(what.size())};
  check_mpi(MPI_Bcast(head, 2, MPI_INT, first, comm), "MPI_Bcast");
  what.resize(static_cast<std::size_t>(head[1]));
  check_mpi(MPI_Bcast(what.data(), head[1], MPI_CHAR, first, comm), "MPI_Bcast");
  const std::string msg = "rank " + std::to_string(first) + ": " + what;
  if (head[0] == kInvalid)
    throw InvalidArgument(msg);
  if (head[0] == kUnsupported)
    throw Unsupported(msg);
  throw BackendFailure(msg);
}

std::vector<std::vector<std::int64_t>> all_gather(MPI_Comm comm,
                                                  const std::vector<std::int64_t>& mine) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int n = static_cast<int>(mine.size());
  std::vector<std::int64_t> flat(static_cast<std::size_t>(n) * static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(mine.data(), n, MPI_INT64_T, flat.data(), n, MPI_INT64_T, comm),
            "MPI_Allgather");
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    out[std::size_t(r)].assign(flat.begin() + r * n, flat.begin() + (r + 1) * n);
  return out;
}

} // namespace kattn::distributed
