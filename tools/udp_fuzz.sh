#!/bin/sh
# udp_fuzz.sh [SECONDS] [CORPUS_DIR] [LIBFUZZER_OPTION...] — builds the libFuzzer target of the udp packet
# parser and packet authentication (tests/udp_fuzz.c over src/vnic/udp_wire.h and
# src/vnic/udp_auth.c, with OpenSSL's libcrypto) with clang, ASan and UBSan, and runs it
# for SECONDS (default 60). CI runs the same target for 20 s as the test udp_fuzz.
# Everything it writes (binary, corpus, crash artifacts) goes under
# ${TMPDIR:-/tmp}/fmpl-udp-fuzz, never into the repository.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
corpus=${2:-}
[ $# -ge 2 ] && shift 2 || shift $#
out=${TMPDIR:-/tmp}/fmpl-udp-fuzz
mkdir -p "$out/artifacts"
# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Isrc -Iinclude $(pkg-config --cflags libcrypto libsodium) tests/udp_fuzz.c src/vnic/udp_auth.c \
    $(pkg-config --libs libcrypto libsodium) -o "$out/udp_fuzz"
corpus=${corpus:-$out/corpus}
mkdir -p "$corpus"
echo "udp_fuzz: crash artifacts (if any) in $out/artifacts/"
exec "$out/udp_fuzz" -max_total_time="$secs" -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$@" "$corpus"
