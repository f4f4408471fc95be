# Thin wrapper around CMake. `make` builds build/ (optimised), `make check`
# builds build/check with clang, ASan and UBSan and runs every test,
# `make check-fast` the same build's tests not labelled slow (unit tests
# and one pass of each fuzz harness over its corpus), for the edit loop,
# `make demo` runs a real server computed by real BOINC clients,
# `make bench` writes each benchmark's JSON figures to build/bench/.
JOBS ?= $(shell nproc)
BUILD ?= build
CHECK_BUILD ?= build/check

.PHONY: all deps check check-build check-fast demo bench clean
all: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCUS_TESTS=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

deps:
	@bash scripts/deps.sh

check-build: deps
	@CC=clang cmake -S . -B $(CHECK_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLOCUS_SANITIZE=ON >/dev/null
	@cmake --build $(CHECK_BUILD) -j $(JOBS)

check: check-build
	@cd $(CHECK_BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

check-fast: check-build
	@cd $(CHECK_BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow $(CTEST_ARGS)

demo: all
	@bash scripts/demo.sh $(BUILD)

bench: all
	@bash scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
