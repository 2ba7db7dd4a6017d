# Thin wrapper around CMake.  `make run` and `make test` set up a fresh
# Debian machine (apt-get, as root) when something is missing, build Release
# into build/, then run the default job / the tests.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup build run test bench calibrate validate-report gallery clean

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

bench: build
	bash bench/run.sh $(BUILD)

calibrate: build
	python3 validate/calibrate_published.py --ptsim $(BUILD)/ptsim

validate-report: build
	bash validate/make_report.sh $(BUILD)/ptsim

gallery: build
	bash plots/gallery/make.sh $(BUILD)/ptsim

clean:
	rm -rf $(BUILD)
