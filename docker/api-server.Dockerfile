# syntax=docker/dockerfile:1.7
# The api-server: REST /v1, MCP, OAuth, console, /ws/control (the chart's api-server Deployment).
#   docker build -f docker/api-server.Dockerfile -t nightjar-api-server:0.2.0 .
#
# Base image pinned by full version tag. A digest pin (node:…@sha256:…) is stronger — it
# survives a re-pushed tag — but digests could not be fetched where this file was written;
# resolve one with `docker buildx imagetools inspect node:24.9.0-bookworm-slim` and
# append it in your build pipeline.
ARG NODE_IMAGE=node:24.9.0-bookworm-slim
# The run stage is Debian slim with Node's binary alone: npm, yarn and corepack (npm alone
# is 12 MB) stay in the deps stage, where npm runs; nothing in the image runs them.
ARG RUNTIME_IMAGE=debian:12.12-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json docker/prune-deps.mjs docker/api-server.deps ./
# production dependencies from the lock file, then only what this image's sources import and
# what those need (docker/prune-deps.mjs), without type declarations, maps and documents
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
 && node prune-deps.mjs api-server.deps

FROM ${RUNTIME_IMAGE}
COPY --from=deps /usr/local/bin/node /usr/local/bin/node
# tini reaps zombies and forwards signals, so SIGTERM reaches node as PID 2
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 nightjar \
 && useradd --uid 10001 --gid 10001 --home-dir /home/nightjar --create-home --shell /usr/sbin/nologin nightjar
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# every `nightjar` command (test/docker/dockerfiles.test.ts checks this list against the imports)
COPY bin ./bin
COPY cli ./cli
COPY api-server ./api-server
COPY contracts ./contracts
COPY operator ./operator
COPY tunnel ./tunnel
COPY crds ./crds
COPY ports ./ports
COPY watch ./watch
COPY telemetry ./telemetry
ENV NODE_ENV=production \
    NIGHTJAR_HOST=0.0.0.0 \
    NIGHTJAR_PORT=8080 \
    NIGHTJAR_DATA_DIR=/var/lib/nightjar
# numeric, so the kubelet can verify runAsNonRoot without reading /etc/passwd
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/nightjar.mjs", "start"]
