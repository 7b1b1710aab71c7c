#!/usr/bin/env bash
# `npm run demo`: installs what it needs, then runs scripts/demo.ts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
# The web app the API serves at its URL.
npx --no-install vite build apps/web --logLevel warn
# The Microsoft emulator serves HTTPS under an authority of our own; Node reads the extra CA
# file only as a process starts, so it is made now and named for the demo and its children.
NODE_EXTRA_CA_CERTS="$(node -r @swc-node/register apps/emulators/src/ca.ts)"
export NODE_EXTRA_CA_CERTS
exec node -r @swc-node/register scripts/demo.ts "$@"
