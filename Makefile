# monocle-hook: `make run` serves the hook on 127.0.0.1:8080, `make test`
# runs every test (unit, then the real API server ones).
GO      ?= go
# The version is the chart's appVersion (`monocle-hook --version` prints
# it, with the commit and the Go version).
VERSION ?= $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$$/\1/p' chart/Chart.yaml)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
IMAGE   ?= ghcr.io/change-metrics/monocle-hook:$(VERSION)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Fuzz time per target in `make fuzz` (and so in `make test`).
FUZZTIME ?= 15s

.PHONY: build run lint unit fuzz e2e test bench image clean manifests chart-lint

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/monocle-hook .

run: build
	bin/monocle-hook --listen 127.0.0.1:8080

# The quick loop: every unit test, with the race detector.
unit:
	$(GO) test -race -count=1 ./...

# go vet and staticcheck (pinned in tools/lint, configured by staticcheck.conf),
# on the service and the e2e module.
lint:
	$(GO) vet ./...
	$(GO) tool -modfile=tools/lint/go.mod staticcheck ./...
	cd e2e && $(GO) vet ./... && $(GO) tool -modfile=../tools/lint/go.mod staticcheck ./...

# Bounded native fuzzing of the decoder and of Sync (seeded from the
# fixtures), of the config validation and of the search-alias check.
# Minimizing a new 44 KB input takes the default minute: bounded to 100
# runs, so the time goes to fuzzing (about 90,000 runs in 15 s here, not 14).
fuzz:
	$(GO) test ./hook -run '^$$' -fuzz '^FuzzSyncRequest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./hook -run '^$$' -fuzz '^FuzzSpec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./internal/monocleconfig -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./internal/monocleconfig -run '^$$' -fuzz '^FuzzBound$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./internal/monoclesearch -run '^$$' -fuzz '^FuzzValidateAlias$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x

# Integration tests on a real etcd + kube-apiserver: tools/assets.sh builds
# them once (about 20 minutes cold) into ~/.cache/monocle-hook.
e2e:
	cd e2e && KUBEBUILDER_ASSETS="$$(../tools/assets.sh)" $(GO) test -count=1 -timeout 30m ./...

test: lint unit fuzz chart-lint e2e

bench:
	$(GO) test ./hook ./internal/monocleconfig -run '^$$' -bench . -benchmem

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

# The issue's attacks, each on a fresh hook on 127.0.0.1 with the budget a
# 128 MiB limit gives (about a minute); see BENCHMARKS.md, "Under attack".
.PHONY: attack
attack: build
	$(GO) build -o bin/loadtest ./tools/loadtest
	bin/loadtest attack -hook bin/monocle-hook $(ATTACKFLAGS)

image:
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

clean:
	rm -rf bin
