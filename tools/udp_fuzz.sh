#!/bin/sh
# udp_fuzz.sh [SECONDS] [CORPUS_DIR] — builds the libFuzzer target of the udp packet
# parser (tests/udp_fuzz.c over src/vnic/udp_wire.h) with clang, ASan and UBSan, and runs
# it for SECONDS (default 60). CI runs the same target for 20 s as the test udp_fuzz.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
out=${TMPDIR:-/tmp}/fmpl-udp-fuzz
mkdir -p "$out"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Isrc -Iinclude tests/udp_fuzz.c -o "$out/udp_fuzz"
corpus=${2:-$out/corpus}
mkdir -p "$corpus"
exec "$out/udp_fuzz" -max_total_time="$secs" -rss_limit_mb=1024 -print_final_stats=1 "$corpus"
