#!/usr/bin/env bash
# Usage: .ci/fetch-node.sh x64|arm64 VERSION
# Unpacks the npm registry's node-linux-<arch> package (the official binary plus include/node, the
# headers native addons compile against) into .runtimes/ (git-ignored) once, and prints its folder.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$1 version=$2
dir=.runtimes/node-linux-$arch-$version
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack "node-linux-$arch@$version" --silent >/dev/null)
  mkdir -p "$dir"
  tar xzf "$tmp"/node-linux-"$arch"-"$version".tgz -C "$dir" --strip-components=1
  rm -rf "$tmp"
fi
echo "$PWD/$dir"
