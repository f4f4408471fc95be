# Thin wrapper around CMake. `make` builds build/ (optimised), `make check`
# builds build/check with clang, ASan and UBSan and runs every test,
# `make check-fast` the same build's tests not labelled slow (unit tests
# and one pass of each fuzz harness over its corpus), for the edit loop,
# `make demo` runs a real server computed by real BOINC clients,
# `make bench` writes each benchmark's JSON figures to build/bench/,
# `make install` installs the programs, systemd units and docs under
# PREFIX, their configuration under SYSCONFDIR (DESTDIR honoured),
# `make deb` builds the Debian package into build/deb/.
JOBS ?= $(shell nproc)
# Tests run two per core: the integration tests mostly wait on real
# daemons and clients (each has its own folder and ports), so on the
# 2-core CI machine `make check` takes half the time of one per core with
# every test's own duration unchanged (docs/benchmarks.md).
TEST_JOBS ?= $(shell echo $$(( 2 * $$(nproc) )))
BUILD ?= build
CHECK_BUILD ?= build/check
PREFIX ?= /usr/local
# /etc, not PREFIX/etc: where an operator looks for a service's settings
SYSCONFDIR ?= /etc

.PHONY: all deps check check-build check-fast demo bench install deb clean
# The configuration's folder is etc under the prefix but for `make
# install`, so that `cmake --install build --prefix DIR` (docs/guide.md)
# writes nothing outside DIR.
all: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCUS_TESTS=OFF \
	  -DCMAKE_INSTALL_SYSCONFDIR=etc >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# configured for the install's places first: the units name them
install: all
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DCMAKE_INSTALL_SYSCONFDIR=$(SYSCONFDIR) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

deb: deps
	@bash scripts/deb.sh $(BUILD)/deb $(JOBS)

deps:
	@bash scripts/deps.sh

check-build: deps
	@CC=clang cmake -S . -B $(CHECK_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLOCUS_SANITIZE=ON >/dev/null
	@cmake --build $(CHECK_BUILD) -j $(JOBS)

check: check-build
	@cd $(CHECK_BUILD) && ctest --output-on-failure -j $(TEST_JOBS) $(CTEST_ARGS)

check-fast: check-build
	@cd $(CHECK_BUILD) && ctest --output-on-failure -j $(TEST_JOBS) -LE slow $(CTEST_ARGS)

demo: all
	@bash scripts/demo.sh $(BUILD)

bench: all
	@bash scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
