/* udp_forge.c — an on-path attacker against the udp transport's packet authentication
 * (udp_auth.h): forged and replayed packets are refused and counted, and the job goes
 * on. Rank 0 is the victim, rank 1 the sender whose packets are sniffed and forged:
 *   1. rank 0 captures (vnic_udp_capture) up to 8 genuine packets from rank 1 (puts,
 *      acknowledgements, the test barrier's puts) and hands them to rank 1;
 *   2. rank 1 replays every captured packet unchanged from its own registered address
 *      (vnic_udp_inject: an attacker spoofing that address) -> refused as replayed;
 *   3. rank 1 forges every packet type (DATA with every operation kind, ACK, LOSE, STOP,
 *      GO, BYE) from the first captured packet: the sniffed header and tag, another
 *      type, fields and body, a fresh transmission counter; also the sniffed packet with
 *      only its counter changed, and with one payload or header bit flipped -> refused
 *      as forged (bad_csum), from rank 1's address;
 *   4. the same forgeries and the genuine captured packets, and a copy claiming rank 1's
 *      twin socket, sent from an ordinary socket -> refused as foreign (bad_secret);
 * Rank 0 checks that its counters moved by exactly those numbers, that nothing was
 * executed (its region untouched, no refused operation), that rank 1 is not taken as
 * gone (the forged BYE), and every rank then puts to and gets from ranks 0 and 1 with
 * contents checked, and closes normally. Run with FMPL_TRANSPORT=udp, with
 * FMPL_UDP_AUTH on (default) and off (the same refusals by the checksum). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vnic/udp_wire.h"
#include "vnic_common.h"

#define KEY_BOX 2u
#define KEY_XFER 3u
#define KEY_SCRATCH 4u
#define NPUT 6

typedef struct xfer {
    uint32_t n;
    uint32_t len[VNIC_UDP_CAPTURE];
    unsigned char pkt[VNIC_UDP_CAPTURE][VNIC_UDP_CAPTURE_BYTES];
} xfer_t;

static xfer_t xf;

/* The forgeries of sniffed packet p (len n): into out[k], lengths in outlen[k]; returns
 * how many. Each keeps the sniffed tag (the attacker has no key). */
static int forge_all(const unsigned char *p, size_t n, unsigned char out[][VNIC_UDP_CAPTURE_BYTES],
                     size_t *outlen)
{
    udp_hdr_t h0;
    memcpy(&h0, p, sizeof h0);
    int k = 0;
    const uint8_t kinds[] = {UDP_OP_PUT,     UDP_OP_GETREQ, UDP_OP_GETRESP, UDP_OP_AMO,
                             UDP_OP_AMORESP, UDP_OP_AM,     UDP_OP_DONE};
    for (size_t i = 0; i < sizeof kinds; i++) {
        udp_hdr_t h = h0;
        h.type = UDP_T_DATA;
        h.flags = 0;
        h.ctr = h0.ctr + 1000 + (uint64_t)k;
        h.seq = h0.seq ? h0.seq + 1 : 1;
        udp_op_t o;
        memset(&o, 0, sizeof o);
        o.kind = kinds[i];
        o.key = KEY_BOX;
        o.off = 0;
        o.imm = 0xdead;
        size_t pay =
            kinds[i] == UDP_OP_GETREQ                                                           ? 16
            : (kinds[i] == UDP_OP_AMO || kinds[i] == UDP_OP_AMORESP || kinds[i] == UDP_OP_DONE) ? 0
                                                                                                : 8;
        o.len = (uint32_t)pay;
        h.len = (uint32_t)(sizeof o + pay);
        memcpy(out[k], &h, sizeof h);
        memcpy(out[k] + sizeof h, &o, sizeof o);
        memset(out[k] + UDP_HDRS, 0x77, pay);
        if (kinds[i] == UDP_OP_GETREQ) {
            uint64_t seg[2] = {0, 8};
            memcpy(out[k] + UDP_HDRS, seg, sizeof seg);
        }
        outlen[k++] = UDP_HDRS + pay;
    }
    for (uint8_t type = UDP_T_ACK; type < UDP_T_MAX; type++) {
        udp_hdr_t h = h0;
        h.type = type;
        h.flags = 0;
        h.ctr = h0.ctr + 1000 + (uint64_t)k;
        h.seq = 0;
        h.ack = type == UDP_T_BYE ? h0.ack : 0x7fffffff;
        h.len = 0;
        memcpy(out[k], &h, sizeof h);
        outlen[k++] = sizeof h;
    }
    /* the sniffed packet with a fresh counter only; with one bit flipped (the last byte,
     * or a header byte: the ack field) */
    udp_hdr_t h = h0;
    h.ctr = h0.ctr + 1000 + (uint64_t)k;
    memcpy(out[k], p, n);
    memcpy(out[k], &h, sizeof h);
    outlen[k++] = n;
    memcpy(out[k], p, n);
    out[k][n - 1] ^= 0x20;
    outlen[k++] = n;
    memcpy(out[k], p, n);
    out[k][offsetof(udp_hdr_t, ack)] ^= 1;
    outlen[k++] = n;
    return k;
}

#define NFORGED 15 /* forge_all: 7 DATA + 5 control + 3 variants of the sniffed packet */

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    static uint64_t box[64], scratch[64];
    uint32_t ncap = 0; /* rank 0: packets captured */
    memset(box, 0x5a, sizeof box);
    CHECK_RC(vnic_mr_reg_key(v, KEY_BOX, box, sizeof box, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_XFER, &xf, sizeof xf, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_SCRATCH, scratch, sizeof scratch, VNIC_ACC_ALL), FMPL_SUCCESS);
    vnic_udp_stats_t before, after;
    int rc = vnic_udp_stats(v, &before);
    if (rc == FMPL_ERR_UNSUPPORTED || t.size < 2) {
        CHECK(t.size == 1 || getenv("FMPL_TRANSPORT") == NULL);
        vt_fini(&t);
        printf("udp_forge: skipped (no udp transport)\n");
        return 0;
    }
    CHECK_RC(rc, FMPL_SUCCESS);
    CHECK_RC(vnic_udp_capture(v, t.size, 1), FMPL_ERR_RANK);
    CHECK_RC(vnic_udp_capture(v, 1, VNIC_UDP_CAPTURE + 1), FMPL_ERR_ARG);

    /* 1. sniff */
    if (t.rank == 0)
        CHECK_RC(vnic_udp_capture(v, 1, VNIC_UDP_CAPTURE), FMPL_SUCCESS);
    vt_barrier(&t);
    if (t.rank == 1) {
        for (int i = 0; i < NPUT; i++) {
            uint64_t w = 0x1000 + (uint64_t)i;
            CHECK_RC(vnic_put(v, 0, &w, 8, KEY_SCRATCH, 8 * (uint64_t)i), FMPL_SUCCESS);
        }
        uint64_t back = 0;
        CHECK_RC(vnic_get(v, 0, &back, 8, KEY_SCRATCH, 0), FMPL_SUCCESS);
        CHECK(back == 0x1000);
    }
    vt_barrier(&t);
    if (t.rank == 0) {
        uint64_t t0 = base_time_ns();
        size_t len;
        while (vnic_udp_captured(v, VNIC_UDP_CAPTURE - 1, xf.pkt[0], sizeof xf.pkt[0], &len)) {
            vnic_progress(v);
            if (base_time_ns() - t0 > 2000000000ull)
                break; /* fewer packets came: what was captured will do */
        }
        xfer_t mine;
        memset(&mine, 0, sizeof mine);
        while (mine.n < VNIC_UDP_CAPTURE &&
               vnic_udp_captured(v, (int)mine.n, mine.pkt[mine.n], sizeof mine.pkt[0], &len) ==
                   FMPL_SUCCESS)
            mine.len[mine.n++] = (uint32_t)len;
        CHECK(mine.n >= 2);
        ncap = mine.n;
        CHECK_RC(vnic_put(v, 1, &mine, sizeof mine, KEY_XFER, 0), FMPL_SUCCESS);
    }
    vt_barrier(&t);
    CHECK_RC(vnic_udp_stats(v, &before), FMPL_SUCCESS);
    vt_barrier(&t);

    /* 2-4. attack rank 0 as rank 1 (its address) and from an ordinary socket */
    if (t.rank == 1) {
        CHECK(xf.n >= 2 && xf.n <= VNIC_UDP_CAPTURE);
        for (uint32_t i = 0; i < xf.n; i++)
            CHECK_RC(vnic_udp_inject(v, 0, 0, xf.pkt[i], xf.len[i]), FMPL_SUCCESS);
        static unsigned char forged[NFORGED][VNIC_UDP_CAPTURE_BYTES];
        size_t flen[NFORGED];
        CHECK(forge_all(xf.pkt[0], xf.len[0], forged, flen) == NFORGED);
        for (int i = 0; i < NFORGED; i++)
            CHECK_RC(vnic_udp_inject(v, 0, 0, forged[i], flen[i]), FMPL_SUCCESS);
        /* an ordinary socket on this host */
        char addr[BOOT_VALUE_MAX], ip[64];
        unsigned port;
        CHECK_RC(boot_get(t.boot, 0, "vnic.udp", addr), FMPL_SUCCESS);
        CHECK(sscanf(addr, "%63[0-9.]:%u", ip, &port) == 2);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        CHECK(inet_aton(ip, &sa.sin_addr));
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        CHECK(fd >= 0);
        for (uint32_t i = 0; i < xf.n; i++)
            CHECK(sendto(fd, xf.pkt[i], xf.len[i], 0, (struct sockaddr *)&sa, sizeof sa) ==
                  (ssize_t)xf.len[i]);
        for (int i = 0; i < NFORGED; i++)
            CHECK(sendto(fd, forged[i], flen[i], 0, (struct sockaddr *)&sa, sizeof sa) ==
                  (ssize_t)flen[i]);
        udp_hdr_t h;
        memcpy(&h, xf.pkt[0], sizeof h);
        h.flags |= UDP_HF_TWIN; /* claims to come from rank 1's twin socket */
        memcpy(forged[0], xf.pkt[0], xf.len[0]);
        memcpy(forged[0], &h, sizeof h);
        CHECK(sendto(fd, forged[0], xf.len[0], 0, (struct sockaddr *)&sa, sizeof sa) ==
              (ssize_t)xf.len[0]);
        close(fd);
    }
    if (t.rank == 0) {
        uint64_t want_replayed = ncap, want_forged = NFORGED,
                 want_foreign = (uint64_t)ncap + NFORGED + 1;
        uint64_t t0 = base_time_ns();
        for (;;) {
            vnic_progress(v);
            CHECK_RC(vnic_udp_stats(v, &after), FMPL_SUCCESS);
            if (after.replayed - before.replayed >= want_replayed &&
                after.bad_csum - before.bad_csum >= want_forged &&
                after.bad_secret - before.bad_secret >= want_foreign)
                break;
            if (base_time_ns() - t0 > 10000000000ull)
                break;
        }
        printf("rank 0 refused: replayed %llu, forged %llu, foreign %llu (%u sniffed "
               "packets)\n",
               (unsigned long long)(after.replayed - before.replayed),
               (unsigned long long)(after.bad_csum - before.bad_csum),
               (unsigned long long)(after.bad_secret - before.bad_secret), ncap);
        CHECK(after.replayed - before.replayed == want_replayed);
        CHECK(after.bad_csum - before.bad_csum == want_forged);
        CHECK(after.bad_secret - before.bad_secret == want_foreign);
        CHECK(after.malformed == before.malformed && after.truncated == before.truncated);
        CHECK(after.refused == before.refused);
        CHECK(after.peer_deaths == before.peer_deaths);
        for (int i = 0; i < 64; i++)
            CHECK(box[i] == 0x5a5a5a5a5a5a5a5aull);
        for (int i = 0; i < NPUT; i++)
            CHECK(scratch[i] == 0x1000 + (uint64_t)i);
    }
    vt_barrier(&t);
    /* the job still works, rank 1 included (the forged BYE did not end it): everyone
     * puts into ranks 0's and 1's boxes and reads back */
    for (int target = 0; target < 2; target++) {
        uint64_t mine = 0xabc000 + (uint64_t)t.rank + 0x100 * (uint64_t)target, back = 0;
        CHECK_RC(vnic_put(v, target, &mine, 8, KEY_BOX, 8 * (uint64_t)t.rank), FMPL_SUCCESS);
        vt_barrier(&t);
        CHECK_RC(vnic_get(v, target, &back, 8, KEY_BOX, 8 * (uint64_t)t.rank), FMPL_SUCCESS);
        CHECK(back == mine);
    }
    vt_fini(&t);
    if (t.rank == 0)
        printf("udp_forge: ok (%d ranks)\n", t.size);
    return 0;
}
