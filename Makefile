# Top-level driver: CMake does the work in build/ (and build-asan/ for the sanitizer run).
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
CMAKE ?= cmake

.PHONY: all build run test test-asan test-asan-long install clean compare deps format

all: build

$(BUILD)/Makefile:
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_EXTRA)

build: $(BUILD)/Makefile
	$(CMAKE) --build $(BUILD) -j $(JOBS)

run: build
	./tools/run-demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

test-asan:
	$(MAKE) test BUILD=build-asan CMAKE_EXTRA=-DFMPL_SANITIZE=ON

# the tests labelled "long" (tests/CMakeLists.txt) under the sanitizers: CI leaves them out
test-asan-long:
	$(MAKE) test BUILD=build-asan CMAKE_EXTRA=-DFMPL_SANITIZE=ON CTEST_ARGS="-L long"

install: build
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build build-asan

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Tools a fresh Debian 12 lacks: `make deps` installs them with apt-get; the first
# configure (and so build, run and test) depends on it only when one is missing.
DEPS_MISSING := $(strip $(foreach t,cmake gcc g++ clang pkg-config,$(if $(shell command -v $(t) 2>/dev/null),,$(t))))
# OpenSSL's libcrypto (libssl-dev), libsodium: the udp transport's packet MAC (src/vnic/udp_auth.c)
DEPS_MISSING += $(if $(shell pkg-config --exists libcrypto 2>/dev/null && echo y),,libssl-dev)
DEPS_MISSING += $(if $(shell pkg-config --exists libsodium 2>/dev/null && echo y),,libsodium-dev)
# Intel's ipsec-mb: the same MAC, faster (x86-64 only; optional, CMakeLists.txt)
IPSEC_MB := $(if $(filter x86_64,$(shell uname -m)),libipsec-mb-dev)
NEED_DEPS := $(if $(strip $(DEPS_MISSING)),deps)
$(BUILD)/Makefile: | $(NEED_DEPS)

deps:
	@echo "installing the build tools: cmake gcc g++ clang make pkg-config libssl-dev libsodium-dev (missing: $(or $(strip $(DEPS_MISSING)),none))"
	sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	$$sudo apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		cmake gcc g++ clang make pkg-config libc6-dev libssl-dev libsodium-dev $(IPSEC_MB)

# FMPL (native API and MPI face) against MPICH and Open MPI in the same run: tables and
# PNG plots in bench/out/ (installs MPICH, Open MPI and gnuplot when missing).
# COMPARE_REPS=N rounds (default 3); see README.md, "make compare".
compare:
	./bench/compare.sh $(BUILD)

# MPICH's own test suite (test/mpi of Debian's mpich source package) against our mpicc
# and mpiexec: fetch (cached in ~/.cache/fmpl-mpich), build, run, judge against the
# pass lists in tests/mpich/. See tests/mpich/notes.md and README.md.
MPICH_FOLDERS ?= pt2pt datatype init comm coll errors topo rma io mpi_t part attr errhan group info spawn
MPICH_SUBSET ?= all
.PHONY: mpich-tests
mpich-tests: build
	MPICH_FOLDERS="$(MPICH_FOLDERS)" MPICH_SUBSET=$(MPICH_SUBSET) ./tests/mpich/mpich-tests.sh $(BUILD)
