/* udp_forge_jobs.c — an on-path attacker between two jobs (udp.c OTHER JOBS, link.c): the
 * packets of another job are checked with the key of their pair of processes, so forged
 * and replayed ones are refused and counted like any other, and the jobs go on. Two
 * separately started jobs "a" and "b" meet (vnic_jobs_meet.h: their link agreed over TCP)
 * and register each other's processes. Then, b's rank 0 is the victim and a's rank 0 the
 * sender whose packets are sniffed (tests/udp_forge.c's approach, across jobs):
 *   1. b0 captures (vnic_udp_capture) up to 8 genuine packets from a0 (its puts and a
 *      get) and hands them over (a file: the attacker's sniffer);
 *   2. a0 replays each unchanged from its registered address (vnic_udp_inject: an
 *      attacker spoofing it) -> replayed;
 *   3. a0 forges from the first one, keeping the sniffed tag: a PUT into b0's box, a
 *      BYE, a STOP, each with a fresh counter; the PUT with its tag zeroed (missing); the
 *      sniffed packet with one payload bit flipped -> refused as forged (bad_csum);
 *   4. the captured packets sent again from an ordinary socket -> foreign (bad_secret).
 * b0 checks that its counters moved by exactly those numbers, its box is untouched, no
 * operation was refused and nobody died; then every process puts to and gets from every
 * process of the other job (contents checked, a0 -> b0 included: the forged BYE did not
 * end it) and closes. Run with shm jobs (udp between them only), with FMPL_TRANSPORT=udp,
 * and with FMPL_UDP_AUTH=off in both jobs (the same refusals by the keyed checksum).
 * Usage: udp_forge_jobs a|b DIR */
#include "vnic/udp_wire.h"
#include "vnic_jobs_meet.h"

#define KEY_BOX 2u
#define KEY_SCRATCH 4u
#define NPUT 6
#define NFORGED 5

typedef struct capture {
    uint32_t n;
    uint32_t len[VNIC_UDP_CAPTURE];
    unsigned char pkt[VNIC_UDP_CAPTURE][VNIC_UDP_CAPTURE_BYTES];
} capture_t;

static void cap_save(const char *dir, const capture_t *c)
{
    char tmp[512], path[512];
    snprintf(tmp, sizeof tmp, "%s/.cap.tmp", dir);
    snprintf(path, sizeof path, "%s/cap", dir);
    FILE *f = fopen(tmp, "wb");
    CHECK(f && fwrite(c, sizeof *c, 1, f) == 1 && fclose(f) == 0 && rename(tmp, path) == 0);
}

static void cap_load(const char *dir, capture_t *c)
{
    char path[512], flag[8];
    meet_read(dir, "cap.ready", flag, sizeof flag);
    snprintf(path, sizeof path, "%s/cap", dir);
    FILE *f = fopen(path, "rb");
    CHECK(f && fread(c, sizeof *c, 1, f) == 1);
    fclose(f);
}

/* The forgeries of sniffed packet p (n bytes, sniffed tag kept): into out, lengths in len. */
static int forge(const unsigned char *p, size_t n, unsigned char out[][VNIC_UDP_CAPTURE_BYTES],
                 size_t *len)
{
    udp_hdr_t h0;
    memcpy(&h0, p, sizeof h0);
    int k = 0;
    /* a PUT of 8 bytes of 0x77 into the box at offset 0; then the same, its tag zeroed */
    for (int zero = 0; zero < 2; zero++) {
        udp_hdr_t h = h0;
        h.type = UDP_T_DATA;
        h.flags = 0;
        h.ctr = h0.ctr + 1000 + (uint64_t)k;
        h.seq = h0.seq ? h0.seq + 1 : 1;
        h.len = (uint32_t)(sizeof(udp_op_t) + 8);
        if (zero)
            memset(h.tag, 0, sizeof h.tag);
        udp_op_t o;
        memset(&o, 0, sizeof o);
        o.kind = UDP_OP_PUT;
        o.key = KEY_BOX;
        o.len = 8;
        memcpy(out[k], &h, sizeof h);
        memcpy(out[k] + sizeof h, &o, sizeof o);
        memset(out[k] + UDP_HDRS, 0x77, 8);
        len[k++] = UDP_HDRS + 8;
    }
    const uint8_t types[2] = {UDP_T_BYE, UDP_T_STOP};
    for (int i = 0; i < 2; i++) {
        udp_hdr_t h = h0;
        h.type = types[i];
        h.flags = 0;
        h.ctr = h0.ctr + 1000 + (uint64_t)k;
        h.seq = 0;
        h.len = 0;
        memcpy(out[k], &h, sizeof h);
        len[k++] = sizeof h;
    }
    /* the sniffed packet from the main socket, a fresh counter, its last byte flipped */
    udp_hdr_t h = h0;
    h.ctr = h0.ctr + 1000 + (uint64_t)k;
    memcpy(out[k], p, n);
    memcpy(out[k], &h, sizeof h);
    out[k][n - 1] ^= 0x20;
    len[k++] = n;
    return k;
}

static int notified;

static void on_notify(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    (void)n;
    notified++;
}

static int notified_all(void *arg)
{
    return notified >= *(int *)arg;
}

int main(int argc, char **argv)
{
    CHECK(argc == 3 && (strcmp(argv[1], "a") == 0 || strcmp(argv[1], "b") == 0));
    const char *dir = argv[2];
    int role = argv[1][0] == 'b';
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    static uint64_t box[64], scratch[64];
    memset(box, 0x5a, sizeof box);
    CHECK_RC(vnic_mr_reg_key(v, KEY_BOX, box, sizeof box, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_SCRATCH, scratch, sizeof scratch, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, 3, on_notify, NULL), FMPL_SUCCESS);
    vnic_link_t link;
    meet_link(&t, dir, role, &link);

    /* addresses, then every process of the other job registered */
    char addr[VNIC_ADDR_MAX], name[64], text[VNIC_ADDR_MAX];
    CHECK_RC(vnic_addr(v, addr, sizeof addr), FMPL_SUCCESS);
    snprintf(name, sizeof name, "%s.%d", argv[1], t.rank);
    meet_write(dir, name, addr);
    if (t.rank == 0) {
        snprintf(text, sizeof text, "%d", t.size);
        snprintf(name, sizeof name, "%s.size", argv[1]);
        meet_write(dir, name, text);
    }
    const char *other = role ? "a" : "b";
    snprintf(name, sizeof name, "%s.size", other);
    meet_read(dir, name, text, sizeof text);
    int osize = atoi(text);
    CHECK(osize >= 1 && osize <= 64);
    int *id = malloc((size_t)osize * sizeof *id);
    CHECK(id);
    for (int r = 0; r < osize; r++) {
        snprintf(name, sizeof name, "%s.%d", other, r);
        meet_read(dir, name, text, sizeof text);
        CHECK_RC(vnic_peer_add(v, text, &link, &id[r]), FMPL_SUCCESS);
    }

    vnic_udp_stats_t before, after;
    if (role == 1 && t.rank == 0) { /* the victim */
        CHECK_RC(vnic_udp_capture(v, vnic_npeers(v), 1), FMPL_ERR_RANK);
        CHECK_RC(vnic_udp_capture(v, id[0], VNIC_UDP_CAPTURE), FMPL_SUCCESS);
        meet_write(dir, "capturing", "1");
        meet_read(dir, "a.sent", text, sizeof text);
        static capture_t c;
        size_t len;
        uint64_t t0 = base_time_ns();
        while (vnic_udp_captured(v, 1, c.pkt[0], sizeof c.pkt[0], &len) != FMPL_SUCCESS &&
               base_time_ns() - t0 < 5000000000ull)
            vnic_progress(v);
        while (c.n < VNIC_UDP_CAPTURE &&
               vnic_udp_captured(v, (int)c.n, c.pkt[c.n], sizeof c.pkt[0], &len) == FMPL_SUCCESS)
            c.len[c.n++] = (uint32_t)len;
        CHECK(c.n >= 2);
        for (int i = 0; i < NPUT; i++)
            CHECK(scratch[i] == 0x1000 + (uint64_t)i);
        CHECK_RC(vnic_udp_stats(v, &before), FMPL_SUCCESS);
        cap_save(dir, &c);
        meet_write(dir, "cap.ready", "1");
        meet_read(dir, "a.forged", text, sizeof text);
        uint64_t want_replayed = c.n, want_forged = NFORGED, want_foreign = c.n;
        t0 = base_time_ns();
        for (;;) {
            vnic_progress(v);
            CHECK_RC(vnic_udp_stats(v, &after), FMPL_SUCCESS);
            if ((after.replayed - before.replayed >= want_replayed &&
                 after.bad_csum - before.bad_csum >= want_forged &&
                 after.bad_secret - before.bad_secret >= want_foreign) ||
                base_time_ns() - t0 > 10000000000ull)
                break;
        }
        printf("b0 refused from the other job: replayed %llu, forged %llu, foreign %llu (%u "
               "sniffed packets)\n",
               (unsigned long long)(after.replayed - before.replayed),
               (unsigned long long)(after.bad_csum - before.bad_csum),
               (unsigned long long)(after.bad_secret - before.bad_secret), c.n);
        CHECK(after.replayed - before.replayed == want_replayed);
        CHECK(after.bad_csum - before.bad_csum == want_forged);
        CHECK(after.bad_secret - before.bad_secret == want_foreign);
        CHECK(after.malformed == before.malformed && after.truncated == before.truncated);
        CHECK(after.refused == before.refused && after.peer_deaths == before.peer_deaths);
        for (int i = 0; i < 64; i++)
            CHECK(box[i] == 0x5a5a5a5a5a5a5a5aull);
        meet_write(dir, "forge.done", "1");
    } else if (role == 0 && t.rank == 0) { /* the sniffed sender, then the attacker */
        meet_read(dir, "capturing", text, sizeof text);
        for (int i = 0; i < NPUT; i++) {
            uint64_t w = 0x1000 + (uint64_t)i;
            CHECK_RC(vnic_put(v, id[0], &w, 8, KEY_SCRATCH, 8 * (uint64_t)i), FMPL_SUCCESS);
        }
        uint64_t back = 0;
        CHECK_RC(vnic_get(v, id[0], &back, 8, KEY_SCRATCH, 0), FMPL_SUCCESS);
        CHECK(back == 0x1000);
        meet_write(dir, "a.sent", "1");
        static capture_t c;
        cap_load(dir, &c);
        CHECK(c.n >= 2 && c.n <= VNIC_UDP_CAPTURE);
        for (uint32_t i = 0; i < c.n; i++) {
            udp_hdr_t h;
            memcpy(&h, c.pkt[i], sizeof h);
            CHECK_RC(vnic_udp_inject(v, id[0], (h.flags & UDP_HF_TWIN) != 0, c.pkt[i], c.len[i]),
                     FMPL_SUCCESS);
        }
        static unsigned char forged[NFORGED][VNIC_UDP_CAPTURE_BYTES];
        size_t flen[NFORGED];
        CHECK(forge(c.pkt[0], c.len[0], forged, flen) == NFORGED);
        for (int i = 0; i < NFORGED; i++)
            CHECK_RC(vnic_udp_inject(v, id[0], 0, forged[i], flen[i]), FMPL_SUCCESS);
        /* an ordinary socket: b0's address from its vnic address */
        char ip[64];
        unsigned port;
        meet_read(dir, "b.0", text, sizeof text);
        CHECK(sscanf(text, "fmpl-udp:%*d:%63[0-9.]:%u:", ip, &port) == 2);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        CHECK(inet_aton(ip, &sa.sin_addr));
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        CHECK(fd >= 0);
        for (uint32_t i = 0; i < c.n; i++)
            CHECK(sendto(fd, c.pkt[i], c.len[i], 0, (struct sockaddr *)&sa, sizeof sa) ==
                  (ssize_t)c.len[i]);
        close(fd);
        meet_write(dir, "a.forged", "1");
    }

    meet_read(dir, "forge.done", text, sizeof text);
    /* everyone: a put with a notification to every process of the other job, then a get */
    for (int r = 0; r < osize; r++) {
        uint64_t mine = 0xabc0000 + 0x1000 * (uint64_t)role + 0x10 * (uint64_t)t.rank + (uint64_t)r;
        vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = id[r], .flags = VNIC_F_NOTIFY, .chan = 3};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = &mine;
        op.local.u.contig.len = 8;
        op.remote.key = KEY_BOX;
        op.remote.kind = VNIC_DESC_CONTIG;
        op.remote.u.off = 8 * (uint64_t)t.rank;
        CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
    }
    CHECK_RC(vnic_wait(v, notified_all, &osize, -1), FMPL_SUCCESS);
    for (int r = 0; r < osize; r++)
        CHECK(box[r] ==
              0xabc0000 + 0x1000 * (uint64_t)!role + 0x10 * (uint64_t)r + (uint64_t)t.rank);
    for (int r = 0; r < osize; r++) {
        uint64_t back = 0;
        CHECK_RC(vnic_get(v, id[r], &back, 8, KEY_BOX, 8 * (uint64_t)t.rank), FMPL_SUCCESS);
        CHECK(back == 0xabc0000 + 0x1000 * (uint64_t)role + 0x10 * (uint64_t)t.rank + (uint64_t)r);
    }
    /* nobody leaves before the other job has read its box */
    snprintf(name, sizeof name, "%s.read.%d", argv[1], t.rank);
    meet_write(dir, name, "1");
    for (int r = 0; r < osize; r++) {
        snprintf(name, sizeof name, "%s.read.%d", other, r);
        meet_read(dir, name, text, sizeof text);
    }
    vt_fini(&t);
    free(id);
    printf("udp_forge_jobs %s rank %d: OK\n", argv[1], t.rank);
    return 0;
}
