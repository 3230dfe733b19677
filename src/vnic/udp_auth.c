/* udp_auth.c — tags of udp packets: AES-256-GMAC with a 96-bit nonce, computed by
 * whichever of Intel's ipsec-mb (where the build found it), libsodium and OpenSSL's EVP
 * interface is fastest on this CPU for the packet's size (the same function: all give
 * the same tag, test udp_wire checks it), or a keyed checksum with FMPL_UDP_AUTH=off (see
 * udp_auth.h). One keyed state per library and transport, keyed once; each packet sets
 * only its nonce. Uses nothing of the rest of the library (the fuzzer links it alone).
 *
 * WHICH LIBRARY: MEASURED, ONCE PER PROCESS (udp_auth_pick; bench/udp_mac.c has the full
 * table; figures in docs/performance.md). Their speeds depend on the CPU more than on
 * anything else: per 64-byte packet libsodium's crypto_aead_aes256gcm takes ~100 ns and
 * ipsec-mb's direct GCM call ~50-80 ns, where OpenSSL's EVP dispatch costs ~250-800 ns;
 * per 64 KiB packet, on a CPU with VAES/VPCLMULQDQ ipsec-mb's AVX-512 code takes ~2.2 us
 * (~30 GB/s) against OpenSSL's 5.5, while on one without them (Xeon model 85) OpenSSL's
 * PCLMULQDQ code is the fastest (~9.6 us, 6.8 GB/s; ipsec-mb 13, libsodium 16). So the
 * first udp_auth_init of a process times each library available on a 64-byte and on a
 * 64 KiB packet (about half a millisecond) and picks the fastest for packets under and
 * from UDP_AUTH_SMALL_MAX bytes, and for packets in two pieces (which libsodium, having no
 * incremental interface, cannot tag). Ranks that pick differently still agree: the tag is
 * one function. ipsec-mb's direct GCM call (gcm256_enc with no plaintext, the packet as
 * additional data) computes exactly GMAC; its manager is only a table of functions, set
 * up once per process and read-only after, so threads share it. libsodium takes only a
 * 12-byte nonce, hence the packing (udp_auth.h); the others are given the same 12 bytes.
 * Where libsodium's AES-GCM is not available (a CPU without AES-NI and PCLMULQDQ), it is
 * not a candidate. */
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
#include <time.h>
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

/* The process's choice of library per packet class (udp_auth_pick), and its account. */
static struct {
    int small, large, split; /* UDP_AUTH_*: under UDP_AUTH_SMALL_MAX bytes, from it, in two
                              * pieces */
    char text[256];
} udp_choice;
static pthread_mutex_t udp_choice_lock = PTHREAD_MUTEX_INITIALIZER;
static int udp_choice_done;

static const char *udp_lib_name(int how)
{
    return how == UDP_AUTH_IPSEC_MB ? "ipsec-mb" : how == UDP_AUTH_SODIUM ? "libsodium" : "OpenSSL";
}

/* Nanoseconds one tag of the n-byte packet pkt takes with library how: the best of
 * `rounds` timings of `reps` tags each. -1 when the library fails. */
static double udp_tag_cost(udp_auth_t *a, const unsigned char *pkt, size_t n, int how, int reps,
                           int rounds)
{
    unsigned char tag[UDP_TAG_BYTES];
    double best = -1;
    for (int r = 0; r < rounds; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < reps; i++)
            if (udp_auth_tag(a, pkt, n, how, tag) != 0)
                return -1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns =
            ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / reps;
        if (best < 0 || ns < best)
            best = ns;
    }
    return best;
}

/* Fills the n bytes at p with a test packet: a pattern, then a header of valid nonce
 * fields (udp_choice_measure's timings, udp_auth_init's agreement check). */
static void udp_probe_fill(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 37 + 11);
    udp_hdr_t h;
    memcpy(&h, p, sizeof h);
    h.src = 1;
    h.dst = 2;
    h.ctr = 3;
    memcpy(p, &h, sizeof h);
}

/* Times every library a has keyed on a 64-byte and a 64 KiB packet and fills udp_choice
 * (under its lock). 0, or -1 when no library tags. */
static int udp_choice_measure(udp_auth_t *a)
{
    enum { LARGE = 65000 };
    unsigned char *pkt = malloc(LARGE);
    if (!pkt)
        return -1;
    udp_probe_fill(pkt, LARGE);
    const int libs[] = {UDP_AUTH_IPSEC_MB, UDP_AUTH_SODIUM, UDP_AUTH_OPENSSL};
    double small_ns[4] = {0}, large_ns[4] = {0};
    int small = -1, large = -1, split = -1;
    for (size_t k = 0; k < sizeof libs / sizeof libs[0]; k++) {
        int how = libs[k];
        if ((how == UDP_AUTH_IPSEC_MB && !a->fast) || (how == UDP_AUTH_SODIUM && !a->small))
            continue;
        udp_tag_cost(a, pkt, LARGE, how, 1, 1); /* warm up */
        small_ns[how] = udp_tag_cost(a, pkt, 64, how, 32, 3);
        large_ns[how] = udp_tag_cost(a, pkt, LARGE, how, 1, 5);
        if (small_ns[how] < 0 || large_ns[how] < 0)
            continue;
        if (small < 0 || small_ns[how] < small_ns[small])
            small = how;
        if (large < 0 || large_ns[how] < large_ns[large])
            large = how;
        if (how != UDP_AUTH_SODIUM && (split < 0 || large_ns[how] < large_ns[split]))
            split = how;
    }
    free(pkt);
    if (small < 0 || split < 0)
        return -1;
    udp_choice.small = small;
    udp_choice.large = large;
    udp_choice.split = split;
    char *t = udp_choice.text;
    size_t len = sizeof udp_choice.text, k = 0;
    k +=
        (size_t)snprintf(t, len, "AES-256-GMAC by %s under %d B, %s from it (ns per 64 B / 64 KiB:",
                         udp_lib_name(small), UDP_AUTH_SMALL_MAX, udp_lib_name(large));
    const char *sep = "";
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && k < len; i++) {
        if (large_ns[libs[i]] <= 0)
            continue;
        k += (size_t)snprintf(t + k, len - k, "%s %s %.0f / %.0f", sep, udp_lib_name(libs[i]),
                              small_ns[libs[i]], large_ns[libs[i]]);
        sep = ",";
    }
    if (k < len)
        snprintf(t + k, len - k, ")");
    udp_choice_done = 1;
    return 0;
}

/* Sets a's choice of library per packet class: the process's, measured by its first call
 * (the top of this file says why). 0, or -1 when no library tags. */
static int udp_auth_pick(udp_auth_t *a)
{
    pthread_mutex_lock(&udp_choice_lock);
    int rc = udp_choice_done ? 0 : udp_choice_measure(a);
    a->how_small = udp_choice.small;
    a->how_large = udp_choice.large;
    a->how_split = udp_choice.split;
    pthread_mutex_unlock(&udp_choice_lock);
    return rc;
}

const char *udp_auth_choice(void)
{
    pthread_mutex_lock(&udp_choice_lock);
    const char *t = udp_choice_done ? udp_choice.text : NULL;
    pthread_mutex_unlock(&udp_choice_lock);
    return t;
}

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
        udp_probe_fill(probe, sizeof probe);
        if (udp_auth_tag(a, probe, sizeof probe, UDP_AUTH_IPSEC_MB, t1) != 0 ||
            udp_auth_tag(a, probe, sizeof probe, UDP_AUTH_OPENSSL, t2) != 0 ||
            memcmp(t1, t2, sizeof t1) != 0) {
            udp_auth_fini(a);
            return -1;
        }
    }
#endif
    if (udp_auth_pick(a) != 0) {
        udp_auth_fini(a);
        return -1;
    }
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
        how = n < UDP_AUTH_SMALL_MAX ? a->how_small : a->how_large;
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
    if (a->how_split == UDP_AUTH_IPSEC_MB && a->fast) {
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
