#!/usr/bin/env bash
# Usage: .ci/node24.sh COMMAND...   e.g. .ci/node24.sh npm ci   then   .ci/node24.sh npm test
# Runs COMMAND with the registry's Node 24 first on PATH (npm, vitest and the daemons the tests
# start all use it) and native addons compiled against that Node's own headers.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(.ci/fetch-node.sh x64 "${SITEGW_NODE24_VERSION:-24.21.0}")
export PATH="$dir/bin:$PATH" npm_config_nodedir="$dir"
echo "node24.sh: $(command -v node) $(node --version)" >&2
exec "$@"
