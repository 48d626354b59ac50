#!/usr/bin/env bash
# Usage: .ci/with-node.sh 22|24 COMMAND...   e.g. .ci/with-node.sh 24 npm ci   then   .ci/with-node.sh 24 npm test
# Runs COMMAND with the npm registry's Node of that major line first on PATH (npm, vitest and the
# daemons the tests start all use it) and native addons compiled against that Node's own headers.
# The versions are in .ci/node-versions.sh; SITEGW_NODE_VERSION overrides (any x.y.z).
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/node-versions.sh
major=$1
shift
case "$major" in
  22 | 24) version=${NODE_VERSIONS[$major]} ;;
  *) echo "with-node.sh: no pinned Node $major (22 or 24)" >&2; exit 2 ;;
esac
dir=$(.ci/fetch-node.sh x64 "${SITEGW_NODE_VERSION:-$version}")
export PATH="$dir/bin:$PATH" npm_config_nodedir="$dir"
echo "with-node.sh: $(command -v node) $(node --version)" >&2
exec "$@"
