/* mpi_names.c — MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name through
 * fmplrun's name service:
 *
 *     mpi_names            every rank publishes a name, every rank looks up every name
 *                          and checks the port; duplicates, unknown names, bad
 *                          arguments; unpublish, then the names are gone; a name
 *                          published again after its unpublish
 *     mpi_names plain      the same with names without spaces (Hydra 4.0's PMI server
 *                          does not undo the backslash escapes of newer clients)
 *     mpi_names singleton  (no launcher) every call fails with
 *                          MPI_ERR_UNSUPPORTED_OPERATION
 *     mpi_names fatal      rank 0 looks up a name nobody published under
 *                          MPI_ERRORS_ARE_FATAL (tests/mpi_names_fatal.sh checks the
 *                          message)
 * Prints "mpi_names: OK" on rank 0. */
#include <stdio.h>
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int error_class(int rc)
{
    int cls = -1;
    CHECK_RC(MPI_Error_class(rc, &cls), MPI_SUCCESS);
    return cls;
}

static int plain; /* names without spaces or backslashes */

static void service_of(int r, char *out, size_t cap)
{
    snprintf(out, cap, plain ? "fmpl_test_service_%d" : "fmpl test service %d", r);
}

static void port_of(int r, char *out, size_t cap)
{
    if (plain)
        snprintf(out, cap, "port-of-rank-%d:tcp=10.0.0.%d:%d", r, r % 250, 4000 + r);
    else /* spaces and backslashes travel escaped */
        snprintf(out, cap, "port of rank %d: tcp=10.0.0.%d:%d\\x", r, r % 250, 4000 + r);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    plain = strcmp(mode, "plain") == 0;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char port[MPI_MAX_PORT_NAME], want[MPI_MAX_PORT_NAME], service[128];

    if (strcmp(mode, "fatal") == 0) {
        if (rank == 0)
            MPI_Lookup_name("no such service", MPI_INFO_NULL, port); /* never returns */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    if (strcmp(mode, "singleton") == 0) {
        CHECK(size == 1);
        CHECK(error_class(MPI_Publish_name("s", MPI_INFO_NULL, "p")) ==
              MPI_ERR_UNSUPPORTED_OPERATION);
        CHECK(error_class(MPI_Lookup_name("s", MPI_INFO_NULL, port)) ==
              MPI_ERR_UNSUPPORTED_OPERATION);
        CHECK(error_class(MPI_Unpublish_name("s", MPI_INFO_NULL, "p")) ==
              MPI_ERR_UNSUPPORTED_OPERATION);
        MPI_Finalize();
        printf("mpi_names: OK\n");
        return 0;
    }

    /* every rank publishes one name; every rank finds every name with its port */
    service_of(rank, service, sizeof service);
    port_of(rank, want, sizeof want);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ignored_key", "any value");
    CHECK_RC(MPI_Publish_name(service, rank % 2 ? info : MPI_INFO_NULL, want), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        service_of(r, service, sizeof service);
        port_of(r, want, sizeof want);
        memset(port, 'z', sizeof port);
        CHECK_RC(MPI_Lookup_name(service, info, port), MPI_SUCCESS);
        CHECK(strcmp(port, want) == 0);
    }

    /* a name in use cannot be published again, whatever the port */
    service_of((rank + 1) % size, service, sizeof service);
    CHECK(error_class(MPI_Publish_name(service, MPI_INFO_NULL, "other-port")) == MPI_ERR_SERVICE);
    /* names that are not published */
    CHECK(error_class(MPI_Lookup_name("fmpl_test_service_-1", MPI_INFO_NULL, port)) ==
          MPI_ERR_NAME);
    CHECK(error_class(MPI_Unpublish_name("fmpl_test_service_-1", MPI_INFO_NULL, "p")) ==
          MPI_ERR_SERVICE);
    /* bad arguments: nothing reaches the launcher */
    char long_name[MPI_MAX_PORT_NAME + 8];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    CHECK(error_class(MPI_Publish_name(NULL, MPI_INFO_NULL, "p")) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Publish_name("s", MPI_INFO_NULL, NULL)) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Publish_name("", MPI_INFO_NULL, "p")) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Publish_name("s", MPI_INFO_NULL, "")) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Publish_name("a\nb", MPI_INFO_NULL, "p")) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Publish_name("s", MPI_INFO_NULL, long_name)) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Lookup_name(long_name, MPI_INFO_NULL, port)) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Lookup_name("s", MPI_INFO_NULL, NULL)) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Unpublish_name(NULL, MPI_INFO_NULL, "p")) == MPI_ERR_ARG);
    CHECK(error_class(MPI_Lookup_name("s", (MPI_Info)12345, port)) == MPI_ERR_INFO);
    CHECK(error_class(MPI_Publish_name("s", (MPI_Info)12345, "p")) == MPI_ERR_INFO);
    MPI_Barrier(MPI_COMM_WORLD);

    /* each rank unpublishes its own name; then no name is left, and a name can be
     * published again (rank 0 takes rank size-1's with a new port) */
    service_of(rank, service, sizeof service);
    port_of(rank, want, sizeof want);
    CHECK_RC(MPI_Unpublish_name(service, MPI_INFO_NULL, want), MPI_SUCCESS);
    CHECK(error_class(MPI_Unpublish_name(service, MPI_INFO_NULL, want)) == MPI_ERR_SERVICE);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        service_of(r, service, sizeof service);
        CHECK(error_class(MPI_Lookup_name(service, MPI_INFO_NULL, port)) == MPI_ERR_NAME);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    service_of(size - 1, service, sizeof service);
    const char *second = plain ? "second-life" : "second life";
    if (rank == 0)
        CHECK_RC(MPI_Publish_name(service, MPI_INFO_NULL, second), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Lookup_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
    CHECK(strcmp(port, second) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1)
        CHECK_RC(MPI_Unpublish_name(service, MPI_INFO_NULL, second), MPI_SUCCESS);

    MPI_Info_free(&info);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_names: OK\n");
    return 0;
}
