// The naive forward instantiated for Kokkos::Serial (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_SERIAL
#include "naive/naive_forward_impl.hpp"

namespace kattn::naive {
template void forward_on<Kokkos::Serial>(const Kokkos::Serial&, const ForwardProblem&, const Dims&,
                                         Products);
} // namespace kattn::naive
#endif
