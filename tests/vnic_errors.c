/* vnic_errors.c — every refused call returns its code and performs nothing: bad
 * arguments, bounds past the end of a region, stale keys after dereg, missing access
 * rights (remote write to a read-only region, atomics on a non-atomic one), registry
 * and counter misuse, foreign heap pointers. Against every peer including self. */
#include "vnic_common.h"

#define KEY_RO 2u /* read-only region */
#define KEY_RW 3u /* read-write, no atomics */
#define RLEN 4096

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    unsigned char *ro = malloc(RLEN), *rw = malloc(RLEN), *hp = vnic_mem_alloc(v, RLEN);
    unsigned char buf[RLEN + 64];
    CHECK(ro && rw && hp);
    memset(ro, 0x11, RLEN);
    memset(rw, 0x22, RLEN);
    memset(hp, 0x33, RLEN);
    memset(buf, 0x77, sizeof buf);
    CHECK_RC(vnic_mr_reg_key(v, KEY_RO, ro, RLEN, VNIC_ACC_REMOTE_READ), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_RW, rw, RLEN, VNIC_ACC_REMOTE_READ | VNIC_ACC_REMOTE_WRITE),
             FMPL_SUCCESS);
    /* A fresh key, published to the others, then deregistered before they use it. */
    vnic_key_t fresh, heapkey;
    CHECK_RC(vnic_mr_reg(v, rw, RLEN, VNIC_ACC_ALL, &fresh), FMPL_SUCCESS);
    CHECK(fresh >= VNIC_KEY_WELL_KNOWN_MAX);
    CHECK_RC(vnic_mr_reg(v, hp, RLEN, VNIC_ACC_REMOTE_READ, &heapkey), FMPL_SUCCESS);
    char val[BOOT_VALUE_MAX];
    snprintf(val, sizeof val, "%u,%u", fresh, heapkey); /* PMI values: no spaces */
    CHECK_RC(boot_put(t.boot, "keys", val), FMPL_SUCCESS);
    CHECK_RC(vnic_fence(t.v), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, fresh), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, fresh), FMPL_ERR_KEY); /* twice */
    vnic_key_t again; /* the index comes back later with another generation */
    CHECK_RC(vnic_mr_reg(v, rw, RLEN, VNIC_ACC_ALL, &again), FMPL_SUCCESS);
    CHECK(again != fresh);
    vt_barrier(&t);

    uint64_t res = 0;
    for (int peer = 0; peer < t.size; peer++) {
        unsigned fk, hk;
        CHECK_RC(boot_get(t.boot, peer, "keys", val), FMPL_SUCCESS);
        CHECK(sscanf(val, "%u,%u", &fk, &hk) == 2);
        /* bounds: offset past the end, length past the end, offset overflow */
        CHECK_RC(vnic_put(v, peer, buf, 1, KEY_RW, RLEN), FMPL_ERR_KEY);
        CHECK_RC(vnic_put(v, peer, buf, 65, KEY_RW, RLEN - 64), FMPL_ERR_KEY);
        CHECK_RC(vnic_put(v, peer, buf, RLEN + 1, KEY_RW, 0), FMPL_ERR_KEY);
        CHECK_RC(vnic_put(v, peer, buf, 8, KEY_RW, UINT64_MAX - 3), FMPL_ERR_KEY);
        CHECK_RC(vnic_get(v, peer, buf, 2, KEY_RO, RLEN - 1), FMPL_ERR_KEY);
        CHECK_RC(vnic_get(v, peer, buf, 8, hk, RLEN), FMPL_ERR_KEY);
        /* a big one past the end (would take the CMA / bounce path) */
        CHECK_RC(vnic_get(v, peer, buf, RLEN, KEY_RW, 64), FMPL_ERR_KEY);
        /* stale key, unknown keys */
        CHECK_RC(vnic_put(v, peer, buf, 8, fk, 0), FMPL_ERR_KEY);
        CHECK_RC(vnic_get(v, peer, buf, 8, fk, 0), FMPL_ERR_KEY);
        CHECK_RC(vnic_put(v, peer, buf, 8, 9, 0), FMPL_ERR_KEY);           /* well-known, unused */
        CHECK_RC(vnic_put(v, peer, buf, 8, 0xffff0fffu, 0), FMPL_ERR_KEY); /* index too big */
        CHECK_RC(vnic_put(v, peer, buf, 8, VNIC_KEY_INVALID, 0), FMPL_ERR_KEY);
        /* access rights */
        CHECK_RC(vnic_put(v, peer, buf, 8, KEY_RO, 0), FMPL_ERR_KEY);
        CHECK_RC(vnic_put(v, peer, buf, 2000, KEY_RO, 0), FMPL_ERR_KEY);
        CHECK_RC(vnic_put(v, peer, buf, 8, hk, 0), FMPL_ERR_KEY); /* heap region, read-only */
        CHECK_RC(vnic_atomic(v, VNIC_OP_FADD, peer, KEY_RW, 0, 1, 0, &res), FMPL_ERR_KEY);
        CHECK_RC(vnic_atomic(v, VNIC_OP_SWAP, peer, hk, 0, 1, 0, &res), FMPL_ERR_KEY);
        CHECK_RC(vnic_atomic(v, VNIC_OP_FADD, peer, VNIC_KEY_HEAP, UINT64_MAX - 7, 1, 0, &res),
                 FMPL_ERR_KEY);
        /* the allowed ones work */
        CHECK_RC(vnic_get(v, peer, buf, 16, KEY_RO, RLEN - 16), FMPL_SUCCESS);
        CHECK(buf[0] == 0x11 && buf[15] == 0x11);
        CHECK_RC(vnic_get(v, peer, buf, 16, hk, 0), FMPL_SUCCESS);
        CHECK(buf[0] == 0x33 && buf[15] == 0x33);
        memset(buf, 0x77, sizeof buf);

        /* malformed operations */
        vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = peer};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = buf;
        op.local.u.contig.len = 16;
        op.remote.key = KEY_RW;
        op.remote.kind = VNIC_DESC_CONTIG;
        vnic_op_t bad = op;
        bad.peer = t.size;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_RANK);
        bad.peer = -1;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_RANK);
        CHECK_RC(vnic_post(v, NULL), FMPL_ERR_ARG);
        CHECK_RC(vnic_post(NULL, &op), FMPL_ERR_ARG);
        bad = op;
        bad.opcode = (vnic_opcode_t)42;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        bad = op;
        bad.flags = 64;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        bad = op;
        bad.local.u.contig.addr = NULL;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_BUFFER);
        bad = op;
        bad.local.kind = (vnic_desc_kind_t)7;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        struct iovec iov[2] = {{buf, 8}, {NULL, 8}};
        bad = op;
        bad.local.kind = VNIC_DESC_IOV;
        bad.local.u.iov.iov = iov;
        bad.local.u.iov.cnt = 2;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_BUFFER);
        bad.local.u.iov.cnt = -1;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        vnic_rseg_t seg[2] = {{0, 8}, {100, 4}}; /* 12 bytes for a 16-byte local side */
        bad = op;
        bad.remote.kind = VNIC_DESC_IOV;
        bad.remote.u.iov.seg = seg;
        bad.remote.u.iov.cnt = 2;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        bad.remote.u.iov.seg = NULL;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        seg[1].off = RLEN - 4;
        seg[1].len = 8; /* right total, second segment past the end */
        bad.remote.u.iov.seg = seg;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_KEY);
        bad = op;
        bad.opcode = VNIC_OP_GET;
        bad.flags = VNIC_F_NOTIFY; /* notifications report arrivals: PUT only */
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        bad = op;
        bad.flags = VNIC_F_NOTIFY;
        bad.chan = VNIC_NCHAN;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        bad = op;
        bad.flags = VNIC_F_RCNTR;
        bad.rcntr = 1u << 30;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        bad = op;
        bad.flags = VNIC_F_TAIL_FLAG;
        bad.remote.u.off = 4; /* end not 8-byte aligned */
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        bad.remote.u.off = 0;
        bad.local.u.contig.len = 4; /* shorter than the flag */
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
        CHECK_RC(vnic_atomic(v, VNIC_OP_FADD, peer, VNIC_KEY_HEAP, 4, 1, 0, &res), FMPL_ERR_ARG);
        CHECK_RC(vnic_atomic(v, VNIC_OP_PUT, peer, VNIC_KEY_HEAP, 0, 1, 0, &res), FMPL_ERR_ARG);
        bad = op;
        bad.opcode = VNIC_OP_SWAP;
        bad.flags = VNIC_F_RCNTR;
        CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
    }
    CHECK_RC(vnic_put(v, 0, NULL, 8, KEY_RW, 0), FMPL_ERR_BUFFER);
    vt_barrier(&t);
    /* nothing was written anywhere */
    for (int i = 0; i < RLEN; i++)
        CHECK(ro[i] == 0x11 && rw[i] == 0x22 && hp[i] == 0x33);

    /* registry misuse */
    CHECK_RC(vnic_mr_reg_key(v, KEY_RO, ro, RLEN, VNIC_ACC_ALL), FMPL_ERR_BUSY);
    CHECK_RC(vnic_mr_reg_key(v, VNIC_KEY_HEAP, ro, RLEN, VNIC_ACC_ALL), FMPL_ERR_BUSY);
    CHECK_RC(vnic_mr_reg_key(v, VNIC_KEY_WELL_KNOWN_MAX, ro, RLEN, VNIC_ACC_ALL), FMPL_ERR_KEY);
    CHECK_RC(vnic_mr_reg_key(v, 0, ro, RLEN, VNIC_ACC_ALL), FMPL_ERR_KEY);
    CHECK_RC(vnic_mr_reg_key(v, 4, ro, RLEN, 99), FMPL_ERR_ARG);
    CHECK_RC(vnic_mr_reg_key(v, 4, NULL, RLEN, VNIC_ACC_ALL), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_mr_reg(v, ro, RLEN, VNIC_ACC_ALL, NULL), FMPL_ERR_ARG);
    CHECK_RC(vnic_mr_dereg(v, 0), FMPL_ERR_KEY);
    CHECK_RC(vnic_mr_dereg(v, 12345), FMPL_ERR_KEY);
    /* the table fills up, then frees */
    vnic_key_t *keys = malloc(70000 * sizeof *keys);
    int nk = 0;
    int rc;
    while ((rc = vnic_mr_reg(v, rw, 8, VNIC_ACC_ALL, &keys[nk])) == FMPL_SUCCESS)
        nk++;
    CHECK(rc == FMPL_ERR_NOMEM && nk > 100);
    for (int i = 0; i < nk; i++)
        CHECK_RC(vnic_mr_dereg(v, keys[i]), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg(v, rw, 8, VNIC_ACC_ALL, &keys[0]), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, keys[0]), FMPL_SUCCESS);
    free(keys);

    /* counters */
    vnic_cntr_t *c, *c2;
    CHECK_RC(vnic_cntr_open(v, VT_BARRIER_CNTR, &c), FMPL_ERR_BUSY);
    CHECK_RC(vnic_cntr_open(v, 16, &c), FMPL_ERR_ARG);
    CHECK_RC(vnic_cntr_open(v, 3, NULL), FMPL_ERR_ARG);
    CHECK_RC(vnic_cntr_open(v, 3, &c), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_open(v, VNIC_CNTR_ANY, &c2), FMPL_SUCCESS);
    CHECK(vnic_cntr_id(c) == 3 && vnic_cntr_id(c2) >= 16 && vnic_cntr_id(c2) != VNIC_CNTR_ANY);
    vnic_cntr_add(c, 5);
    CHECK(vnic_cntr_read(c) == 5 && vnic_cntr_errors(c) == 0);
    CHECK_RC(vnic_cntr_wait(v, c, 6, 1000000), FMPL_ERR_TIMEOUT);
    CHECK_RC(vnic_cntr_wait(v, c, 5, 0), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(v, c), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_open(v, 3, &c), FMPL_SUCCESS);
    CHECK(vnic_cntr_read(c) == 0); /* reopened at 0 */
    CHECK_RC(vnic_cntr_close(v, c), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(v, c2), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(v, NULL), FMPL_ERR_ARG);

    /* handlers, waits, memory */
    CHECK_RC(vnic_set_notify_handler(v, VNIC_NCHAN, NULL, NULL), FMPL_ERR_ARG);
    CHECK_RC(vnic_set_notify_handler(NULL, 0, NULL, NULL), FMPL_ERR_ARG);
    CHECK_RC(vnic_wait(v, NULL, NULL, 0), FMPL_ERR_ARG);
    CHECK_RC(vnic_mem_free(v, buf), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_mem_free(v, hp + 64), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_mem_free(v, NULL), FMPL_SUCCESS);
    CHECK(vnic_mem_alloc(v, (size_t)1 << 50) == NULL);
    CHECK_RC(vnic_mr_dereg(v, heapkey), FMPL_SUCCESS);
    CHECK_RC(vnic_mem_free(v, hp), FMPL_SUCCESS);
    CHECK_RC(vnic_mem_free(v, hp), FMPL_ERR_BUFFER); /* double free */
    CHECK_RC(vnic_mr_dereg(v, again), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_RO), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_RW), FMPL_SUCCESS);
    CHECK(vnic_rank(NULL) == -1 && vnic_size(NULL) == 0 && vnic_info(NULL) == NULL);
    CHECK_RC(vnic_open(NULL, NULL), FMPL_ERR_ARG);
    CHECK_RC(vnic_close(NULL), FMPL_ERR_ARG);
    free(ro);
    free(rw);
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_errors: ok (%d ranks)\n", t.size);
    return 0;
}
