/* udp_fuzz.c — the packet parser of the udp transport (udp_wire.h) against arbitrary
 * bytes. Built two ways:
 *   - as a libFuzzer target (clang -fsanitize=fuzzer,address,undefined; tests/udp.cmake
 *     builds it when clang supports it, and the test udp_fuzz runs it for 20 s);
 *   - with UDP_FUZZ_MAIN (any compiler, test udp_wire): a main that feeds the same entry
 *     point valid packets, every truncation of them, bit flips and random bytes, and
 *     checks the verdicts that are known (valid accepted, flipped refused, short
 *     refused as truncated, both packets of a bundle accepted after udp_part splits it).
 * The entry point checks the parser's promises: never reads outside the datagram (the
 * sanitizers see that), accepts only what it can describe consistently. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnic/udp_wire.h"

#define SECRET 0x0123456789abcdefull
#define ME 3u
#define SIZE 8u
#define MAXPAY 65000u

static int parse_checked(const uint8_t *data, size_t size)
{
    /* a private copy of exactly size bytes, so a read past the end is caught */
    uint8_t *p = malloc(size ? size : 1);
    if (!p)
        abort();
    memcpy(p, data, size);
    udp_parsed_t m;
    int rc = udp_parse(p, size, SECRET, ME, SIZE, MAXPAY, &m);
    if (rc == UDP_PARSE_OK) {
        if (m.h.src >= SIZE || m.h.src == ME || m.h.dst != ME || m.h.type == 0 ||
            m.h.type >= UDP_T_MAX || m.h.len != size - sizeof(udp_hdr_t))
            abort();
        if (m.h.type == UDP_T_DATA) {
            if ((const uint8_t *)m.payload != p + UDP_HDRS || m.op.len != size - UDP_HDRS ||
                m.op.kind == 0 || m.op.kind >= UDP_OP_MAX)
                abort();
            volatile uint8_t sink = 0;
            for (size_t i = 0; i < m.op.len; i++)
                sink ^= ((const uint8_t *)m.payload)[i];
            (void)sink;
        } else if (size != sizeof(udp_hdr_t)) {
            abort();
        }
    }
    free(p);
    return rc;
}

/* Splits a datagram into its packets (udp_part, bundles) and parses each; returns how
 * many were accepted. Every part lies inside the datagram and the walk always advances. */
static int parse_parts(const uint8_t *data, size_t size, int *parts)
{
    int ok = 0;
    *parts = 0;
    size_t off = 0;
    while (off < size) {
        size_t next, k = udp_part(data + off, size - off, &next);
        if (k > size - off || next == 0 || next > size - off || k > next)
            abort();
        if (parse_checked(data + off, k) == UDP_PARSE_OK)
            ok++;
        (*parts)++;
        off += next;
    }
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int parts;
    parse_parts(data, size, &parts);
    /* the same bytes with a valid secret and checksum, so the fuzzer reaches the field
     * checks behind them */
    if (size >= sizeof(udp_hdr_t) && size <= 70000) {
        uint8_t *q = malloc(size);
        if (!q)
            abort();
        memcpy(q, data, size);
        udp_hdr_t h;
        memcpy(&h, q, sizeof h);
        h.secret = SECRET;
        if (data[0] & 1)
            h.len = (uint32_t)(size - sizeof h);
        memcpy(q, &h, sizeof h);
        udp_seal((udp_hdr_t *)(void *)q, size, SECRET);
        parse_parts(q, size, &parts);
        free(q);
    }
    return 0;
}

#ifdef UDP_FUZZ_MAIN
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                  \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    static uint8_t buf[2048], bun[4096];
    long accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        /* a valid packet: control or DATA with a known op */
        size_t n;
        udp_hdr_t h;
        memset(&h, 0, sizeof h);
        h.secret = SECRET;
        h.version = UDP_WIRE_VERSION;
        h.src = (uint32_t)(next() % SIZE);
        if (h.src == ME)
            h.src = 0;
        h.dst = ME;
        if (iter & 1) {
            h.type = UDP_T_DATA;
            h.seq = 1 + (uint32_t)(next() % 1000);
            udp_op_t o;
            memset(&o, 0, sizeof o);
            o.kind = (uint8_t)(1 + next() % (UDP_OP_MAX - 1));
            size_t pay = (o.kind == UDP_OP_AMO || o.kind == UDP_OP_AMORESP || o.kind == UDP_OP_DONE)
                             ? 0
                         : o.kind == UDP_OP_GETREQ ? 16 * (1 + next() % 8)
                                                   : next() % 1500;
            o.len = (uint32_t)pay;
            n = UDP_HDRS + pay;
            memcpy(buf + sizeof h, &o, sizeof o);
            for (size_t i = 0; i < pay; i++)
                buf[UDP_HDRS + i] = (uint8_t)next();
        } else {
            h.type = (uint8_t)(UDP_T_ACK + next() % (UDP_T_MAX - UDP_T_ACK));
            n = sizeof h;
        }
        h.len = (uint32_t)(n - sizeof h);
        memcpy(buf, &h, sizeof h);
        udp_seal((udp_hdr_t *)(void *)buf, n, SECRET);
        CHECK(parse_checked(buf, n) == UDP_PARSE_OK);
        accepted++;
        /* a bundle: this packet with UDP_HF_MORE, padding to 8, then a copy of it; both
         * parts are accepted, and a MORE flag with nothing after it changes nothing */
        {
            udp_hdr_t b;
            memcpy(&b, buf, sizeof b);
            b.pad0 |= UDP_HF_MORE;
            memcpy(bun, buf, n);
            memcpy(bun, &b, sizeof b);
            udp_seal((udp_hdr_t *)(void *)bun, n, SECRET);
            size_t at = (n + 7) & ~(size_t)7;
            memset(bun + n, 0, at - n);
            memcpy(bun + at, buf, n);
            int parts;
            CHECK(parse_parts(bun, at + n, &parts) == 2 && parts == 2);
            CHECK(parse_parts(bun, n, &parts) == 1 && parts == 1);
            /* a second part cut short: the first still accepted, the rest refused */
            CHECK(parse_parts(bun, at + n - 1, &parts) == 1 && parts == 2);
        }
        /* every truncation is refused as short */
        size_t cut = next() % n;
        CHECK(parse_checked(buf, cut) == UDP_PARSE_SHORT);
        /* one flipped bit outside the secret: refused as corrupted, or (in the length
         * field, checked first) as truncated or malformed */
        size_t bit = 64 + next() % (8 * n - 64);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int v = parse_checked(buf, n);
        if (bit / 8 >= offsetof(udp_hdr_t, len) && bit / 8 < offsetof(udp_hdr_t, len) + 4)
            CHECK(v == UDP_PARSE_SHORT || v == UDP_PARSE_MALFORMED);
        else if (v != UDP_PARSE_CSUM) {
            fprintf(stderr, "bit %zu of %zu bytes: verdict %d\n", bit, n, v);
            CHECK(v == UDP_PARSE_CSUM);
        }
        /* a flipped secret bit: refused as foreign */
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        buf[next() % 8] ^= 4;
        CHECK(parse_checked(buf, n) == UDP_PARSE_SECRET);
        /* random bytes through the fuzz entry point */
        size_t rn = next() % sizeof buf;
        for (size_t i = 0; i < rn; i++)
            buf[i] = (uint8_t)next();
        LLVMFuzzerTestOneInput(buf, rn);
    }
    printf("udp_wire: ok (%ld valid packets, their truncations, bit flips and random bytes)\n",
           accepted);
    return 0;
}
#endif
