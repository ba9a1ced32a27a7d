// The portable backend instantiated for Kokkos::Serial (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_SERIAL
#include "portable/portable_run_impl.hpp"

namespace kattn::portable {
template void forward_on<Kokkos::Serial>(const Kokkos::Serial&, const ForwardProblem&, const Dims&);
template void backward_on<Kokkos::Serial>(const Kokkos::Serial&, const BackwardProblem&,
                                          const Dims&);
} // namespace kattn::portable
#endif
