# mcugen: the two commands of the README are `make demo` and `make test`.
GO      ?= go
BIN     ?= ./mcugen
DEMO    ?= testdata/tflite/cnn_int8.tflite
BOARD   ?= mps2-an386
FUZZTIME ?= 10m

.PHONY: all setup setup-demo build demo test test-short vet fuzz bench clean

all: build

setup:
	@bash scripts/setup.sh

# Only what the demo needs: the ARM toolchain and QEMU.
setup-demo:
	@bash scripts/setup.sh demo

# --version names the commit (and whether the tree had changes).
COMMIT  ?= $(shell r=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo "$$r" || echo "$$r, modified"; })

build:
	$(GO) build -ldflags "-X 'main.commit=$(COMMIT)'" -o $(BIN) ./cmd/mcugen

# Set up, compile a bundled int8 model for a Cortex-M4 board, run it in QEMU
# and print the measured table.
demo: setup-demo build
	$(BIN) inspect $(DEMO)
	rm -rf out/demo
	$(BIN) compile $(DEMO) --board $(BOARD) -o out/demo
	$(BIN) run $(DEMO) --board $(BOARD) --random 3
	$(BIN) bench $(DEMO) --board $(BOARD)

# (The pipeline package takes about 20 minutes on two idle cores; the 45-minute timeout
# is a margin for a loaded machine, not the suite's budget, which is 30 minutes in all.)
# Set up, then vet and run every test (QEMU suites included; in CI a missing
# toolchain is a failure, not a skip), then a short run of every fuzz target (20,000 inputs each: a count, not a deadline;
# FuzzCompile, a whole compile per input, only in `make fuzz`: the test run replays its seeds and kept crashers).
test: setup vet
	$(GO) test -count=1 -timeout 45m ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=20000x FUZZSKIP=FuzzCompile

test-short:
	$(GO) test -short ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# Run every fuzz target for FUZZTIME each.
fuzz:
	@$(GO) list -f '{{.ImportPath}} {{.Dir}}' ./... | while read pkg dir; do \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | cut -d' ' -f2); do \
	    if [ "$$f" = "$(FUZZSKIP)" ]; then continue; fi; \
	    echo "fuzz $$pkg $$f for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf $(BIN) out

# The measured tables of docs/PERFORMANCE.md: the four MLPerf Tiny int8 models
# (../shared/models) on every QEMU board.
MLPERF  ?= ../shared/models/mlperf_tiny
BENCH_BOARDS ?= mps2-an386,mps2-an385,mps2-an500,mps2-an505,mps3-an547,aarch64-linux
MLPERF_MODELS = $(MLPERF)/kws/kws_ref_model.tflite $(MLPERF)/vww/vww_96_int8.tflite \
	  $(MLPERF)/ic/pretrainedResnet_quant.tflite $(MLPERF)/ad/ad01_int8.tflite
bench: build
	$(BIN) bench $(MLPERF_MODELS) --board mps2-an386 --cycles
	$(BIN) bench $(MLPERF_MODELS) --board $(BENCH_BOARDS)
