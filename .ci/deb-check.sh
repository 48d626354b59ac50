#!/usr/bin/env bash
# Usage (as root, on a machine without sitegw installed): .ci/deb-check.sh
# The amd64 package as an installer gets it, on this machine (CI has no systemd as PID 1):
#   1. this commit's package and the previous commit's built (before there was one: this one
#      repacked with a lower version); lintian on this one: no errors;
#   2. the previous package put in a signed apt repository (packaging/repo/build.sh) and installed
#      from it with apt-get (timed): user, groups, folders, modes, conffile, the unit enabled;
#   3. `sitegw setup --yes` of the installed package against the simulator writes site.yaml, and
#      the demo fills the data folder's database with two hours of buckets;
#   4. this commit's package added to the repository and installed over it with apt-get's upgrade:
#      config, data and buckets kept, schema migrated; the README's linked docs installed; its
#      unit on its placeholder serves the first-run page over HTTPS;
#   5. `sitegw --version`, check-config, then the daemon started from the unit's own ExecStart=
#      line as the sitegw user (its groups, UMask=, Environment=) for 20 s against the simulator:
#      /healthz answers ok with every device online at the end; the machine's node is Node 20
#      (its driver), so the other driver opens the database on the registry's Node 24;
#   6. remove (data and config kept), then purge: nothing of it left (files, user, group, units).
# Needs the Debian packages dpkg-dev, lintian, apt-utils and gpg, and `npm ci` done (the build uses its compiler
# output for Node 20's SQLite driver when it fits).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo 'deb-check: run as root (it installs the package)' >&2; exit 2; }
if dpkg -s sitegw >/dev/null 2>&1 || getent passwd sitegw >/dev/null || [ -e /etc/sitegw ] || [ -e /var/lib/sitegw ]; then
  echo 'deb-check: sitegw (package, user or folders) is on this machine already; it is left alone' >&2
  exit 2
fi
command -v lintian >/dev/null || { echo 'deb-check: apt-get install lintian dpkg-dev' >&2; exit 2; }

step() { echo "deb-check: $*"; }
fail() { echo "deb-check: FAILED: $*" >&2; exit 1; }
out=$(mktemp -d /tmp/sitegw-deb-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if dpkg -s sitegw >/dev/null 2>&1; then dpkg --purge sitegw >/dev/null 2>&1 || true; fi
  [ -z "${prev_tree:-}" ] || git worktree remove --force "$prev_tree" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT

# 1. two packages: the previous commit's (when it can build one) and this one
started=$SECONDS
deb=$(packaging/deb/build.sh amd64 "$out")
if git cat-file -e HEAD~1:packaging/deb/build.sh 2>/dev/null; then
  prev_tree=$out/prev
  git worktree add --detach "$prev_tree" HEAD~1 >/dev/null 2>&1
  ln -s "$PWD/node_modules" "$prev_tree/node_modules"
  mkdir -p "$prev_tree/.runtimes" && cp .runtimes/better-sqlite3-*.node "$prev_tree/.runtimes/" 2>/dev/null || true
  prev_deb=$(cd "$prev_tree" && packaging/deb/build.sh amd64 "$out")
else
  # the first commit with a package: this package with a lower version, for the upgrade path
  prev_deb=$out/sitegw_prev_amd64.deb
  dpkg-deb -R "$deb" "$out/prev-root"
  sed -i 's/^Version: .*/Version: 0.0.1/' "$out/prev-root/DEBIAN/control"
  dpkg-deb --root-owner-group -Zxz -z1 --build "$out/prev-root" "$prev_deb" >/dev/null
  rm -rf "$out/prev-root"
fi
step "built $(basename "$prev_deb") and $(basename "$deb") in $((SECONDS - started)) s"
lintian --fail-on error "$deb" >"$out/lintian.log" 2>&1 || { cat "$out/lintian.log"; fail 'lintian reports errors'; }
grep -v 'running with root' "$out/lintian.log" || true
step "lintian: no errors ($(du -k "$deb" | cut -f1) KiB package, $(dpkg-deb -f "$deb" Installed-Size) KiB installed)"

# 2. the previous package, fresh, from a signed apt repository as a site subscribes to it
#    (npm run package:repo; docs/install.md "An apt repository"): the repository holds the previous
#    package only, the site's apt knows it by a sources file and the repository's public key
repo_add() { # $1: a .deb to add to the repository
  mkdir -p "$out/debs" && rm -f "$out"/debs/*.deb && cp "$1" "$out/debs/"
  SITEGW_REPO_GNUPGHOME=$out/gnupg packaging/repo/build.sh "$out/debs" "$out/repo" >/dev/null 2>"$out/repo.log" ||
    { cat "$out/repo.log"; fail 'packaging/repo/build.sh'; }
}
repo_add "$prev_deb"
# apt's methods read the repository and its key as the _apt user: mktemp's 0700 would hide both
# (NO_PUBKEY, as for a repository signed by an unknown key)
chmod 0755 "$out"
install -D -m 0644 "$out/repo/sitegw-archive-keyring.gpg" "$out/keyrings/sitegw.gpg"
echo "deb [signed-by=$out/keyrings/sitegw.gpg] file:$out/repo stable main" >"$out/sitegw.list"
# only this source, and the machine's other lists kept: nothing under /etc/apt is touched
apt_=(apt-get -o "Dir::Etc::sourcelist=$out/sitegw.list" -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
export DEBIAN_FRONTEND=noninteractive
"${apt_[@]}" update >"$out/apt-update.log" 2>&1 || { cat "$out/apt-update.log"; fail 'apt-get update of the repository'; }
! grep -qiE 'NO_PUBKEY|not signed|unauthenticated' "$out/apt-update.log" || { cat "$out/apt-update.log"; fail 'the repository is not trusted'; }
t0=$(date +%s%N)
"${apt_[@]}" install -y sitegw >"$out/install.log" 2>&1 || { cat "$out/install.log"; fail 'apt-get install sitegw'; }
[ "$(dpkg-query -W -f='${Version}' sitegw)" = "$(dpkg-deb -f "$prev_deb" Version)" ] || fail 'apt installed another version'
step "installed the previous package with apt-get from the signed repository in $((($(date +%s%N) - t0) / 1000000)) ms"
grep -q 'sitegw setup' "$out/install.log" || fail 'postinst did not print the next step'
[ "$(getent passwd sitegw | cut -d: -f6,7)" = /var/lib/sitegw:/usr/sbin/nologin ] || fail 'sitegw user'
[ "$(id -u sitegw)" -lt 1000 ] || fail 'sitegw is not a system user'
id -nG sitegw | grep -qw dialout || fail 'sitegw is not in dialout'
[ "$(stat -c '%a %U %G' /var/lib/sitegw)" = '700 sitegw sitegw' ] || fail "/var/lib/sitegw: $(stat -c '%a %U %G' /var/lib/sitegw)"
dpkg-query -W -f='${Conffiles}\n' sitegw | grep -q '^ /etc/sitegw/site.yaml ' || fail 'site.yaml is not a conffile'
unit=/lib/systemd/system/sitegw.service
[ -L /etc/systemd/system/multi-user.target.wants/sitegw.service ] || fail 'the unit is not enabled'
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
environment=$(sed -n 's/^Environment=//p' "$unit")
umask_=$(sed -n 's/^UMask=//p' "$unit")
# run in a subshell of its own, `(as_unit …) &`, so $! is the daemon's pid (every step execs)
as_unit() {
  umask "$umask_"
  exec env "$environment" setpriv --reuid sitegw --regid sitegw --init-groups -- "$@"
}

# 3. configured by setup against the simulator; the demo writes buckets into the data folder
sitegw simulate --inverter-port 0 --meter-port 0 >"$out/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q 'meter host' "$out/sim.log" && break; sleep 0.1; done
inverter=$(sed -n 's/.*inverter host \([0-9.:]*\):.*/\1/p' "$out/sim.log")
meter=$(sed -n 's/.*meter host *\([0-9.:]*\):.*/\1/p' "$out/sim.log")
[ -n "$inverter" ] && [ -n "$meter" ] || { cat "$out/sim.log"; fail 'the simulator did not start'; }
port=$(node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
echo 'correct-horse-battery' | sitegw setup --yes --password-stdin --tcp "$inverter" --tcp "$meter" --units 1-3 \
  --http-host 127.0.0.1 --http-port "$port" >"$out/setup.log" 2>&1 || { cat "$out/setup.log"; fail 'sitegw setup'; }
grep -q "OK: site 'home' with 5 devices" "$out/setup.log" || { cat "$out/setup.log"; fail 'setup did not find 5 devices'; }
[ "$(stat -c '%U' /var/lib/sitegw/sitegw.db)" = sitegw ] || fail 'setup left the database to root'
as_sitegw() { setpriv --reuid sitegw --regid sitegw --init-groups -- "$@"; }
buckets() {
  as_sitegw node -e '
    const major = Number(process.versions.node.split(".")[0]);
    const D = require(`/usr/lib/sitegw/node_modules/${major === 20 ? "better-sqlite3-node20" : "better-sqlite3"}`);
    const db = new D("/var/lib/sitegw/sitegw.db");
    // buckets_all: the archive and the recent closes together (schema 17 on); before it, buckets
    const all = db.prepare("SELECT count(*) FROM sqlite_master WHERE name = ?").pluck().get("buckets_all");
    console.log(db.prepare(`SELECT count(*) FROM ${all ? "buckets_all" : "buckets"}`).pluck().get(), db.pragma("user_version", { simple: true }));
    db.close();'
}
# not through as_sitegw: a function in the background is a subshell, and its pid not the demo's
setpriv --reuid sitegw --regid sitegw --init-groups -- sitegw demo --data-dir /var/lib/sitegw --history PT2H --port 0 >"$out/demo.log" 2>&1 &
demo=$!
pids+=($demo)
# the history fills behind the banner: its end is the log line, not the banner ('Ctrl-C stops it')
for _ in $(seq 1800); do grep -q '"msg":"history pre-filled"' "$out/demo.log" && break; sleep 0.1; done
kill -TERM "$demo" && wait "$demo" || { cat "$out/demo.log"; fail 'the demo did not fill the database'; }
read -r before _ <<<"$(buckets)"
[ "$before" -gt 0 ] || { tail -30 "$out/demo.log"; fail 'no buckets before the upgrade'; }

# 4. this commit's package over it
echo '# the installer was here' >>/etc/sitegw/site.yaml
# this package published to the same repository beside the previous one; the site upgrades with apt
repo_add "$deb"
[ "$(find "$out/repo/pool" -name '*.deb' | wc -l)" = 2 ] || fail 'the repository does not keep both versions'
"${apt_[@]}" update >"$out/apt-update.log" 2>&1 || { cat "$out/apt-update.log"; fail 'apt-get update of the repository'; }
t0=$(date +%s%N)
"${apt_[@]}" install -y --only-upgrade sitegw >"$out/upgrade.log" 2>&1 || { cat "$out/upgrade.log"; fail 'the upgrade'; }
[ "$(dpkg-query -W -f='${Version}' sitegw)" = "$(dpkg-deb -f "$deb" Version)" ] || fail 'apt did not upgrade to this package'
step "upgraded with apt-get from the repository in $((($(date +%s%N) - t0) / 1000000)) ms"
tail -1 /etc/sitegw/site.yaml | grep -q 'the installer was here' || fail 'the upgrade replaced site.yaml'
read -r after schema <<<"$(buckets)"
[ "$after" = "$before" ] || fail "buckets before the upgrade $before, after $after"
step "the upgrade kept site.yaml and the database: $after buckets, schema version $schema"
# this commit's modes (its postinst ran last): the service's group writes the config (setup page)
[ "$(stat -c '%a %U %G' /etc/sitegw)" = '770 root sitegw' ] || fail "/etc/sitegw: $(stat -c '%a %U %G' /etc/sitegw)"
[ "$(stat -c '%a %U %G' /etc/sitegw/site.yaml)" = '660 root sitegw' ] || fail "site.yaml: $(stat -c '%a %U %G' /etc/sitegw/site.yaml)"
! grep -q '^ExecCondition=' "$unit" || fail 'the unit keeps an ExecCondition: it would not serve the first-run page'
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")

# this package's unit on its own placeholder (a fresh install): the first-run page over HTTPS on
# 8443, its setup code readable by the service alone (docs/install.md "Setup in the browser"); a
# stop ends it cleanly and takes the code with it. The configured site.yaml is put back after.
cp -p /etc/sitegw/site.yaml "$out/site.yaml.configured"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./etc/sitegw/site.yaml >/etc/sitegw/site.yaml
(as_unit $exec_start) >"$out/first-run.log" 2>&1 &
first=$!
pids+=($first)
for _ in $(seq 300); do grep -q 'not set up yet' "$out/first-run.log" && break; sleep 0.1; done
grep -q 'not set up yet' "$out/first-run.log" || { cat "$out/first-run.log"; fail 'the unit did not serve the first-run page on the placeholder'; }
[ "$(stat -c '%a %U' /var/lib/sitegw/setup-code)" = '600 sitegw' ] || fail "setup-code: $(stat -c '%a %U' /var/lib/sitegw/setup-code)"
page=$(node -e 'require("https").get("https://127.0.0.1:8443/", { rejectUnauthorized: false }, (r) => { let b = ""; r.on("data", (d) => (b += d)); r.on("end", () => console.log(r.statusCode, b.includes("setup code"))); }).on("error", (e) => console.log(String(e)))')
[ "$page" = '200 true' ] || fail "the first-run page over HTTPS: $page"
kill -TERM "$first" && wait "$first" || { cat "$out/first-run.log"; fail 'the first-run page did not stop cleanly'; }
[ ! -e /var/lib/sitegw/setup-code ] || fail 'the setup code outlived the first-run page'
cp -p "$out/site.yaml.configured" /etc/sitegw/site.yaml
step 'the unit on the placeholder serves the first-run page over HTTPS, its code readable by sitegw alone'

# the README's links open in the installed documentation (test/docs/package-docs.test.ts checks the list)
for target in $(grep -o '](\(docs\|bench\)/[^)#]*\|](CONTRIBUTING.md' README.md | sed 's/^](//' | sort -u); do
  [ -f "/usr/share/doc/sitegw/$target" ] || fail "the package lacks /usr/share/doc/sitegw/$target, which README.md links to"
done

# 5. the daemon as the unit runs it, 20 s
version=$(sitegw --version)
[ "$version" = "$(node -p 'require("./package.json").version')" ] || fail "sitegw --version says $version"
as_sitegw sitegw check-config /etc/sitegw/site.yaml >"$out/check.log" || { cat "$out/check.log"; fail 'check-config'; }
(as_unit $exec_start) >"$out/daemon.log" 2>&1 &
daemon=$!
pids+=($daemon)
end=$((SECONDS + 20))
while [ $SECONDS -lt $end ]; do
  kill -0 "$daemon" 2>/dev/null || { tail -20 "$out/daemon.log"; fail 'the daemon exited'; }
  sleep 1
done
# then ok within a minute more: on a loaded machine node alone can take 15 s to start the daemon
# (seen: "uptimeSeconds":4 at the 20 s mark, load 18 on 2 cores, every device 'not polled yet')
for _ in $(seq 60); do
  health=$(node -e 'fetch(process.argv[1]).then((r) => r.text()).then(console.log, (e) => console.log(String(e)))' \
    "http://127.0.0.1:$port/healthz")
  echo "$health" | grep -q '"status":"ok"' && break
  kill -0 "$daemon" 2>/dev/null || { tail -20 "$out/daemon.log"; fail 'the daemon exited'; }
  sleep 1
done
echo "$health" | grep -q '"status":"ok"' || { tail -20 "$out/daemon.log"; fail "healthz after 80 s: $health"; }
kill -TERM "$daemon"
wait "$daemon" || fail 'the daemon did not stop cleanly on SIGTERM'
step "the daemon ran 20 s as sitegw from the unit's ExecStart=: $health"
[ "$(stat -c '%a %U' /var/lib/sitegw/sitegw.db)" = '600 sitegw' ] || fail 'database mode or owner'
# the other driver of the package: better-sqlite3 13 on the registry's Node 24 (Node 20 ran above)
source .ci/node-versions.sh
node24=$(.ci/fetch-node.sh x64 "${NODE_VERSIONS[24]}")/bin/node
as_sitegw "$node24" /usr/lib/sitegw/dist/cli.js migrate --config /etc/sitegw/site.yaml >"$out/node24.log" 2>&1 ||
  { cat "$out/node24.log"; fail "the package's better-sqlite3 13 on Node ${NODE_VERSIONS[24]}"; }
step "the package's database driver for Node >= 22 opened it on Node $("$node24" --version)"

# 6. remove keeps data and config; purge leaves nothing
dpkg -r sitegw >/dev/null
[ -f /var/lib/sitegw/sitegw.db ] && [ -f /etc/sitegw/site.yaml ] && getent passwd sitegw >/dev/null ||
  fail 'remove took data, config or the user'
[ ! -e /usr/lib/sitegw ] && [ ! -e /usr/bin/sitegw ] && [ ! -e "$unit" ] || fail 'remove left program files'
dpkg --purge sitegw >/dev/null
left=$(ls -d /etc/sitegw /var/lib/sitegw /usr/lib/sitegw /usr/bin/sitegw "$unit" \
  /etc/systemd/system/multi-user.target.wants/sitegw.service /var/lib/systemd/deb-systemd-helper-enabled/sitegw.service \
  /var/lib/systemd/deb-systemd-helper-masked/sitegw.service 2>/dev/null || true)
[ -z "$left" ] || fail "purge left: $left"
! getent passwd sitegw >/dev/null && ! getent group sitegw >/dev/null || fail 'purge left the user or group'
step "removed (data and config kept), purged (nothing left) in $((SECONDS - started)) s in all"
