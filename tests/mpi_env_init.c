/* mpi_env_init.c — MPI_Init_thread / Finalize and the environment queries: thread
 * levels, Initialized/Finalized, Is_thread_main, Wtime/Wtick, processor name, versions,
 * Alloc_mem/Free_mem, Pcontrol. argv[1]: the thread level to request (default
 * MPI_THREAD_MULTIPLE; "plain": MPI_Init). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "test_util.h"

static void *other_thread(void *arg)
{
    int flag = -1;
    CHECK_RC(MPI_Is_thread_main(&flag), MPI_SUCCESS);
    *(int *)arg = flag;
    return NULL;
}

int main(int argc, char **argv)
{
    int flag = -1, v = 0, sv = 0;
    /* callable before MPI_Init */
    CHECK_RC(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK_RC(MPI_Finalized(&flag), MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK_RC(MPI_Get_version(&v, &sv), MPI_SUCCESS);
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION && v == 4);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    CHECK_RC(MPI_Get_library_version(lib, &len), MPI_SUCCESS);
    CHECK(strncmp(lib, "FMPL ", 5) == 0 && len == (int)strlen(lib));

    int provided = -1;
    if (argc > 1 && strcmp(argv[1], "plain") == 0) {
        CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
        CHECK_RC(MPI_Query_thread(&provided), MPI_SUCCESS);
        CHECK(provided == MPI_THREAD_SINGLE);
    } else {
        int required = argc > 1 ? atoi(argv[1]) : MPI_THREAD_MULTIPLE;
        CHECK_RC(MPI_Init_thread(&argc, &argv, required, &provided), MPI_SUCCESS);
        /* never more than asked, never MULTIPLE */
        CHECK(provided == (required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED));
        int q = -1;
        CHECK_RC(MPI_Query_thread(&q), MPI_SUCCESS);
        CHECK(q == provided);
    }
    CHECK_RC(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK_RC(MPI_Finalized(&flag), MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    /* a second MPI_Init is an error */
    CHECK_CLASS(MPI_Init(NULL, NULL), MPI_ERR_OTHER);

    CHECK_RC(MPI_Is_thread_main(&flag), MPI_SUCCESS);
    CHECK(flag == 1);
    pthread_t t;
    int tflag = -1;
    CHECK(pthread_create(&t, NULL, other_thread, &tflag) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(tflag == 0);

    /* clocks */
    double tick = MPI_Wtick();
    CHECK(tick > 0 && tick < 0.01);
    double t0 = MPI_Wtime(), prev = t0;
    for (int i = 0; i < 100000; i++) {
        double now = MPI_Wtime();
        CHECK(now >= prev);
        prev = now;
    }
    usleep(2000);
    CHECK(MPI_Wtime() - t0 >= 0.002);
    CHECK(PMPI_Wtime() >= prev);

    /* processor name: the host name */
    char name[MPI_MAX_PROCESSOR_NAME], host[256];
    CHECK_RC(MPI_Get_processor_name(name, &len), MPI_SUCCESS);
    CHECK(len > 0 && len == (int)strlen(name) && len < MPI_MAX_PROCESSOR_NAME);
    CHECK(gethostname(host, sizeof host) == 0);
    CHECK(strcmp(name, host) == 0);

    /* memory from the shared heap */
    char *p = NULL;
    CHECK_RC(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &p), MPI_SUCCESS);
    CHECK(p != NULL);
    memset(p, 0x5a, 1 << 20);
    CHECK(p[12345] == 0x5a);
    char *z = NULL;
    CHECK_RC(MPI_Alloc_mem(0, MPI_INFO_NULL, &z), MPI_SUCCESS);
    CHECK_RC(MPI_Free_mem(z), MPI_SUCCESS);
    CHECK_RC(MPI_Free_mem(p), MPI_SUCCESS);
    void *big = NULL;
    CHECK_CLASS(MPI_Alloc_mem((MPI_Aint)1 << 50, MPI_INFO_NULL, &big), MPI_ERR_NO_MEM);
    CHECK_CLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &big), MPI_ERR_SIZE);
    CHECK_CLASS(MPI_Alloc_mem(16, (MPI_Info)12345, &big), MPI_ERR_INFO);
    int notmine[4];
    CHECK_CLASS(MPI_Free_mem(notmine), MPI_ERR_BASE);
    CHECK_RC(MPI_Free_mem(NULL), MPI_SUCCESS);
    int eclass = -1;
    CHECK_RC(MPI_Error_class(MPI_ERR_NO_MEM, &eclass), MPI_SUCCESS);
    CHECK(eclass == MPI_ERR_NO_MEM);

    CHECK_RC(MPI_Pcontrol(0), MPI_SUCCESS);
    CHECK_RC(MPI_Pcontrol(2, "extra"), MPI_SUCCESS);
    CHECK_CLASS(MPI_Get_version(NULL, &sv), MPI_ERR_ARG);

    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    CHECK_RC(MPI_Finalized(&flag), MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK_RC(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK_RC(MPI_Get_version(&v, &sv), MPI_SUCCESS);
    char s[MPI_MAX_ERROR_STRING];
    CHECK_RC(MPI_Error_string(MPI_ERR_TAG, s, &len), MPI_SUCCESS);
    CHECK(len > 0);
    return 0;
}
