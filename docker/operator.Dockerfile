# syntax=docker/dockerfile:1.7
# The operator: `nightjar operator` (the chart's operator Deployment). It needs no browser.
#   docker build -f docker/operator.Dockerfile -t nightjar-operator:0.1.0 .
#
# Base image pinned by full version tag; see api-server.Dockerfile for why not a digest.
ARG NODE_IMAGE=node:24.9.0-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 nightjar \
 && useradd --uid 10001 --gid 10001 --home-dir /home/nightjar --create-home --shell /usr/sbin/nologin nightjar
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY cli ./cli
# the operator reuses the api-server's config error type and the shared ports/CRD types
COPY api-server ./api-server
COPY operator ./operator
COPY crds ./crds
ENV NODE_ENV=production
USER 10001:10001
EXPOSE 8081
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/nightjar.mjs", "operator"]
