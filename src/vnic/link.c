/* link.c — links between jobs (dynamic processes): the key two jobs agree on when they
 * connect (MPI_Comm_accept/connect, MPI_Comm_spawn, MPI_Comm_join), and the registration
 * of the other job's processes as peers under it (udp.c, OTHER JOBS).
 *
 * KEYS. Each job keeps its own key (udp.c AUTHENTICATION) for its own traffic; it never
 * seals a packet to another job. Traffic between two jobs uses keys of that pair of jobs,
 * agreed when they connect, by one process of each side (the roots) over a stream socket:
 *   1. each sends a hello: "FMPL-LINK-1" (16 bytes), its FMPL_UDP_AUTH (1 byte), a fresh
 *      X25519 public key (32 bytes, a new key pair at every connection);
 *   2. both refuse a hello that is not one, an FMPL_UDP_AUTH that differs from theirs
 *      (the pair could not check each other's packets), or their own public key echoed;
 *   3. both compute the X25519 shared secret and expand it with HKDF-SHA256 (salt: the
 *      port's token, 128 random bits that are part of the port's name; info: the label,
 *      both public keys in byte order, the setting) into 96 bytes: the link secret (32),
 *      then one confirmation value per side (32 each, the side with the lower public key
 *      takes the first);
 *   4. each sends its confirmation and checks the other's (CRYPTO_memcmp): only a side
 *      that did the exchange and knows the token has it.
 * The roots then hand the link secret to their groups through the job's own channels
 * (shm, or udp under the job key: trusted as the job itself is). Every process derives,
 * for each process of the other side, two keys with HKDF-SHA256 (ikm: the link secret;
 * info: label, sender's address, receiver's address; addresses as vnic_addr writes them,
 * unique among live processes): tx = key(me -> it), rx = key(it -> me). So every ordered
 * pair of processes has a key of its own, used by one sender only, whose nonce (src, dst,
 * ctr) has ctr counting that sender's transmissions to that receiver from 1: no nonce
 * ever repeats under a key, even when one side's group spans several jobs whose ranks
 * coincide (a merged spawn intercommunicator connecting to a third job), and the two
 * directions of a pair never share one. A process registered by an earlier link keeps
 * that link's keys (both sides of a pair register each other in the same connection, so
 * they agree which).
 *
 * WHY A KEY EXCHANGE, and not a random key sent over the stream: the port's stream is
 * plain TCP, possibly between hosts, and not encrypted; a key sent on it would be read by
 * anyone on the path. X25519 keeps the link secret from a passive observer of the stream;
 * the token keeps out an active one: a man in the middle (or anyone who connects to the
 * port) without the port's name fails step 4 and learns nothing usable (the confirmation
 * it may see is a PRF value keyed with the token, 128 bits). The token travels only where
 * the port name does: MPI_Comm_spawn passes it to the children through the launcher's PMI
 * space (the channel the job key already trusts); MPI_Publish_name through fmplrun's name
 * service; anything else is the program's choice (as in MPI, whoever holds the port name
 * may connect). MPI_Comm_join has no token: its link is as trustworthy as the socket the
 * program gives (safe from observers, not from a man in the middle of that socket).
 * Within a job, processes trust each other: any of them could impersonate another process
 * of its job to the other job (it holds the link secret), as it could inside the job. */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "vnic/udp_auth.h"
#include "vnic/vnic_impl.h"

#define LINK_MAGIC "FMPL-LINK-1"
#define LINK_MAGIC_BYTES 16
#define LINK_PUB 32
#define LINK_HELLO (LINK_MAGIC_BYTES + 1 + LINK_PUB)
#define LINK_NO_TOKEN "fmpl-join (no token)"

_Static_assert(VNIC_LINK_BYTES == UDP_KEY_BYTES, "a link secret is a key's size");

int vnic_remote_ready(vnic_t *v)
{
    if (v->remote)
        return FMPL_SUCCESS;
    int rc = vnic_udp_open_alone(v, &v->remote);
    if (rc)
        return rc;
    snprintf(v->transports, sizeof v->transports, "%s,udp(other jobs)", v->local->ops->name);
    return FMPL_SUCCESS;
}

int vnic_npeers(const vnic_t *v)
{
    return v ? v->npeers : 0;
}

int vnic_addr(vnic_t *v, char *buf, size_t len)
{
    if (!v || !buf)
        return FMPL_ERR_ARG;
    int rc = vnic_remote_ready(v);
    if (rc)
        return rc;
    char a[128];
    rc = vnic_udp_addr(v->remote, a, sizeof a);
    if (rc)
        return rc;
    int n = snprintf(buf, len, "fmpl-udp:%d:%s:%s", v->rank, a, boot_job_id(v->boot));
    return n > 0 && (size_t)n < len ? FMPL_SUCCESS : FMPL_ERR_TRUNCATE;
}

/* HKDF-SHA256 of ikm with salt and info into out[outlen]. 0 on success. */
static int link_hkdf(const unsigned char *salt, size_t saltlen, const unsigned char *ikm,
                     size_t ikmlen, const unsigned char *info, size_t infolen, unsigned char *out,
                     size_t outlen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    int ok = c && EVP_PKEY_derive_init(c) == 1 && EVP_PKEY_CTX_set_hkdf_md(c, EVP_sha256()) == 1 &&
             EVP_PKEY_CTX_set1_hkdf_salt(c, salt, (int)saltlen) == 1 &&
             EVP_PKEY_CTX_set1_hkdf_key(c, ikm, (int)ikmlen) == 1 &&
             EVP_PKEY_CTX_add1_hkdf_info(c, info, (int)infolen) == 1 &&
             EVP_PKEY_derive(c, out, &outlen) == 1;
    EVP_PKEY_CTX_free(c);
    return ok ? 0 : -1;
}

/* The key of the packets from the process at address `from` to the one at `to`. */
static int link_pair_key(const vnic_link_t *link, const char *from, const char *to,
                         unsigned char key[UDP_KEY_BYTES])
{
    char info[2 * VNIC_ADDR_MAX + 32];
    int n = snprintf(info, sizeof info, "fmpl udp pair 1\n%s\n%s", from, to);
    if (n <= 0 || (size_t)n >= sizeof info)
        return -1;
    static const unsigned char salt[] = "fmpl udp pair";
    return link_hkdf(salt, sizeof salt - 1, link->secret, sizeof link->secret,
                     (const unsigned char *)info, (size_t)n, key, UDP_KEY_BYTES);
}

int vnic_peer_add(vnic_t *v, const char *addr, const vnic_link_t *link, int *peer)
{
    if (!v || !addr || !peer)
        return FMPL_ERR_ARG;
    int rank, n = 0;
    unsigned port, twin;
    char ip[64];
    if (sscanf(addr, "fmpl-udp:%d:%63[0-9.]:%u:%u:%n", &rank, ip, &port, &twin, &n) != 4 ||
        n == 0 || rank < 0 || !addr[n] || strlen(addr) >= VNIC_ADDR_MAX) {
        base_log("vnic: '%.80s' is not the address of a process", addr);
        return FMPL_ERR_ARG;
    }
    if (strcmp(addr + n, boot_job_id(v->boot)) == 0) { /* our own job */
        if (rank >= v->size)
            return FMPL_ERR_ARG;
        *peer = rank;
        return FMPL_SUCCESS;
    }
    if (!link)
        return FMPL_ERR_ARG;
    char me[VNIC_ADDR_MAX];
    int rc = vnic_addr(v, me, sizeof me);
    if (rc)
        return rc;
    unsigned char tx[UDP_KEY_BYTES], rx[UDP_KEY_BYTES];
    if (link_pair_key(link, me, addr, tx) != 0 || link_pair_key(link, addr, me, rx) != 0) {
        base_log("vnic: OpenSSL failed to derive the keys of a link");
        return FMPL_ERR_INIT;
    }
    int id;
    rc = vnic_udp_peer_add(v->remote, ip, port, twin, (uint32_t)rank, tx, rx, &id);
    OPENSSL_cleanse(tx, sizeof tx);
    OPENSSL_cleanse(rx, sizeof rx);
    if (rc) {
        base_log("vnic: cannot register '%.80s': %s", addr, base_strerror(rc));
        return rc;
    }
    if (id >= v->npeers) {
        int *pn = realloc(v->peer_node, (size_t)(id + 1) * sizeof *pn);
        if (!pn)
            return FMPL_ERR_NOMEM;
        v->peer_node = pn;
        for (int i = v->npeers; i <= id; i++)
            pn[i] = -1; /* no node of ours: the udp transport */
        v->npeers = id + 1;
    }
    *peer = id;
    return FMPL_SUCCESS;
}

int vnic_link_token(char token[VNIC_LINK_TOKEN_MAX])
{
    unsigned char r[16];
    if (RAND_bytes(r, sizeof r) != 1)
        return FMPL_ERR_SYS;
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(token + 2 * i, 3, "%02x", r[i]);
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------ the exchange */

typedef struct link_io {
    int fd;
    uint64_t deadline_ns;
} link_io_t;

/* Moves len bytes (out: writes them) before the deadline; FMPL_ERR_TIMEOUT or
 * FMPL_ERR_PEER (the stream ended or failed). */
static int link_move(link_io_t *io, void *buf, size_t len, int out)
{
    char *p = buf;
    while (len) {
        uint64_t now = base_time_ns();
        if (now >= io->deadline_ns)
            return FMPL_ERR_TIMEOUT;
        struct pollfd pf = {.fd = io->fd, .events = out ? POLLOUT : POLLIN};
        int ms = (int)((io->deadline_ns - now + 999999) / 1000000);
        int k = poll(&pf, 1, ms);
        if (k < 0 && errno != EINTR)
            return FMPL_ERR_PEER;
        if (k <= 0)
            continue;
        ssize_t n = out ? send(io->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(io->fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n <= 0)
            return FMPL_ERR_PEER;
        p += n;
        len -= (size_t)n;
    }
    return FMPL_SUCCESS;
}

/* Sends mine and receives theirs (len bytes each): a small message each way, which the
 * socket buffers hold, so both sides may send first. */
static int link_swap(link_io_t *io, const void *mine, void *theirs, size_t len)
{
    int rc = link_move(io, (void *)(uintptr_t)mine, len, 1);
    return rc ? rc : link_move(io, theirs, len, 0);
}

static int link_fail(char *why, size_t whylen, int rc, const char *fmt, ...)
{
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int link_io_fail(char *why, size_t whylen, int rc, const char *step)
{
    return rc == FMPL_ERR_TIMEOUT
               ? link_fail(why, whylen, rc, "the other side did not answer in time (%s)", step)
               : link_fail(why, whylen, rc, "the connection broke during the key exchange (%s)",
                           step);
}

/* A new X25519 key pair; its public key into pub. NULL when OpenSSL fails. */
static EVP_PKEY *link_keypair(unsigned char pub[LINK_PUB])
{
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, NULL);
    size_t n = LINK_PUB;
    if (!c || EVP_PKEY_keygen_init(c) != 1 || EVP_PKEY_keygen(c, &k) != 1 ||
        EVP_PKEY_get_raw_public_key(k, pub, &n) != 1 || n != LINK_PUB) {
        EVP_PKEY_free(k);
        k = NULL;
    }
    EVP_PKEY_CTX_free(c);
    return k;
}

/* The X25519 shared secret of mine and the peer's public key. 0 on success (OpenSSL
 * refuses a low-order public key, whose result would be all zeros). */
static int link_shared(EVP_PKEY *mine, const unsigned char pub[LINK_PUB],
                       unsigned char out[LINK_PUB])
{
    EVP_PKEY *peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, pub, LINK_PUB);
    EVP_PKEY_CTX *c = peer ? EVP_PKEY_CTX_new(mine, NULL) : NULL;
    size_t n = LINK_PUB;
    int ok = c && EVP_PKEY_derive_init(c) == 1 && EVP_PKEY_derive_set_peer(c, peer) == 1 &&
             EVP_PKEY_derive(c, out, &n) == 1 && n == LINK_PUB;
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(peer);
    return ok ? 0 : -1;
}

int vnic_link_agree(vnic_t *v, int fd, const char *token, int timeout_ms, vnic_link_t *link,
                    char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = 0;
    if (!v || fd < 0 || timeout_ms <= 0 || !link)
        return link_fail(why, whylen, FMPL_ERR_ARG, "bad arguments");
    int rc = vnic_remote_ready(v);
    if (rc)
        return link_fail(why, whylen, rc, "no udp transport for other jobs: %s", base_strerror(rc));
    int auth = vnic_udp_auth_on(v->remote);
    link_io_t io = {fd, base_time_ns() + (uint64_t)timeout_ms * 1000000};
    unsigned char hello[LINK_HELLO], theirs[LINK_HELLO];
    memset(hello, 0, sizeof hello);
    memcpy(hello, LINK_MAGIC, sizeof LINK_MAGIC);
    hello[LINK_MAGIC_BYTES] = (unsigned char)auth;
    EVP_PKEY *kp = link_keypair(hello + LINK_MAGIC_BYTES + 1);
    if (!kp)
        return link_fail(why, whylen, FMPL_ERR_INIT, "OpenSSL could not make an X25519 key");
    rc = link_swap(&io, hello, theirs, sizeof hello);
    if (rc) {
        EVP_PKEY_free(kp);
        return link_io_fail(why, whylen, rc, "hello");
    }
    const unsigned char *mine_pub = hello + LINK_MAGIC_BYTES + 1;
    const unsigned char *their_pub = theirs + LINK_MAGIC_BYTES + 1;
    int order = memcmp(mine_pub, their_pub, LINK_PUB);
    unsigned char shared[LINK_PUB], out[3 * 32];
    if (memcmp(theirs, hello, LINK_MAGIC_BYTES) != 0)
        rc = link_fail(why, whylen, FMPL_ERR_PEER, "the other side is not an FMPL process");
    else if (theirs[LINK_MAGIC_BYTES] != hello[LINK_MAGIC_BYTES])
        rc = link_fail(why, whylen, FMPL_ERR_MISMATCH,
                       "FMPL_UDP_AUTH is %s in this job but %s in the other one: both jobs "
                       "must use the same setting",
                       auth ? "on" : "off", auth ? "off" : "on");
    else if (order == 0 || link_shared(kp, their_pub, shared) != 0)
        rc = link_fail(why, whylen, FMPL_ERR_PEER, "the other side's public key is not valid");
    EVP_PKEY_free(kp);
    if (!rc) {
        unsigned char info[16 + 2 * LINK_PUB + 1];
        memcpy(info, "fmpl link 1", 12);
        memset(info + 12, 0, 4);
        memcpy(info + 16, order < 0 ? mine_pub : their_pub, LINK_PUB);
        memcpy(info + 16 + LINK_PUB, order < 0 ? their_pub : mine_pub, LINK_PUB);
        info[16 + 2 * LINK_PUB] = (unsigned char)auth;
        const char *salt = token ? token : LINK_NO_TOKEN;
        if (link_hkdf((const unsigned char *)salt, strlen(salt), shared, sizeof shared, info,
                      sizeof info, out, sizeof out) != 0)
            rc = link_fail(why, whylen, FMPL_ERR_INIT, "OpenSSL could not derive the link key");
    }
    OPENSSL_cleanse(shared, sizeof shared);
    if (!rc) {
        unsigned char got[32];
        const unsigned char *mine_conf = out + (order < 0 ? 32 : 64);
        const unsigned char *their_conf = out + (order < 0 ? 64 : 32);
        rc = link_swap(&io, mine_conf, got, sizeof got);
        if (rc)
            rc = link_io_fail(why, whylen, rc, "confirmation");
        else if (CRYPTO_memcmp(got, their_conf, sizeof got) != 0)
            rc = link_fail(why, whylen, FMPL_ERR_PEER,
                           "the other side does not know this port's name (wrong token), or "
                           "the connection was tampered with");
    }
    if (!rc)
        memcpy(link->secret, out, sizeof link->secret);
    OPENSSL_cleanse(out, sizeof out);
    return rc;
}
