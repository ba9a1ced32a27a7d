// The portable backend instantiated for Kokkos::Cuda (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include "portable/portable_run_impl.hpp"

namespace kattn::portable {
template void forward_on<Kokkos::Cuda>(const Kokkos::Cuda&, const ForwardProblem&, const Dims&);
template void backward_on<Kokkos::Cuda>(const Kokkos::Cuda&, const BackwardProblem&, const Dims&);
} // namespace kattn::portable
#endif
