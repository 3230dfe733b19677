#!/usr/bin/env bash
# tests/mpich/fetch.sh [CACHE] — fetch MPICH's test suite (test/mpi of Debian's `mpich`
# source package) into CACHE (default: $FMPL_MPICH_CACHE, else ~/.cache/fmpl-mpich).
# Idempotent: a cached, unpacked tree is reused. Adds a deb-src entry for Debian's
# repositories (derived from the machine's deb entries) when apt has none. Prints the
# path of test/mpi on its last line. Never put the source inside the repository.
set -euo pipefail
cache=${1:-${FMPL_MPICH_CACHE:-$HOME/.cache/fmpl-mpich}}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
# An unpacked tree with test/mpi/configure: done.
for d in "$cache"/mpich-*/test/mpi; do
    if [ -x "$d/configure" ] && [ -f "$cache/.unpacked" ]; then
        echo "$d"
        exit 0
    fi
done

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
# dpkg-source (dpkg-dev) and xz unpack the source package.
if ! command -v dpkg-source >/dev/null || ! command -v xz >/dev/null; then
    echo "fetch.sh: installing dpkg-dev and xz-utils" >&2
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        dpkg-dev xz-utils >/dev/null
fi
have_src() { apt-cache showsrc mpich 2>/dev/null | grep -q '^Package: mpich'; }
if ! ls "$cache"/mpich_*.dsc >/dev/null 2>&1; then
    if ! have_src; then
        # Derive deb-src entries from the existing Debian deb entries (both formats).
        list=/etc/apt/sources.list.d/fmpl-deb-src.list
        echo "fetch.sh: no deb-src for mpich; writing $list from the deb entries" >&2
        {
            # one-line format
            cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
                grep -E '^deb\s' | grep -E 'debian\.org|debian-security' |
                sed -E 's/^deb(\s)/deb-src\1/' || true
            # deb822 format
            for f in /etc/apt/sources.list.d/*.sources; do
                [ -f "$f" ] || continue
                awk '
                    /^[[:space:]]*$/ { flush(); next }
                    /^Types:/ { types=$0; next }
                    /^URIs:/ { uris=$2; next }
                    /^Suites:/ { $1=""; suites=$0; next }
                    /^Components:/ { $1=""; comps=$0; next }
                    /^Signed-By:/ { sb=$2; next }
                    END { flush() }
                    function flush(   n, s, i) {
                        if (types ~ /deb([^-]|$)/ && uris ~ /debian\.org/) {
                            n = split(suites, s, " ")
                            for (i = 1; i <= n; i++)
                                printf "deb-src %s%s %s%s\n", (sb ? "[signed-by=" sb "] " : ""), uris, s[i], comps
                        }
                        types=""; uris=""; suites=""; comps=""; sb=""
                    }' "$f"
            done
        } | sort -u | $sudo tee "$list" >/dev/null
        $sudo apt-get update -qq
        have_src || { echo "fetch.sh: apt still has no source for mpich (see $list)" >&2; exit 1; }
    fi
    (cd "$cache" && apt-get source --download-only mpich >&2)
fi
dsc=$(ls "$cache"/mpich_*.dsc | sort -V | tail -n 1)
rm -rf "$cache"/mpich-[0-9]*/
(cd "$cache" && dpkg-source --no-check -x "$(basename "$dsc")" >&2)
touch "$cache/.unpacked"
ls -d "$cache"/mpich-*/test/mpi | tail -n 1
