// The naive forward instantiated for Kokkos::HIP (compiled only when Kokkos enables it).
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_HIP
#include "naive/naive_forward_impl.hpp"

namespace kattn::naive {
template void forward_on<Kokkos::HIP>(const Kokkos::HIP&, const ForwardProblem&, const Dims&,
                                      Products);
} // namespace kattn::naive
#endif
