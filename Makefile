# The README's two commands: `make run` and `make test`. Both install what is missing
# (Debian packages, through scripts/install-deps.sh), then build.
PRESET ?= release
BUILD  := build/$(PRESET)
GENIE  := $(BUILD)/tools/genie/genie
DATA   ?= $(abspath ../shared/data)
JOBS   ?= $(shell nproc)
CTEST_ARGS ?= -LE slow

.PHONY: all deps configure build run test test-all bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@[ -f $(BUILD)/build.ninja ] || cmake --preset $(PRESET) -DGENIE_DATA_DIR=$(DATA) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# genie's main job on an embedded default workload.
run: build
	@bash scripts/run-default.sh $(GENIE) $(DATA)

# Unit and e2e tests (the `slow` label is left to `make test-all`).
test: build
	@cd $(BUILD) && ctest $(CTEST_ARGS) -j $(JOBS) --output-on-failure --timeout 600

test-all: CTEST_ARGS =
test-all: test

bench: build
	@bash bench/run.sh $(BUILD) $(DATA)

clean:
	rm -rf build
