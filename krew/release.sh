#!/usr/bin/env bash
# Builds kubectl-gc and packs the release archive that krew installs:
#
#   target/dist/kubectl-gc_v<version>_<os>_<arch>.tar.gz    (.zip for windows)
#
# holding exactly kubectl-gc, kubectl_complete-gc and LICENSE at the top level (.exe on
# windows). Prints "<sha256>  <archive>" on stdout (progress goes to stderr) and writes it
# beside the archive as <archive>.sha256. Then renders the krew manifest for the archives in
# the output directory (krew/manifest.sh) as target/dist/gc.yaml: its uri names the archive as
# the release publishes it and its sha256 is the archive's, so
#   kubectl krew install --manifest=target/dist/gc.yaml --archive=<archive>
# installs exactly what was built (the release workflow runs this script once per platform,
# then krew/manifest.sh --all over every archive).
#
# Usage: krew/release.sh [--target TRIPLE] [--bin-dir DIR] [--out DIR]
#   --target TRIPLE  cargo build --profile release-lto --target TRIPLE; os/arch follow the triple
#                    (default: the host)
#   --bin-dir DIR    do not build: pack the binaries already in DIR (SKIP_BUILD=1 is the
#                    same with DIR = target/release-lto, or target/TRIPLE/release-lto)
#   --out DIR        where the archive goes (default: target/dist; CARGO_TARGET_DIR is honoured)
# The tarball is reproducible with GNU tar: sorted names, owner 0, mtime SOURCE_DATE_EPOCH
# (default: the last commit's time). GZIP_LEVEL (default 9) trades size for speed (tests use 1).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

target_dir=${CARGO_TARGET_DIR:-$root/target}
target="" bin_dir="" out="$target_dir/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --target) target=${2:?--target needs a triple}; shift 2 ;;
        --bin-dir) bin_dir=${2:?--bin-dir needs a directory}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument: $1 (see --help)" >&2; exit 1 ;;
    esac
done

# the [package] version of Cargo.toml
version=$(awk -F'"' '/^\[/{p = ($0 == "[package]")} p && /^version *=/{print $2; exit}' Cargo.toml)
[ -n "$version" ] || { echo "error: no [package] version in Cargo.toml" >&2; exit 1; }

platform_of_triple() {
    local t=$1 os arch
    case "$t" in
        x86_64-*|amd64-*) arch=amd64 ;;
        aarch64-*|arm64-*) arch=arm64 ;;
        *) echo "error: no krew arch for target $t" >&2; exit 1 ;;
    esac
    case "$t" in
        *-linux-*) os=linux ;;
        *-apple-darwin) os=darwin ;;
        *-windows-*) os=windows ;;
        *) echo "error: no krew os for target $t" >&2; exit 1 ;;
    esac
    echo "$os $arch"
}

if [ -n "$target" ]; then
    read -r os arch <<<"$(platform_of_triple "$target")"
else
    case "$(uname -s)" in
        Linux) os=linux ;;
        Darwin) os=darwin ;;
        MINGW*|MSYS*|CYGWIN*) os=windows ;;
        *) echo "error: no krew os for $(uname -s)" >&2; exit 1 ;;
    esac
    case "$(uname -m)" in
        x86_64|amd64) arch=amd64 ;;
        aarch64|arm64) arch=arm64 ;;
        *) echo "error: no krew arch for $(uname -m)" >&2; exit 1 ;;
    esac
fi
exe=""
[ "$os" = windows ] && exe=.exe

if [ -z "$bin_dir" ]; then
    bin_dir="$target_dir/${target:+$target/}release-lto"
    if [ "${SKIP_BUILD:-}" != 1 ]; then
        echo "building kubectl-gc $version for $os/$arch (profile release-lto: thin LTO)" >&2
        cargo build --profile release-lto --locked ${target:+--target "$target"} --bin kubectl-gc --bin kubectl_complete-gc >&2
    fi
fi
for b in kubectl-gc kubectl_complete-gc; do
    [ -f "$bin_dir/$b$exe" ] || { echo "error: $bin_dir/$b$exe not found (build first, or pass --bin-dir)" >&2; exit 1; }
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
files=("kubectl-gc$exe" "kubectl_complete-gc$exe" LICENSE)
cp "$bin_dir/kubectl-gc$exe" "$bin_dir/kubectl_complete-gc$exe" "$stage/"
cp "$root/LICENSE" "$stage/LICENSE"
chmod 0755 "$stage/kubectl-gc$exe" "$stage/kubectl_complete-gc$exe"
chmod 0644 "$stage/LICENSE"
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}

name="kubectl-gc_v${version}_${os}_${arch}"
if [ "$os" = windows ]; then
    archive="$out/$name.zip"
    rm -f "$archive"
    # zip where it is installed; the Windows runners of the release workflow have 7-Zip instead
    if command -v zip >/dev/null; then
        (cd "$stage" && touch -d "@$epoch" "${files[@]}" 2>/dev/null; zip -q -X "$archive" "${files[@]}")
    else
        (cd "$stage" && 7z a -tzip -bd -bso0 "$archive" "${files[@]}" >&2)
    fi
else
    archive="$out/$name.tar.gz"
    if tar --version 2>/dev/null | grep -q 'GNU tar'; then
        tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - "${files[@]}" | gzip -n "-${GZIP_LEVEL:-9}" >"$archive"
    else
        tar -C "$stage" -cf - "${files[@]}" | gzip -n "-${GZIP_LEVEL:-9}" >"$archive"
    fi
fi

if command -v sha256sum >/dev/null; then
    sum=$(sha256sum "$archive" | cut -d' ' -f1)
else
    sum=$(shasum -a 256 "$archive" | cut -d' ' -f1)
fi
echo "$sum  $(basename "$archive")" >"$archive.sha256"
echo "packed $(basename "$archive"): ${files[*]}" >&2
"$root/krew/manifest.sh" --tag "v$version" --dist "$out" >"$out/gc.yaml.tmp"
mv "$out/gc.yaml.tmp" "$out/gc.yaml"
echo "wrote $out/gc.yaml (the krew manifest of the archives in $out)" >&2
echo "$sum  $archive"
