/* env.c — fmpl_init / fmpl_finalize (the runtime, then the native layer's parts), clocks,
 * error strings, shared-heap memory. */
#include <stdlib.h>
#include <string.h>

#include "fmpl/fmpl_impl.h"
#include "runtime/runtime.h"

fmpli_state_t fmpli;

static unsigned fmpli_bits_for(uint32_t n)
{
    unsigned b = 0;
    while (b < 32 && (1ull << b) < n)
        b++;
    return b;
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

    /* the collective area leaves room for the world's matching area (fmpli_area_alloc) */
    int rc = runtime_open(fmpli.row_stride);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpli.boot = runtime_boot();
    fmpli.vnic = runtime_vnic();
    fmpli.rank = vnic_rank(fmpli.vnic);
    fmpli.size = vnic_size(fmpli.vnic);
    rc = fmpli_p2p_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpli_any_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpli_comm_world_init();
    if (rc != FMPL_SUCCESS) {
        fmpli_any_finalize();
        runtime_abandon();
        return rc;
    }
    fmpli.status = FMPLI_ACTIVE;
    /* Every rank's areas are registered before any peer may write into them. */
    rc = runtime_startup_rc(coll_barrier(fmpli.comms[FMPL_COMM_WORLD].group));
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
    int rrc = runtime_close();
    fmpli.vnic = NULL;
    fmpli.boot = NULL;
    fmpli.status = FMPLI_FINALIZED;
    return rc == FMPL_SUCCESS ? rrc : rc;
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
