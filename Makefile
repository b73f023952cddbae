# monocle-hook: `make run` serves the hook on 127.0.0.1:8080, `make test`
# runs every test (unit, then the real API server ones).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE   ?= ghcr.io/change-metrics/monocle-hook:$(VERSION)
LDFLAGS := -s -w -X main.version=$(VERSION)
# Fuzz time per target in `make fuzz` (and so in `make test`).
FUZZTIME ?= 15s

.PHONY: build run unit fuzz e2e test bench image clean manifests chart-lint

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/monocle-hook .

run: build
	bin/monocle-hook --listen 127.0.0.1:8080

# The quick loop: every unit test, with the race detector.
unit:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# Bounded native fuzzing of the decoder and of Sync, seeded from the fixtures.
# Minimizing a new 44 KB input takes the default minute: bounded to 100
# runs, so the time goes to fuzzing (about 90,000 runs in 15 s here, not 14).
fuzz:
	$(GO) test ./hook -run '^$$' -fuzz '^FuzzSyncRequest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./hook -run '^$$' -fuzz '^FuzzSpec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x

# Integration tests on a real etcd + kube-apiserver: tools/assets.sh builds
# them once (about 20 minutes cold) into ~/.cache/monocle-hook.
e2e:
	cd e2e && KUBEBUILDER_ASSETS="$$(../tools/assets.sh)" $(GO) test -count=1 -timeout 30m ./...

test: unit fuzz chart-lint e2e

bench:
	$(GO) test ./hook -run '^$$' -bench . -benchmem

# The pinned helm that tools/assets.sh builds (with the control plane, once);
# `make manifests HELM=helm` uses another one.
HELM ?= $(shell tools/assets.sh)/helm

# metacontroller/*.yaml are generated from the chart (e2e/chart_test.go fails
# when they are stale), and the chart's CRD is crd/monocle.yaml's copy.
manifests:
	cp crd/monocle.yaml chart/crds/monocle.yaml
	HELM="$(HELM)" metacontroller/generate.sh

chart-lint:
	$(HELM) lint --strict chart
	for f in chart/ci/*-values.yaml; do $(HELM) lint --strict chart -f "$$f" || exit 1; done

# Load test over loopback: the built hook against a decode/encode floor,
# 3 rounds x concurrency 1, 16, 64 x 5s each (about 2 minutes); see BENCHMARKS.md.
.PHONY: load
load: build
	$(GO) build -o bin/loadtest ./tools/loadtest
	bin/loadtest -hook bin/monocle-hook $(LOADFLAGS)

# Convergence with the real Metacontroller (not part of `make test`; see
# BENCHMARKS.md): a fresh etcd + kube-apiserver per run, the hook, and
# METACONTROLLER (v4.17.2, built from its source as the README's Install step
# 1 says) with MC_FLAGS; MONOCLES Monocles in NAMESPACES namespaces, RUNS
# runs, medians reported. E.g.
#   make converge METACONTROLLER=/path/to/metacontroller MONOCLES=200 \
#     MC_FLAGS="--client-go-qps=200 --client-go-burst=400 --workers=20"
MONOCLES   ?= 50
NAMESPACES ?= 10
RUNS       ?= 3
MC_FLAGS   ?=
.PHONY: converge
converge:
	@if [ -z "$(METACONTROLLER)" ]; then \
		echo "make converge: no Metacontroller to measure: set METACONTROLLER=/path/to/metacontroller (v4.17.2, built from its source: README, Install step 1)" >&2; \
		exit 2; \
	fi
	$(MAKE) build
	cd e2e && $(GO) build -o ../bin/converge ./converge
	KUBEBUILDER_ASSETS="$$(tools/assets.sh)" bin/converge -metacontroller "$(METACONTROLLER)" \
		-mc-flags "$(MC_FLAGS)" -monocles $(MONOCLES) -namespaces $(NAMESPACES) -runs $(RUNS)

image:
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

clean:
	rm -rf bin
