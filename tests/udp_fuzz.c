/* udp_fuzz.c — the packet parser and the packet authentication of the udp transport
 * (udp_wire.h, udp_auth.h) against arbitrary bytes. Built two ways:
 *   - as a libFuzzer target (clang -fsanitize=fuzzer,address,undefined; tests/udp.cmake
 *     builds it when clang supports it, and the test udp_fuzz runs it for 20 s);
 *   - with UDP_FUZZ_MAIN (any compiler, test udp_wire): a main that feeds the same entry
 *     point valid packets, every truncation of them, bit flips and random bytes, and
 *     checks the verdicts that are known (valid accepted, any flipped bit refused by the
 *     parser or the tag check, with authentication on and off, short refused as
 *     truncated, both packets of a bundle accepted after udp_part splits it), and the
 *     replay window (udp_replay_fresh: each counter once, within the window), and that
 *     libsodium and OpenSSL compute the same tag (udp_auth.h) and refuse nonce fields
 *     beyond their widths.
 * The entry point checks the parser's promises: never reads outside the datagram (the
 * sanitizers see that), accepts only what it can describe consistently. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnic/udp_auth.h"
#include "vnic/udp_wire.h"

#define ME 3u
#define SIZE 8u
#define MAXPAY 65000u

static udp_auth_t auth_on, auth_off; /* the same key, authentication on and off */

static void auth_setup(void)
{
    static int done;
    if (done)
        return;
    unsigned char key[UDP_KEY_BYTES];
    for (int i = 0; i < UDP_KEY_BYTES; i++)
        key[i] = (unsigned char)(17 * i + 3);
    if (udp_auth_init(&auth_on, key, 1) || udp_auth_init(&auth_off, key, 0))
        abort();
    done = 1;
}

/* Parses (and checks the tag of) a packet; UDP_PARSE_OK only when both agree. *tag_ok:
 * the tag check's verdict with authentication on (bit 0) and off (bit 1). */
static int parse_checked(const uint8_t *data, size_t size, int *tag_ok)
{
    auth_setup();
    /* a private copy of exactly size bytes, so a read past the end is caught */
    uint8_t *p = malloc(size ? size : 1);
    if (!p)
        abort();
    memcpy(p, data, size);
    udp_parsed_t m;
    int rc = udp_parse(p, size, ME, SIZE, MAXPAY, &m);
    *tag_ok = 0;
    if (rc == UDP_PARSE_OK) {
        *tag_ok = udp_auth_check(&auth_on, p, size) | udp_auth_check(&auth_off, p, size) << 1;
        if (m.h.src >= SIZE || m.h.src == ME || m.h.dst != ME || m.h.type == 0 ||
            m.h.type >= UDP_T_MAX || m.h.len != size - sizeof(udp_hdr_t) || m.h.ctr == 0)
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
 * many were accepted with a right tag (authentication on: bit 0 of the check). Every
 * part lies inside the datagram and the walk always advances. */
static int parse_parts(const uint8_t *data, size_t size, int *parts)
{
    int ok = 0, tag_ok;
    *parts = 0;
    size_t off = 0;
    while (off < size) {
        size_t next, k = udp_part(data + off, size - off, &next);
        if (k > size - off || next == 0 || next > size - off || k > next)
            abort();
        if (parse_checked(data + off, k, &tag_ok) == UDP_PARSE_OK && (tag_ok & 1))
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
    /* the same bytes with valid tags (both modes), so the fuzzer reaches every path of
     * the parser and of the tag check */
    if (size >= sizeof(udp_hdr_t) && size <= 70000) {
        uint8_t *q = malloc(size);
        if (!q)
            abort();
        memcpy(q, data, size);
        udp_hdr_t h;
        memcpy(&h, q, sizeof h);
        if (data[0] & 1)
            h.len = (uint32_t)(size - sizeof h);
        memcpy(q, &h, sizeof h);
        auth_setup();
        /* with authentication on, nonce fields beyond their widths are never sealed */
        int sealable = (data[0] & 2) || (h.src < UDP_NONCE_RANKS && h.dst < UDP_NONCE_RANKS &&
                                         h.ctr < UDP_NONCE_CTR);
        if (udp_auth_seal((data[0] & 2) ? &auth_off : &auth_on, q, size) != (sealable ? 0 : -1))
            abort();
        if (!sealable && udp_auth_check(&auth_on, q, size))
            abort();
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
    auth_setup();
    for (int iter = 0; iter < 20000; iter++) {
        /* a valid packet: control or DATA with a known op */
        size_t n;
        udp_hdr_t h;
        memset(&h, 0, sizeof h);
        h.ctr = 1 + next() % 100000;
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
        udp_auth_t *mode = (iter & 2) ? &auth_off : &auth_on;
        int want_tag = (iter & 2) ? 2 : 1, tag_ok;
        CHECK(udp_auth_seal(mode, buf, n) == 0);
        CHECK(parse_checked(buf, n, &tag_ok) == UDP_PARSE_OK && tag_ok == want_tag);
        accepted++;
        /* a bundle: this packet with UDP_HF_MORE, padding to 8, then a copy of it; both
         * parts are accepted, and a MORE flag with nothing after it changes nothing */
        {
            udp_hdr_t b;
            memcpy(&b, buf, sizeof b);
            b.flags |= UDP_HF_MORE;
            memcpy(bun, buf, n);
            memcpy(bun, &b, sizeof b);
            CHECK(udp_auth_seal(&auth_on, bun, n) == 0);
            CHECK(udp_auth_seal(&auth_on, buf, n) == 0);
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
        CHECK(parse_checked(buf, cut, &tag_ok) == UDP_PARSE_SHORT);
        /* one flipped bit anywhere (tag, header, payload), with the sender's tag kept:
         * refused by the tag check in both modes, or by the parser (the length field is
         * checked first) */
        CHECK(udp_auth_seal(mode, buf, n) == 0);
        size_t bit = next() % (8 * n);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int v = parse_checked(buf, n, &tag_ok);
        if (v == UDP_PARSE_OK && (tag_ok & want_tag)) {
            fprintf(stderr, "bit %zu of %zu bytes: accepted\n", bit, n);
            CHECK(0);
        }
        /* the other mode's tag never passes for this mode */
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(parse_checked(buf, n, &tag_ok) == UDP_PARSE_OK && tag_ok == want_tag);
        /* random bytes through the fuzz entry point */
        size_t rn = next() % sizeof buf;
        for (size_t i = 0; i < rn; i++)
            buf[i] = (uint8_t)next();
        LLVMFuzzerTestOneInput(buf, rn);
    }
    /* the replay window: counters arrive shuffled within the window, each once, then
     * again (all refused), then ones that fell out of the window (refused) */
    uint64_t top = 0, bits = 0;
    uint64_t highest = 0;
    CHECK(!udp_replay_fresh(0, 0, 0)); /* counters start at 1 */
    for (uint64_t base = 1; base < 100000; base += 32) {
        uint64_t order[32];
        for (int i = 0; i < 32; i++)
            order[i] = base + (uint64_t)i;
        for (int i = 31; i > 0; i--) {
            int j = (int)(next() % (uint64_t)(i + 1));
            uint64_t x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        for (int i = 0; i < 32; i++) {
            CHECK(udp_replay_fresh(top, bits, order[i]));
            udp_replay_mark(&top, &bits, order[i]);
            CHECK(!udp_replay_fresh(top, bits, order[i]));
            highest = order[i] > highest ? order[i] : highest;
        }
        for (int i = 0; i < 32; i++)
            CHECK(!udp_replay_fresh(top, bits, order[i]));
    }
    CHECK(top == highest);
    CHECK(!udp_replay_fresh(top, bits, top - UDP_REPLAY_WINDOW));
    CHECK(udp_replay_fresh(top, bits, top + 1000));
    udp_replay_mark(&top, &bits, top + 1000);
    CHECK(!udp_replay_fresh(top, bits, top - 1000));
    CHECK(udp_replay_fresh(top, bits, top - 5)); /* a gap inside the window: still fresh */
    /* the two libraries compute one function: the same tag at every size, on either side
     * of UDP_AUTH_SMALL_MAX (a packet sealed by one is accepted by the other's check) */
    static uint8_t big[65000], piece[65000];
    const size_t sizes[] = {56,
                            57,
                            64,
                            104,
                            1000,
                            UDP_AUTH_SMALL_MAX - 1,
                            UDP_AUTH_SMALL_MAX,
                            UDP_AUTH_SMALL_MAX + 1,
                            4096,
                            65000};
    int compared = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        udp_hdr_t h;
        memset(&h, 0, sizeof h);
        h.src = (uint32_t)(next() % UDP_NONCE_RANKS);
        h.dst = (uint32_t)(next() % UDP_NONCE_RANKS);
        h.ctr = 1 + next() % (UDP_NONCE_CTR - 1);
        for (size_t i = 0; i < sizes[k]; i++)
            big[i] = (uint8_t)next();
        memcpy(big, &h, sizeof h);
        unsigned char t1[UDP_TAG_BYTES], t2[UDP_TAG_BYTES];
        CHECK(udp_auth_tag(&auth_on, big, sizes[k], UDP_AUTH_OPENSSL, t1) == 0);
        if (auth_on.small) {
            CHECK(udp_auth_tag(&auth_on, big, sizes[k], UDP_AUTH_SODIUM, t2) == 0);
            CHECK(memcmp(t1, t2, sizeof t1) == 0);
            compared++;
        }
#ifdef FMPL_HAVE_IPSEC_MB
        CHECK(auth_on.fast != NULL); /* built with ipsec-mb: it must be in use */
#endif
        /* the measured choice names a library this state has keyed, for each class */
        CHECK(udp_auth_choice() && !strncmp(udp_auth_choice(), "AES-256-GMAC by ", 16));
        for (int c = 0; c < 3; c++) {
            int how = c == 0 ? auth_on.how_small : c == 1 ? auth_on.how_large : auth_on.how_split;
            CHECK(how == UDP_AUTH_OPENSSL || (how == UDP_AUTH_SODIUM && c < 2 && auth_on.small) ||
                  (how == UDP_AUTH_IPSEC_MB && auth_on.fast));
        }
        if (auth_on.fast) {
            CHECK(udp_auth_tag(&auth_on, big, sizes[k], UDP_AUTH_IPSEC_MB, t2) == 0);
            CHECK(memcmp(t1, t2, sizeof t1) == 0);
            compared++;
        }
        /* in two pieces (udp.c's zero-copy sends), through each library: the same tag */
        for (int lib = 0; lib < 2; lib++) {
            /* ipsec-mb's pieces (OpenSSL's without it), then OpenSSL's, whichever the
             * process measured faster (udp_auth_pick) */
            int split = auth_on.how_split;
            auth_on.how_split = lib ? UDP_AUTH_OPENSSL : UDP_AUTH_IPSEC_MB;
            size_t cuts[] = {sizeof(udp_hdr_t), UDP_HDRS, UDP_HDRS + 1, sizes[k] / 2, sizes[k]};
            for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
                size_t n1 = cuts[c] < sizeof(udp_hdr_t) ? sizeof(udp_hdr_t) : cuts[c];
                if (n1 > sizes[k])
                    continue;
                memcpy(piece, big + n1, sizes[k] - n1);
                memset(big, 0, UDP_TAG_BYTES);
                CHECK(udp_auth_seal2(&auth_on, big, n1, piece, sizes[k] - n1) == 0);
                CHECK(memcmp(big, t1, sizeof t1) == 0);
                piece[0] ^= (uint8_t)(sizes[k] > n1); /* a changed byte in the 2nd piece */
                CHECK(udp_auth_seal2(&auth_on, big, n1, piece, sizes[k] - n1) == 0);
                CHECK((memcmp(big, t1, sizeof t1) == 0) == (sizes[k] == n1));
                compared++;
            }
            auth_on.how_split = split;
        }
        /* in two pieces, checked by the receiver (udp.c's RECEIVE IN PLACE): accepted as
         * sealed, refused with a changed byte in either piece; with authentication off, the
         * keyed checksum across the pieces (udp_csum2) equals the contiguous one at every
         * cut, within a 32-byte block of four lanes or not */
        for (int on = 0; on < 2; on++) {
            udp_auth_t *a = on ? &auth_on : &auth_off;
            unsigned char whole[UDP_TAG_BYTES];
            CHECK(udp_auth_tag(a, big, sizes[k], UDP_AUTH_ANY, whole) == 0);
            for (size_t n1 = sizeof(udp_hdr_t); n1 <= sizes[k];
                 n1 += n1 < UDP_HDRS + 70 ? 1 : 1 + sizes[k] / 7) {
                size_t n2 = sizes[k] - n1;
                memcpy(piece, big + n1, n2);
                memset(big, 0, UDP_TAG_BYTES);
                CHECK(udp_auth_seal2(a, big, n1, piece, n2) == 0);
                CHECK(memcmp(big, whole, sizeof whole) == 0);
                CHECK(udp_auth_check2(a, big, n1, piece, n2));
                if (n2) {
                    piece[n2 - 1] ^= 0x40;
                    CHECK(!udp_auth_check2(a, big, n1, piece, n2));
                    piece[n2 - 1] ^= 0x40;
                }
                big[n1 - 1] ^= 0x40; /* the last byte of the first piece (a header byte at 56) */
                CHECK(!udp_auth_check2(a, big, n1, piece, n2));
                big[n1 - 1] ^= 0x40;
                compared++;
            }
            CHECK(udp_auth_check2(a, big, sizeof(udp_hdr_t) - 1, piece, 8) == 0);
        }
        CHECK(udp_auth_seal(&auth_on, big, sizes[k]) == 0 && !memcmp(big, t1, sizeof t1));
        CHECK(udp_auth_check(&auth_on, big, sizes[k]));
        /* a different nonce (ctr + 1, or dst swapped) gives a different tag */
        h.ctr++;
        memcpy(big + UDP_TAG_BYTES, (uint8_t *)&h + UDP_TAG_BYTES, sizeof h - UDP_TAG_BYTES);
        CHECK(!udp_auth_check(&auth_on, big, sizes[k]));
    }
    /* fields beyond the nonce's widths: neither sealed nor accepted */
    {
        udp_hdr_t h;
        memset(&h, 0, sizeof h);
        h.ctr = 1;
        h.src = UDP_NONCE_RANKS;
        memcpy(big, &h, sizeof h);
        CHECK(udp_auth_seal(&auth_on, big, 64) == -1 && !udp_auth_check(&auth_on, big, 64));
        h.src = 0;
        h.dst = UDP_NONCE_RANKS;
        memcpy(big, &h, sizeof h);
        CHECK(udp_auth_seal(&auth_on, big, 64) == -1 && !udp_auth_check(&auth_on, big, 64));
        h.dst = 1;
        h.ctr = UDP_NONCE_CTR;
        memcpy(big, &h, sizeof h);
        CHECK(udp_auth_seal(&auth_on, big, 64) == -1 && !udp_auth_check(&auth_on, big, 64));
        h.ctr = UDP_NONCE_CTR - 1;
        memcpy(big, &h, sizeof h);
        CHECK(udp_auth_seal(&auth_on, big, 64) == 0 && udp_auth_check(&auth_on, big, 64));
    }
    udp_auth_fini(&auth_on);
    udp_auth_fini(&auth_off);
    printf("udp_wire: ok (%ld valid packets, their truncations, bit flips, random bytes; "
           "replay window; libsodium's or ipsec-mb's tags equal OpenSSL's in %d comparisons%s)\n",
           accepted, compared, compared ? "" : ": neither library is available here");
    return 0;
}
#endif
