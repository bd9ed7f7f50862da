#!/usr/bin/env bash
# Renders the krew manifest from its template, krew/.krew.yaml, for the release archives in a
# directory, as krew-release-bot renders it: `{{ .TagName }}` becomes the tag, and each
# `{{ addURIAndSha "URL" .TagName | indent N }}` the lines `uri: URL` and `sha256: <digest>`,
# the digest of the archive in DIR named as URL's last segment. Prints the manifest on stdout.
#
# Usage: krew/manifest.sh --tag vX.Y.Z [--dist DIR] [--all] [--name NAME]
#   --tag vX.Y.Z  the release's tag (the manifest's spec.version)
#   --name NAME   the plugin's krew name instead of the template's `gc` (the fallback the
#                 template names, should the index refuse `gc`): metadata.name, and the
#                 completion helper's link in the caveats (kubectl_complete-<NAME, '-' as '_'>)
#   --dist DIR    where the archives are (default: target/dist; CARGO_TARGET_DIR is honoured)
#   --all         every platform of the template must have its archive (the release workflow);
#                 without it, platforms whose archive is not in DIR are left out and named on
#                 stderr (krew/release.sh, which builds this machine's archive only)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}
tag="" dist="$target_dir/dist" all=0 name=gc
while [ $# -gt 0 ]; do
    case "$1" in
        --tag) tag=${2:?--tag needs a tag}; shift 2 ;;
        --dist) dist=${2:?--dist needs a directory}; shift 2 ;;
        --all) all=1; shift ;;
        --name) name=${2:?--name needs a plugin name}; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument: $1 (see --help)" >&2; exit 1 ;;
    esac
done
# krew parses spec.version as semver with a leading v
[[ $tag =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] \
    || { echo "error: --tag ${tag@Q} is not vMAJOR.MINOR.PATCH" >&2; exit 1; }
# krew's IsSafePluginName, lower case as the index asks
[[ $name =~ ^[a-z0-9][a-z0-9-]*$ ]] || { echo "error: --name ${name@Q} is not a krew plugin name" >&2; exit 1; }
[ -d "$dist" ] || { echo "error: $dist is not a directory" >&2; exit 1; }

sha_of() {
    if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}
sums=""
for f in "$dist"/*.tar.gz "$dist"/*.zip; do
    [ -f "$f" ] && sums+="$(basename "$f") $(sha_of "$f")"$'\n'
done

# One platform block at a time (from "  - selector:" to the next), kept when its archive is there.
awk -v tag="$tag" -v all="$all" -v sums="$sums" -v name="$name" '
BEGIN {
    n = split(sums, lines, "\n")
    for (i = 1; i <= n; i++) if (split(lines[i], f, " ") == 2) sha[f[1]] = f[2]
}
function flush() {
    if (inblock) {
        if (keep) { printf "%s", block; kept++ }
        else missing = missing " " asset
    }
    block = ""; inblock = 0; keep = 0; asset = "(no addURIAndSha)"
}
!started && /^#/ { next }                       # the template'\''s own comments
{ started = 1; gsub(/\{\{ *\.TagName *\}\}/, tag) }
/^  name: gc$/ { $0 = "  name: " name }
/\/bin\/kubectl_complete-gc"/ { helper = "kubectl_complete-" name; gsub(/-/, "_", helper); sub(/^kubectl_complete_/, "kubectl_complete-", helper); sub(/\/bin\/kubectl_complete-gc"/, "/bin/" helper "\"") }
/`kubectl gc / { gsub(/`kubectl gc /, "`kubectl " name " ") }
/^  - selector:/ { flush(); inblock = 1 }
/^[^ ]/ || /^  [^ -]/ { flush() }               # a key outside spec.platforms ends the last block
match($0, /\{\{ *addURIAndSha "[^"]*" *\.TagName *(\| *indent *[0-9]+ *)?\}\}/) {
    pad = substr($0, 1, RSTART - 1)
    url = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", url); sub(/".*$/, "", url)
    asset = url; sub(/.*\//, "", asset)
    if (asset in sha) { keep = 1; $0 = pad "uri: " url "\n" pad "sha256: " sha[asset] }
}
{ if (inblock) block = block $0 "\n"; else print }
END {
    flush()
    if (missing != "") {
        if (all) { print "error: no archive for:" missing > "/dev/stderr"; exit 1 }
        print "note: the manifest leaves out the platforms without an archive here:" missing > "/dev/stderr"
    }
    if (!kept) { print "error: no archive of the template'\''s platforms is in the directory" > "/dev/stderr"; exit 1 }
}' "$root/krew/.krew.yaml"
