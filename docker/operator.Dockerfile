# syntax=docker/dockerfile:1.7
# The operator: `nightjar operator` (the chart's operator Deployment). It needs no browser.
#   docker build -f docker/operator.Dockerfile -t nightjar-operator:0.2.0 .
#
# Base image pinned by full version tag; see api-server.Dockerfile for why not a digest.
ARG NODE_IMAGE=node:24.9.0-bookworm-slim
# The run stage is Debian slim with Node's binary alone: npm, yarn and corepack (npm alone
# is 12 MB) stay in the deps stage, where npm runs; nothing in the image runs them.
ARG RUNTIME_IMAGE=debian:12.12-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json docker/prune-deps.mjs docker/operator.deps ./
# production dependencies from the lock file, then only what this image's sources import and
# what those need (docker/prune-deps.mjs), without type declarations, maps and documents
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
 && node prune-deps.mjs operator.deps

FROM ${RUNTIME_IMAGE}
COPY --from=deps /usr/local/bin/node /usr/local/bin/node
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 nightjar \
 && useradd --uid 10001 --gid 10001 --home-dir /home/nightjar --create-home --shell /usr/sbin/nologin nightjar
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# what `nightjar operator` imports (test/docker/dockerfiles.test.ts checks this list
# against the imports): the CLI's dispatcher and its operator command, the operator, the
# contracts and CRD types it shares with the other images
COPY bin ./bin
COPY cli/main.ts ./cli/main.ts
COPY cli/operator.ts ./cli/operator.ts
COPY operator ./operator
COPY contracts ./contracts
COPY crds ./crds
COPY ports ./ports
COPY watch ./watch
COPY telemetry ./telemetry
# (nothing of the api-server: a warm resume's auth-state arrives opened, in a Secret the
# api-server writes — the operator has neither the database nor the KMS key)
ENV NODE_ENV=production
USER 10001:10001
EXPOSE 8081
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/nightjar.mjs", "operator"]
