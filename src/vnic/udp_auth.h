/* udp_auth.h — private to src/vnic (and to the tests and the fuzzer): the authentication
 * of udp packets (udp_wire.h) with the job key.
 *
 * FMPL_UDP_AUTH=on (the default): the tag is AES-256-GMAC (OpenSSL's AES-256-GCM with the
 * whole packet after the tag as additional data and nothing encrypted), keyed with the
 * 32-byte job key, with the header's (src, dst, ctr) as its 16-byte nonce. The sender
 * gives every transmission a new ctr, so a nonce never repeats under a key (GMAC's one
 * requirement); the key is rank 0's random bytes, new at every start (udp.c). Chosen by
 * cost on this machine (bench/udp_mac.c; figures in docs/performance.md): the fastest
 * well-kept MAC of OpenSSL and libsodium for 64 KiB datagrams by a factor of two or
 * more, and among the fastest for 8-byte messages. Packets are authenticated, not
 * encrypted: payloads travel in clear.
 * FMPL_UDP_AUTH=off (trusted fabrics, benchmarks): the tag holds udp_csum() of the packet
 * seeded with the key, which catches corruption and other jobs' datagrams but is no MAC. */
#ifndef FMPL_VNIC_UDP_AUTH_H
#define FMPL_VNIC_UDP_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define UDP_KEY_BYTES 32

typedef struct udp_auth {
    int on;        /* 1: GMAC tags; 0: keyed checksums */
    uint64_t seed; /* off: the checksum's seed (from the key) */
    void *ctx;     /* on: the cipher context (EVP_CIPHER_CTX), keyed once */
} udp_auth_t;

/* Fills key with UDP_KEY_BYTES random bytes (the system's generator). 0 on success. */
int udp_auth_keygen(unsigned char key[UDP_KEY_BYTES]);

/* Prepares a: on or off, with the job key. 0 on success, -1 when the library fails. */
int udp_auth_init(udp_auth_t *a, const unsigned char key[UDP_KEY_BYTES], int on);
void udp_auth_fini(udp_auth_t *a);

/* Writes the tag of the packet of n bytes at pkt (header with src, dst and ctr set,
 * then the body). 0 on success, -1 when the library fails. */
int udp_auth_seal(udp_auth_t *a, void *pkt, size_t n);

/* 1 when the tag of the packet of n >= 56 bytes at pkt (any alignment) is right. */
int udp_auth_check(udp_auth_t *a, const void *pkt, size_t n);

#endif
