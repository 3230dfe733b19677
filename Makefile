# Top-level driver: CMake does the work in build/ (and build-asan/ for the sanitizer run).
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
CMAKE ?= cmake

.PHONY: all build run test test-asan install clean compare deps format

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

install: build
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build build-asan

format:
	clang-format -i $$(git ls-files '*.c' '*.h')
