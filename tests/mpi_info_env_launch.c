/* mpi_info_env_launch.c — MPI_Info_create_env describes the launch, the same before
 * MPI_Init, while MPI runs and after MPI_Finalize, and equals MPI_INFO_ENV for the same
 * arguments (MPI-4.0: "the same construction as MPI_INFO_ENV as created during
 * MPI_INIT"; MPICH's info/infocreateenv):
 *   - every key and value, in order, of the info made before MPI_Init is in the ones made
 *     during and after, and in MPI_INFO_ENV;
 *   - "maxprocs" and "soft" are the number of processes started (1 for a singleton);
 *   - "thread_level" is absent (nothing requests one before the program starts), whatever
 *     MPI_Init_thread was asked for;
 *   - without argv (argument "noargs": MPI_Init(NULL, NULL)), "command" is the executable.
 * Run at 0 (no launcher), 1, 2, 3, 4 and 7 ranks. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "test_util.h"

/* a and b hold the same keys, in the same order, with the same values. */
static void check_same(MPI_Info a, MPI_Info b)
{
    int na, nb;
    CHECK_RC(MPI_Info_get_nkeys(a, &na), MPI_SUCCESS);
    CHECK_RC(MPI_Info_get_nkeys(b, &nb), MPI_SUCCESS);
    CHECK(na == nb && na >= 4); /* command, host, arch, wdir at least */
    for (int i = 0; i < na; i++) {
        char ka[MPI_MAX_INFO_KEY], kb[MPI_MAX_INFO_KEY], va[MPI_MAX_INFO_VAL], vb[MPI_MAX_INFO_VAL];
        CHECK_RC(MPI_Info_get_nthkey(a, i, ka), MPI_SUCCESS);
        CHECK_RC(MPI_Info_get_nthkey(b, i, kb), MPI_SUCCESS);
        CHECK(strcmp(ka, kb) == 0);
        int la = sizeof va, lb = sizeof vb, fa = 0, fb = 0;
        CHECK_RC(MPI_Info_get_string(a, ka, &la, va, &fa), MPI_SUCCESS);
        CHECK_RC(MPI_Info_get_string(b, kb, &lb, vb, &fb), MPI_SUCCESS);
        CHECK(fa == 1 && fb == 1 && strcmp(va, vb) == 0);
    }
}

static void check_value(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL];
    int len = sizeof v, flag = -1;
    CHECK_RC(MPI_Info_get_string(info, key, &len, v, &flag), MPI_SUCCESS);
    if (!want) {
        CHECK(flag == 0);
        return;
    }
    if (flag != 1 || strcmp(v, want) != 0) {
        fprintf(stderr, "key %s: flag %d value '%s', expected '%s'\n", key, flag, flag ? v : "",
                want);
        CHECK(0);
    }
}

int main(int argc, char **argv)
{
    int noargs = argc > 1 && strcmp(argv[1], "noargs") == 0;
    int cargc = noargs ? 0 : argc;
    char **cargv = noargs ? NULL : argv;
    MPI_Info before, during, after;
    CHECK_RC(MPI_Info_create_env(cargc, cargv, &before), MPI_SUCCESS);

    int provided = -1;
    if (noargs)
        CHECK_RC(MPI_Init(NULL, NULL), MPI_SUCCESS);
    else
        CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    CHECK_RC(MPI_Info_create_env(cargc, cargv, &during), MPI_SUCCESS);
    check_same(before, during);
    check_same(before, MPI_INFO_ENV);
    char want[32];
    snprintf(want, sizeof want, "%d", size);
    check_value(during, "maxprocs", want);
    check_value(during, "soft", want);
    check_value(during, "thread_level", NULL);
    if (noargs) {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        CHECK(n > 0);
        exe[n] = 0;
        check_value(during, "command", exe);
        check_value(during, "argv", NULL);
    } else {
        CHECK(provided == MPI_THREAD_FUNNELED);
        check_value(during, "command", argv[0]);
    }

    /* errors */
    MPI_Info bad = MPI_INFO_NULL;
    CHECK_CLASS(MPI_Info_create_env(-1, NULL, &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_create_env(2, NULL, &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_create_env(0, NULL, NULL), MPI_ERR_ARG);
    CHECK(bad == MPI_INFO_NULL);

    /* every rank saw the same maxprocs */
    int mine = size, lo = -1, hi = -1;
    CHECK_RC(MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_RC(MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(lo == size && hi == size);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);

    CHECK_RC(MPI_Info_create_env(cargc, cargv, &after), MPI_SUCCESS);
    check_same(before, after);
    check_value(after, "maxprocs", want);
    CHECK_RC(MPI_Info_free(&before), MPI_SUCCESS);
    CHECK_RC(MPI_Info_free(&during), MPI_SUCCESS);
    CHECK_RC(MPI_Info_free(&after), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_info_env_launch: OK\n");
    return 0;
}
