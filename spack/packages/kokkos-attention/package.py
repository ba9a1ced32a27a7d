# kokkos-attention for Spack (docs/building.md, "Spack"). Minimal on purpose: it cannot be run
# where this project is developed, so it only maps variants to the project's CMake options and
# lets Kokkos decide the GPU backend and architecture, as the CMake build does.
from spack.package import *


class KokkosAttention(CMakePackage):
    """Exact, fast scaled dot-product attention on Kokkos Views: portable Kokkos kernels on
    every execution space, hand-written CUDA kernels and cuDNN on NVIDIA GPUs, HIP kernels on
    AMD GPUs."""

    # No public release yet: build from a checkout (`spack develop --path <checkout>
    # kokkos-attention@main`, docs/building.md).
    version("main")

    variant("cuda", default=False, description="CUDA backends (needs kokkos+cuda)")
    variant("cudnn", default=False, description="cuDNN backend (with +cuda)")
    variant(
        "cudnn_frontend",
        default="none",
        values=lambda v: True,
        description="Include directory of the header-only cudnn-frontend (with +cudnn)",
    )
    variant("rocm", default=False, description="HIP backend (needs kokkos+rocm)")
    variant("tests", default=False, description="Build the tests")

    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("kokkos@4.5:5 cxxstd=20")
    depends_on("kokkos+cuda+cuda_lambda+wrapper", when="+cuda")
    depends_on("kokkos+rocm", when="+rocm")
    depends_on("cuda@12:", when="+cuda")
    depends_on("cudnn@9:", when="+cudnn")
    depends_on("hip", when="+rocm")
    depends_on("doctest", type="build", when="+tests")

    conflicts("+cudnn", when="~cuda", msg="the cuDNN backend needs +cuda")
    conflicts("+cuda", when="+rocm", msg="one GPU backend per Kokkos build")
    conflicts("cudnn_frontend=none", when="+cudnn", msg="+cudnn needs cudnn_frontend=<include dir>")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define_from_variant("KokkosAttn_ENABLE_CUDA", "cuda"),
            self.define_from_variant("KokkosAttn_ENABLE_TPL_CUDNN", "cudnn"),
            self.define_from_variant("KokkosAttn_ENABLE_HIP", "rocm"),
            self.define_from_variant("KokkosAttn_ENABLE_TESTS", "tests"),
            self.define("KokkosAttn_ENABLE_EXAMPLES", False),
        ]
        if spec.satisfies("+cuda") or spec.satisfies("+rocm"):
            # Kokkos' compiler: nvcc_wrapper for CUDA, hipcc for HIP.
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
        if spec.satisfies("+cudnn"):
            args.append(self.define("CUDNN_ROOT", spec["cudnn"].prefix))
            args.append(
                self.define("KokkosAttn_CUDNN_FRONTEND_DIR", spec.variants["cudnn_frontend"].value)
            )
        return args
