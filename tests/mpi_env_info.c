/* mpi_env_info.c — MPI_Info: every call, key order, value lengths, dup independence,
 * error classes, MPI_INFO_ENV and MPI_Info_create_env (also before MPI_Init). */
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "test_util.h"

static void check_val(MPI_Info info, const char *key, const char *want)
{
    char buf[MPI_MAX_INFO_VAL];
    int flag = -1, len = -1;
    CHECK_RC(MPI_Info_get_valuelen(info, key, &len, &flag), MPI_SUCCESS);
    if (!want) {
        CHECK(flag == 0);
        return;
    }
    CHECK(flag == 1 && len == (int)strlen(want));
    CHECK_RC(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, buf, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && strcmp(buf, want) == 0);
    int buflen = sizeof buf;
    CHECK_RC(MPI_Info_get_string(info, key, &buflen, buf, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && buflen == (int)strlen(want) + 1 && strcmp(buf, want) == 0);
}

int main(int argc, char **argv)
{
    /* MPI_Info_create_env and plain infos work before MPI_Init */
    MPI_Info pre;
    char *args[] = {"prog", "a", "b c", NULL};
    CHECK_RC(MPI_Info_create_env(3, args, &pre), MPI_SUCCESS);
    check_val(pre, "command", "prog");
    check_val(pre, "argv", "a b c");

    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    int size;
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);

    MPI_Info info, dup;
    int nkeys = -1, flag = -1;
    char key[MPI_MAX_INFO_KEY], buf[MPI_MAX_INFO_VAL];
    CHECK_RC(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK(info != MPI_INFO_NULL);
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys), MPI_SUCCESS);
    CHECK(nkeys == 0);
    CHECK_RC(MPI_Info_set(info, "zeta", "1"), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "alpha", "two"), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "mid", "three three"), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "zeta", "replaced"), MPI_SUCCESS); /* keeps its place */
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys), MPI_SUCCESS);
    CHECK(nkeys == 3);
    const char *order[] = {"zeta", "alpha", "mid"};
    for (int i = 0; i < 3; i++) {
        CHECK_RC(MPI_Info_get_nthkey(info, i, key), MPI_SUCCESS);
        CHECK(strcmp(key, order[i]) == 0);
    }
    check_val(info, "zeta", "replaced");
    check_val(info, "mid", "three three");
    check_val(info, "nothere", NULL);
    CHECK_CLASS(MPI_Info_get_nthkey(info, 3, key), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);

    /* truncation: MPI_Info_get copies valuelen chars + NUL; get_string reports the size */
    memset(buf, 'x', sizeof buf);
    CHECK_RC(MPI_Info_get(info, "zeta", 3, buf, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && strcmp(buf, "rep") == 0);
    int buflen = 4;
    CHECK_RC(MPI_Info_get_string(info, "zeta", &buflen, buf, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && buflen == 9 && strcmp(buf, "rep") == 0);
    buflen = 0;
    CHECK_RC(MPI_Info_get_string(info, "mid", &buflen, NULL, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && buflen == 12);

    /* dup is independent */
    CHECK_RC(MPI_Info_dup(info, &dup), MPI_SUCCESS);
    CHECK(dup != info);
    CHECK_RC(MPI_Info_set(dup, "onlydup", "y"), MPI_SUCCESS);
    CHECK_RC(MPI_Info_delete(dup, "alpha"), MPI_SUCCESS);
    check_val(info, "alpha", "two");
    check_val(info, "onlydup", NULL);
    check_val(dup, "alpha", NULL);
    CHECK_RC(MPI_Info_get_nthkey(dup, 1, key), MPI_SUCCESS);
    CHECK(strcmp(key, "mid") == 0);
    CHECK_RC(MPI_Info_delete(info, "alpha"), MPI_SUCCESS);
    CHECK_CLASS(MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY);
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys), MPI_SUCCESS);
    CHECK(nkeys == 2);

    /* errors */
    char longkey[MPI_MAX_INFO_KEY + 8];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    CHECK_CLASS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
    static char longval[MPI_MAX_INFO_VAL + 8];
    memset(longval, 'v', sizeof longval - 1);
    CHECK_CLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_get_nkeys((MPI_Info)77, &nkeys), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_get(info, "k", -1, buf, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_create(NULL), MPI_ERR_ARG);
    MPI_Info env = MPI_INFO_ENV;
    CHECK_CLASS(MPI_Info_free(&env), MPI_ERR_INFO);

    CHECK_RC(MPI_Info_free(&dup), MPI_SUCCESS);
    CHECK(dup == MPI_INFO_NULL);
    CHECK_CLASS(MPI_Info_free(&dup), MPI_ERR_INFO);
    CHECK_RC(MPI_Info_free(&info), MPI_SUCCESS);

    /* MPI_INFO_ENV */
    char host[256], want[32];
    CHECK(gethostname(host, sizeof host) == 0);
    check_val(MPI_INFO_ENV, "host", host);
    snprintf(want, sizeof want, "%d", size);
    check_val(MPI_INFO_ENV, "maxprocs", want);
    check_val(MPI_INFO_ENV, "thread_level", NULL); /* none requested before the start */
    check_val(MPI_INFO_ENV, "command", argv[0]);
    CHECK_RC(MPI_Info_get_valuelen(MPI_INFO_ENV, "wdir", &buflen, &flag), MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK_RC(MPI_Info_get_valuelen(MPI_INFO_ENV, "arch", &buflen, &flag), MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK_RC(MPI_Info_dup(MPI_INFO_ENV, &dup), MPI_SUCCESS);
    check_val(dup, "host", host);
    CHECK_RC(MPI_Info_free(&dup), MPI_SUCCESS);

    /* many keys */
    CHECK_RC(MPI_Info_create(&info), MPI_SUCCESS);
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "key%03d", i);
        snprintf(buf, sizeof buf, "%d", i * 7);
        CHECK_RC(MPI_Info_set(info, key, buf), MPI_SUCCESS);
    }
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys), MPI_SUCCESS);
    CHECK(nkeys == 300);
    CHECK_RC(MPI_Info_get_nthkey(info, 299, key), MPI_SUCCESS);
    CHECK(strcmp(key, "key299") == 0);
    check_val(info, "key150", "1050");
    CHECK_RC(MPI_Info_free(&info), MPI_SUCCESS);

    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    /* infos outlive MPI_Finalize */
    check_val(pre, "command", "prog");
    CHECK_RC(MPI_Info_free(&pre), MPI_SUCCESS);
    return 0;
}
