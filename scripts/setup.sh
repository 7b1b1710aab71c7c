#!/usr/bin/env bash
# Installs dependencies and generates the Prisma client when they are missing or stale.
# With --migrate, also creates and migrates the database named by DATABASE_URL.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing dependencies" >&2
  # Not `npm ci`: vite lists a Windows-only optional package that is not on the registry,
  # so it never enters the lock file and `npm ci` refuses the lock as out of sync.
  # `npm install` keeps the locked versions and skips the unavailable optional package.
  npm install --no-audit --no-fund --loglevel=error
fi

client=libs/core/src/generated/prisma/client.ts
if [ ! -f "$client" ] || [ prisma/schema.prisma -nt "$client" ]; then
  echo "setup: generating the Prisma client" >&2
  scripts/generate.sh >/dev/null
fi

if [ "${1:-}" = "--migrate" ]; then
  node -r @swc-node/register prisma/migrate.ts
fi
