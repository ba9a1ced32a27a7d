// The portable backend instantiated for Kokkos::HIP (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_HIP
#include "portable/portable_run_impl.hpp"

namespace kattn::portable {
template void forward_on<Kokkos::HIP>(const Kokkos::HIP&, const ForwardProblem&, const Dims&);
template void backward_on<Kokkos::HIP>(const Kokkos::HIP&, const BackwardProblem&, const Dims&);
} // namespace kattn::portable
#endif
