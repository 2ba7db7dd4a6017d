# Thin wrapper around CMake.  `make run` and `make test` set up a fresh
# Debian machine (apt-get, as root) when something is missing, build Release
# into build/, then run the default job / the tests.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# `make fuzz`: every libFuzzer target of tests/fuzz for FUZZ_SECONDS each
# (FUZZ_TARGETS: a subset, e.g. "model_ini run_csv"), built with clang,
# ASan and UBSan into FUZZ_BUILD.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
# `make test` also builds the Python package (python/) in $(BUILD)/pyenv and
# runs its pytest suite; PYTHON_TESTS=0 leaves it out.
PYTHON_TESTS ?= 1

.PHONY: all setup build run test bench calibrate validate-report gallery clean fuzz

all: build

setup:
	@bash .ci/setup

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/ptsim

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@if [ "$(PYTHON_TESTS)" != 0 ]; then JOBS=$(JOBS) bash python/run_tests.sh $(BUILD); fi

bench: build
	bash bench/run.sh $(BUILD)

calibrate: build
	python3 validate/calibrate_published.py --ptsim $(BUILD)/ptsim

validate-report: build
	bash validate/make_report.sh $(BUILD)/ptsim

fuzz:
	@bash .ci/setup fuzz
	@test -f $(FUZZ_BUILD)/CMakeCache.txt || CC=clang cmake -S . -B $(FUZZ_BUILD) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTSIM_FUZZ=ON -DPTSIM_CUDA=OFF
	cmake --build $(FUZZ_BUILD) --target fuzzers -j $(JOBS)
	bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

gallery: build
	bash plots/gallery/make.sh $(BUILD)/ptsim

clean:
	rm -rf $(BUILD)
