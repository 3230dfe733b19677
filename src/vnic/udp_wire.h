/* udp_wire.h — private to src/vnic (and to the tests and the fuzzer of the packet
 * parser): the wire format of the udp transport and its validating parser.
 *
 * A packet is a 56-byte header, then for DATA packets one 48-byte operation header and
 * its payload. A datagram carries one packet, or several back to back (a bundle: small
 * messages to one peer that leave together, see udp_part): every packet of a bundle
 * but the last has UDP_HF_MORE, and the next one starts at the first multiple of 8
 * bytes after its end (zero padding). Each packet keeps its own header, sequence number
 * and tag, and is validated and handled as if it had come alone. Fields are in the byte order
 * of the hosts (the job is homogeneous: every rank runs the same build on the same architecture).
 *
 *   header:  tag(16) src(4) dst(4) ctr(8) type(1) version(1) flags(2) seq(4) ack(4)
 *            len(4) pad(4) pad(4)
 *   op:      kind(1) flags(1) chan(1) amo(1) key(4) off(8) len(4) aux(4) imm(8) a(8) b(8)
 *
 * tag: the packet's authentication tag (udp_auth.h: a MAC keyed with the job key, over
 * every byte after the tag; with FMPL_UDP_AUTH=off a keyed checksum in its first 4
 * bytes). The job key itself never travels in a packet. (src, dst, ctr) is the MAC's
 * nonce (packed into 12 bytes, udp_auth.h): ctr counts the sender's transmissions to dst from 1
 * (every transmission, retransmissions and control packets included, gets a new one), so no nonce
 * repeats under one key; the receiver keeps a window of the counters it accepted per peer and
 * refuses any counter seen before (replays, of control packets too). len: bytes after
 * the header (the datagram must be exactly 56 + len bytes). seq: DATA: the message's
 * sequence number on the (src, dst) stream, from 1; ack: cumulative acknowledgement of
 * the reverse stream (the last in-order seq received from dst), on every packet.
 * Control packets (ACK, LOSE, STOP, GO, BYE) have len 0 and carry their argument k in
 * `ack`. udp_parse() is a pure function that checks the structure (it never trusts a
 * field before checking it); authenticity is udp_auth_check's, and the sender's address
 * and the replay window are checked by udp.c. */
#ifndef FMPL_VNIC_UDP_WIRE_H
#define FMPL_VNIC_UDP_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define UDP_WIRE_VERSION 3
#define UDP_TAG_BYTES 16

enum {
    UDP_T_DATA = 1, /* a protocol message (seq numbered, acknowledged) */
    UDP_T_ACK,      /* ACK(k): messages up to k arrived in order */
    UDP_T_LOSE,     /* LOSE(k): a gap after k; the sender goes back to k+1 */
    UDP_T_STOP,     /* STOP(k): the receive buffer is full; k acknowledged, stop sending */
    UDP_T_GO,       /* GO(k): room again; resume from k */
    UDP_T_BYE,      /* the sender left (vnic_close); ack = its last in-order seq from dst */
    UDP_T_MAX
};

/* Header flags (udp_hdr_t.flags). */
enum {
    UDP_HF_TWIN = 1, /* sent from the sender's twin socket: its source port is not the one
                      * the sender receives on (never learn the address from it) */
    UDP_HF_MORE = 2, /* another packet follows this one in the datagram (a bundle) */
    UDP_HF_ACK = 4   /* DATA: acknowledge at once (the sender waits for it: the last
                      * datagram of a zero-copy put, see udp.c) */
};

/* A PUT's `amo` byte: UDP_PUT_RUN when the put writes one contiguous remote range, whose
 * first offset and length every fragment then carries in a and b (the receiver knows
 * that the bytes after a fragment up to a + b are still to come: RECEIVE IN PLACE in
 * udp.c); 0 otherwise (a and b are then set on the last fragment only). */
#define UDP_PUT_RUN 1

/* Operation kinds inside DATA packets. */
enum {
    UDP_OP_PUT = 1, /* write len bytes at (key, off); effects on the op's last packet */
    UDP_OP_GETREQ,  /* read request: payload = aux segments (off, len) of 16 bytes */
    UDP_OP_GETRESP, /* read data for request aux at position off (a: status, b: bytes covered) */
    UDP_OP_AMO,     /* atomic amo on (key, off): imm operand, a compare; aux request id */
    UDP_OP_AMORESP, /* atomic result for request aux: a old value, b status */
    UDP_OP_AM,      /* active message: payload to the handler of chan with imm */
    UDP_OP_DONE,    /* vnic_close: the sender's operations are all complete */
    UDP_OP_MAX
};

typedef struct udp_hdr {
    uint8_t tag[UDP_TAG_BYTES];
    uint32_t src, dst; /* src, dst, ctr: the MAC's nonce (udp_auth_nonce) */
    uint64_t ctr;
    uint8_t type, version;
    uint16_t flags; /* UDP_HF_* */
    uint32_t seq, ack;
    uint32_t len;
    uint32_t sent; /* DATA, the sender's own mark: 1 sent once, 2 sent again (no RTT sample) */
    uint32_t pad;
} udp_hdr_t;
_Static_assert(sizeof(udp_hdr_t) == 56, "wire header is 56 bytes");
_Static_assert(offsetof(udp_hdr_t, src) == UDP_TAG_BYTES && offsetof(udp_hdr_t, ctr) == 24,
               "the nonce follows the tag");

typedef struct udp_op {
    uint8_t kind, flags, chan, amo;
    uint32_t key;
    uint64_t off;
    uint32_t len;
    uint32_t aux;
    uint64_t imm;
    uint64_t a, b;
} udp_op_t;
_Static_assert(sizeof(udp_op_t) == 48, "operation header is 48 bytes");

#define UDP_HDRS (sizeof(udp_hdr_t) + sizeof(udp_op_t))

/* Bijective 64-bit mixes (splitmix64 finalisers) of the checksum's sums. */
static inline uint64_t udp_mix1(uint64_t x)
{
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 29);
}
static inline uint64_t udp_mix2(uint64_t x)
{
    x ^= x >> 30;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The 8 bytes at position i (i + 8 <= n1 + n2) of a body made of n1 bytes at b1, then
 * the bytes at b2 (udp_csum2). */
static inline uint64_t udp_csum_word(const unsigned char *b1, size_t n1, const unsigned char *b2,
                                     size_t i)
{
    uint64_t w;
    if (i + 8 <= n1) {
        memcpy(&w, b1 + i, 8);
    } else if (i >= n1) {
        memcpy(&w, b2 + (i - n1), 8);
    } else { /* across the two pieces */
        unsigned char t[8];
        memcpy(t, b1 + i, n1 - i);
        memcpy(t + (n1 - i), b2, 8 - (n1 - i));
        memcpy(&w, t, 8);
    }
    return w;
}

/* Keyed Fletcher-style checksum over 64-bit words (two running sums, so swapped or
 * shifted words change it), then the tail bytes; folded to 32 bits. Computed over the
 * header (40 bytes, csum field zero) followed by the body. A body of 64 bytes or more
 * runs its 32-byte blocks through four independent pairs of sums (lane k takes word k
 * of each block; lane 0 continues the header's sums), mixed into one pair at the end:
 * the four dependency chains run in parallel, about twice the speed of one (faster than
 * memcpy), which a byte-wise hash of 64 KiB datagrams would not come near. Detects
 * corruption only (FMPL_UDP_AUTH=off): it is not a MAC, anyone can forge it.
 *
 * udp_csum2 takes a body in two pieces, n1 bytes at b1 then n2 bytes at b2 (zero-copy sends
 * and RECEIVE IN PLACE, udp.c): the same value as udp_csum of the n1 + n2 bytes
 * contiguous. Word k of a block is word k wherever the pieces split it. */
static inline uint32_t udp_csum2(const udp_hdr_t *hdr_zeroed, const void *body1, size_t n1,
                                 const void *body2, size_t n2, uint64_t key)
{
    size_t nbody = n1 + n2;
    uint64_t s1 = key ^ 0x9e3779b97f4a7c15ull, s2 = (uint64_t)nbody;
    const unsigned char *c = (const unsigned char *)hdr_zeroed;
    for (size_t i = 0; i < sizeof(udp_hdr_t); i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        s1 += w;
        s2 += s1;
    }
    const unsigned char *b1 = (const unsigned char *)body1, *b2 = (const unsigned char *)body2;
    size_t i = 0;
    if (nbody >= 64) {
        uint64_t a0 = s1, a1 = key, a2 = ~key, a3 = key ^ 0x5851f42d4c957f2dull;
        uint64_t b0 = s2, bb1 = 1, bb2 = 2, bb3 = 3;
#define UDP_CSUM_BLOCK(w0, w1, w2, w3)                                                             \
    do {                                                                                           \
        a0 += (w0);                                                                                \
        b0 += a0;                                                                                  \
        a1 += (w1);                                                                                \
        bb1 += a1;                                                                                 \
        a2 += (w2);                                                                                \
        bb2 += a2;                                                                                 \
        a3 += (w3);                                                                                \
        bb3 += a3;                                                                                 \
    } while (0)
        /* four loads per block (one 32-byte copy would go via the stack) */
        for (; i + 32 <= nbody && i + 32 <= n1; i += 32) {
            uint64_t w0, w1, w2, w3;
            memcpy(&w0, b1 + i, 8);
            memcpy(&w1, b1 + i + 8, 8);
            memcpy(&w2, b1 + i + 16, 8);
            memcpy(&w3, b1 + i + 24, 8);
            UDP_CSUM_BLOCK(w0, w1, w2, w3);
        }
        for (; i + 32 <= nbody && i < n1; i += 32) /* the block across the pieces */
            UDP_CSUM_BLOCK(udp_csum_word(b1, n1, b2, i), udp_csum_word(b1, n1, b2, i + 8),
                           udp_csum_word(b1, n1, b2, i + 16), udp_csum_word(b1, n1, b2, i + 24));
        for (; i + 32 <= nbody; i += 32) {
            const unsigned char *q = b2 + (i - n1);
            uint64_t w0, w1, w2, w3;
            memcpy(&w0, q, 8);
            memcpy(&w1, q + 8, 8);
            memcpy(&w2, q + 16, 8);
            memcpy(&w3, q + 24, 8);
            UDP_CSUM_BLOCK(w0, w1, w2, w3);
        }
#undef UDP_CSUM_BLOCK
        /* each lane's sums enter through a bijective mix: a change in any of them
         * changes the folded pair */
        s1 = a0 + udp_mix1(a1) + udp_mix2(a2) + udp_mix1(a3 ^ 0x2545f4914f6cdd1dull);
        s2 = b0 ^ udp_mix2(bb1) ^ udp_mix1(bb2) ^ udp_mix2(bb3 ^ 0x2545f4914f6cdd1dull);
    }
    for (; i + 8 <= nbody; i += 8) {
        s1 += udp_csum_word(b1, n1, b2, i);
        s2 += s1;
    }
    uint64_t t = 0;
    for (size_t k = 0; i < nbody; i++, k++)
        t |= (uint64_t)(i < n1 ? b1[i] : b2[i - n1]) << (8 * k);
    s1 += t;
    s2 += s1;
    /* finalise each sum on its own (bijective mixes), then combine: a change in either
     * sum, even in its top bit alone, changes the result */
    s1 = udp_mix1(s1);
    s2 = udp_mix2(s2);
    uint64_t x = s1 ^ (s2 << 1 | s2 >> 63);
    return (uint32_t)(x ^ (x >> 32));
}

static inline uint32_t udp_csum(const udp_hdr_t *hdr_zeroed, const void *body, size_t nbody,
                                uint64_t key)
{
    return udp_csum2(hdr_zeroed, body, nbody, NULL, 0, key);
}

/* Anti-replay window per peer (RFC 4303's sliding window, 64 counters): top, the
 * highest counter accepted; bit d of bits, counter top - d accepted. A counter is fresh
 * when above top, or within the window and not yet seen; older ones are refused (a
 * datagram delayed past 64 later ones is a loss, which the protocol repairs). */
#define UDP_REPLAY_WINDOW 64
static inline int udp_replay_fresh(uint64_t top, uint64_t bits, uint64_t ctr)
{
    if (ctr > top)
        return 1;
    uint64_t d = top - ctr;
    return ctr != 0 && d < UDP_REPLAY_WINDOW && !((bits >> d) & 1);
}
static inline void udp_replay_mark(uint64_t *top, uint64_t *bits, uint64_t ctr)
{
    if (ctr > *top) {
        uint64_t d = ctr - *top;
        *bits = d >= UDP_REPLAY_WINDOW ? 1 : (*bits << d) | 1;
        *top = ctr;
    } else {
        *bits |= 1ull << (*top - ctr);
    }
}

/* Splits a datagram into its packets: the length of the packet at the start of
 * [pkt, pkt+n) — 56 + len when its header has UDP_HF_MORE and that fits in n, else n
 * (the rest, for udp_parse to judge) — and in *next the offset of the packet after it
 * (n: none). Reads only the header's flags and len (nothing is trusted: each part is
 * then validated by udp_parse). pkt may be unaligned. Never reads outside the range. */
static inline size_t udp_part(const void *pkt, size_t n, size_t *next)
{
    *next = n;
    if (n < sizeof(udp_hdr_t))
        return n;
    udp_hdr_t h;
    memcpy(&h, pkt, sizeof h);
    if (!(h.flags & UDP_HF_MORE) || h.len > n - sizeof h)
        return n;
    size_t end = sizeof h + h.len, at = (end + 7) & ~(size_t)7;
    *next = at < n ? at : n;
    return end;
}

/* Why a datagram was refused. */
enum {
    UDP_PARSE_OK = 0,
    UDP_PARSE_SHORT,    /* shorter than a header, or than its len says (truncated) */
    UDP_PARSE_MALFORMED /* a field out of range: type, version, ranks, lengths, op */
};

typedef struct udp_parsed {
    udp_hdr_t h;
    udp_op_t op;         /* DATA only */
    const void *payload; /* DATA: op.len bytes after the op header */
} udp_parsed_t;

/* Validates the structure of a datagram of n bytes received by rank `me` of a job of
 * `size` ranks (not its authenticity: udp_auth_check). Payloads up to max_payload bytes (after both
 * headers) are accepted. On UDP_PARSE_OK, out holds copies of the headers and a pointer into pkt.
 * pkt may be unaligned. Never reads outside [pkt, pkt+n). */
static inline int udp_parse_job(const void *pkt, size_t n, uint32_t me, uint32_t size,
                                size_t max_payload, int same_job, udp_parsed_t *out);
static inline int udp_parse(const void *pkt, size_t n, uint32_t me, uint32_t size,
                            size_t max_payload, udp_parsed_t *out)
{
    return udp_parse_job(pkt, n, me, size, max_payload, 1, out);
}

/* udp_parse for a sender of another job (OTHER JOBS in udp.c): any src, which may equal
 * me (its rank there). */
static inline int udp_parse_other(const void *pkt, size_t n, uint32_t me, size_t max_payload,
                                  udp_parsed_t *out)
{
    return udp_parse_job(pkt, n, me, UINT32_MAX, max_payload, 0, out);
}

/* udp_parse for a sender of a job of `size` ranks; same_job: it is not us (src != me). */
static inline int udp_parse_job(const void *pkt, size_t n, uint32_t me, uint32_t size,
                                size_t max_payload, int same_job, udp_parsed_t *out)
{
    if (n < sizeof(udp_hdr_t))
        return UDP_PARSE_SHORT;
    udp_hdr_t h;
    memcpy(&h, pkt, sizeof h);
    if (h.len != n - sizeof h)
        return h.len > n - sizeof h ? UDP_PARSE_SHORT : UDP_PARSE_MALFORMED;
    if (h.version != UDP_WIRE_VERSION || h.type == 0 || h.type >= UDP_T_MAX || h.src >= size ||
        h.dst != me || (same_job && h.src == me) || h.ctr == 0)
        return UDP_PARSE_MALFORMED;
    out->h = h;
    out->payload = NULL;
    if (h.type != UDP_T_DATA)
        return h.len == 0 ? UDP_PARSE_OK : UDP_PARSE_MALFORMED;
    if (h.len < sizeof(udp_op_t) || h.seq == 0)
        return UDP_PARSE_MALFORMED;
    memcpy(&out->op, (const unsigned char *)pkt + sizeof h, sizeof out->op);
    const udp_op_t *o = &out->op;
    if (o->kind == 0 || o->kind >= UDP_OP_MAX || o->len != h.len - sizeof(udp_op_t) ||
        o->len > max_payload)
        return UDP_PARSE_MALFORMED;
    if (o->kind == UDP_OP_GETREQ && (o->len % 16 || o->len == 0))
        return UDP_PARSE_MALFORMED;
    if ((o->kind == UDP_OP_AMO || o->kind == UDP_OP_AMORESP || o->kind == UDP_OP_DONE) && o->len)
        return UDP_PARSE_MALFORMED;
    out->payload = (const unsigned char *)pkt + UDP_HDRS;
    return UDP_PARSE_OK;
}

#endif
