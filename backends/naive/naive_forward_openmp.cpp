// The naive forward instantiated for Kokkos::OpenMP (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_OPENMP
#include "naive/naive_forward_impl.hpp"

namespace kattn::naive {
template void forward_on<Kokkos::OpenMP>(const Kokkos::OpenMP&, const ForwardProblem&, const Dims&,
                                         Products);
} // namespace kattn::naive
#endif
