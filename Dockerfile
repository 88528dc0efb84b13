# dragnet: the same pipeline as `npm start`, in a container for a cloud runner.
#   docker build -t dragnet .
#   docker run --rm -v "$PWD/storage:/app/storage" dragnet --site quotes-toscrape --summary-json storage/summary.json
# With REDIS_URL and DATABASE_URL set, the container is a worker of a distributed run: start N of
# them with the same variables and site (compose.yaml does it with 3). `npm run status` and the
# other commands: --entrypoint node ... --import tsx src/commands/status.ts --site S.

# Dependencies, built where a compiler is at hand: better-sqlite3 compiles its native module on install.
FROM node:26-bookworm-slim AS deps
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# package.json's overrides install @apify/timeout from here (vendor/*/README.md), as a link.
COPY vendor ./vendor
ENV PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
RUN npm ci --omit=dev && npm cache clean --force

FROM node:26-bookworm-slim
LABEL org.opencontainers.image.title="dragnet" \
      org.opencontainers.image.description="Large-scale web scraping on Crawlee: the npm start pipeline as an image for a cloud runner" \
      org.opencontainers.image.licenses="MIT"
# Debian's Chromium renders the pages that need a browser; Playwright's own download is not used.
# The same packages as src/fetch/browser/provisionChromium.ts installs for `npm start`'s demo and `npm test`
# on a machine without a browser; here, CHROMIUM_PATH finds it and nothing is installed at run time.
# tini is PID 1: it passes SIGTERM on to the run (which then stops gracefully) and reaps Chromium's processes.
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium fonts-liberation ca-certificates tini \
    && rm -rf /var/lib/apt/lists/*
ENV PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    CHROMIUM_PATH=/usr/bin/chromium \
    DRAGNET_STORAGE_DIR=/app/storage \
    DRAGNET_METRICS_HOST=0.0.0.0

WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/vendor ./vendor
COPY package.json package-lock.json tsconfig.json ./
# src/demo/ holds the demo shop that `npm start` crawls with no arguments: the demo, nothing else.
COPY src ./src
COPY routes ./routes
COPY docker/healthcheck.mjs ./docker/
# Everything above is root's and read-only to the run; only the storage dir is the node user's.
# (tsx keeps its compile cache in /tmp: with `docker run --read-only`, add `--tmpfs /tmp`.)
RUN mkdir -p storage && chown node:node storage

USER node
VOLUME /app/storage
# The metrics endpoint and /status, when DRAGNET_METRICS_PORT=9464 is set (the health check asks it there).
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["node", "docker/healthcheck.mjs"]
ENTRYPOINT ["tini", "--", "node", "--import", "tsx", "src/main.ts"]
