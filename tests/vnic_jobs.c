/* vnic_jobs.c — processes of two separately started jobs reach each other (vnic_addr,
 * vnic_peer_add; udp.c, OTHER JOBS). Run as two jobs of any sizes, "a" and "b", that
 * meet through files in DIR: each rank writes its address there, reads the other job's
 * and registers every process of it. Then, between every pair of processes across the
 * jobs: an active message (readiness, its payload checked), a 100 KB put with a
 * notification (contents checked at the target), a 3000-byte get (contents checked),
 * an atomic fetch-and-add on a counter word (the final count checked), and a closing
 * message; vnic_close then waits until the other job acknowledged everything. Also: an
 * address of this job's own process gives its rank, the same address twice the same id,
 * and a malformed address FMPL_ERR_ARG. The two jobs' rank 0s first agree on their link
 * (vnic_jobs_meet.h, with its error paths); every pair's packets use keys from it.
 * Usage: vnic_jobs a|b DIR */
#include "vnic_jobs_meet.h"

#define KEY_IN 6u  /* [other job's size][PUT_LEN]: what the other job put */
#define KEY_OUT 7u /* [GET_LEN]: what the other job reads */
#define KEY_CNT 8u /* one word: fetch-and-add by every process of the other job */
#define PUT_LEN 100000
#define GET_LEN 3000
#define CHAN 2

typedef struct job_test {
    int role, orole; /* 0: a, 1: b */
    int osize;
    int *id; /* [osize]: peer id of each process of the other job */
    int ready, done, notified;
} job_test_t;

static job_test_t jt;

static int other_rank(int id)
{
    for (int r = 0; r < jt.osize; r++)
        if (jt.id[r] == id)
            return r;
    return -1;
}

static void on_notify(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    int r = other_rank(n->src);
    CHECK(r >= 0);
    if (n->data) {
        char want[64];
        snprintf(want, sizeof want, "%s %d %s", n->imm ? "bye" : "ready", r, jt.orole ? "b" : "a");
        CHECK(n->len == strlen(want) + 1 && memcmp(n->data, want, n->len) == 0);
        if (n->imm)
            jt.done++;
        else
            jt.ready++;
    } else {
        CHECK(n->key == KEY_IN && n->off == (uint64_t)r * PUT_LEN && n->len == PUT_LEN &&
              n->imm == 77);
        jt.notified++;
    }
}

static int count_is(void *arg)
{
    return *(int *)arg == jt.osize;
}

static void send_msg(vt_t *t, int id, int bye)
{
    char msg[64];
    snprintf(msg, sizeof msg, "%s %d %s", bye ? "bye" : "ready", t->rank, jt.role ? "b" : "a");
    CHECK_RC(vnic_send_am(t->v, id, CHAN, (uint64_t)bye, msg, strlen(msg) + 1, NULL, 0),
             FMPL_SUCCESS);
}

int main(int argc, char **argv)
{
    CHECK(argc == 3 && (strcmp(argv[1], "a") == 0 || strcmp(argv[1], "b") == 0));
    const char *dir = argv[2];
    jt.role = argv[1][0] == 'b';
    jt.orole = !jt.role;
    vt_t t;
    vt_init(&t);
    CHECK_RC(vnic_set_notify_handler(t.v, CHAN, on_notify, NULL), FMPL_SUCCESS);

    char addr[VNIC_ADDR_MAX], name[64], text[VNIC_ADDR_MAX];
    CHECK_RC(vnic_addr(t.v, addr, 4), FMPL_ERR_TRUNCATE);
    CHECK_RC(vnic_addr(t.v, addr, sizeof addr), FMPL_SUCCESS);
    CHECK(strstr(vnic_info(t.v)->transports, "udp") != NULL);
    int peer = -1;
    vnic_link_t link;
    meet_link(&t, dir, jt.role, &link);
    CHECK_RC(vnic_peer_add(t.v, addr, NULL, &peer), FMPL_SUCCESS); /* this job: the rank */
    CHECK(peer == t.rank);
    CHECK_RC(vnic_peer_add(t.v, "fmpl-udp:0:1.2.3:x", &link, &peer), FMPL_ERR_ARG);
    CHECK_RC(vnic_peer_add(t.v, "fmpl-udp:0:127.0.0.1:5:6:", &link, &peer), FMPL_ERR_ARG);
    CHECK_RC(vnic_peer_add(t.v, "nonsense", &link, &peer), FMPL_ERR_ARG);

    /* regions first, then the address: the other job may use them once it has it */
    char *in = calloc(8, PUT_LEN); /* room for up to 8 processes of the other job */
    unsigned char *out = malloc(GET_LEN);
    uint64_t *cnt = calloc(1, 8);
    CHECK(in && out && cnt);
    vt_fill(out, GET_LEN, t.rank, jt.role, 5);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_IN, in, 8 * (size_t)PUT_LEN, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_OUT, out, GET_LEN, VNIC_ACC_REMOTE_READ), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_CNT, cnt, 8, VNIC_ACC_ALL), FMPL_SUCCESS);
    snprintf(name, sizeof name, "%s.%d", argv[1], t.rank);
    meet_write(dir, name, addr);
    if (t.rank == 0) {
        snprintf(text, sizeof text, "%d", t.size);
        snprintf(name, sizeof name, "%s.size", argv[1]);
        meet_write(dir, name, text);
    }
    const char *other = jt.orole ? "b" : "a";
    snprintf(name, sizeof name, "%s.size", other);
    meet_read(dir, name, text, sizeof text);
    jt.osize = atoi(text);
    CHECK(jt.osize >= 1 && jt.osize <= 8);
    jt.id = malloc((size_t)jt.osize * sizeof *jt.id);
    CHECK(jt.id);
    for (int r = 0; r < jt.osize; r++) {
        snprintf(name, sizeof name, "%s.%d", other, r);
        meet_read(dir, name, text, sizeof text);
        CHECK_RC(vnic_peer_add(t.v, text, NULL, &peer), FMPL_ERR_ARG); /* no link */
        CHECK_RC(vnic_peer_add(t.v, text, &link, &jt.id[r]), FMPL_SUCCESS);
        CHECK(jt.id[r] >= t.size);
        CHECK_RC(vnic_peer_add(t.v, text, &link, &peer), FMPL_SUCCESS);
        CHECK(peer == jt.id[r]);
        for (int q = 0; q < r; q++)
            CHECK(jt.id[q] != jt.id[r]);
    }

    for (int r = 0; r < jt.osize; r++)
        send_msg(&t, jt.id[r], 0);
    CHECK_RC(vnic_wait(t.v, count_is, &jt.ready, -1), FMPL_SUCCESS);

    unsigned char *msg = malloc(PUT_LEN), *got = malloc(GET_LEN);
    CHECK(msg && got);
    vnic_cntr_t *lc;
    CHECK_RC(vnic_cntr_open(t.v, VNIC_CNTR_ANY, &lc), FMPL_SUCCESS);
    for (int r = 0; r < jt.osize; r++) {
        vt_fill(msg, PUT_LEN, t.rank, r + 10 * jt.role, 3);
        vnic_op_t op = {.opcode = VNIC_OP_PUT,
                        .peer = jt.id[r],
                        .flags = VNIC_F_NOTIFY,
                        .chan = CHAN,
                        .imm = 77,
                        .lcntr = lc};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = msg;
        op.local.u.contig.len = PUT_LEN;
        op.remote.key = KEY_IN;
        op.remote.kind = VNIC_DESC_CONTIG;
        op.remote.u.off = (uint64_t)t.rank * PUT_LEN;
        CHECK_RC(vnic_post(t.v, &op), FMPL_SUCCESS);
        CHECK_RC(vnic_cntr_wait(t.v, lc, (uint64_t)r + 1, -1), FMPL_SUCCESS);

        memset(got, 0, GET_LEN);
        CHECK_RC(vnic_get(t.v, jt.id[r], got, GET_LEN, KEY_OUT, 0), FMPL_SUCCESS);
        CHECK(vt_check(got, GET_LEN, r, jt.orole, 5) == SIZE_MAX);
        uint64_t old = 0;
        CHECK_RC(vnic_atomic(t.v, VNIC_OP_FADD, jt.id[r], KEY_CNT, 0, 1, 0, &old), FMPL_SUCCESS);
        CHECK(old < (uint64_t)t.size);
    }
    CHECK_RC(vnic_wait(t.v, count_is, &jt.notified, -1), FMPL_SUCCESS);
    for (int r = 0; r < jt.osize; r++)
        CHECK(vt_check((unsigned char *)in + (size_t)r * PUT_LEN, PUT_LEN, r,
                       t.rank + 10 * jt.orole, 3) == SIZE_MAX);
    for (int r = 0; r < jt.osize; r++)
        send_msg(&t, jt.id[r], 1);
    CHECK_RC(vnic_wait(t.v, count_is, &jt.done, -1), FMPL_SUCCESS);
    /* every process of the other job has done its atomic on us before its bye */
    CHECK(__atomic_load_n(cnt, __ATOMIC_ACQUIRE) == (uint64_t)jt.osize);

    CHECK_RC(vnic_cntr_close(t.v, lc), FMPL_SUCCESS);
    vt_fini(&t);
    free(in);
    free(out);
    free(cnt);
    free(msg);
    free(got);
    free(jt.id);
    printf("vnic_jobs %s rank %d: OK\n", argv[1], t.rank);
    return 0;
}
