#!/bin/sh
# tools_install.sh BUILDDIR SRC WORKDIR — `cmake --install` into a fresh prefix, then a
# user program built against the installed tree with pkg-config and with the installed
# fmplcc; both run (singleton, and with the installed fmplrun -n 2).
set -eu
build=$1 src=$2 work=$3
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

for f in include/fmpl.h include/fmpl_errors.h bin/fmplcc bin/fmplrun bin/fmpl-info; do
    [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed" >&2; cat "$work/install.log"; exit 1; }
done
pc=$(find "$prefix" -name fmpl.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: fmpl.pc not installed" >&2; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
for f in libfmpl.a libfmpl.so; do
    [ -e "$libdir/$f" ] || { echo "FAIL: $libdir/$f not installed" >&2; exit 1; }
done

# The installed fmplcc points into the prefix, not into the build tree.
show=$("$prefix/bin/fmplcc" -show x.c)
echo "installed fmplcc -show: $show"
srcdir=$(cd "$(dirname "$src")/.." && pwd)
case $show in *"-L$build/lib"* | *"-I$srcdir/include"*)
    echo "FAIL: installed fmplcc refers to the build or source tree" >&2; exit 1 ;;
esac
case $show in *"-I$prefix/include"*) ;; *) echo "FAIL: installed fmplcc misses the prefix" >&2; exit 1 ;; esac

# pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cflags=$(pkg-config --cflags fmpl)
libs=$(pkg-config --libs fmpl)
echo "pkg-config: $cflags $libs"
[ "$(pkg-config --modversion fmpl)" = "$(sed -n 's/^#define FMPL_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/fmpl.h")" ] ||
    { echo "FAIL: pkg-config version differs from fmpl.h" >&2; exit 1; }
# shellcheck disable=SC2086
${FMPL_CC:-${CC:-cc}} $cflags -o "$work/hello_pc" "$src" $libs
"$prefix/bin/fmplcc" -o "$work/hello_cc" "$src"

LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/hello_pc" | grep "rank 0 of 1 ok"
"$work/hello_cc" | grep "rank 0 of 1 ok"
n=$("$prefix/bin/fmplrun" -n 2 --timeout 60 "$work/hello_cc" | grep -c "of 2 ok")
[ "$n" -eq 2 ] || { echo "FAIL: installed fmplrun -n 2 gave $n good ranks" >&2; exit 1; }
"$prefix/bin/fmpl-info" --version | grep "^FMPL "

# A staged install (DESTDIR) keeps the final prefix in the generated files.
DESTDIR="$work/stage" cmake --install "$build" --prefix /opt/fmpl >/dev/null
grep -q "fmpl_incdir='/opt/fmpl/include'" "$work/stage/opt/fmpl/bin/fmplcc" ||
    { echo "FAIL: DESTDIR install of fmplcc" >&2; exit 1; }
rm -rf "$work"
echo "PASS"
