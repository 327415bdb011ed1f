# syntax=docker/dockerfile:1
# One image for every role: `node dist/src/main.js [all|api|projector]`, and every script:
# `node dist/scripts/<name>.js` (audit-credits, replay, export-events, migrate-events, demo, …).
# No compiler anywhere: better-sqlite3 13 ships prebuilt binaries. The build stage only
# compiles TypeScript and drops the dev dependencies.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The lock file spans the workspace that generates the typed client's types (npm run docs:generate).
COPY tools/openapi-types/package.json ./tools/openapi-types/
# --ignore-scripts: no install script is needed to build or run (and none may try to compile).
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
COPY scripts ./scripts
# The operator console (built into dist/console by npm run build).
COPY console ./console
RUN npm run build && npm prune --omit=dev

FROM node:24-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
ENV DATA_DIR=/app/data PORT=8080
VOLUME ["/app/data"]
EXPOSE 8080
# Liveness on the port the process listens on (PORT may be overridden at run time).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1's only child (tini-free): it handles SIGTERM itself and exits within SHUTDOWN_TIMEOUT_S.
CMD ["node", "dist/src/main.js"]
