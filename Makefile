# monocle-hook: `make run` serves the hook on 127.0.0.1:8080, `make test`
# runs every test (unit, then the real API server ones).
GO      ?= go
# The version is the chart's appVersion, the one place that holds it: the
# image's tag, the chart's default image tag, and the hook's --version.
VERSION := $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$$/\1/p' chart/Chart.yaml)
CHART_VERSION := $(shell sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\} *$$/\1/p' chart/Chart.yaml)
# The commit is a separate label and --version field (-dirty when tracked
# files differ from it); its time dates everything in the image, so the same
# commit gives the same image digest.
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell test -z "$$(git status --porcelain --untracked-files=no 2>/dev/null)" || echo -dirty)
CREATED := $(shell git log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Every build of the hook: static, no local paths, no VCS stamp (a Docker
# build has no .git), so `make build`, `make image` and the Dockerfile make
# the same binary. BUILDFLAGS adds flags (e.g. -a).
GOBUILD  = CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false $(BUILDFLAGS) -ldflags "$(LDFLAGS)"
# Every other go command builds its packages as the release does (cgo
# changes net, and so all of client-go; -trimpath every package), so that
# lint, the tests, the tools and the release compile each package once for
# linux/amd64 (BENCHMARKS.md: the whole suite, cold). Only the race
# detector needs cgo.
export CGO_ENABLED ?= 0
export GOFLAGS ?= -trimpath
# Fuzz time per target in `make fuzz` (and so in `make test`).
FUZZTIME ?= 15s

.PHONY: build run lint unit fuzz e2e test bench image image-repro push docker-image clean manifests chart-lint rules

build:
	$(GOBUILD) -o bin/monocle-hook .

run: build
	bin/monocle-hook --listen 127.0.0.1:8080

# The quick loop: every unit test, with the race detector.
unit:
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...
	$(GO) test -count=1 -run 'TestCheckMemoryIsBounded' ./hook
	cd tools/image && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd tools/converge && $(GO) test -count=1 ./...
	$(MAKE) plugin-unit

# kubectl-monocle, the kubectl plugin (a module of its own, with client-go):
# `make plugin` builds bin/kubectl-monocle; its unit tests run in `make unit`
# (its e2e tests, TestPlugin*, in `make e2e`).
.PHONY: plugin plugin-unit
plugin:
	CGO_ENABLED=0 $(GO) build -C kubectl-monocle -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(CURDIR)/bin/kubectl-monocle .
plugin-unit:
	cd kubectl-monocle && $(GO) vet ./... && $(GO) test -count=1 ./...

# go vet and staticcheck (pinned in tools/lint, configured by staticcheck.conf),
# on the service, the e2e module and tools/converge; imports grouped as
# goimports does (standard library, others, then this project's), everywhere.
GOIMPORTS = $(GO) tool -modfile=tools/lint/go.mod goimports -local github.com/change-metrics/monocle-hook
lint:
	@files=$$($(GOIMPORTS) -l .); if [ -n "$$files" ]; then echo "imports not grouped (run $(GOIMPORTS) -w .):" $$files >&2; exit 1; fi
	$(GO) vet ./...
	$(GO) tool -modfile=tools/lint/go.mod staticcheck ./...
	cd e2e && $(GO) vet ./... && $(GO) tool -modfile=../tools/lint/go.mod staticcheck ./...
	cd tools/converge && $(GO) vet ./... && $(GO) tool -modfile=../../tools/lint/go.mod staticcheck ./...
	cd kubectl-monocle && $(GO) vet ./... && $(GO) tool -modfile=../tools/lint/go.mod staticcheck ./...

# Bounded native fuzzing of the decoder and of Sync (seeded from the
# fixtures), of the trust boundary (observed children as a tenant may
# write them), of the config validation, of the search-alias check and of
# the escaping every message goes through.
# Minimizing a new input, as large as a recorded request, may take all of
# -fuzzminimizetime's default minute, more than FUZZTIME: bounded to 100
# runs, so the time goes to fuzzing (the runs it gives: BENCHMARKS.md).
# The cached corpus ($GOCACHE/fuzz) grows with every run on a machine, and
# each run first replays all of it, until the replay alone outlasts
# FUZZTIME and fails ("context deadline exceeded"). So each run starts from
# the committed seeds (a failure is written to testdata anyway).
# Go 1.26's fuzz coordinator can fail a target with "context deadline
# exceeded" as -fuzztime ends on a busy machine, having found nothing
# (go.dev/issue/75804): the fuzzing runs on Go 1.27.3, which has the fix,
# from the module proxy like any module.
fuzz: export GOTOOLCHAIN = go1.27.3
fuzz:
	$(GO) clean -fuzzcache
	$(GO) test ./hook -run '^$$' -fuzz '^FuzzSyncRequest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./hook -run '^$$' -fuzz '^FuzzSpec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./hook -run '^$$' -fuzz '^FuzzBoundary$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./internal/monocleconfig -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./internal/monocleconfig -run '^$$' -fuzz '^FuzzBound$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./internal/monoclesearch -run '^$$' -fuzz '^FuzzValidateAlias$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x
	$(GO) test ./internal/printable -run '^$$' -fuzz '^FuzzEscape$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x

# Integration tests on a real etcd + kube-apiserver: tools/assets.sh builds
# them once (long, cold: BENCHMARKS.md) into ~/.cache/monocle-hook.
#
# One test runs the Metacontroller install the chart prints, with
# Metacontroller's own chart, read once by tools/metacontroller-chart.sh
# into a cache outside the repo (from METACONTROLLER_REPO, a git directory
# of its repository, when set). Without it that test is skipped.
e2e:
	cd e2e && KUBEBUILDER_ASSETS="$$(../tools/assets.sh)" METACONTROLLER_CHART="$$(../tools/metacontroller-chart.sh)" $(GO) test -count=1 -timeout 30m ./...

test: lint unit fuzz chart-lint rules e2e

bench:
	$(GO) test ./hook ./hook/server ./internal/monocleconfig ./internal/elasticusers -run '^$$' -bench . -benchmem

# The pinned helm that tools/assets.sh builds (with the control plane, once);
# `make manifests HELM=helm` uses another one.
HELM ?= $(shell tools/assets.sh)/helm
# helm-docs (pinned in tools/helm-docs) writes chart/README.md: the prose of
# chart/README.md.gotmpl, then a table of the values from values.yaml's
# `# --` comments, in the file's order.
HELM_DOCS = $(GO) tool -modfile=tools/helm-docs/go.mod helm-docs --chart-search-root chart \
	--template-files README.md.gotmpl --sort-values-order file --log-level warning

# controller-gen (pinned in tools/controller-gen) writes crd/monocle.yaml
# from api/v1alpha1's types and markers; crd's tests fail when it is stale.
CONTROLLER_GEN = $(GO) tool -modfile=tools/controller-gen/go.mod controller-gen

# metacontroller/*.yaml are generated from the chart (e2e/chart_test.go fails
# when they are stale); the chart's CRD, alert rules and dashboard are
# copies of crd/ and observability/ (Helm reads no file outside the chart).
manifests:
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:stdout >crd/monocle.yaml.tmp
	mv crd/monocle.yaml.tmp crd/monocle.yaml
	cp crd/monocle.yaml chart/crds/monocle.yaml
	mkdir -p chart/files
	cp observability/rules.yaml observability/dashboard.json chart/files/
	HELM="$(HELM)" metacontroller/generate.sh
	$(HELM_DOCS)

# helm lint asks no cluster: capabilityChecks=false, as for any `helm
# template` pipeline, so that the ServiceMonitor and PrometheusRule are
# linted too; then as users run it, with no value set. helm lint only logs a
# template's `fail` and exits 0, so each set of values is also rendered with
# helm template, which fails on it, and a render that holds no object fails
# too. Then chart/README.md must be what helm-docs writes. helm-docs exits 0
# on a chart it cannot read or a template it cannot run (it logs a warning
# and writes nothing, or half), so a warning fails too.
chart-lint:
	$(HELM) lint --strict chart
	$(HELM) lint --strict chart --set capabilityChecks=false
	for f in chart/ci/*-values.yaml; do $(HELM) lint --strict chart --set capabilityChecks=false -f "$$f" || exit 1; done
	for f in chart/values.yaml chart/ci/*-values.yaml; do \
		out=$$($(HELM) template monocle-hook chart --set capabilityChecks=false -f "$$f") || exit 1; \
		n=$$(printf '%s\n' "$$out" | grep -c '^kind: '); \
		[ "$$n" -gt 0 ] || { echo "chart-lint: helm template -f $$f rendered no object" >&2; exit 1; }; \
		echo "helm template -f $$f: $$n objects"; \
	done
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	{ $(HELM_DOCS) --dry-run >"$$tmp/README.md" 2>"$$tmp/log"; status=$$?; cat "$$tmp/log" >&2; } && \
	if [ $$status -ne 0 ] || grep -q 'level=' "$$tmp/log"; then echo "helm-docs failed on chart/" >&2; exit 1; fi && \
	if ! diff -u chart/README.md "$$tmp/README.md"; then echo "chart/README.md is stale: run make manifests (helm-docs writes it from chart/README.md.gotmpl and chart/values.yaml)" >&2; exit 1; fi

# The alert rules: syntax and best practices, then their unit tests.
# promtool is built once from the module proxy (tools/promtool.sh).
PROMTOOL ?= $(shell tools/promtool.sh)
rules:
	$(PROMTOOL) check rules observability/rules.yaml
	$(PROMTOOL) test rules observability/rules_test.yaml
	PROMTOOL=$(PROMTOOL) $(GO) test -count=1 -run '^TestDashboardQueriesParse$$' ./observability

# Load test over loopback: the built hook against a decode/encode floor,
# 3 rounds x concurrency 1, 16, 64 x 5s each; see BENCHMARKS.md.
.PHONY: load
load: build
	$(GO) build -o bin/loadtest ./tools/loadtest
	bin/loadtest -hook bin/monocle-hook $(LOADFLAGS)

# The issue's attacks, each on a fresh hook on 127.0.0.1 with the budget a
# 128 MiB limit gives (one attacker sends from 127.0.0.2, to show the
# connections shared per address); see BENCHMARKS.md, "Under attack".
.PHONY: attack
attack: build
	$(GO) build -o bin/loadtest ./tools/loadtest
	bin/loadtest attack -hook bin/monocle-hook $(ATTACKFLAGS)

# The OCI image, with no Docker daemon: the static binary for each platform
# on an empty base (tools/image, go-containerregistry), as an OCI layout in
# $(DIST)/oci and an oci-archive $(DIST)/monocle-hook-$(VERSION).oci.tar;
# the index digest goes to $(DIST)/monocle-hook-$(VERSION).digest.
# `skopeo copy oci-archive:dist/monocle-hook-$(VERSION).oci.tar ...` or
# `crane push dist/oci ...` read them; `make push` pushes them.
DIST      ?= dist
PLATFORMS ?= linux/amd64 linux/arm64
# Convergence with the real Metacontroller, by tools/converge (the run is
# not part of `make test`, its unit tests are, in `make unit`; see
# BENCHMARKS.md): a fresh etcd + kube-apiserver per run, the hook, and
# METACONTROLLER (v4.17.2, built from its source as docs/development.md
# says) with MC_FLAGS; MONOCLES Monocles in NAMESPACES namespaces, RUNS
# runs, medians reported. E.g.
#   make converge METACONTROLLER=/path/to/metacontroller MONOCLES=200 \
#     MC_FLAGS="--client-go-qps=500 --client-go-burst=1000"
MONOCLES   ?= 50
NAMESPACES ?= 10
RUNS       ?= 3
MC_FLAGS   ?=
# Metacontroller's environment (GOMEMLIMIT=200MiB), and more of converge's
# flags (-floors=false for a sizing run, -as-in-a-cluster=false,
# -prove-switch, -seed BIN -crds ..., -values chart/files/metacontroller-values.yaml
# to run it as the values file does, -kill-leader, -steady 11m for what a
# converged install costs afterwards).
MC_ENV         ?=
CONVERGE_FLAGS ?=
.PHONY: converge
converge:
	@if [ -z "$(METACONTROLLER)" ]; then \
		echo "make converge: no Metacontroller to measure: set METACONTROLLER=/path/to/metacontroller (v4.17.2, built from its source: docs/development.md)" >&2; \
		exit 2; \
	fi
	$(MAKE) build
	$(GO) build -C tools/converge -o $(CURDIR)/bin/converge .
	KUBEBUILDER_ASSETS="$$(tools/assets.sh)" bin/converge -metacontroller "$(METACONTROLLER)" \
		-mc-flags "$(MC_FLAGS)" -mc-env "$(MC_ENV)" -monocles $(MONOCLES) -namespaces $(NAMESPACES) -runs $(RUNS) $(CONVERGE_FLAGS)

# Issue #52's comparison at scale (tools/converge -scale, scale.go): for
# each of SCALE_SIZES, the seed's operator (SEED, built from
# change-metrics/monocle-operator's source outside this repository, as
# docs/development.md says; SEED_CRD, its config/crd/bases file), then
# Metacontroller + the hook as the shipped values run them, one run each on
# a fresh control plane: NAMESPACES namespaces, each Monocle naming a Secret
# of its own (spec.secretRef), SCALE_UNRELATED Secrets and as many
# ConfigMaps no Monocle names. Tens of minutes; never part of `make test`.
# See BENCHMARKS.md.
SCALE_SIZES     ?= 1000,2000
SCALE_UNRELATED ?= 2000
.PHONY: converge-scale
converge-scale:
	@if [ -z "$(METACONTROLLER)" ] || [ -z "$(SEED)" ] || [ -z "$(SEED_CRD)" ]; then \
		echo "make converge-scale: set METACONTROLLER=/path/to/metacontroller (v4.17.2), SEED=/path/to/seed-operator and SEED_CRD=/path/to/its/config/crd/bases/monocle.monocle.change-metrics.io_monocles.yaml (both built from their source: docs/development.md)" >&2; \
		exit 2; \
	fi
	$(MAKE) build
	$(GO) build -C tools/converge -o $(CURDIR)/bin/converge .
	KUBEBUILDER_ASSETS="$$(tools/assets.sh)" bin/converge -scale $(SCALE_SIZES) -metacontroller "$(METACONTROLLER)" \
		-seed "$(SEED)" -seed-crds "$(SEED_CRD),e2e/testdata/metacontroller-crds-v1.yaml" \
		-values chart/files/metacontroller-values.yaml -namespaces $(NAMESPACES) -secret-refs -unrelated $(SCALE_UNRELATED) \
		-mc-flags "$(MC_FLAGS)" -mc-env "$(MC_ENV)" $(CONVERGE_FLAGS)

# Issue #32's trust boundary with the real Metacontroller (tools/converge
# -prove-escape, escape.go): a tenant who may edit its namespace forges a
# child's last-applied annotation under a refused spec; under each apply
# strategy, on a fresh control plane, every write outside the tenant's
# namespace is reported, and any fails the target (a regression check).
.PHONY: converge-escape
converge-escape:
	@if [ -z "$(METACONTROLLER)" ]; then \
		echo "make converge-escape: no Metacontroller to run: set METACONTROLLER=/path/to/metacontroller (v4.17.2, built from its source: docs/development.md)" >&2; \
		exit 2; \
	fi
	$(MAKE) build
	$(GO) build -C tools/converge -o $(CURDIR)/bin/converge .
	KUBEBUILDER_ASSETS="$$(tools/assets.sh)" bin/converge -prove-escape -metacontroller "$(METACONTROLLER)" \
		-mc-flags "$(MC_FLAGS)" -mc-env "$(MC_ENV)" $(CONVERGE_FLAGS)

# Issue #40's janitor Job with the real Metacontroller (tools/converge
# -prove-janitor, janitor.go): a Job owned by its Monocle, not as
# controller, is left alone by its syncs and goes with it.
.PHONY: converge-janitor
converge-janitor:
	@if [ -z "$(METACONTROLLER)" ]; then \
		echo "make converge-janitor: no Metacontroller to run: set METACONTROLLER=/path/to/metacontroller (v4.17.2, built from its source: docs/development.md)" >&2; \
		exit 2; \
	fi
	$(MAKE) build
	$(GO) build -C tools/converge -o $(CURDIR)/bin/converge .
	KUBEBUILDER_ASSETS="$$(tools/assets.sh)" bin/converge -prove-janitor -metacontroller "$(METACONTROLLER)" \
		-mc-flags "$(MC_FLAGS)" -mc-env "$(MC_ENV)" $(CONVERGE_FLAGS)

# Issue #49's upgrade order with the real Metacontroller (tools/converge
# -prove-upgrade-order, upgradeorder.go): from the release tagged OLD_TAG
# (its hook built from the tag, its CompositeController and least-privileged
# Metacontroller values), the chart upgraded before Metacontroller's values
# stops every sync, which check reports; the new values bring them back.
OLD_TAG ?= v0.1.0
.PHONY: converge-upgrade-order
converge-upgrade-order:
	@if [ -z "$(METACONTROLLER)" ]; then \
		echo "make converge-upgrade-order: no Metacontroller to run: set METACONTROLLER=/path/to/metacontroller (v4.17.2, built from its source: docs/development.md)" >&2; \
		exit 2; \
	fi
	$(MAKE) build
	$(GO) build -C tools/converge -o $(CURDIR)/bin/converge .
	rm -rf bin/$(OLD_TAG) && mkdir -p bin/$(OLD_TAG)/src
	git archive $(OLD_TAG) | tar -x -C bin/$(OLD_TAG)/src
	$(GO) build -C bin/$(OLD_TAG)/src -o $(CURDIR)/bin/$(OLD_TAG)/monocle-hook .
	KUBEBUILDER_ASSETS="$$(tools/assets.sh)" bin/converge -prove-upgrade-order -metacontroller "$(METACONTROLLER)" \
		-values chart/files/metacontroller-values.yaml,chart/files/metacontroller-values-dedicated.yaml \
		-old-hook bin/$(OLD_TAG)/monocle-hook -old-controller bin/$(OLD_TAG)/src/metacontroller/compositecontroller.yaml \
		-old-values bin/$(OLD_TAG)/src/metacontroller/metacontroller-values.yaml,bin/$(OLD_TAG)/src/metacontroller/metacontroller-values-dedicated.yaml \
		$(CONVERGE_FLAGS)

image:
	rm -rf $(DIST)/bin
	for p in $(PLATFORMS); do \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GOBUILD) -o $(DIST)/bin/$${p%/*}_$${p#*/}/monocle-hook . || exit 1; \
	done
	$(GO) build -C tools/image -o $(CURDIR)/bin/image .
	bin/image build -layout $(DIST)/oci -archive $(DIST)/monocle-hook-$(VERSION).oci.tar \
		-version $(VERSION) -revision $(COMMIT) -created $(CREATED) \
		$(foreach p,$(PLATFORMS),$(p)=$(DIST)/bin/$(subst /,_,$(p))/monocle-hook) >$(DIST)/monocle-hook-$(VERSION).digest
	@echo "monocle-hook:$(VERSION)@$$(cat $(DIST)/monocle-hook-$(VERSION).digest) ($(PLATFORMS)) in $(DIST)/"

# Reproducibility: the image built again from a fresh clone of the commit
# (another folder, fresh file times, every package rebuilt with -a) has the
# same digest. Needs a clean tree: the clone has only what is committed.
image-repro: image
	@test -z "$$(git status --porcelain --untracked-files=no)" || { echo "image-repro: commit first (the clone has only the commit)"; exit 1; }
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	git clone -q . "$$tmp/src" && git -C "$$tmp/src" checkout -q $(COMMIT) && \
	$(MAKE) -C "$$tmp/src" image BUILDFLAGS=-a DIST="$$tmp/dist" && \
	echo "this tree: $$(cat $(DIST)/monocle-hook-$(VERSION).digest)" && \
	echo "clone -a:  $$(cat $$tmp/dist/monocle-hook-$(VERSION).digest)" && \
	cmp $(DIST)/monocle-hook-$(VERSION).digest "$$tmp/dist/monocle-hook-$(VERSION).digest" && \
	cmp $(DIST)/monocle-hook-$(VERSION).oci.tar "$$tmp/dist/monocle-hook-$(VERSION).oci.tar" && \
	echo "image-repro: same digest, same archive bytes"

# Pushes the image to $(REGISTRY)/monocle-hook:$(VERSION) and the chart to
# oci://$(REGISTRY)/charts (as $(REGISTRY)/charts/monocle-hook:$(CHART_VERSION)),
# each signed with COSIGN_KEY, the image with its SBOM attested: CycloneDX,
# the Go modules and standard library linked into the hook's binary, read
# from its build info by cyclonedx-gomod (the first platform's binary: every
# platform links the same modules). The pushed chart's default image is
# that repository, pinned to the pushed digest, which is signed before the
# chart is pushed (a push that fails on the way leaves an image tag
# unsigned: run it again). Credentials: docker's config (docker login, or
# `helm registry login`, which writes the same file's format to helm's).
# HELM_PUSH_FLAGS=--plain-http and COSIGN_FLAGS=--allow-http-registry for a
# registry without TLS.
#
# Signing is offline, with a key pair (keyless signing and the transparency
# log need a network CI does not have): cosign v2.6.5 with --tlog-upload=false
# (tools/release.sh builds it; v3 refuses that flag under its default signing
# config, which it fetches over the network). COSIGN_KEY: the private key, a
# file from `cosign generate-key-pair` or a KMS URI; COSIGN_PASSWORD, in the
# environment, its password. There is no unsigned push: without a key, make
# push stops before it builds or pushes anything. Verify as docs/support.md
# says (e2e/registry_test.go runs its commands).
REGISTRY ?=
HELM_PUSH_FLAGS ?=
COSIGN_KEY ?=
COSIGN_FLAGS ?=
RELEASE_TOOLS = $(shell tools/release.sh)
COSIGN_SIGN = $(RELEASE_TOOLS)/cosign sign --yes --key "$(COSIGN_KEY)" --tlog-upload=false $(COSIGN_FLAGS)
push: registry-set cosign-key-set release-tools image
	bin/image push -layout $(DIST)/oci -ref $(REGISTRY)/monocle-hook:$(VERSION)
	$(RELEASE_TOOLS)/cyclonedx-gomod bin -json -std -version v$(VERSION) -output $(DIST)/monocle-hook-$(VERSION).cdx.json \
		$(DIST)/bin/$(subst /,_,$(firstword $(PLATFORMS)))/monocle-hook
	$(COSIGN_SIGN) $(REGISTRY)/monocle-hook@$$(cat $(DIST)/monocle-hook-$(VERSION).digest)
	$(RELEASE_TOOLS)/cosign attest --yes --key "$(COSIGN_KEY)" --tlog-upload=false $(COSIGN_FLAGS) \
		--type cyclonedx --predicate $(DIST)/monocle-hook-$(VERSION).cdx.json \
		$(REGISTRY)/monocle-hook@$$(cat $(DIST)/monocle-hook-$(VERSION).digest)
	rm -rf $(DIST)/chart && cp -R chart $(DIST)/chart
	sed -i -e 's|^  repository: ghcr.io/change-metrics/monocle-hook$$|  repository: $(REGISTRY)/monocle-hook|' \
		-e 's|^  digest: ""$$|  digest: "'"$$(cat $(DIST)/monocle-hook-$(VERSION).digest)"'"|' $(DIST)/chart/values.yaml
	grep -q '^  repository: $(REGISTRY)/monocle-hook$$' $(DIST)/chart/values.yaml
	grep -q '^  digest: "sha256:' $(DIST)/chart/values.yaml
	$(HELM) package $(DIST)/chart -d $(DIST)
	$(HELM) push $(DIST)/monocle-hook-$(CHART_VERSION).tgz oci://$(REGISTRY)/charts $(HELM_PUSH_FLAGS) >$(DIST)/chart-push.log 2>&1; \
	status=$$?; cat $(DIST)/chart-push.log; exit $$status
	digest=$$(sed -n 's/^Digest: \(sha256:[0-9a-f]\{64\}\)$$/\1/p' $(DIST)/chart-push.log); \
	if [ -z "$$digest" ]; then echo "make push: helm push printed no chart digest to sign" >&2; exit 1; fi; \
	$(COSIGN_SIGN) $(REGISTRY)/charts/monocle-hook@$$digest
	$(MAKE) plugin-archives
	$(RELEASE_TOOLS)/cosign sign-blob --yes --key "$(COSIGN_KEY)" --tlog-upload=false \
		--output-signature $(DIST)/kubectl-monocle_$(VERSION)_checksums.txt.sig $(DIST)/kubectl-monocle_$(VERSION)_checksums.txt

# The kubectl plugin's archives, one per platform of PLUGIN_PLATFORMS
# (kubectl-monocle_VERSION_OS_ARCH.tar.gz: the binary and the LICENSE, as
# krew's archives are), krew's manifest for them, $(DIST)/monocle.yaml (from
# kubectl-monocle/krew.yaml.tmpl, with each archive's SHA-256 and its URL on
# the GitHub release vVERSION), and the SHA-256 checksums of all of them,
# which make push signs (a GitHub release holds them; docs/support.md says
# how to verify them and install with krew). The checksums cover the
# manifest too: one signature vouches for it, and the manifest vouches for
# each archive (krew install refuses an archive of another SHA-256).
# The same tree gives the same bytes: files dated at the commit, owned by
# root, gzip without a name or time. The plugin runs on the users' machines,
# so it has darwin too, which the image (PLATFORMS) has no use for.
PLUGIN_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
KREW_TEMPLATE = kubectl-monocle/krew.yaml.tmpl
plugin-archives:
	rm -rf $(DIST)/plugin && mkdir -p $(DIST)/plugin
	rm -f $(DIST)/kubectl-monocle_$(VERSION)_*.tar.gz $(DIST)/monocle.yaml
	for platform in $(PLUGIN_PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; name=kubectl-monocle_$(VERSION)_$${os}_$${arch}; \
		mkdir -p $(DIST)/plugin/$$name && cp LICENSE $(DIST)/plugin/$$name/ && \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -C kubectl-monocle -trimpath -ldflags "-s -w -X main.version=$(VERSION)" \
			-o $(DIST)/plugin/$$name/kubectl-monocle . && \
		tar -C $(DIST)/plugin --sort=name --mtime="$(CREATED)" --owner=0 --group=0 --numeric-owner -cf - $$name | gzip -n >$(DIST)/$$name.tar.gz || exit 1; \
	done
	sed -e '/^#/d' -e 's/@VERSION@/$(VERSION)/g' -e '/^  platforms:$$/q' $(KREW_TEMPLATE) >$(DIST)/monocle.yaml.tmp
	for platform in $(PLUGIN_PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		sha=$$(sha256sum <$(DIST)/kubectl-monocle_$(VERSION)_$${os}_$${arch}.tar.gz) && sha=$${sha%% *} && \
		sed -e '1,/^  platforms:$$/d' -e "s/@VERSION@/$(VERSION)/g; s/@OS@/$$os/g; s/@ARCH@/$$arch/g; s/@SHA256@/$$sha/g" \
			$(KREW_TEMPLATE) >>$(DIST)/monocle.yaml.tmp || exit 1; \
	done
	! grep -n '@[A-Z0-9]*@' $(DIST)/monocle.yaml.tmp || { echo "plugin-archives: $(KREW_TEMPLATE) has a placeholder make does not fill" >&2; exit 1; }
	mv $(DIST)/monocle.yaml.tmp $(DIST)/monocle.yaml
	cd $(DIST) && sha256sum kubectl-monocle_$(VERSION)_*.tar.gz monocle.yaml >kubectl-monocle_$(VERSION)_checksums.txt

.PHONY: registry-set cosign-key-set release-tools plugin-archives krew-tools
registry-set:
	@test -n "$(REGISTRY)" || { echo "make push: set REGISTRY, e.g. make push REGISTRY=ghcr.io/change-metrics"; exit 1; }
cosign-key-set:
	@test -n "$(COSIGN_KEY)" || { echo "make push signs what it pushes: set COSIGN_KEY to the private key (a file from cosign generate-key-pair, or a KMS URI) and COSIGN_PASSWORD to its password; there is no unsigned push" >&2; exit 1; }
# cosign and cyclonedx-gomod, built once into ~/.cache/monocle-hook (cold, in
# one go build: 262 s with the modules downloaded, on 2 idle cores; BENCHMARKS.md).
release-tools:
	tools/release.sh >/dev/null
# krew v0.4.3 (kubectl-krew) and its validate-krew-manifest, built once into
# ~/.cache/monocle-hook (tools/krew.sh), for e2e/krew_test.go's offline
# `kubectl krew install --manifest=... --archive=...`.
krew-tools:
	tools/krew.sh >/dev/null

# For Docker users: the Dockerfile builds the same binary onto the same
# empty base (the digest differs: Docker writes its own layer tar).
docker-image:
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg CREATED=$(CREATED) \
		-t ghcr.io/change-metrics/monocle-hook:$(VERSION) .

clean:
	rm -rf bin dist
