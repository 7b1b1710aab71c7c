#!/usr/bin/env bash
# Generates the Prisma client. Generation never runs the schema engine, but the CLI
# insists on finding one; on machines that cannot download it, any executable will do.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PRISMA_SCHEMA_ENGINE_BINARY="${PRISMA_SCHEMA_ENGINE_BINARY:-/bin/true}"
export PRISMA_HIDE_UPDATE_MESSAGE=1 CHECKPOINT_DISABLE=1
exec npx --no-install prisma generate --no-hints "$@"
