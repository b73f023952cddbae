# The same `go build` as `make build`, in a static binary on distroless.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY *.go ./
COPY hook ./hook
COPY internal ./internal
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /monocle-hook .

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="monocle-hook" \
      org.opencontainers.image.description="Metacontroller sync hook that runs Monocle on Kubernetes" \
      org.opencontainers.image.source="https://github.com/change-metrics/monocle-hook" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /monocle-hook /monocle-hook
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/monocle-hook"]
