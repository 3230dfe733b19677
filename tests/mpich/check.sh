#!/usr/bin/env bash
# tests/mpich/check.sh RESULTS [LISTDIR] — judge a results file of run.sh against the
# pass lists LISTDIR/passlist-<folder>.txt (default: this folder). A pass list has one
# test a line, "KEY NP" as in the results (without the "folder/"); '#' starts a comment.
# Prints "folder: N of M pass (B built; L listed)" per folder, then every listed test
# that did not pass (status, or "not run"), and exits 1 if there is any. Passing tests
# not on a list are written, in list form, to passing-unlisted-<folder>.txt next to RESULTS.
# MPICH_LEFT_OUT: a file of "folder/KEY NP" lines left out of the run on purpose
# (MPICH_SUBSET=quick: long.txt); they are counted as such, not as "not run".
# MPICH_FOLDERS: the folders the run was asked for; only they are judged (a run of
# "errors" has not run the other lists' tests). Unset: every folder of RESULTS and of
# the pass lists.
set -euo pipefail
results=${1:?usage: check.sh RESULTS [LISTDIR]}
listdir=${2:-$(cd "$(dirname "$0")" && pwd)}
[ -f "$results" ] || { echo "check.sh: no results file $results" >&2; exit 2; }
if [ -n "${MPICH_FOLDERS:-}" ]; then
    read -r -a asked <<<"$MPICH_FOLDERS"
    folders=$(printf '%s\n' "${asked[@]}" | sort -u)
else
    folders=$( { awk '{ sub(/\/.*/, "", $1); print $1 }' "$results"
        for f in "$listdir"/passlist-*.txt; do
            if [ -f "$f" ]; then basename "$f" .txt | sed 's/^passlist-//'; fi
        done; } | sort -u)
fi
# Passing tests missing from a list go to RESULTS-dir/passing-unlisted-<folder>.txt,
# in pass-list form, to grow the lists from.
unlisted=$(dirname "$results")/passing-unlisted
bad=0
for folder in $folders; do
    list=$listdir/passlist-$folder.txt
    [ -f "$list" ] || list=/dev/null
    rm -f "$unlisted-$folder.txt"
    out=$(awk -v f="$folder" -v unlisted="$unlisted" -v listname="$(basename "$list")" '
        FILENAME == ARGV[3] {
            if ($0 !~ /^#/ && NF >= 2) leftout[$1 " " $2] = 1
            next
        }
        FILENAME == ARGV[1] {
            sub(/#.*/, "")
            if (NF >= 2) { want[f "/" $1 " " $2] = 1; nlisted++ }
            next
        }
        index($1, f "/") == 1 {
            n++
            st[$1 " " $2] = $3
            if ($3 == "pass") pass++
            if ($3 != "nobuild" && $3 != "skip") built++
            if ($3 == "skip") skipped++
        }
        END {
            printf "%-9s %d of %d pass (%d built and run, %d skipped; %s)\n", f ":", pass, n, built, skipped, (listname == "null" ? "no pass list" : (nlisted + 0) " on " listname)
            for (t in st)
                if (st[t] == "pass" && !(t in want)) {
                    k = t; sub("^" f "/", "", k)
                    print k > (unlisted "-" f ".txt"); nun++
                }
            if (nun) printf "  %d passing tests are not on the list: %s\n", nun, unlisted "-" f ".txt"
            for (t in want)
                if (!(t in st) && (t in leftout)) nleft++
                else if (!(t in st)) printf "  MUST PASS, not run: %s\n", t
                else if (st[t] != "pass") printf "  MUST PASS, %s: %s\n", st[t], t
            if (nleft) printf "  %d listed tests left out of this run (MPICH_LEFT_OUT)\n", nleft
        }' "$list" "$results" "${MPICH_LEFT_OUT:-/dev/null}")
    echo "$out"
    case $out in *"MUST PASS"*) bad=1 ;; esac
done
if [ $bad -ne 0 ]; then
    echo "check.sh: tests on the pass lists did not pass (logs next to $results, in logs/)"
    exit 1
fi
echo "check.sh: every listed test passed"
