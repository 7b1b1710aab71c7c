#!/usr/bin/env bash
# The whole test run: install if needed, type check, lint, then the unit, integration and
# e2e tiers against the real PostgreSQL and Redis (each test file gets its own database).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
echo "== typecheck" >&2
npx --no-install tsc -p tsconfig.json
npx --no-install tsc -p apps/web/tsconfig.json
echo "== lint" >&2
npx --no-install biome ci .
echo "== web app" >&2
# The browser tests (e2e tier) drive the built app as the API serves it.
npx --no-install vite build apps/web --logLevel warn
echo "== tests" >&2
export VITE_CONFIG_NATIVE_IGNORE_WARNING=true
if [ "$#" -gt 0 ]; then
  npx --no-install vitest run "$@"
else
  # The e2e tier runs whole systems (emulators, API, workers) against timing-sensitive
  # scenarios: it runs after the other tiers, not beside them on these 2-core machines.
  npx --no-install vitest run --project unit --project int
  npx --no-install vitest run --project e2e
fi
