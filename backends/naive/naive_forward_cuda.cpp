// The naive forward instantiated for Kokkos::Cuda (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include "naive/naive_forward_impl.hpp"

namespace kattn::naive {
template void forward_on<Kokkos::Cuda>(const Kokkos::Cuda&, const ForwardProblem&, const Dims&,
                                       Products);
} // namespace kattn::naive
#endif
