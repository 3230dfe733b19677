#!/bin/sh
# tools_fmplcc.sh BINDIR SRC WORKDIR [README] — the build-tree fmplcc compiles and
# links a user program (-show, -c then link, one-step, -fmpl-static), which then runs
# as a singleton and, when fmplrun exists, with 2 ranks. With README, the first C
# example of that file is built and run with 3 ranks too (so the docs stay true).
set -eu
bindir=$1 src=$2 work=$3 readme=${4:-}
rm -rf "$work"
mkdir -p "$work"
cc="$bindir/fmplcc"

show=$("$cc" -show -o prog prog.c)
echo "fmplcc -show: $show"
case $show in *-lfmpl*) ;; *) echo "FAIL: -show lacks -lfmpl" >&2; exit 1 ;; esac
case $show in *-I*) ;; *) echo "FAIL: -show lacks -I" >&2; exit 1 ;; esac
cshow=$("$cc" -show -c prog.c)
case $cshow in *-lfmpl*) echo "FAIL: -c must not link: $cshow" >&2; exit 1 ;; esac

"$cc" -O2 -Wall -Wextra -Werror -c "$src" -o "$work/hello.o"
"$cc" -o "$work/hello_2step" "$work/hello.o"
"$cc" -O2 -o "$work/hello" "$src"
"$cc" -O2 -fmpl-static -o "$work/hello_static" "$src"

for p in hello hello_2step hello_static; do
    out=$("$work/$p")
    echo "$out"
    case $out in *"rank 0 of 1 ok"*) ;; *) echo "FAIL: $p as a singleton" >&2; exit 1 ;; esac
done
if [ -x "$bindir/fmplrun" ]; then
    out=$("$bindir/fmplrun" -n 2 --timeout 60 "$work/hello")
    echo "$out"
    n=$(printf '%s\n' "$out" | grep -c "of 2 ok")
    [ "$n" -eq 2 ] || { echo "FAIL: fmplrun -n 2 gave $n good ranks" >&2; exit 1; }
fi
if [ -n "$readme" ]; then
    awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' "$readme" >"$work/readme.c"
    [ -s "$work/readme.c" ] || { echo "FAIL: no C example in $readme" >&2; exit 1; }
    "$cc" -O2 -Wall -Wextra -Werror -o "$work/readme" "$work/readme.c"
    out=$("$bindir/fmplrun" -n 3 --timeout 60 "$work/readme")
    echo "$out"
    n=$(printf '%s\n' "$out" | grep -c "sum of ranks 3$")
    [ "$n" -eq 3 ] || { echo "FAIL: the README example gave $n good ranks of 3" >&2; exit 1; }
fi
rm -rf "$work"
echo "PASS"
