# The README's two commands: `make run` and `make test`. Both install what is missing
# (Debian packages, through scripts/install-deps.sh), then build. Traces and configs come from
# tests/data in the checkout; `make test DATA=/path` (or run, bench) points at a bigger set with
# the same layout, and the build is reconfigured when DATA changes.
PRESET ?= release
BUILD  := build/$(PRESET)
GENIE  := $(BUILD)/tools/genie/genie
DATA   ?= tests/data
DATA_DIR := $(abspath $(DATA))
JOBS   ?= $(shell nproc)
CTEST_ARGS ?= -LE slow

.PHONY: all deps configure build run test test-all bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@[ -d "$(DATA_DIR)/traces" ] || { echo "make: DATA=$(DATA) has no traces/ folder; point it at a folder laid out like tests/data" >&2; exit 2; }
	@cached=$$(sed -n 's/^GENIE_DATA_DIR:[A-Z]*=//p' $(BUILD)/CMakeCache.txt 2>/dev/null); \
	if [ ! -f $(BUILD)/build.ninja ] || [ "$$cached" != "$(DATA_DIR)" ]; then \
	  cmake --preset $(PRESET) -DGENIE_DATA_DIR="$(DATA_DIR)" >/dev/null; \
	fi

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# genie's main job on an embedded default workload.
run: build
	@bash scripts/run-default.sh $(GENIE) $(DATA_DIR)

# Unit and e2e tests (the `slow` label is left to `make test-all`).
test: build
	@cd $(BUILD) && ctest $(CTEST_ARGS) -j $(JOBS) --output-on-failure --timeout 600

test-all: CTEST_ARGS =
test-all: test

bench: build
	@bash bench/run.sh $(BUILD) $(DATA_DIR)

clean:
	rm -rf build
