# krx-bridge container image: build with the full toolchain, run on a slim
# image with production dependencies only, as the unprivileged `node` user.
# Without Docker, test/deploy/dockerfile.test.ts runs these same steps.

# --- build: compile the server (tsc) and the demo page / browser SDK (esbuild)
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
COPY examples ./examples
RUN npm run build

# --- runtime
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /app/dist ./dist
USER node
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
# /healthz answers while the process serves; node's own fetch, so the image needs no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node directly (not npm start) is PID 1 and receives SIGTERM itself: the bridge drains (close 1001) and exits.
CMD ["node", "dist/cli.js"]
