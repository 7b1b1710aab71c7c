#!/usr/bin/env bash
# `npm run bench -- <name> [--key=value …]`: runs bench/run.ts trusting the Microsoft emulator.
# It serves HTTPS under an authority of our own, and Node reads NODE_EXTRA_CA_CERTS only as a
# process starts: the authority is made (once; kept in .tools/emulator-ca) and named first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
NODE_EXTRA_CA_CERTS="$(node -r @swc-node/register apps/emulators/src/ca.ts)"
export NODE_EXTRA_CA_CERTS
exec node -r @swc-node/register bench/run.ts "$@"
