#!/usr/bin/env bash
# udp_compare.sh [BUILD] — FMPL's udp transport (FMPL_TRANSPORT=udp, loopback) against
# Open MPI's TCP path on loopback (--mca btl tcp,self --mca btl_tcp_if_include lo), in the
# same run (issue 5, item 7). Needs mpirun.openmpi (apt-get install openmpi-bin
# libopenmpi-dev) and a build with bench/ (make). Parts (UDP_COMPARE_PARTS, default
# "lat rma loss mem"):
#   lat:  UDP_COMPARE_REPS rounds (default 3), alternating: 8-byte one-way latency, 1 MiB
#         ping-pong and streaming bandwidth of fmpl_pingpong (native API) and of
#         mpi_pingpong.fmpl (our MPI face) over udp, of mpi_pingpong.openmpi over TCP (same
#         output format), and of fmpl_pingpong at 1% injected loss (FMPL_UDP_LOSS=0.01).
#         Prints the medians and the ratios the udp transport aims at: latency <= 0.6x
#         Open MPI TCP, 1 MiB bandwidth >= 0.8x, and at 1% loss >= 50% of the loss-free
#         bandwidth; and fmpl_pingpong with FMPL_UDP_AUTH=off (the cost of authentication);
#         and udp_floor (the kernel's UDP path alone, no library) at 1 MiB, the floor under
#         any UDP transport's ping-pong.
#   rma:  UDP_COMPARE_REPS rounds, alternating: the passive-target 8-byte figures of
#         mpi_rma (op + MPI_Win_flush; put, get, fetch_and_op, compare_and_swap,
#         accumulate) of ours over udp and of Open MPI over TCP in the two settings of
#         Open MPI 4.1.4 that run one-sided communication over TCP at all: osc/pt2pt over
#         pml ob1 + btl tcp (--mca pml ob1 --mca btl tcp,self --mca osc pt2pt) and osc/ucx
#         with UCX on its tcp transport (--mca osc ucx -x UCX_TLS=tcp,self); osc/rdma over
#         btl tcp fails in MPI_Win_allocate (MPI_ERR_WIN), and osc/sm would use shared
#         memory. Medians, and ours / the better of the two (target <= 0.6 for put, get,
#         fetch_and_op).
#   loss: 1 MiB streaming bandwidth of fmpl_pingpong at 0, 0.1%, 1% and 5% injected loss
#         (median of UDP_COMPARE_REPS runs each), and the fraction of the loss-free figure.
#   mem:  peak resident set (VmHWM) per process of mpi_allpeers (init, 8-byte messages to
#         and from every peer, finalize) at 2, 8, 16 and 32 ranks (UDP_COMPARE_NPS), ours
#         over udp and Open MPI over TCP (--oversubscribe); median and largest over the
#         ranks, KiB (the paper's table 3).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${UDP_COMPARE_REPS:-3}
parts=${UDP_COMPARE_PARTS:-lat rma loss mem}
nps=${UDP_COMPARE_NPS:-2 8 16 32}
bin=$build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi_tcp=(mpirun.openmpi --mca btl "tcp,self" --mca btl_tcp_if_include lo)
# The median of a[1..n] in awk, for the parts' tables.
awk_median='function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
    if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }'
for p in udp_floor fmpl_pingpong fmplrun mpi_pingpong.fmpl mpi_pingpong.openmpi mpi_allpeers.fmpl \
    mpi_allpeers.openmpi mpi_rma.fmpl mpi_rma.openmpi; do
    [ -x "$bin/$p" ] || { echo "udp_compare: $bin/$p missing (build first; Open MPI: mpicc.openmpi)" >&2; exit 1; }
done
command -v mpirun.openmpi >/dev/null || { echo "udp_compare: mpirun.openmpi missing" >&2; exit 1; }
tmp=$(mktemp /tmp/udp_compare.XXXXXX)
trap 'rm -f "$tmp"' EXIT

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }

echo "# udp_compare: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)"
echo "# $("$bin/fmplrun" --version 2>/dev/null | head -1 || echo FMPL); $(mpirun.openmpi --version 2>/dev/null | head -1)"

if [[ " $parts " == *" lat "* ]]; then
    # row NAME OUTPUT -> "lat pp stream" of 8 B (lat) and 1 MiB (pp, stream)
    parse() {
        awk '$1 == "8" && $2 == "B" { lat = $3 } $1 == "1" && $2 == "MiB" { pp = $4; st = $5 }
             END { print lat, pp, st }'
    }
    args=("--sizes=8,1048576" --reps=5)
    : > "$tmp"
    for _ in $(seq "$reps"); do
        o=$(timeout 300 "${ompi_tcp[@]}" -n 2 "$bin/mpi_pingpong.openmpi" "${args[@]}" --bench=pingpong,stream | parse)
        echo "ompi_tcp $o" >> "$tmp"
        o=$(FMPL_TRANSPORT=udp timeout 300 "$bin/fmplrun" -n 2 "$bin/fmpl_pingpong" "${args[@]}" | parse)
        echo "fmpl_udp $o" >> "$tmp"
        o=$(FMPL_TRANSPORT=udp timeout 300 "$bin/fmplrun" -n 2 "$bin/mpi_pingpong.fmpl" "${args[@]}" --bench=pingpong,stream | parse)
        echo "mpi_udp $o" >> "$tmp"
        o=$(FMPL_TRANSPORT=udp FMPL_UDP_LOSS=0.01 timeout 300 "$bin/fmplrun" -n 2 \
            "$bin/fmpl_pingpong" "${args[@]}" | parse)
        echo "fmpl_udp_loss1 $o" >> "$tmp"
        o=$(FMPL_TRANSPORT=udp FMPL_UDP_AUTH=off timeout 300 "$bin/fmplrun" -n 2 \
            "$bin/fmpl_pingpong" "${args[@]}" | parse)
        echo "fmpl_udp_noauth $o" >> "$tmp"
        # the kernel's UDP path alone (bench/udp_floor.c): the 1 MiB ping-pong's floor
        o=$(timeout 300 "$bin/udp_floor" --size=1048576 --iters=500 |
            awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "GB/s") print "nan", $i, "nan" }')
        echo "udp_floor $o" >> "$tmp"
    done
    echo "# rounds (name, 8 B one-way latency us, 1 MiB ping-pong GB/s, 1 MiB stream GB/s):"
    cat "$tmp"
    awk "$awk_median"'
    { n[$1]++; L[$1, n[$1]] = $2; P[$1, n[$1]] = $3; S[$1, n[$1]] = $4 }
    END {
        split("ompi_tcp fmpl_udp mpi_udp fmpl_udp_loss1 fmpl_udp_noauth udp_floor", names, " ")
        for (k = 1; k <= 6; k++) { m = names[k]; c = n[m]
            for (i = 1; i <= c; i++) { l[i] = L[m, i]; p[i] = P[m, i]; s[i] = S[m, i] }
            lat[m] = med(l, c); pp[m] = med(p, c); st[m] = med(s, c)
            printf "%-16s latency %9.3f us   pp %7.3f GB/s   stream %7.3f GB/s\n", m, lat[m], pp[m], st[m] }
        printf "ratios: latency udp/ompi_tcp %.2f, MPI face %.2f (target <= 0.6); 1 MiB stream udp/ompi_tcp %.2f, MPI face %.2f, ping-pong %.2f (target >= 0.8); 1%% loss / loss-free stream %.2f (target >= 0.5)\n",
            lat["fmpl_udp"] / lat["ompi_tcp"], lat["mpi_udp"] / lat["ompi_tcp"],
            st["fmpl_udp"] / st["ompi_tcp"], st["mpi_udp"] / st["ompi_tcp"],
            pp["fmpl_udp"] / pp["ompi_tcp"], st["fmpl_udp_loss1"] / st["fmpl_udp"]
        printf "authentication (FMPL_UDP_AUTH on / off, native): latency %.2f, ping-pong %.2f, stream %.2f\n",
            lat["fmpl_udp"] / lat["fmpl_udp_noauth"], pp["fmpl_udp"] / pp["fmpl_udp_noauth"],
            st["fmpl_udp"] / st["fmpl_udp_noauth"]
        printf "1 MiB ping-pong against the bare kernel UDP path (udp_floor, 65000-byte datagrams, no protocol): Open MPI TCP %.2f, ours %.2f, MPI face %.2f\n",
            pp["ompi_tcp"] / pp["udp_floor"], pp["fmpl_udp"] / pp["udp_floor"], pp["mpi_udp"] / pp["udp_floor"]
    }' "$tmp"
fi

if [[ " $parts " == *" rma "* ]]; then
    # 8-byte rows of mpi_rma --csv (impl,bench,mem,np,size,metric,value) -> "impl bench value"
    rma_rows() { awk -F, '$5 == 8 && $6 == "latency_us" { print $1, $2, $7 }'; }
    args=(--csv --mode=passive --sizes=8 --reps=5)
    : > "$tmp"
    for _ in $(seq "$reps"); do
        {
            FMPL_TRANSPORT=udp timeout 300 "$bin/fmplrun" -n 2 "$bin/mpi_rma.fmpl" "${args[@]}" \
                --impl=fmpl_udp | rma_rows
            timeout 300 "${ompi_tcp[@]}" --mca pml ob1 --mca osc pt2pt -n 2 \
                "$bin/mpi_rma.openmpi" "${args[@]}" --impl=ompi_tcp_pt2pt | rma_rows
            timeout 300 "${ompi_tcp[@]}" --mca osc ucx -x UCX_TLS=tcp,self -n 2 \
                "$bin/mpi_rma.openmpi" "${args[@]}" --impl=ompi_tcp_ucx | rma_rows
        } >> "$tmp"
    done
    echo "# one-sided, 8 B op + MPI_Win_flush, passive target, latency in us: medians of $reps rounds"
    echo "# (Open MPI over TCP: osc pt2pt over ob1/tcp, and osc ucx with UCX_TLS=tcp,self)"
    awk "$awk_median"'
    { k = $1 SUBSEP $2; n[k]++; V[k, n[k]] = $3 }
    END {
        split("put_lat get_lat fetch_and_op compare_and_swap accumulate", bs, " ")
        split("fmpl_udp ompi_tcp_pt2pt ompi_tcp_ucx", im, " ")
        printf "%-18s %10s %16s %13s %8s\n", "", "fmpl_udp", "ompi_tcp_pt2pt", "ompi_tcp_ucx", "ratio"
        for (b = 1; b <= 5; b++) {
            for (i = 1; i <= 3; i++) { k = im[i] SUBSEP bs[b]; c = n[k]
                for (j = 1; j <= c; j++) v[j] = V[k, j]
                m[i] = c ? med(v, c) : "nan" }
            best = m[2] + 0 < m[3] + 0 ? m[2] : m[3]
            printf "%-18s %10.2f %16.2f %13.2f %8.2f%s\n", bs[b], m[1], m[2], m[3], m[1] / best,
                b <= 3 ? "  (target <= 0.6)" : ""
        }
    }' "$tmp"
fi

if [[ " $parts " == *" loss "* ]]; then
    echo "# 1 MiB streaming bandwidth of fmpl_pingpong over udp under injected loss (FMPL_UDP_LOSS), median of $reps runs:"
    base=""
    for loss in 0 0.001 0.01 0.05; do
        : > "$tmp"
        for _ in $(seq "$reps"); do
            FMPL_TRANSPORT=udp FMPL_UDP_LOSS=$loss timeout 600 "$bin/fmplrun" -n 2 \
                "$bin/fmpl_pingpong" --sizes=1048576 --reps=5 |
                awk '$1 == "1" && $2 == "MiB" { print $5 }' >> "$tmp"
        done
        m=$(median < "$tmp")
        [ -n "$base" ] || base=$m
        awk -v l="$loss" -v m="$m" -v b="$base" -v all="$(tr '\n' ' ' < "$tmp")" \
            'BEGIN { printf "loss %5.1f%%  stream %7.3f GB/s  (%3.0f%% of loss-free)  runs: %s\n", 100 * l, m, 100 * m / b, all }'
    done
fi

if [[ " $parts " == *" mem "* ]]; then
    echo "# peak RSS per process (VmHWM, KiB) of mpi_allpeers: median and largest over the ranks"
    for np in $nps; do
        fm=$(FMPL_TRANSPORT=udp timeout 600 "$bin/fmplrun" -n "$np" "$bin/mpi_allpeers.fmpl" --impl=fmpl_udp |
            awk -F, '$2 == "rss_allpeers" { print $7 }')
        om=$(timeout 600 "${ompi_tcp[@]}" --oversubscribe -n "$np" "$bin/mpi_allpeers.openmpi" --impl=ompi_tcp |
            awk -F, '$2 == "rss_allpeers" { print $7 }')
        fmed=$(echo "$fm" | median)
        fmax=$(echo "$fm" | sort -g | tail -1)
        omed=$(echo "$om" | median)
        omax=$(echo "$om" | sort -g | tail -1)
        awk -v np="$np" -v a="$fmed" -v b="$fmax" -v c="$omed" -v d="$omax" \
            'BEGIN { printf "np %3d  fmpl_udp median %7d max %7d   ompi_tcp median %7d max %7d   ratio (median) %.2f\n", np, a, b, c, d, a / c }'
    done
fi
