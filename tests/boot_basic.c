/* boot_basic — the boot layer on its own (no vnic, no fmpl_init): rank and size,
 * values exchanged with every other rank (contents checked), several fences, the
 * node map, and the error codes. Runs under fmplrun with any rank count (also with
 * PMI over TCP and FMPL_NODE: fmplrun --pmi-addr, --hosts), and as a singleton
 * without a launcher. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/boot.h"
#include "test_util.h"

/* A value that depends on (writer, round) and is long enough to exercise big lines. */
static void make_value(char *out, size_t cap, int rank, int round, size_t len)
{
    int n = snprintf(out, cap, "r%d-round%d-", rank, round);
    size_t i = (size_t)n;
    for (; i < len && i + 1 < cap; i++)
        out[i] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-+.,:;"
            [(i * 7 + (size_t)rank * 13 + (size_t)round) % 69];
    out[i] = 0;
}

int main(void)
{
    CHECK_RC(boot_init(NULL), FMPL_ERR_ARG);
    boot_t *b = NULL;
    CHECK_RC(boot_init(&b), FMPL_SUCCESS);
    CHECK(b != NULL);
    int rank = boot_rank(b), size = boot_size(b);
    CHECK(size >= 1 && rank >= 0 && rank < size);

    const char *env_size = getenv("PMI_SIZE"), *env_id = getenv("PMI_ID");
    if (getenv("PMI_PORT") && env_id) { /* fmplrun --hosts / --pmi-addr: PMI over TCP */
        CHECK(atoi(env_id) == rank);
        CHECK(strcmp(boot_backend(b), getenv("FMPL_LAUNCHER") ? "fmplrun" : "pmi") == 0);
        CHECK(boot_local_addr(b) != NULL); /* the connection's own address */
    } else if (env_size) {
        CHECK(atoi(env_size) == size);
        CHECK(atoi(getenv("PMI_RANK")) == rank);
        const char *launcher = getenv("FMPL_LAUNCHER"); /* set by fmplrun, not by Hydra */
        CHECK(strcmp(boot_backend(b), launcher ? "fmplrun" : "pmi") == 0);
    } else {
        CHECK(size == 1 && rank == 0);
        CHECK(strcmp(boot_backend(b), "singleton") == 0);
    }

    /* The job id: non-empty, file-name safe, the same on every rank. */
    const char *id = boot_job_id(b);
    CHECK(id && *id && strlen(id) < 128);
    for (const char *p = id; *p; p++)
        CHECK((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-');
    CHECK_RC(boot_put(b, "jobid", id), FMPL_SUCCESS);

    /* Several rounds: everyone publishes under the same key names, fences, and
     * reads everyone else's values. */
    char value[BOOT_VALUE_MAX], expect[BOOT_VALUE_MAX];
    for (int round = 0; round < 3; round++) {
        char key[32];
        snprintf(key, sizeof key, "addr%d", round);
        size_t len = round == 2 ? BOOT_VALUE_PORTABLE : (size_t)(20 + 100 * round);
        make_value(value, sizeof value, rank, round, len);
        CHECK(strlen(value) == len);
        CHECK_RC(boot_put(b, key, value), FMPL_SUCCESS);
        CHECK_RC(boot_fence(b), FMPL_SUCCESS);
        for (int r = 0; r < size; r++) {
            int peer = (rank + r) % size;
            memset(value, 'X', sizeof value);
            CHECK_RC(boot_get(b, peer, key, value), FMPL_SUCCESS);
            make_value(expect, sizeof expect, peer, round, len);
            if (strcmp(value, expect) != 0) {
                fprintf(stderr, "rank %d: %s of rank %d is '%.60s...', expected '%.60s...'\n", rank,
                        key, peer, value, expect);
                return 1;
            }
            CHECK_RC(boot_get(b, peer, "jobid", value), FMPL_SUCCESS);
            CHECK(strcmp(value, id) == 0);
        }
    }
    /* The longest put: its request line "cmd=put kvsname=<kvsname> key=fit.<rank>
     * value=<value>\n" takes exactly 1024 bytes (the kvsname is as long as the job id);
     * one byte more is refused before anything is sent, under every launcher. */
    char fit_key[32];
    snprintf(fit_key, sizeof fit_key, "fit.%d", rank);
    size_t fit_len = 1024 - strlen("cmd=put kvsname= key= value=\n") - strlen(id) - strlen(fit_key);
    CHECK(fit_len > BOOT_VALUE_PORTABLE && fit_len < BOOT_VALUE_MAX - 1);
    make_value(value, sizeof value, rank, 3, fit_len + 1);
    CHECK_RC(boot_put(b, "fit", value), FMPL_ERR_ARG);
    value[fit_len] = 0;
    CHECK_RC(boot_put(b, "fit", value), FMPL_SUCCESS);
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    for (int r = 0; r < size; r++) {
        char peer_key[32];
        snprintf(peer_key, sizeof peer_key, "fit.%d", r);
        size_t len =
            1024 - strlen("cmd=put kvsname= key= value=\n") - strlen(id) - strlen(peer_key);
        CHECK_RC(boot_get(b, r, "fit", value), FMPL_SUCCESS);
        make_value(expect, sizeof expect, r, 3, len);
        CHECK(strlen(value) == len && strcmp(value, expect) == 0);
    }

    /* A put replaces the earlier value of the same key. */
    CHECK_RC(boot_put(b, "addr0", "replaced"), FMPL_SUCCESS);
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    CHECK_RC(boot_get(b, (rank + 1) % size, "addr0", value), FMPL_SUCCESS);
    CHECK(strcmp(value, "replaced") == 0);

    /* Node map: every rank is on this host, or with FMPL_NODE (fmplrun --hosts) ranks
     * are on the same node exactly when their FMPL_NODE names are equal, nodes
     * numbered in order of their first rank. */
    const boot_nodes_t *nodes = NULL;
    const char *node_name = getenv("FMPL_NODE");
    if (node_name && *node_name) {
        CHECK_RC(boot_put(b, "node-name", node_name), FMPL_SUCCESS);
        CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    }
    CHECK_RC(boot_nodes(b, &nodes), FMPL_SUCCESS);
    if (node_name && *node_name) {
        char names[64][BOOT_VALUE_MAX];
        CHECK(size <= 64);
        int expect_nodes = 0, nlocal = 0;
        for (int r = 0; r < size; r++) {
            CHECK_RC(boot_get(b, r, "node-name", names[r]), FMPL_SUCCESS);
            int first = r;
            for (int q = 0; q < r; q++)
                if (strcmp(names[q], names[r]) == 0) {
                    first = q;
                    break;
                }
            if (first == r) {
                CHECK(nodes->node_of[r] == expect_nodes);
                expect_nodes++;
            } else {
                CHECK(nodes->node_of[r] == nodes->node_of[first]);
            }
            if (strcmp(names[r], node_name) == 0) {
                CHECK(nodes->local_ranks[nlocal] == r);
                if (r == rank)
                    CHECK(nodes->local_rank == nlocal);
                nlocal++;
            }
        }
        CHECK(nodes->nnodes == expect_nodes && nodes->nlocal == nlocal);
        CHECK(nodes->my_node == nodes->node_of[rank]);
    } else {
        CHECK(nodes && nodes->nnodes == 1 && nodes->my_node == 0);
        CHECK(nodes->nlocal == size && nodes->local_rank == rank);
        for (int r = 0; r < size; r++) {
            CHECK(nodes->node_of[r] == 0);
            CHECK(nodes->local_ranks[r] == r);
        }
    }
    const boot_nodes_t *again = NULL;
    CHECK_RC(boot_nodes(b, &again), FMPL_SUCCESS); /* cached, no second exchange */
    CHECK(again == nodes);

    /* Error codes. */
    CHECK_RC(boot_get(b, -1, "addr0", value), FMPL_ERR_RANK);
    CHECK_RC(boot_get(b, size, "addr0", value), FMPL_ERR_RANK);
    CHECK_RC(boot_get(b, 0, "no-such-key", value), FMPL_ERR_ARG);
    CHECK_RC(boot_get(b, 0, "addr0", NULL), FMPL_ERR_ARG);
    CHECK_RC(boot_get(b, 0, NULL, value), FMPL_ERR_ARG);
    CHECK_RC(boot_get(NULL, 0, "addr0", value), FMPL_ERR_ARG);
    CHECK_RC(boot_put(NULL, "k", "v"), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, NULL, "v"), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "k", NULL), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "", "v"), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "k", ""), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "with space", "v"), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "k", "with space"), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "k", "a=b"), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "k", "line\nbreak"), FMPL_ERR_ARG);
    char long_key[BOOT_KEY_MAX + 8];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = 0;
    CHECK_RC(boot_put(b, long_key, "v"), FMPL_ERR_ARG);
    long_key[BOOT_KEY_MAX - 8] = 0; /* "<key>.<rank>" fits */
    CHECK_RC(boot_put(b, long_key, "fits"), FMPL_SUCCESS);
    char long_value[BOOT_VALUE_MAX + 1];
    memset(long_value, 'v', BOOT_VALUE_MAX);
    long_value[BOOT_VALUE_MAX] = 0;
    CHECK_RC(boot_put(b, "k", long_value), FMPL_ERR_ARG);
    CHECK_RC(boot_fence(NULL), FMPL_ERR_ARG);
    CHECK_RC(boot_nodes(NULL, &nodes), FMPL_ERR_ARG);
    CHECK_RC(boot_nodes(b, NULL), FMPL_ERR_ARG);
    CHECK(boot_rank(NULL) == -1 && boot_size(NULL) == -1);
    CHECK(boot_job_id(NULL) == NULL && boot_backend(NULL) == NULL);

    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    CHECK_RC(boot_get(b, size - 1, long_key, value), FMPL_SUCCESS);
    CHECK(strcmp(value, "fits") == 0);
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    CHECK_RC(boot_finalize(NULL), FMPL_ERR_ARG);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
    if (rank == 0)
        printf("boot_basic: %d ranks OK\n", size);
    return 0;
}
