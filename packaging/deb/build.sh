#!/usr/bin/env bash
# Usage: packaging/deb/build.sh amd64|arm64 [OUT_DIR]      (npm run package:deb builds both)
# Builds dist/sitegw_<version>_<arch>.deb with dpkg-deb from the built tree: dist/, device-profiles/
# and the production dependencies (npm ci --omit=dev --ignore-scripts: nothing compiled or
# downloaded by install scripts). The native parts for the target architecture:
#   - better-sqlite3 13 (Node >= 22): its npm package's prebuilt linux-<arch> binary, no other;
#   - better-sqlite3 12 as better-sqlite3-node20 (Node 20): compiled with node-gyp against the
#     registry's node-linux-<arch> 20 headers (cross-compiled for arm64, as .ci/arm64-smoke.sh
#     does), cached in .runtimes/ by version and architecture;
#   - serialport: its package's prebuilt linux-<arch> glibc binary, no other.
# Version: package.json's, plus +git<commit time>.<commit count>.<hash> (SITEGW_DEB_VERSION
# overrides), so each commit's package upgrades the previous commit's; the count breaks the tie
# when two commits share a second, which the hash alone (not ordered) did not.
# Needs: dpkg-deb, and for arm64 g++-aarch64-linux-gnu.
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:?usage: packaging/deb/build.sh amd64|arm64 [OUT_DIR]}
out=${2:-dist-deb}
case "$arch" in
  amd64) node_arch=x64 ;;
  arm64) node_arch=arm64 ;;
  *) echo "build.sh: amd64 or arm64, not $arch" >&2; exit 2 ;;
esac
source .ci/node-versions.sh
base=$(node -p 'require("./package.json").version')
version=${SITEGW_DEB_VERSION:-$base+git$(git log -1 --format=%cd --date=format:%Y%m%d%H%M%S).$(git rev-list --count HEAD).$(git rev-parse --short HEAD)}
# who answers for the package (Debian policy 3.3: a name and a working address)
maintainer=${SITEGW_DEB_MAINTAINER:-sitegw maintainers <sitegw@example.org>}
started=$SECONDS

npm run build --silent
stage=.runtimes/deb-$arch
root=$stage/root
app=$root/usr/lib/sitegw
rm -rf "$stage" && mkdir -p "$app" "$root/DEBIAN"
cp -r dist device-profiles package.json package-lock.json "$app/"
# production dependencies only; no install scripts (they would build or fetch for the host)
(cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
rm "$app/package-lock.json"

# better-sqlite3 13: only this architecture's prebuilt binary (glibc)
bs=$app/node_modules/better-sqlite3
find "$bs/prebuilds" -type f ! -name "linux-$node_arch.node" -delete
# (its lib/<platform>-<arch>.js loaders: the other platforms' go; lib/sqlite-error.js and the rest stay)
find "$bs/lib" -maxdepth 1 -regextype posix-extended -regex '.*/(android|darwin|linux|linuxmusl|win32)-[a-z0-9+]+\.js' \
  ! -name "linux-$node_arch.js" -delete
rm -rf "$bs/deps" "$bs/src" "$bs/binding.gyp"

# better-sqlite3 12 for Node 20, compiled for the target (the result cached per version and arch)
bs20=$app/node_modules/better-sqlite3-node20
bs20_version=$(node -p "require('./$bs20/package.json').version")
cache=.runtimes/better-sqlite3-$bs20_version-node${NODE_VERSIONS[20]}-linux-$node_arch.node
# the driver the CI machine's Node 20 install (amd64) or the arm64 smoke run compiled already, when it
# loads on that Node (the same ABI: every Node 20 has NODE_MODULE_VERSION 115)
usable() { # $1: a better-sqlite3-node20 folder
  [ "$(node -p "require('./$1/package.json').version" 2>/dev/null)" = "$bs20_version" ] || return 1
  if [ "$arch" = arm64 ]; then
    file -b "$1/build/Release/better_sqlite3.node" 2>/dev/null | grep -q aarch64
  else
    [ "$(node -p 'process.versions.node.split(".")[0]')" = 20 ] && node -e "new (require('./$1'))(':memory:').close()" 2>/dev/null
  fi
}
if [ ! -f "$cache" ]; then
  if [ "$arch" = amd64 ]; then built=node_modules/better-sqlite3-node20; else built=.runtimes/arm64-app-${NODE_VERSIONS[20]}/node_modules/better-sqlite3-node20; fi
  if usable "$built"; then
    cp "$built/build/Release/better_sqlite3.node" "$cache"
    echo "build.sh: better-sqlite3 $bs20_version for $arch taken from $built" >&2
  fi
fi
if [ ! -f "$cache" ]; then
  node_dir=$(.ci/fetch-node.sh "$node_arch" "${NODE_VERSIONS[20]}")
  node_gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
  cross=()
  if [ "$arch" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
    cross=(CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar)
  fi
  log=$PWD/$stage/build.log
  (cd "$bs20" && env "${cross[@]}" node "$node_gyp" rebuild --release --arch="$node_arch" --nodedir="$node_dir" \
    >"$log" 2>&1) || { tail -30 "$log"; exit 1; }
  cp "$bs20/build/Release/better_sqlite3.node" "$cache"
  echo "build.sh: better-sqlite3 $bs20_version compiled for $arch in $((SECONDS - started)) s" >&2
fi
rm -rf "$bs20/build" "$bs20/deps" "$bs20/src" "$bs20/binding.gyp"
mkdir -p "$bs20/build/Release"
cp "$cache" "$bs20/build/Release/better_sqlite3.node"

# serialport: this architecture's glibc binary only
sp=$app/node_modules/@serialport/bindings-cpp
find "$sp/prebuilds" -mindepth 1 -maxdepth 1 ! -name "linux-$node_arch" -exec rm -rf {} +
find "$sp/prebuilds" -name '*musl*' -delete
# what a runtime never reads: TypeScript sources and declarations, source maps, the packages'
# docs, tests, CI and VCS files (lintian: privacy-breach in docs' HTML, VCS control files)
find "$app/node_modules" -type f \( -name '*.md' -o -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \
  -o -name '*.html' -o -name '*.sh' -o -name '.npmignore' -o -name '.eslintrc*' -o -name '.git*' -o -name '.travis.yml' \) -delete
for pkg in "$app"/node_modules/* "$app"/node_modules/@*/*; do
  rm -rf "$pkg"/{test,tests,.github,.husky,integration,benchmark,benchmarks,example,examples,scripts}
done
find "$app" -type f -exec chmod 0644 {} + -o -type d -exec chmod 0755 {} +
# scripts keep their executable bit (lintian: script-not-executable)
find "$app" -type f -name '*.*js' -exec grep -l -m1 '^#!' {} + | xargs -r chmod 0755
# the addons without their debug symbols (lintian: unstripped-binary-or-object)
strip_=strip
[ "$arch" = arm64 ] && [ "$(uname -m)" != aarch64 ] && strip_=aarch64-linux-gnu-strip
find "$app" -name '*.node' -exec "$strip_" --strip-unneeded {} +
# the C and C++ libraries the addons need, from their ELF version needs (readelf reads any arch)
needs=$(find "$app" -name '*.node' -exec readelf --version-info {} + | grep -o 'Name: [A-Z]*_[0-9.]*' | cut -d' ' -f2 | sort -u)
glibc=$(grep '^GLIBC_' <<<"$needs" | sed 's/GLIBC_//' | sort -V | tail -1)
glibcxx=$(grep '^GLIBCXX_' <<<"$needs" | sed 's/GLIBCXX_3.4.//' | sort -n | tail -1)
# GLIBCXX_3.4.N first shipped with GCC: 21 → 5, 26 → 9, 28 → 10, 29 → 11, 30 → 12 (libstdc++ ABI docs)
gcc=5
for pair in 26:9 28:10 29:11 30:12 31:13; do [ "${glibcxx:-0}" -ge "${pair%%:*}" ] && gcc=${pair##*:}; done
libs="libc6 (>= $glibc)${glibcxx:+, libstdc++6 (>= $gcc)}"

# the command, the unit, the placeholder config, the docs
install -D -m 0755 /dev/stdin "$root/usr/bin/sitegw" <<'SH'
#!/bin/sh
# sitegw's command line on Debian's (or NodeSource's) node
exec /usr/bin/node /usr/lib/sitegw/dist/cli.js "$@"
SH
unit=$root/lib/systemd/system/sitegw.service
mkdir -p "$(dirname "$unit")"
# the repository's unit with the package's paths; on the placeholder site.yaml it serves the
# first-run page (src/cli/first-run.ts)
sed -e 's#^Documentation=.*#Documentation=file:/usr/share/doc/sitegw/docs/install.md#' -e 's#/opt/sitegw/#/usr/lib/sitegw/#g' \
  systemd/sitegw.service >"$unit"
grep -q '^ExecStart=/usr/bin/node .* /usr/lib/sitegw/dist/cli.js run' "$unit"
install -D -m 0640 packaging/deb/site.yaml "$root/etc/sitegw/site.yaml"
chmod 0770 "$root/etc/sitegw"
doc=$root/usr/share/doc/sitegw
install -D -m 0644 packaging/deb/copyright "$doc/copyright"
install -D -m 0644 packaging/deb/lintian-overrides "$root/usr/share/lintian/overrides/sitegw"
# every document README.md links to, at the same relative paths and uncompressed, so the README's
# links (and the unit's Documentation=, postinst's guide line) open as they do in the repository;
# test/docs/package-docs.test.ts reads the README's links to check this list
for f in README.md CONTRIBUTING.md bench/README.md docs/*.md docs/asyncapi.yaml; do install -D -m 0644 "$f" "$doc/$f"; done
install -D -m 0644 examples/site.example.yaml "$doc/examples/site.example.yaml"
printf 'sitegw (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- %s  %s\n' \
  "$version" "$(git rev-parse HEAD)" "$maintainer" "$(git log -1 --format=%cD)" | gzip -9n >"$doc/changelog.gz"

# control files
for s in postinst prerm postrm; do install -m 0755 "packaging/deb/$s" "$root/DEBIAN/$s"; done
echo /etc/sitegw/site.yaml >"$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@LIBS@/$libs/" -e "s/@MAINTAINER@/$maintainer/" packaging/deb/control.in >"$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' md5sum >DEBIAN/md5sums)
mkdir -p "$out"
deb=$out/sitegw_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
rm -rf "$stage"
echo "build.sh: $deb ($(du -k "$deb" | cut -f1) KiB, $size KiB installed) in $((SECONDS - started)) s" >&2
echo "$deb"
