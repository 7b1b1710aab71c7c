#!/usr/bin/env bash
# `npm run demo`: installs what it needs, then runs scripts/demo.ts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
# The web app the API serves at its URL.
npx --no-install vite build apps/web --logLevel warn
exec node -r @swc-node/register scripts/demo.ts "$@"
