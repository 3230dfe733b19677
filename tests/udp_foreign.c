/* udp_foreign.c — datagrams from outside the protocol are refused and counted, never
 * trusted. Every rank but 0 sends to rank 0's port (read from boot) from a socket of its
 * own (not the address it registered): well-formed packets claiming to come from it
 * with a tag made with a wrong key and even with the job key (an insider's forgery from
 * a foreign address), all refused as foreign; truncated ones (shorter than a header;
 * shorter than the header says), malformed ones with a valid tag (unknown type, wrong
 * destination, source out of range, source = the receiver, counter 0, a DATA packet
 * with an unknown operation, a GETREQ with a partial segment, a PUT whose lengths
 * disagree), and random bytes (malformed). Rank 0 checks its counters moved by exactly
 * those numbers, that nothing was executed (its region is untouched), and the job still
 * works afterwards (a put and a get with contents checked). Run with
 * FMPL_TRANSPORT=udp. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vnic/udp_auth.h"
#include "vnic/udp_wire.h"
#include "vnic_common.h"

#define KEY_BOX 2u

static int sock_to(const char *addr, struct sockaddr_in *sa)
{
    char ip[64];
    unsigned port;
    CHECK(sscanf(addr, "%63[0-9.]:%u", ip, &port) == 2);
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    CHECK(inet_aton(ip, &sa->sin_addr));
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(fd >= 0);
    return fd;
}

static void send_raw(int fd, const struct sockaddr_in *sa, const void *p, size_t n)
{
    CHECK(sendto(fd, p, n, 0, (const struct sockaddr *)sa, sizeof *sa) == (ssize_t)n);
}

/* A header from `src` to `dst` with a valid tag (under key a) over n bytes at buf. */
static void make(unsigned char *buf, size_t n, udp_auth_t *a, uint8_t type, uint32_t src,
                 uint32_t dst)
{
    static uint64_t ctr;
    udp_hdr_t h;
    memset(&h, 0, sizeof h);
    h.ctr = ++ctr;
    h.type = type;
    h.version = UDP_WIRE_VERSION;
    h.src = src;
    h.dst = dst;
    h.seq = type == UDP_T_DATA ? 1000 : 0;
    h.len = (uint32_t)(n - sizeof h);
    memcpy(buf, &h, sizeof h);
    CHECK(udp_auth_seal(a, buf, n) == 0);
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    uint64_t box[64];
    memset(box, 0x5a, sizeof box);
    CHECK_RC(vnic_mr_reg_key(v, KEY_BOX, box, sizeof box, VNIC_ACC_ALL), FMPL_SUCCESS);
    vnic_udp_stats_t before, after;
    int rc = vnic_udp_stats(v, &before);
    if (rc == FMPL_ERR_UNSUPPORTED) {
        CHECK(t.size == 1 || getenv("FMPL_TRANSPORT") == NULL);
        vt_fini(&t);
        printf("udp_foreign: skipped (no udp transport)\n");
        return 0;
    }
    CHECK_RC(rc, FMPL_SUCCESS);
    vt_barrier(&t);

    /* expected per sender */
    const int n_foreign = 4, n_short = 3, n_malformed = 9;
    if (t.rank != 0) {
        char addr[BOOT_VALUE_MAX], kv[BOOT_VALUE_MAX];
        CHECK_RC(boot_get(t.boot, 0, "vnic.udp", addr), FMPL_SUCCESS);
        /* the job key (an insider's knowledge) and a wrong one */
        CHECK_RC(boot_get(t.boot, 0, "vnic.udp.key", kv), FMPL_SUCCESS);
        const char *hex = strchr(kv, ':');
        CHECK(hex && strlen(hex + 1) == 2 * UDP_KEY_BYTES);
        unsigned char key[UDP_KEY_BYTES];
        for (int i = 0; i < UDP_KEY_BYTES; i++) {
            unsigned b;
            CHECK(sscanf(hex + 1 + 2 * i, "%2x", &b) == 1);
            key[i] = (unsigned char)b;
        }
        int on = strncmp(kv, "on:", 3) == 0;
        udp_auth_t secret, other;
        CHECK(udp_auth_init(&secret, key, on) == 0);
        key[0] ^= 1;
        CHECK(udp_auth_init(&other, key, on) == 0);
        struct sockaddr_in sa;
        int fd = sock_to(addr, &sa);
        unsigned char buf[512];
        uint32_t me = (uint32_t)t.rank;
        /* foreign: wrong key (a packet of another job), the job key (an insider), from
         * an address that is not the one this rank registered */
        size_t dn = UDP_HDRS + 16;
        memset(buf, 0, sizeof buf);
        ((udp_op_t *)(void *)(buf + sizeof(udp_hdr_t)))->kind = UDP_OP_AM;
        ((udp_op_t *)(void *)(buf + sizeof(udp_hdr_t)))->len = 16;
        make(buf, sizeof(udp_hdr_t), &other, UDP_T_ACK, me, 0);
        send_raw(fd, &sa, buf, sizeof(udp_hdr_t));
        make(buf, dn, &other, UDP_T_DATA, me, 0);
        send_raw(fd, &sa, buf, dn);
        make(buf, dn, &secret, UDP_T_DATA, me, 0);
        send_raw(fd, &sa, buf, dn);
        make(buf, sizeof(udp_hdr_t), &secret, UDP_T_BYE, me, 0);
        send_raw(fd, &sa, buf, sizeof(udp_hdr_t));
        /* truncated: 1 byte, half a header, a header claiming more than arrived */
        send_raw(fd, &sa, buf, 1);
        send_raw(fd, &sa, buf, sizeof(udp_hdr_t) / 2);
        make(buf, UDP_HDRS + 100, &secret, UDP_T_DATA, me, 0);
        send_raw(fd, &sa, buf, UDP_HDRS + 40);
        /* malformed with valid checksums */
        make(buf, sizeof(udp_hdr_t), &secret, 99, me, 0); /* unknown type */
        send_raw(fd, &sa, buf, sizeof(udp_hdr_t));
        make(buf, sizeof(udp_hdr_t), &secret, UDP_T_ACK, me, (uint32_t)t.size + 5); /* dst */
        send_raw(fd, &sa, buf, sizeof(udp_hdr_t));
        make(buf, sizeof(udp_hdr_t), &secret, UDP_T_ACK, 1000000, 0); /* src out of range */
        send_raw(fd, &sa, buf, sizeof(udp_hdr_t));
        make(buf, sizeof(udp_hdr_t), &secret, UDP_T_ACK, 0, 0); /* src = the receiver */
        send_raw(fd, &sa, buf, sizeof(udp_hdr_t));
        {
            udp_hdr_t h; /* counter 0 (never sent) */
            make(buf, sizeof(udp_hdr_t), &secret, UDP_T_ACK, me, 0);
            memcpy(&h, buf, sizeof h);
            h.ctr = 0;
            memcpy(buf, &h, sizeof h);
            CHECK(udp_auth_seal(&secret, buf, sizeof h) == 0);
            send_raw(fd, &sa, buf, sizeof(udp_hdr_t));
        }
        {
            memset(buf, 0, sizeof buf); /* DATA with an unknown operation */
            udp_op_t *o = (udp_op_t *)(void *)(buf + sizeof(udp_hdr_t));
            o->kind = 42;
            make(buf, UDP_HDRS, &secret, UDP_T_DATA, me, 0);
            send_raw(fd, &sa, buf, UDP_HDRS);
            memset(buf, 0, sizeof buf); /* GETREQ with a partial segment */
            o->kind = UDP_OP_GETREQ;
            o->key = KEY_BOX;
            o->len = 8;
            make(buf, UDP_HDRS + 8, &secret, UDP_T_DATA, me, 0);
            send_raw(fd, &sa, buf, UDP_HDRS + 8);
            memset(buf, 0, sizeof buf); /* a PUT whose op length disagrees with the packet */
            o->kind = UDP_OP_PUT;
            o->key = KEY_BOX;
            o->len = 64;
            make(buf, UDP_HDRS + 8, &secret, UDP_T_DATA, me, 0);
            send_raw(fd, &sa, buf, UDP_HDRS + 8);
        }
        /* random bytes with a consistent length and an unknown version: malformed */
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (unsigned char)(vt_word(9, 9, 9, i) >> 3);
        {
            udp_hdr_t h;
            memcpy(&h, buf, sizeof h);
            h.len = 300 - sizeof h;
            h.version = 0xee;
            memcpy(buf, &h, sizeof h);
        }
        send_raw(fd, &sa, buf, 300);
        close(fd);
        udp_auth_fini(&secret);
        udp_auth_fini(&other);
    }
    vt_barrier(&t);
    if (t.rank == 0) {
        /* the datagrams were sent before the senders' barrier announcement, but by
         * another socket: wait until all are counted */
        uint64_t want_secret = (uint64_t)(t.size - 1) * (uint64_t)n_foreign;
        uint64_t want_csum = 0;
        uint64_t want_short = (uint64_t)(t.size - 1) * (uint64_t)n_short;
        uint64_t want_mal = (uint64_t)(t.size - 1) * (uint64_t)n_malformed;
        uint64_t t0 = base_time_ns();
        for (;;) {
            vnic_progress(v);
            CHECK_RC(vnic_udp_stats(v, &after), FMPL_SUCCESS);
            if (after.bad_secret - before.bad_secret >= want_secret &&
                after.bad_csum - before.bad_csum >= want_csum &&
                after.truncated - before.truncated >= want_short &&
                after.malformed - before.malformed >= want_mal)
                break;
            CHECK(base_time_ns() - t0 < 10ull * 1000000000);
        }
        printf("rank 0 refused: secret %llu, checksum %llu, truncated %llu, malformed %llu\n",
               (unsigned long long)(after.bad_secret - before.bad_secret),
               (unsigned long long)(after.bad_csum - before.bad_csum),
               (unsigned long long)(after.truncated - before.truncated),
               (unsigned long long)(after.malformed - before.malformed));
        CHECK(after.bad_secret - before.bad_secret == want_secret);
        CHECK(after.bad_csum - before.bad_csum == want_csum);
        CHECK(after.truncated - before.truncated == want_short);
        CHECK(after.malformed - before.malformed == want_mal);
        CHECK(after.refused == before.refused);
        for (int i = 0; i < 64; i++)
            CHECK(box[i] == 0x5a5a5a5a5a5a5a5aull);
    }
    vt_barrier(&t);
    /* the job still works: everyone puts its rank into rank 0's box and reads it back */
    uint64_t mine = 0xabc000 + (uint64_t)t.rank, back = 0;
    CHECK_RC(vnic_put(v, 0, &mine, 8, KEY_BOX, 8 * (uint64_t)t.rank), FMPL_SUCCESS);
    vt_barrier(&t);
    CHECK_RC(vnic_get(v, 0, &back, 8, KEY_BOX, 8 * (uint64_t)t.rank), FMPL_SUCCESS);
    CHECK(back == mine);
    vt_fini(&t);
    if (t.rank == 0)
        printf("udp_foreign: ok (%d ranks)\n", t.size);
    return 0;
}
