/* udp_auth.c — tags of udp packets: AES-256-GMAC with a 96-bit nonce, computed by
 * Intel's ipsec-mb where the build found it, else by libsodium for small packets and by
 * OpenSSL's EVP interface for large ones (the same function: all give the same tag, test
 * udp_wire checks it), or a keyed checksum with FMPL_UDP_AUTH=off (see udp_auth.h). One
 * keyed state per library and transport, keyed once; each packet sets only its nonce.
 * Uses nothing of the rest of the library (the fuzzer links it alone).
 *
 * WHY IPSEC-MB FIRST (bench/udp_mac.c; docs/performance.md): OpenSSL 3.0 hashes the
 * packet (GCM's additional data) with 128-bit PCLMULQDQ, ~5.5 us per 64 KiB datagram at
 * best here (~12 GB/s, slower than the loopback copies it sits between), and its EVP
 * dispatch costs ~0.3 us per packet; ipsec-mb (libipsec-mb-dev) picks its AVX-512
 * VAES/VPCLMULQDQ code on this CPU at run time (init_mb_mgr_auto): ~2.2 us per 64 KiB
 * (~30 GB/s) and ~50 ns per 64-byte packet (libsodium ~100 ns). Its direct GCM call
 * (gcm256_enc with no plaintext, the packet as additional data) computes exactly
 * GMAC; the manager is only a table of functions, set up once per process and read-only
 * after, so threads share it.
 *
 * WHY TWO LIBRARIES (bench/udp_mac.c; docs/performance.md): per 64-byte packet
 * libsodium's crypto_aead_aes256gcm takes ~50-100 ns where OpenSSL's EVP dispatch takes
 * ~250-800 ns; from ~2 KiB on OpenSSL's VAES code is as fast or faster (64 KiB: 5-11 GB/s
 * against 3-5). libsodium takes only a 12-byte nonce, hence the packing (udp_auth.h);
 * OpenSSL is given the same 12 bytes, so both compute one function. Where libsodium's
 * AES-GCM is not available (a CPU without AES-NI and PCLMULQDQ), OpenSSL computes every
 * tag. */
#include "vnic/udp_auth.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#ifdef FMPL_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>
#endif

#include "vnic/udp_wire.h"

#define UDP_NONCE_BYTES 12 /* src (24 bits), dst (24 bits), ctr (48 bits) */
_Static_assert(UDP_NONCE_BYTES == crypto_aead_aes256gcm_NPUBBYTES, "libsodium's nonce");

#ifdef FMPL_HAVE_IPSEC_MB
static IMB_MGR *udp_imb; /* the process's manager (a table of functions), or NULL */
static pthread_once_t udp_imb_once = PTHREAD_ONCE_INIT;

static void udp_imb_setup(void)
{
    IMB_MGR *m = alloc_mb_mgr(0);
    if (!m)
        return;
    init_mb_mgr_auto(m, NULL);
    if (imb_get_errno(m) != 0 || !m->gcm256_pre || !m->gcm256_enc) {
        free_mb_mgr(m);
        return;
    }
    udp_imb = m;
}
#endif

int udp_auth_keygen(unsigned char key[UDP_KEY_BYTES])
{
    return RAND_bytes(key, UDP_KEY_BYTES) == 1 ? 0 : -1;
}

int udp_auth_init(udp_auth_t *a, const unsigned char key[UDP_KEY_BYTES], int on)
{
    memset(a, 0, sizeof *a);
    a->on = on;
    memcpy(&a->seed, key, sizeof a->seed);
    if (!on)
        return 0;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (!c)
        return -1;
    if (EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, UDP_NONCE_BYTES, NULL) != 1 ||
        EVP_EncryptInit_ex(c, NULL, NULL, key, NULL) != 1) {
        EVP_CIPHER_CTX_free(c);
        return -1;
    }
    a->ctx = c;
    /* sodium_init: thread-safe, idempotent; 1 when already done */
    if (sodium_init() >= 0 && crypto_aead_aes256gcm_is_available()) {
        crypto_aead_aes256gcm_state *st = aligned_alloc(16, sizeof *st);
        if (!st) {
            udp_auth_fini(a);
            return -1;
        }
        crypto_aead_aes256gcm_beforenm(st, key);
        a->small = st;
    }
#ifdef FMPL_HAVE_IPSEC_MB
    pthread_once(&udp_imb_once, udp_imb_setup);
    if (udp_imb) {
        struct gcm_key_data *k = aligned_alloc(64, (sizeof *k + 63) / 64 * 64);
        if (!k) {
            udp_auth_fini(a);
            return -1;
        }
        IMB_AES256_GCM_PRE(udp_imb, key, k);
        a->fast = k;
        /* one packet tagged by both libraries must agree, or the library is broken */
        unsigned char probe[200], t1[UDP_TAG_BYTES], t2[UDP_TAG_BYTES];
        for (size_t i = 0; i < sizeof probe; i++)
            probe[i] = (unsigned char)(i * 37 + 11);
        udp_hdr_t h;
        memcpy(&h, probe, sizeof h);
        h.src = 1;
        h.dst = 2;
        h.ctr = 3;
        memcpy(probe, &h, sizeof h);
        if (udp_auth_tag(a, probe, sizeof probe, UDP_AUTH_IPSEC_MB, t1) != 0 ||
            udp_auth_tag(a, probe, sizeof probe, UDP_AUTH_OPENSSL, t2) != 0 ||
            memcmp(t1, t2, sizeof t1) != 0) {
            udp_auth_fini(a);
            return -1;
        }
    }
#endif
    return 0;
}

void udp_auth_fini(udp_auth_t *a)
{
    if (a->ctx)
        EVP_CIPHER_CTX_free(a->ctx);
    a->ctx = NULL;
    if (a->small) {
        sodium_memzero(a->small, sizeof(crypto_aead_aes256gcm_state));
        free(a->small);
    }
    a->small = NULL;
#ifdef FMPL_HAVE_IPSEC_MB
    if (a->fast) {
        sodium_memzero(a->fast, sizeof(struct gcm_key_data));
        free(a->fast);
    }
#endif
    a->fast = NULL;
}

int udp_auth_nonce(const void *pkt, unsigned char nonce[12])
{
    udp_hdr_t h;
    memcpy(&h, pkt, sizeof h);
    if (h.src >= UDP_NONCE_RANKS || h.dst >= UDP_NONCE_RANKS || h.ctr >= UDP_NONCE_CTR)
        return -1;
    for (int i = 0; i < 3; i++) {
        nonce[i] = (unsigned char)(h.src >> (8 * i));
        nonce[3 + i] = (unsigned char)(h.dst >> (8 * i));
    }
    for (int i = 0; i < 6; i++)
        nonce[6 + i] = (unsigned char)(h.ctr >> (8 * i));
    return 0;
}

int udp_auth_tag(udp_auth_t *a, const void *pkt, size_t n, int how,
                 unsigned char tag[UDP_TAG_BYTES])
{
    const unsigned char *p = pkt;
    if (!a->on) {
        udp_hdr_t z;
        memcpy(&z, p, sizeof z);
        memset(z.tag, 0, sizeof z.tag);
        uint32_t c = udp_csum(&z, p + sizeof z, n - sizeof z, a->seed);
        memset(tag, 0, UDP_TAG_BYTES);
        memcpy(tag, &c, sizeof c);
        return 0;
    }
    unsigned char nonce[UDP_NONCE_BYTES];
    if (udp_auth_nonce(p, nonce) != 0)
        return -1;
    if (how == UDP_AUTH_ANY)
        how = a->fast                              ? UDP_AUTH_IPSEC_MB
              : a->small && n < UDP_AUTH_SMALL_MAX ? UDP_AUTH_SODIUM
                                                   : UDP_AUTH_OPENSSL;
    if (how == UDP_AUTH_IPSEC_MB) {
#ifdef FMPL_HAVE_IPSEC_MB
        if (!a->fast)
            return -1;
        struct gcm_context_data ctx;
        IMB_AES256_GCM_ENC(udp_imb, (const struct gcm_key_data *)a->fast, &ctx, NULL, NULL, 0,
                           nonce, p + UDP_TAG_BYTES, n - UDP_TAG_BYTES, tag, UDP_TAG_BYTES);
        return 0;
#else
        return -1;
#endif
    }
    if (how == UDP_AUTH_SODIUM) {
        if (!a->small)
            return -1;
        unsigned char none[1];
        return crypto_aead_aes256gcm_encrypt_detached_afternm(
            none, tag, NULL, NULL, 0, p + UDP_TAG_BYTES, n - UDP_TAG_BYTES, NULL, nonce,
            (const crypto_aead_aes256gcm_state *)a->small);
    }
    EVP_CIPHER_CTX *c = a->ctx;
    unsigned char none[16];
    int out = 0;
    /* the tag read as a parameter: EVP_CIPHER_CTX_ctrl would translate to one at a cost
     * of ~0.3 us per packet (OpenSSL 3.0, measured with bench/udp_mac.c's loop) */
    OSSL_PARAM get[] = {
        OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, UDP_TAG_BYTES),
        OSSL_PARAM_construct_end()};
    if (EVP_EncryptInit_ex(c, NULL, NULL, NULL, nonce) != 1 ||
        EVP_EncryptUpdate(c, NULL, &out, p + UDP_TAG_BYTES, (int)(n - UDP_TAG_BYTES)) != 1 ||
        EVP_EncryptFinal_ex(c, none, &out) != 1 || EVP_CIPHER_CTX_get_params(c, get) != 1)
        return -1;
    return 0;
}

int udp_auth_seal(udp_auth_t *a, void *pkt, size_t n)
{
    unsigned char tag[UDP_TAG_BYTES];
    if (udp_auth_tag(a, pkt, n, UDP_AUTH_ANY, tag) != 0)
        return -1;
    memcpy(pkt, tag, sizeof tag);
    return 0;
}

/* The tag of a packet in two pieces (udp_auth_seal2, udp_auth_check2) into tag. */
static int udp_auth_tag2(udp_auth_t *a, const void *pkt, size_t n1, const void *ext, size_t n2,
                         unsigned char tag[UDP_TAG_BYTES])
{
    unsigned char nonce[UDP_NONCE_BYTES];
    const unsigned char *p = pkt;
    if (n1 < sizeof(udp_hdr_t))
        return -1;
    if (!a->on) { /* the keyed checksum, computed across the pieces (udp_csum2) */
        udp_hdr_t z;
        memcpy(&z, p, sizeof z);
        memset(z.tag, 0, sizeof z.tag);
        uint32_t c = udp_csum2(&z, p + sizeof z, n1 - sizeof z, ext, n2, a->seed);
        memset(tag, 0, UDP_TAG_BYTES);
        memcpy(tag, &c, sizeof c);
        return 0;
    }
    if (udp_auth_nonce(p, nonce) != 0)
        return -1;
#ifdef FMPL_HAVE_IPSEC_MB
    if (a->fast) {
        /* GMAC's update interface: the same tag as the whole packet given as GCM's
         * additional data (udp_auth_tag; udp_auth_init checks the two agree) */
        const struct gcm_key_data *k = a->fast;
        struct gcm_context_data ctx;
        IMB_AES256_GMAC_INIT(udp_imb, k, &ctx, nonce, sizeof nonce);
        IMB_AES256_GMAC_UPDATE(udp_imb, k, &ctx, p + UDP_TAG_BYTES, n1 - UDP_TAG_BYTES);
        if (n2)
            IMB_AES256_GMAC_UPDATE(udp_imb, k, &ctx, ext, n2);
        IMB_AES256_GMAC_FINALIZE(udp_imb, k, &ctx, tag, UDP_TAG_BYTES);
        return 0;
    }
#endif
    EVP_CIPHER_CTX *c = a->ctx;
    unsigned char none[16];
    int out = 0;
    OSSL_PARAM get[] = {
        OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, UDP_TAG_BYTES),
        OSSL_PARAM_construct_end()};
    if (EVP_EncryptInit_ex(c, NULL, NULL, NULL, nonce) != 1 ||
        EVP_EncryptUpdate(c, NULL, &out, p + UDP_TAG_BYTES, (int)(n1 - UDP_TAG_BYTES)) != 1 ||
        (n2 && EVP_EncryptUpdate(c, NULL, &out, ext, (int)n2) != 1) ||
        EVP_EncryptFinal_ex(c, none, &out) != 1 || EVP_CIPHER_CTX_get_params(c, get) != 1)
        return -1;
    return 0;
}

int udp_auth_seal2(udp_auth_t *a, void *pkt, size_t n1, const void *ext, size_t n2)
{
    unsigned char tag[UDP_TAG_BYTES];
    if (udp_auth_tag2(a, pkt, n1, ext, n2, tag) != 0)
        return -1;
    memcpy(pkt, tag, sizeof tag);
    return 0;
}

int udp_auth_check2(udp_auth_t *a, const void *pkt, size_t n1, const void *ext, size_t n2)
{
    unsigned char tag[UDP_TAG_BYTES];
    if (udp_auth_tag2(a, pkt, n1, ext, n2, tag) != 0)
        return 0;
    return CRYPTO_memcmp(tag, pkt, sizeof tag) == 0;
}

int udp_auth_check(udp_auth_t *a, const void *pkt, size_t n)
{
    unsigned char tag[UDP_TAG_BYTES];
    if (n < sizeof(udp_hdr_t) || udp_auth_tag(a, pkt, n, UDP_AUTH_ANY, tag) != 0)
        return 0;
    return CRYPTO_memcmp(tag, pkt, sizeof tag) == 0;
}
