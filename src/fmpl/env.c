/* env.c — fmpl_init / fmpl_finalize, clocks, error strings, shared-heap memory. */
#include <stdlib.h>
#include <string.h>

#include "fmpl/fmpl_impl.h"
#include "fmpl/fmpl_tool.h"

fmpli_state_t fmpli;

/* Undoes a partial fmpl_init: closes whatever was opened, leaves status FMPLI_NEVER. */
static void fmpli_init_unwind(int coll_up)
{
    if (coll_up)
        coll_finalize(fmpli.vnic);
    if (fmpli.vnic)
        vnic_close(fmpli.vnic);
    if (fmpli.boot)
        boot_finalize(fmpli.boot);
    fmpli.vnic = NULL;
    fmpli.boot = NULL;
}

static unsigned fmpli_bits_for(uint32_t n)
{
    unsigned b = 0;
    while (b < 32 && (1ull << b) < n)
        b++;
    return b;
}

/* The code of a start-up step that failed talking to a peer. Access refused to a peer's
 * area, registered before the step began, means the peer gave up (its own start-up failed
 * and it took its areas back): FMPL_ERR_PEER, and the peer's own message says why. */
static int startup_peer_rc(int rc)
{
    return rc == FMPL_ERR_KEY ? FMPL_ERR_PEER : rc;
}

int fmpl_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (fmpli.status != FMPLI_NEVER)
        return FMPL_ERR_INIT; /* repeated, or after fmpl_finalize */
    memset(&fmpli, 0, sizeof fmpli);
    for (int i = 0; i < FMPLI_COMM_MAX; i++)
        fmpli.ctx_comm[i] = -1;
    fmpli.pid_free = UINT32_MAX;
    fmpli.spool.timeout_ms = FMPL_TIMEOUT_INFINITE;

    fmpli.mai_max = (int)base_env_int("FMPL_MAI_MAX", 1024, 1, 65535,
                                      "matching-area indices per peer (fmpl_send/recv mai range)");
    fmpli.nslots = (uint32_t)fmpli.mai_max + 1;
    fmpli.slot_bits = fmpli_bits_for(fmpli.nslots);
    fmpli.row_stride = BASE_ALIGN_UP((size_t)fmpli.nslots * sizeof(fmpli_hdr_t), BASE_CACHE_LINE);

    int rc = boot_init(&fmpli.boot);
    if (rc != FMPL_SUCCESS) {
        fmpli.boot = NULL;
        return rc;
    }
    rc = vnic_open(fmpli.boot, &fmpli.vnic);
    if (rc != FMPL_SUCCESS) {
        fmpli.vnic = NULL;
        fmpli_init_unwind(0);
        return rc;
    }
    fmpli.rank = vnic_rank(fmpli.vnic);
    fmpli.size = vnic_size(fmpli.vnic);
    base_log_set_rank(fmpli.rank);
    /* the collective area leaves room for the world's matching area (fmpli_area_alloc) */
    rc = coll_init(fmpli.vnic, (size_t)fmpli.size * fmpli.row_stride);
    if (rc != FMPL_SUCCESS) {
        fmpli_init_unwind(0);
        return startup_peer_rc(rc);
    }
    rc = fmpli_p2p_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpli_any_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpli_comm_world_init();
    if (rc != FMPL_SUCCESS) {
        fmpli_any_finalize();
        fmpli_init_unwind(1);
        return rc;
    }
    fmpli.status = FMPLI_ACTIVE;
    /* Every rank's areas are registered before any peer may write into them. */
    rc = startup_peer_rc(coll_barrier(fmpli.comms[FMPL_COMM_WORLD].group));
    if (rc != FMPL_SUCCESS) {
        if (rc != FMPL_ERR_PEER) /* (else the peer's message says why) */
            base_log("fmpl_init: start-up barrier failed: %s", base_strerror(rc));
        return rc;
    }
    return FMPL_SUCCESS;
}

int fmpl_finalize(void)
{
    FMPLI_CHECK_INIT();
    /* Persistent requests end, and spooled and pending sends must reach their receivers,
     * before we go. */
    int prc = fmpli_persist_free_comm(FMPL_COMM_NULL);
    if (prc != FMPL_SUCCESS)
        base_log("fmpl_finalize: a persistent collective did not end: %s", base_strerror(prc));
    int rc = fmpli_flush_sends(NULL);
    if (rc != FMPL_SUCCESS)
        base_log("fmpl_finalize: flushing pending sends failed: %s", base_strerror(rc));
    if (rc == FMPL_SUCCESS)
        rc = prc;
    if (fmpli.spool.base) {
        fmpli.spool.base = NULL;
        fmpli.spool.len = 0;
    }
    int brc = coll_barrier(fmpli.comms[FMPL_COMM_WORLD].group);
    if (rc == FMPL_SUCCESS)
        rc = brc;
    fmpli_comm_all_free();
    fmpli_rcache_flush();
    fmpli_any_finalize();
    free(fmpli.pending);
    free(fmpli.pid_table);
    free(fmpli.pid_next);
    coll_finalize(fmpli.vnic);
    int vrc = vnic_close(fmpli.vnic);
    int brc2 = boot_finalize(fmpli.boot);
    fmpli.vnic = NULL;
    fmpli.boot = NULL;
    fmpli.status = FMPLI_FINALIZED;
    if (rc == FMPL_SUCCESS)
        rc = vrc;
    if (rc == FMPL_SUCCESS)
        rc = brc2;
    return rc;
}

double fmpl_wtime(void)
{
    return (double)base_time_ns() * 1e-9;
}

const char *fmpl_error_string(int code)
{
    return base_strerror(code);
}

void *fmpl_alloc_mem(size_t size)
{
    if (fmpli.status != FMPLI_ACTIVE)
        return NULL;
    return vnic_mem_alloc(fmpli.vnic, size);
}

int fmpl_free_mem(void *ptr)
{
    FMPLI_CHECK_INIT();
    return vnic_mem_free(fmpli.vnic, ptr);
}

vnic_t *fmpl_tool_vnic(void)
{
    return fmpli.status == FMPLI_ACTIVE ? fmpli.vnic : NULL;
}

boot_t *fmpl_tool_boot(void)
{
    return fmpli.status == FMPLI_ACTIVE ? fmpli.boot : NULL;
}

coll_group_t *fmpl_tool_world_group(void)
{
    return fmpli.status == FMPLI_ACTIVE ? fmpli.comms[FMPL_COMM_WORLD].group : NULL;
}
