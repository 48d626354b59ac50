#!/usr/bin/env bash
# Usage: packaging/repo/build.sh [DEB_DIR] [REPO_DIR]       (npm run package:repo)
# Adds the .deb files in DEB_DIR (default dist-deb/, what `npm run package:deb` wrote; nothing is
# rebuilt) to the signed apt repository in REPO_DIR (default dist-repo/) and prints REPO_DIR:
#   REPO_DIR/pool/main/s/sitegw/*.deb              every version added so far (apt upgrades among them)
#   REPO_DIR/dists/stable/main/binary-{amd64,arm64}/Packages[.gz]
#   REPO_DIR/dists/stable/{Release,InRelease,Release.gpg}   signed
#   REPO_DIR/sitegw-archive-keyring.gpg            the public key, for /etc/apt/keyrings/
# Signing: the key SITEGW_REPO_KEY names (a fingerprint or user id) in the keyring at
# SITEGW_REPO_GNUPGHOME (default .runtimes/repo-gnupg/, never committed). With no key there, one is
# made once and kept: back that folder up, since sites that trust the key cannot verify a new one.
# docs/install.md "An apt repository" says how to host the folder and subscribe a site.
# Needs: apt-ftparchive (Debian's apt-utils), gpg.
set -euo pipefail
cd "$(dirname "$0")/../.."
debs=${1:-dist-deb}
repo=${2:-dist-repo}
suite=stable
archs=(amd64 arm64)
fail() { echo "package:repo: $*" >&2; exit 1; }
command -v apt-ftparchive >/dev/null || fail 'apt-ftparchive is missing: apt-get install apt-utils'
command -v gpg >/dev/null || fail 'gpg is missing: apt-get install gpg'
shopt -s nullglob
new=("$debs"/sitegw_*.deb)
[ ${#new[@]} -gt 0 ] || fail "no sitegw_*.deb in $debs/: run npm run package:deb first"

export GNUPGHOME=${SITEGW_REPO_GNUPGHOME:-$PWD/.runtimes/repo-gnupg}
mkdir -p "$GNUPGHOME" && chmod 0700 "$GNUPGHOME"
key=${SITEGW_REPO_KEY:-}
if [ -z "$key" ]; then
  key=$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
  if [ -z "$key" ]; then
    # ed25519: small signatures, and apt's gpgv has verified them since Debian 10
    gpg --batch --quiet --passphrase '' --quick-generate-key 'sitegw archive signing key <sitegw@example.org>' ed25519 sign never
    key=$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" { print $10; exit }')
    echo "package:repo: made a new signing key $key in $GNUPGHOME: back that folder up" >&2
  fi
fi
gpg --batch --list-secret-keys "$key" >/dev/null 2>&1 || fail "no secret key '$key' in $GNUPGHOME"

pool=$repo/pool/main/s/sitegw
mkdir -p "$pool"
for deb in "${new[@]}"; do
  [ "$(dpkg-deb -f "$deb" Package)" = sitegw ] || fail "$deb is not a sitegw package"
  cp -f "$deb" "$pool/"
done
# each architecture's index lists every version in the pool, so apt can upgrade (and downgrade) among them
for arch in "${archs[@]}"; do
  dir=$repo/dists/$suite/main/binary-$arch
  mkdir -p "$dir"
  (cd "$repo" && apt-ftparchive --arch "$arch" packages pool) >"$dir/Packages"
  gzip -9nkf "$dir/Packages"
done
rm -f "$repo/dists/$suite"/{Release,InRelease,Release.gpg}
apt-ftparchive \
  -o APT::FTPArchive::Release::Origin=sitegw -o APT::FTPArchive::Release::Label=sitegw \
  -o APT::FTPArchive::Release::Suite=$suite -o APT::FTPArchive::Release::Codename=$suite \
  -o "APT::FTPArchive::Release::Architectures=${archs[*]}" -o APT::FTPArchive::Release::Components=main \
  -o APT::FTPArchive::Release::Description='sitegw, the edge site gateway' \
  release "$repo/dists/$suite" >"$repo/Release.tmp"
mv "$repo/Release.tmp" "$repo/dists/$suite/Release"
gpg --batch --yes --local-user "$key" --clearsign -o "$repo/dists/$suite/InRelease" "$repo/dists/$suite/Release"
gpg --batch --yes --local-user "$key" --armor --detach-sign -o "$repo/dists/$suite/Release.gpg" "$repo/dists/$suite/Release"
gpg --batch --yes --export "$key" >"$repo/sitegw-archive-keyring.gpg"
gpg --batch --yes --armor --export "$key" >"$repo/sitegw-archive-keyring.asc"
echo "package:repo: $(find "$pool" -name '*.deb' | wc -l) package(s) in $repo, signed by $key" >&2
echo "$repo"
