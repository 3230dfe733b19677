/* udp_auth.h — private to src/vnic (and to the tests and the fuzzer): the authentication
 * of udp packets (udp_wire.h) with the job key.
 *
 * FMPL_UDP_AUTH=on (the default): the tag is AES-256-GMAC (AES-256-GCM with the whole
 * packet after the tag as additional data and nothing encrypted), keyed with the 32-byte
 * job key, with a 12-byte nonce packed from the header's src (24 bits), dst (24 bits) and
 * ctr (48 bits): a packet whose fields exceed these widths is neither sealed nor accepted
 * (jobs of up to 2^24 ranks; 2^48 - 1 transmissions to one peer). The sender gives every
 * transmission a new ctr, so a nonce never repeats under a key (GMAC's one requirement);
 * the key is rank 0's random bytes, new at every start (udp.c). Intel's ipsec-mb
 * library (libipsec-mb, x86-64; FMPL_HAVE_IPSEC_MB, where it was found at build time),
 * libsodium and OpenSSL compute the same function; which one tags packets under and from
 * UDP_AUTH_SMALL_MAX bytes is measured once per process (udp_auth.c says why;
 * bench/udp_mac.c; figures in docs/performance.md). Packets are authenticated, not
 * encrypted: payloads travel in clear.
 * FMPL_UDP_AUTH=off (trusted fabrics, benchmarks): the tag holds udp_csum() of the packet
 * seeded with the key, which catches corruption and other jobs' datagrams but is no MAC.
 *
 * THREAT MODEL (issue 14). The job key reaches the ranks through the launcher's PMI
 * key-value space (fmplrun's token-protected server, Hydra's or Slurm's), never in a
 * packet: a process that can read that space holds the key. A packet changes state (data,
 * ACK, LOSE, STOP, GO, BYE alike) only after udp.c's checks (AUTHENTICATION there: its
 * structure, the address the claimed sender registered, this tag, the replay window). So
 * an on-path attacker, or anyone who sees datagrams, cannot forge a packet of any type,
 * alter one, replay an old one (a BYE, STOP, GO or ACK included), or make a rank act on a
 * datagram from another address. They can: read every payload (use an encrypted fabric
 * or tunnel for secret data); drop, delay or flood datagrams (the job slows, and a peer
 * silent for FMPL_UDP_PEER_TIMEOUT_MS ends it with an error, as any loss would); spend
 * receivers' CPU on datagrams that fail the checks (the cheap checks come first, the MAC
 * last); and, while a large put or get answer is being received in place
 * (FMPL_UDP_PLACE), leave bytes in the part of its destination that the operation has yet
 * to write, which its own authenticated fragments overwrite before it completes. Between
 * jobs (dynamic processes) every ordered pair of processes seals with its
 * own key, derived from the link the two jobs agreed (link.c), so the same holds there.
 * With FMPL_UDP_AUTH=off (every rank must agree) the address and replay checks stay, but
 * anyone can forge the checksum. */
#ifndef FMPL_VNIC_UDP_AUTH_H
#define FMPL_VNIC_UDP_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "vnic/udp_wire.h"

#define UDP_KEY_BYTES 32

#define UDP_NONCE_RANKS (1u << 24) /* src and dst below this */
#define UDP_NONCE_CTR (1ull << 48) /* ctr below this */
#define UDP_AUTH_SMALL_MAX 2048    /* packets below this many bytes: the small ones */

typedef struct udp_auth {
    int on;        /* 1: GMAC tags; 0: keyed checksums */
    uint64_t seed; /* off: the checksum's seed (from the key) */
    void *ctx;     /* on: OpenSSL's cipher context (EVP_CIPHER_CTX), keyed once */
    void *small;   /* on: libsodium's keyed AES-256-GCM state, or NULL where the CPU
                    * lacks what libsodium's AES-GCM needs (then no candidate) */
    void *fast;    /* on: ipsec-mb's expanded key (struct gcm_key_data), or NULL without
                    * the library */
    int how_small, how_large, how_split; /* on: the library (UDP_AUTH_*) that tags packets
                                          * under UDP_AUTH_SMALL_MAX bytes, from it, and in
                                          * two pieces: the process's measured choice */
} udp_auth_t;

/* Which library computes a tag (udp_auth_tag): the fastest for the packet's size, or one
 * of them (the tests, which check that they agree). */
enum { UDP_AUTH_ANY, UDP_AUTH_SODIUM, UDP_AUTH_OPENSSL, UDP_AUTH_IPSEC_MB };

/* Fills key with UDP_KEY_BYTES random bytes (the system's generator). 0 on success. */
int udp_auth_keygen(unsigned char key[UDP_KEY_BYTES]);

/* Prepares a: on or off, with the job key. 0 on success, -1 when the library fails. */
int udp_auth_init(udp_auth_t *a, const unsigned char key[UDP_KEY_BYTES], int on);
void udp_auth_fini(udp_auth_t *a);

/* What the process's first udp_auth_init (on) measured and chose, one line for fmpl-info;
 * NULL before. Any thread. */
const char *udp_auth_choice(void);

/* Writes the tag of the packet of n bytes at pkt (header with src, dst and ctr set,
 * then the body). 0 on success, -1 as udp_auth_tag. */
int udp_auth_seal(udp_auth_t *a, void *pkt, size_t n);

/* udp_auth_seal for a packet in two pieces (UDP ZERO-COPY in udp.c): the first n1 >= 56
 * bytes at pkt (header with src, dst and ctr set, then the start of the body), then n2
 * bytes at ext; the tag, written into pkt, is that of the n1 + n2 contiguous bytes (with
 * FMPL_UDP_AUTH=off too: udp_csum2). -1 as udp_auth_tag. */
int udp_auth_seal2(udp_auth_t *a, void *pkt, size_t n1, const void *ext, size_t n2);

/* The 12-byte nonce of the packet at pkt (header with src, dst and ctr set). 0 on
 * success, -1 when a field exceeds its width (UDP_NONCE_RANKS, UDP_NONCE_CTR). */
int udp_auth_nonce(const void *pkt, unsigned char nonce[12]);

/* The tag of the packet of n >= 56 bytes at pkt into tag, computed by `how`. 0 on
 * success, -1 when the nonce's fields are out of range or the library fails (or is not
 * available, for UDP_AUTH_SODIUM and UDP_AUTH_IPSEC_MB). */
int udp_auth_tag(udp_auth_t *a, const void *pkt, size_t n, int how,
                 unsigned char tag[UDP_TAG_BYTES]);

/* 1 when the tag of the packet of n >= 56 bytes at pkt (any alignment) is right. */
int udp_auth_check(udp_auth_t *a, const void *pkt, size_t n);

/* udp_auth_check for a packet in two pieces (RECEIVE IN PLACE in udp.c): the first
 * n1 >= 56 bytes at pkt, then n2 bytes at ext. */
int udp_auth_check2(udp_auth_t *a, const void *pkt, size_t n1, const void *ext, size_t n2);

#endif
