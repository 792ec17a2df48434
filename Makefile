# The README's two commands: `make run` and `make test`. Each installs what it is missing
# (Debian packages, through scripts/install-deps.sh: `run` only what the genie binary builds and
# runs with, `test` everything CI uses), configures, then builds what it runs: `make run` the
# genie binary alone, `make test` every target (tests and benchmarks), `make bench` the
# benchmarks. Each phase prints its time. Traces and configs come from tests/data in the
# checkout; `make test DATA=/path` (or run, bench) points at a bigger set with the same layout,
# and the build is reconfigured when DATA changes.
PRESET ?= release
BUILD  := build/$(PRESET)
GENIE  := $(BUILD)/tools/genie/genie
DATA   ?= tests/data
DATA_DIR := $(abspath $(DATA))
JOBS   ?= $(shell nproc)
CTEST_ARGS ?= -LE slow
# The phases' times are also counted from here (scripts/phase.sh).
export GENIE_MAKE_START := $(shell date +%s.%N)
PHASE  := bash $(CURDIR)/scripts/phase.sh

.PHONY: all deps configure build run test test-all bench clean

all: build

deps:
	@$(PHASE) packages bash scripts/install-deps.sh test

configure: deps
	@$(PHASE) configure bash scripts/configure.sh $(PRESET) $(BUILD) $(DATA_DIR) tests

# Every target: genie, the tests and the benchmarks.
build: configure
	@$(PHASE) build cmake --build $(BUILD) -j $(JOBS)

# genie's main job on an embedded default workload: only the genie binary is built.
run:
	@$(PHASE) packages bash scripts/install-deps.sh run
	@$(PHASE) configure bash scripts/configure.sh $(PRESET) $(BUILD) $(DATA_DIR)
	@$(PHASE) build cmake --build $(BUILD) -j $(JOBS) --target genie
	@$(PHASE) "make run" bash scripts/run-default.sh $(GENIE) $(DATA_DIR)

# Unit and e2e tests (the `slow` label is left to `make test-all`).
test: build
	@cd $(BUILD) && $(PHASE) ctest ctest $(CTEST_ARGS) -j $(JOBS) --output-on-failure --timeout 600

test-all: CTEST_ARGS =
test-all: test

bench: build
	@$(PHASE) bench bash bench/run.sh $(BUILD) $(DATA_DIR)

clean:
	rm -rf build
