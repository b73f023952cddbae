# For Docker users (`make docker-image`). `make image` makes the same image
# without Docker (tools/image): the same static binary, built with the same
# flags, alone on an empty base at /monocle-hook, run as 65532:65532, with
# the same labels. Docker writes its own layer tar, so the digests differ.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY *.go ./
# The sync request `monocle-hook test` (the chart's helm test) sends.
COPY examples/sync-request.json ./examples/
COPY api ./api
COPY crd ./crd
COPY hook ./hook
COPY internal ./internal
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /monocle-hook .

# Nothing but the binary: no shell, no passwd (the user is numeric), no CA
# bundle (the hook calls nothing). It writes no file: a read-only root works.
FROM scratch
ARG VERSION=dev
ARG COMMIT=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="monocle-hook" \
      org.opencontainers.image.description="Metacontroller sync hook that runs Monocle on Kubernetes" \
      org.opencontainers.image.source="https://github.com/change-metrics/monocle-hook" \
      org.opencontainers.image.url="https://github.com/change-metrics/monocle-hook" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build /monocle-hook /monocle-hook
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/monocle-hook"]
