// The portable backend instantiated for Kokkos::OpenMP (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_OPENMP
#include "portable/portable_run_impl.hpp"

namespace kattn::portable {
template void forward_on<Kokkos::OpenMP>(const Kokkos::OpenMP&, const ForwardProblem&, const Dims&);
template void backward_on<Kokkos::OpenMP>(const Kokkos::OpenMP&, const BackwardProblem&,
                                          const Dims&);
} // namespace kattn::portable
#endif
