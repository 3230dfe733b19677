#!/bin/sh
# tools_readme_env.sh SRCDIR README — every environment variable the sources name as a
# string literal ("FMPL_..." in src/, read with base_env_* or getenv) is documented in
# README (as `NAME`), so the table of settings cannot fall behind the code.
set -eu
src=$1 readme=$2
names=$(grep -rhoE '"FMPL_[A-Z0-9_]+"' "$src" --include='*.c' | tr -d '"' | sort -u)
[ -n "$names" ] || { echo "FAIL: no FMPL_* names found in $src" >&2; exit 1; }
missing=0
for n in $names; do
    if ! grep -q "\`$n\`" "$readme"; then
        echo "FAIL: $n is read in $src but not documented in $readme" >&2
        missing=1
    fi
done
[ $missing -eq 0 ] || exit 1
echo "$(printf '%s\n' "$names" | wc -l) variables, all documented"
echo "PASS"
