/* udp_mac.c — the cost of candidate MACs for the udp transport's packets (src/vnic/
 * udp_auth.h), on 64-byte packets (a 56-byte header and 8 bytes of payload: an 8-byte
 * message) and 65000-byte packets (the loopback MTU; 64 KiB), in the way the transport
 * would use them: one keyed context reused, a new nonce per packet where the primitive
 * needs one, the tag over the whole packet. Prints ns per packet and GB/s, the median of
 * UDP_MAC_ROUNDS (default 5) rounds. OpenSSL (libcrypto, the library's dependency):
 * AES-128/256-GCM (16-byte nonce; AES-256 also with the 12-byte nonce the transport
 * uses) and ChaCha20-Poly1305 with the packet as additional data only (GMAC,
 * Poly1305 with per-packet keys), HMAC-SHA-256, BLAKE2b-MAC. libsodium when built with it
 * (HAVE_SODIUM: bench/CMakeLists.txt adds it when pkg-config finds libsodium): the
 * ChaCha20-Poly1305 and AES-256-GCM AEADs the same way, crypto_auth (HMAC-SHA-512-256),
 * keyed crypto_generichash (BLAKE2b). Last, the transport's own udp_auth_tag (src/vnic/
 * udp_auth.c: AES-256-GMAC, 12-byte nonce) through each library it can use (OpenSSL,
 * libsodium, Intel's ipsec-mb when built with it) and udp_auth_seal (the one it picks),
 * on packets with a valid header. Usage: udp_mac [--rounds=N]. */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef HAVE_SODIUM
#include <sodium.h>
#endif

#include "vnic/udp_auth.h"

static unsigned char buf[65536], key[32], tag[64], none[16]; /* none: an empty ciphertext */
static unsigned char nonce[24];
static unsigned long long ctr;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef void (*mac_fn)(size_t n);

static EVP_CIPHER_CTX *gcm128, *gcm256, *gcm256n12, *cp;
static EVP_MAC_CTX *hmac, *b2mac;

static void next_nonce(void)
{
    ctr++;
    memcpy(nonce + 8, &ctr, sizeof ctr);
}

/* as src/vnic/udp_auth.c does it: the tag read as a parameter (cheaper than ctrl) */
static void aead_ossl(EVP_CIPHER_CTX *c, size_t n)
{
    int ol;
    next_nonce();
    OSSL_PARAM get[] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16),
                        OSSL_PARAM_construct_end()};
    if (EVP_EncryptInit_ex(c, NULL, NULL, NULL, nonce) != 1 ||
        EVP_EncryptUpdate(c, NULL, &ol, buf, (int)n) != 1 ||
        EVP_EncryptFinal_ex(c, none, &ol) != 1 || EVP_CIPHER_CTX_get_params(c, get) != 1)
        abort();
}
static void ossl_gmac128(size_t n)
{
    aead_ossl(gcm128, n);
}
static void ossl_gmac256(size_t n)
{
    aead_ossl(gcm256, n);
}
static void ossl_gmac256n12(size_t n)
{
    aead_ossl(gcm256n12, n);
}
static void ossl_chapoly(size_t n)
{
    aead_ossl(cp, n);
}
static void mac_ossl(EVP_MAC_CTX *m, size_t n)
{
    size_t ol;
    if (EVP_MAC_init(m, NULL, 0, NULL) != 1 || EVP_MAC_update(m, buf, n) != 1 ||
        EVP_MAC_final(m, tag, &ol, sizeof tag) != 1)
        abort();
}
static void ossl_hmac(size_t n)
{
    mac_ossl(hmac, n);
}
static void ossl_blake2(size_t n)
{
    mac_ossl(b2mac, n);
}
#ifdef HAVE_SODIUM
static void na_chapoly(size_t n)
{
    next_nonce();
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(none, tag, NULL, NULL, 0, buf, n, NULL,
                                                       nonce, key);
}
static crypto_aead_aes256gcm_state na_gcm_state;
static void na_gmac(size_t n)
{
    next_nonce();
    crypto_aead_aes256gcm_encrypt_detached_afternm(none, tag, NULL, NULL, 0, buf, n, NULL, nonce,
                                                   &na_gcm_state);
}
static void na_hmac(size_t n)
{
    crypto_auth(tag, buf, n, key);
}
static void na_blake2(size_t n)
{
    crypto_generichash(tag, 16, buf, n, key, 32);
}
#endif

static udp_auth_t transport;
/* A new transmission counter in buf's header, as the transport gives every packet. */
static void next_ctr(void)
{
    udp_hdr_t h;
    memcpy(&h, buf, sizeof h);
    h.ctr = ++ctr;
    memcpy(buf, &h, sizeof h);
}

static void transport_seal(size_t n)
{
    next_ctr();
    if (udp_auth_seal(&transport, buf, n) != 0)
        abort();
}

static int transport_how;
static void transport_tag(size_t n)
{
    next_ctr();
    if (udp_auth_tag(&transport, buf, n, transport_how, tag) != 0)
        abort();
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run(const char *name, mac_fn f, int rounds)
{
    const size_t sizes[2] = {64, 65000};
    printf("%-44s", name);
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k], reps = n <= 64 ? 200000 : 2000;
        double t[32];
        for (int r = 0; r < rounds; r++) {
            double t0 = now();
            for (size_t i = 0; i < reps; i++)
                f(n);
            t[r] = (now() - t0) / (double)reps;
        }
        qsort(t, (size_t)rounds, sizeof t[0], cmp);
        double m = t[rounds / 2];
        printf(" %9.0f ns %6.2f GB/s", m * 1e9, (double)n / m / 1e9);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    int rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else {
            fprintf(stderr, "usage: udp_mac [--rounds=N]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 32)
        rounds = 5;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (unsigned char)(i * 17 + 3);
    gcm128 = EVP_CIPHER_CTX_new();
    gcm256 = EVP_CIPHER_CTX_new();
    cp = EVP_CIPHER_CTX_new();
    gcm256n12 = EVP_CIPHER_CTX_new();
    if (EVP_EncryptInit_ex(gcm256n12, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
        EVP_CIPHER_CTX_ctrl(gcm256n12, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) != 1 ||
        EVP_EncryptInit_ex(gcm256n12, NULL, NULL, key, NULL) != 1)
        abort();
    if (EVP_EncryptInit_ex(gcm128, EVP_aes_128_gcm(), NULL, NULL, NULL) != 1 ||
        EVP_CIPHER_CTX_ctrl(gcm128, EVP_CTRL_GCM_SET_IVLEN, 16, NULL) != 1 ||
        EVP_EncryptInit_ex(gcm128, NULL, NULL, key, NULL) != 1 ||
        EVP_EncryptInit_ex(gcm256, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
        EVP_CIPHER_CTX_ctrl(gcm256, EVP_CTRL_GCM_SET_IVLEN, 16, NULL) != 1 ||
        EVP_EncryptInit_ex(gcm256, NULL, NULL, key, NULL) != 1 ||
        EVP_EncryptInit_ex(cp, EVP_chacha20_poly1305(), NULL, key, NULL) != 1)
        abort();
    EVP_MAC *hm = EVP_MAC_fetch(NULL, "HMAC", NULL), *bm = EVP_MAC_fetch(NULL, "BLAKE2BMAC", NULL);
    hmac = EVP_MAC_CTX_new(hm);
    b2mac = EVP_MAC_CTX_new(bm);
    OSSL_PARAM hp[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                       OSSL_PARAM_construct_end()};
    if (!hmac || !b2mac || EVP_MAC_init(hmac, key, 32, hp) != 1 ||
        EVP_MAC_init(b2mac, key, 32, NULL) != 1)
        abort();
    printf("# udp_mac: median of %d rounds; packets of 64 B (8-byte message) and 65000 B\n",
           rounds);
    printf("%-44s %25s %25s\n", "MAC", "64 B", "65000 B");
    run("openssl AES-128-GCM, packet as AAD (GMAC)", ossl_gmac128, rounds);
    run("openssl AES-256-GCM, packet as AAD (GMAC)", ossl_gmac256, rounds);
    run("openssl AES-256-GMAC, 12-byte nonce", ossl_gmac256n12, rounds);
    run("openssl ChaCha20-Poly1305, packet as AAD", ossl_chapoly, rounds);
    run("openssl HMAC-SHA-256", ossl_hmac, rounds);
    run("openssl BLAKE2b-MAC", ossl_blake2, rounds);
#ifdef HAVE_SODIUM
    if (sodium_init() < 0)
        abort();
    run("libsodium ChaCha20-Poly1305 (IETF), AAD", na_chapoly, rounds);
    if (crypto_aead_aes256gcm_is_available()) {
        crypto_aead_aes256gcm_beforenm(&na_gcm_state, key);
        run("libsodium AES-256-GCM, AAD (GMAC)", na_gmac, rounds);
    }
    run("libsodium crypto_auth (HMAC-SHA-512-256)", na_hmac, rounds);
    run("libsodium crypto_generichash keyed (BLAKE2b)", na_blake2, rounds);
#else
    printf("# libsodium: not built in (install libsodium-dev and reconfigure)\n");
#endif
    {
        udp_hdr_t h;
        memset(&h, 0, sizeof h);
        h.src = 0;
        h.dst = 1;
        memcpy(buf, &h, sizeof h);
        if (udp_auth_init(&transport, key, 1) != 0)
            abort();
        transport_how = UDP_AUTH_OPENSSL;
        run("transport: udp_auth_tag, OpenSSL", transport_tag, rounds);
        if (transport.small) {
            transport_how = UDP_AUTH_SODIUM;
            run("transport: udp_auth_tag, libsodium", transport_tag, rounds);
        }
        if (transport.fast) {
            transport_how = UDP_AUTH_IPSEC_MB;
            run("transport: udp_auth_tag, ipsec-mb", transport_tag, rounds);
        } else {
            printf("# ipsec-mb: not built in (install libipsec-mb-dev and reconfigure)\n");
        }
        run("transport: udp_auth_seal", transport_seal, rounds);
        udp_auth_fini(&transport);
    }
    EVP_CIPHER_CTX_free(gcm128);
    EVP_CIPHER_CTX_free(gcm256);
    EVP_CIPHER_CTX_free(gcm256n12);
    EVP_CIPHER_CTX_free(cp);
    EVP_MAC_CTX_free(hmac);
    EVP_MAC_CTX_free(b2mac);
    EVP_MAC_free(hm);
    EVP_MAC_free(bm);
    return 0;
}
