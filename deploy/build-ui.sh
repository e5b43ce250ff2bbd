#!/usr/bin/env bash
# Builds the web UI into web/dist: `npm ci` (the versions pinned in web/package-lock.json, from
# the npm registry) when web/node_modules is missing or older than the lock file, then
# `npm run build` (type check + Vite) when a source is newer than web/dist. Called by build.sh.
set -euo pipefail
cd "$(dirname "$0")/../web"
if ! command -v npm >/dev/null 2>&1; then
  echo "build-ui: npm not found; run deploy/install-deps.sh (or set LONGHAUL_SKIP_UI=1)" >&2
  exit 1
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "build-ui: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
if [ ! -f dist/index.html ] ||
   [ -n "$(find src index.html package-lock.json vite.config.ts tsconfig.json -newer dist/index.html -print -quit)" ]; then
  echo "build-ui: npm run build"
  npm run --silent build
else
  echo "build-ui: web/dist is up to date"
fi
