#!/bin/sh
# tools_expect.sh PATTERN... -- COMMAND [ARGS...]
# Runs COMMAND, shows its output, and passes when it exits 0 and every extended
# regular expression PATTERN matches at least one line of its standard output.
set -u
npat=0
for a in "$@"; do
    [ "$a" = "--" ] && break
    npat=$((npat + 1))
done
[ $npat -lt $# ] || { echo "usage: tools_expect.sh PATTERN... -- COMMAND..." >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
pats=$(i=0; for a in "$@"; do i=$((i + 1)); [ $i -le $npat ] && printf '%s\n' "$a"; done)
shift $((npat + 1))
"$@" >"$out"
rc=$?
cat "$out"
if [ $rc -ne 0 ]; then
    echo "FAIL: '$*' exited with status $rc" >&2
    exit 1
fi
printf '%s\n' "$pats" | while IFS= read -r p; do
    grep -Eq -e "$p" "$out" || { echo "FAIL: no line matches /$p/" >&2; exit 1; }
done || exit 1
echo "tools_expect: ok"
