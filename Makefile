# kokkos-attention: the front door. Everything builds and runs inside a
# Debian 13 build root (created on first use, cached outside the repository;
# see scripts/buildroot-setup.sh), so only `make` and root are needed here.
#
#   make test          set up, configure, build, run all tests (incl. install test), then the
#                      sanitizer build and the device configurations
#   make test-sanitize the CPU library and unit tests with ASan + UBSan, and a conformance smoke
#   make fuzz          the libFuzzer target over the problem descriptor, FUZZ_SECONDS (60) long
#   make demo          build and run the codelab demo (report/index.html, plots, results.json)
#   make conformance   every backend against the reference (report/conformance.json)
#   make bench         CPU benchmarks: naive, portable, PyTorch CPU SDPA (report/bench.json)
#   make hip           HIP gfx90a/gfx942 code objects + MFMA check (compile only)
#   make device-configs  build against a CUDA and a HIP Kokkos from ../shared/third_party, and
#                      a plain-CMake build outside the root (compile only; part of `make test`)
#   make build         set up, configure and build
#   make install-test  install to a temp prefix and build examples/ against it
#   make format        clang-format all C++/CUDA sources in place
#   make format-check  fail if any source is not clang-formatted
#   make shell         interactive shell inside the build root
#   make clean         remove build trees
#   make setup         create/refresh the build root only
#   make buildroot-clean   delete the cached build root

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BUILD_DIR ?= build
JOBS      ?= 2
PRESET    ?= default
IN_ROOT   := KOKKOSATTN_SKIP_SETUP=1 scripts/in-root.sh
CMAKE_ARGS ?=
CONFORMANCE_ARGS ?= --time-budget 240
FORMAT_DIRS := core kernels backends cuda hip mpi tests examples benchmarks
FORMAT_FIND := find $(FORMAT_DIRS) -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name '*.c' \
                 -o -name '*.cu' -o -name '*.cuh' -o -name '*.hip' \) 2>/dev/null || true

.PHONY: help setup configure build test ctest test-sanitize fuzz install-test demo format format-check shell \
        clean buildroot-clean bench conformance hip device-configs

help:
	@sed -n '1,20p' Makefile | sed 's/^# \{0,1\}//'

setup:
	@scripts/buildroot-setup.sh

# The build root has no pip: cudnn-frontend headers and the SASS tools (cuobjdump, nvdisasm) are
# fetched here, on the host, into a cache the root sees (scripts/fetch-cudnn-frontend.sh,
# scripts/fetch-sass-tools.sh).
# The Kokkos of the root is host-only, so the project's own build switches on what CMake would
# not by itself: the CUDA backends on raw device pointers where the host has the CUDA toolkit
# (its kernels' SASS is checked here, and the GPU machine runs these binaries), and the HIP code
# objects with the root's hipcc (compile only).
HOST_CUDA := $(shell test -x /usr/local/cuda/bin/nvcc && echo ON || echo OFF)
PROJECT_FLAGS := -DKokkosAttn_ENABLE_CUDA=$(HOST_CUDA) -DKokkosAttn_ENABLE_HIP=ON
# Kokkos Kernels (naive's GEMMs, on OpenBLAS) is built against the root's Kokkos from
# ../shared/third_party's snapshot (scripts/kokkos-kernels.sh, cached); without the snapshot
# naive runs its loops.
configure: setup
	@fe=; if [[ -f /usr/local/cuda/include/cudnn.h ]]; then fe=$$(scripts/fetch-cudnn-frontend.sh) || \
	  echo "make configure: WARNING: cudnn-frontend fetch failed (cuDNN backend needs it)" >&2; fi; \
	  scripts/fetch-sass-tools.sh >/dev/null || \
	  echo "make configure: WARNING: cuobjdump/nvdisasm fetch failed (sm90_sass_check skips)" >&2; \
	  kk=$$(scripts/kokkos-kernels.sh) || { kk=; \
	  echo "make configure: WARNING: no Kokkos Kernels (naive runs its loops)" >&2; }; \
	  $(IN_ROOT) cmake --preset $(PRESET) -B $(BUILD_DIR) $(PROJECT_FLAGS) \
	    $${fe:+-DKokkosAttn_CUDNN_FRONTEND_DIR=$$fe} \
	    $${kk:+-DKokkosAttn_ENABLE_KOKKOSKERNELS=ON -DKokkosKernels_ROOT=$$kk} $(CMAKE_ARGS)

build: configure
	@$(IN_ROOT) cmake --build $(BUILD_DIR) -j $(JOBS)

ctest: build
	@$(IN_ROOT) ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error -j $(JOBS)

# Then the device configurations, compiled (run only where a GPU is present): the CUDA and HIP
# Kokkos ones in the root (scripts/device-config.sh) and a user's plain-CMake build against a CUDA
# Kokkos with this machine's own toolchain, outside the root (scripts/plain-cmake-check.sh).
test: ctest test-sanitize fuzz device-configs
	@echo "make test: all tests passed"

# The CPU library and its unit tests with AddressSanitizer and UBSan (preset sanitize: no CUDA or
# HIP, -O1), the C API's test (a leaked handle fails it: detect_leaks), then a conformance smoke
# of the CPU backends on a fixed seed (issue 20).
SANITIZE_DIR := build-sanitize
SANITIZE_ENV := env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 OMP_PROC_BIND=false
SANITIZE_CONFORMANCE_ARGS ?= --backend reference,naive,portable --time-budget 60 --seed 20261203
test-sanitize: setup
	@start=$$(date +%s); \
	  $(IN_ROOT) cmake --preset sanitize -B $(SANITIZE_DIR) >/dev/null; \
	  $(IN_ROOT) cmake --build $(SANITIZE_DIR) -j $(JOBS) --target kokkosattn_tests kokkos-attn-conformance \
	    kokkosattn_c_api_test kokkosattn_c_threads_test kokkosattn_c_bad_inputs_test \
	    kokkosattn_c_bad_inputs_suite_test kokkosattn_c_backward_plan_test; \
	  $(IN_ROOT) $(SANITIZE_ENV) $(SANITIZE_DIR)/tests/kokkosattn_tests; \
	  $(IN_ROOT) $(SANITIZE_ENV) $(SANITIZE_DIR)/tests/kokkosattn_c_api_test; \
	  $(IN_ROOT) $(SANITIZE_ENV) $(SANITIZE_DIR)/tests/kokkosattn_c_bad_inputs_test; \
	  $(IN_ROOT) $(SANITIZE_ENV) $(SANITIZE_DIR)/tests/kokkosattn_c_bad_inputs_suite_test; \
	  $(IN_ROOT) $(SANITIZE_ENV) $(SANITIZE_DIR)/tests/kokkosattn_c_threads_test; \
	  $(IN_ROOT) $(SANITIZE_ENV) $(SANITIZE_DIR)/tests/kokkosattn_c_backward_plan_test; \
	  $(IN_ROOT) $(SANITIZE_ENV) $(SANITIZE_DIR)/tests/conformance/kokkos-attn-conformance \
	    $(SANITIZE_CONFORMANCE_ARGS) --json $(SANITIZE_DIR)/conformance.json \
	    --junit $(SANITIZE_DIR)/conformance.junit.xml; \
	  echo "make test-sanitize: passed in $$(( $$(date +%s) - start )) s"

# The libFuzzer target over the problem descriptor (tests/fuzz, preset fuzz: clang 17 with ASan,
# UBSan and coverage over the whole CPU library), FUZZ_SECONDS long (60 in make test), on the
# committed corpus and the crash regressions plus the inputs it found before (build-fuzz/corpus).
FUZZ_DIR := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_ARGS ?=
fuzz: setup
	@start=$$(date +%s); \
	  $(IN_ROOT) cmake --preset fuzz -B $(FUZZ_DIR) >/dev/null; \
	  $(IN_ROOT) cmake --build $(FUZZ_DIR) -j $(JOBS) --target kokkosattn_fuzz_problem; \
	  mkdir -p $(FUZZ_DIR)/corpus; \
	  $(IN_ROOT) $(SANITIZE_ENV) OMP_NUM_THREADS=1 $(FUZZ_DIR)/tests/fuzz/kokkosattn_fuzz_problem \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/ \
	    $(FUZZ_ARGS) $(FUZZ_DIR)/corpus tests/fuzz/corpus tests/fuzz/crashes; \
	  echo "make fuzz: passed in $$(( $$(date +%s) - start )) s"

DEVICE_CONFIGS ?= cuda hip plain
device-configs: setup
	@for c in $(DEVICE_CONFIGS); do start=$$(date +%s); \
	  if [[ $$c == plain ]]; then JOBS=$(JOBS) scripts/plain-cmake-check.sh; \
	  else JOBS=$(JOBS) scripts/device-config.sh $$c; fi; \
	  echo "make device-configs: $$c took $$(( $$(date +%s) - start )) s"; done

install-test: build
	@$(IN_ROOT) scripts/install-test.sh $(BUILD_DIR)

# The codelab demo (docs/demo.md): tables on the terminal, then report/results.json + .csv, the
# PNG plots and report/index.html. DEMO_ARGS: e.g. --quick, --full, --seq 64,128,256.
DEMO_ARGS ?=
DEMO_OUT  ?= report
demo: build
	@if [[ ! -x $(BUILD_DIR)/examples/codelab_demo ]]; then \
	  echo "make demo: $(BUILD_DIR)/examples/codelab_demo was not built" \
	       "(KokkosAttn_ENABLE_EXAMPLES=OFF?)" >&2; exit 1; fi
	@mkdir -p $(DEMO_OUT)
	@rc=0; OMP_PROC_BIND=$${OMP_PROC_BIND:-spread} OMP_PLACES=$${OMP_PLACES:-threads} \
	  $(IN_ROOT) $(BUILD_DIR)/examples/codelab_demo --out $(DEMO_OUT) $(DEMO_ARGS) || rc=$$?; \
	  if [[ -f $(DEMO_OUT)/results.json && $$rc -le 1 ]]; then \
	    $(IN_ROOT) python3 scripts/report/make_report.py $(DEMO_OUT); \
	    echo "make demo: open $(DEMO_OUT)/index.html"; fi; \
	  exit $$rc

format: setup
	@files=$$($(FORMAT_FIND)); if [[ -z $$files ]]; then echo "make format: no sources yet"; exit 0; fi; \
	  $(IN_ROOT) clang-format -i $$files && echo "make format: formatted $$(wc -w <<<"$$files") files"

format-check: setup
	@files=$$($(FORMAT_FIND)); if [[ -z $$files ]]; then echo "make format-check: no sources yet"; exit 0; fi; \
	  $(IN_ROOT) clang-format --dry-run -Werror $$files && echo "make format-check: OK"

shell: setup
	@$(IN_ROOT) bash

clean:
	rm -rf --one-file-system $(BUILD_DIR) build-cuda build-bench build-hipcc build-kokkos-cuda \
	  build-kokkos-hip build-plain-cuda install report

buildroot-clean:
	@root=$$(scripts/buildroot-setup.sh --print-root); echo "removing $$root"; \
	  rm -rf --one-file-system "$$root" "$$root.lock"

# CPU benchmarks (issue 3): ours (Google Benchmark), then PyTorch's CPU SDPA with the same thread
# count (a venv made on the host by scripts/bench-venv.sh: the root has no pip; without it the
# torch-cpu rows are missing, with a warning), then one table and report/bench.json.
# Its own build dir, so that the test build does not compile the benchmarks afterwards.
BENCH_THREADS ?= $(shell nproc)
BENCH_ARGS ?=
BENCH_BUILD_DIR ?= build-bench
bench:
	@$(MAKE) --no-print-directory build BUILD_DIR=$(BENCH_BUILD_DIR) \
	  CMAKE_ARGS="$(CMAKE_ARGS) -DKokkosAttn_ENABLE_BENCHMARKS=ON"
	@mkdir -p report && rm -f report/bench-ours.json report/bench-torch-cpu.json
	@cat /proc/loadavg > report/bench-loadavg.txt
	@OMP_NUM_THREADS=$(BENCH_THREADS) OMP_PROC_BIND=$${OMP_PROC_BIND:-spread} \
	  OMP_PLACES=$${OMP_PLACES:-threads} $(IN_ROOT) $(BENCH_BUILD_DIR)/benchmarks/kokkosattn_bench_cpu \
	  --benchmark_out=report/bench-ours.json --benchmark_out_format=json $(BENCH_ARGS)
	@if py=$$(scripts/bench-venv.sh); then \
	  OMP_NUM_THREADS=$(BENCH_THREADS) "$$py" benchmarks/peers_cpu.py \
	    --threads $(BENCH_THREADS) --out report/bench-torch-cpu.json || \
	    echo "make bench: WARNING: the torch-cpu peer failed" >&2; \
	else echo "make bench: WARNING: no PyTorch environment: no torch-cpu rows" >&2; fi
	@python3 benchmarks/compare.py --ours report/bench-ours.json \
	  --peers report/bench-torch-cpu.json --load-before "$$(cat report/bench-loadavg.txt)" \
	  --out report/bench.json --markdown report/bench.md

# Every built backend against the reference: the regression list, then the random matrix
# (4000 cases, seed 1; the time budget keeps a busy machine under 5 minutes); reports in report/.
conformance: build
	@mkdir -p report
	@OMP_NUM_THREADS=$${OMP_NUM_THREADS:-$(JOBS)} OMP_PROC_BIND=$${OMP_PROC_BIND:-false} \
	  $(IN_ROOT) $(BUILD_DIR)/tests/conformance/kokkos-attn-conformance $(CONFORMANCE_ARGS) \
	  --json report/conformance.json --junit report/conformance.junit.xml

# HIP kernels (issue 8): gfx90a + gfx942 code objects with the root's hipcc (HIP_PLATFORM=amd),
# in their own build dir, then the CTest check that both are there and use MFMA. Compile only:
# there is no AMD GPU here (docs/portability.md).
hip: setup
	@$(IN_ROOT) cmake --preset $(PRESET) -B build-hipcc -DKokkosAttn_ENABLE_HIP=ON \
	  -DKokkosAttn_ENABLE_CUDA=OFF $(CMAKE_ARGS) >/dev/null
	@start=$$(date +%s); $(IN_ROOT) cmake --build build-hipcc -j $(JOBS) --target kokkosattn_hip_codeobjects; \
	  echo "make hip: hipcc build took $$(( $$(date +%s) - start )) s"
	@$(IN_ROOT) ctest --test-dir build-hipcc -R '^hip_code_objects$$' --output-on-failure -V | \
	  grep -E 'hipv4|MFMA|tests passed|Failed' || true
	@$(IN_ROOT) ctest --test-dir build-hipcc -R '^hip_code_objects$$' --no-tests=error >/dev/null
	@ls -l build-hipcc/hip/codeobjects/
