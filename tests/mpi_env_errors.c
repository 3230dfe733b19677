/* mpi_env_errors.c — error handlers (MPI_ERRORS_RETURN, user handlers: calls and codes,
 * references, Comm_call_errhandler), error classes, codes and strings, user classes
 * and codes with MPI_LASTUSEDCODE, and the honest errors of windows/files/sessions. */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int ncalls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    ncalls++;
    last_code = *code;
    last_comm = *comm;
}

/* The class of an error code (the library raises detailed codes beyond the classes). */
static int class_of(int code)
{
    int cls = -1;
    CHECK_RC(MPI_Error_class(code, &cls), MPI_SUCCESS);
    return cls;
}

int main(int argc, char **argv)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = -1, cls = -1;
    /* every class has a message, and they differ */
    for (int c = 0; c <= MPI_ERR_LASTCODE; c++) {
        CHECK_RC(MPI_Error_string(c, s, &len), MPI_SUCCESS);
        CHECK(len > 0 && len == (int)strlen(s));
        CHECK_RC(MPI_Error_class(c, &cls), MPI_SUCCESS);
        CHECK(cls == c);
        for (int d = 0; d < c; d++) {
            char t[MPI_MAX_ERROR_STRING];
            CHECK_RC(MPI_Error_string(d, t, &len), MPI_SUCCESS);
            CHECK(strcmp(s, t) != 0);
        }
    }

    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    int rank;
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);

    /* default: MPI_ERRORS_ARE_FATAL on WORLD and SELF */
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_Errhandler_free(&eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_ARE_FATAL);

    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_CLASS(MPI_Error_string(MPI_ERR_LASTCODE + 1000, s, &len), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Error_class(-5, &cls), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);

    /* a user handler on WORLD: called once per error with the code, the comm */
    MPI_Errhandler mine;
    CHECK_RC(MPI_Comm_create_errhandler(handler, &mine), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine), MPI_SUCCESS);
    CHECK_RC(MPI_Errhandler_free(&mine), MPI_SUCCESS); /* still attached: stays alive */
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL);
    CHECK(ncalls == 1 && class_of(last_code) == MPI_ERR_KEYVAL && last_comm == MPI_COMM_WORLD);
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_TAG), MPI_SUCCESS);
    CHECK(ncalls == 2 && last_code == MPI_ERR_TAG);
    /* errors not tied to an object go to WORLD's handler */
    int nkeys;
    CHECK_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &nkeys), MPI_ERR_INFO);
    CHECK(ncalls == 3 && class_of(last_code) == MPI_ERR_INFO);
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh), MPI_SUCCESS);
    CHECK(eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL);
    /* ... unless MPI_COMM_SELF got one (MPI-4.0) */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &nkeys), MPI_ERR_INFO);
    CHECK(ncalls == 3);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_COUNT), MPI_SUCCESS);
    CHECK(ncalls == 4 && last_code == MPI_ERR_COUNT && last_comm == MPI_COMM_SELF);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), MPI_SUCCESS);
    /* eh is our last reference */
    CHECK_RC(MPI_Errhandler_free(&eh), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_TAG), MPI_SUCCESS);
    CHECK(ncalls == 4);
    CHECK_CLASS(MPI_Errhandler_free(&eh), MPI_ERR_ARG);

    /* handlers of other kinds cannot go on communicators */
    MPI_Errhandler weh;
    CHECK_RC(MPI_Win_create_errhandler((MPI_Win_errhandler_function *)handler, &weh), MPI_SUCCESS);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Win_set_errhandler(MPI_WIN_NULL, weh), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_get_errhandler(MPI_WIN_NULL, &eh), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER), MPI_ERR_WIN);
    CHECK_RC(MPI_Errhandler_free(&weh), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_OTHER), MPI_ERR_FILE);
    CHECK_RC(MPI_File_get_errhandler(MPI_FILE_NULL, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Session_call_errhandler(MPI_SESSION_NULL, MPI_ERR_OTHER), MPI_ERR_SESSION);
    CHECK_CLASS(MPI_Session_get_errhandler(MPI_SESSION_NULL, &eh), MPI_ERR_SESSION);

    /* user classes, codes, strings; MPI_LASTUSEDCODE follows */
    int *lastused, flag;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *lastused == MPI_ERR_LASTCODE);
    int myclass, mycode, mycode2;
    CHECK_RC(MPI_Add_error_class(&myclass), MPI_SUCCESS);
    CHECK(myclass > MPI_ERR_LASTCODE);
    CHECK_RC(MPI_Add_error_code(myclass, &mycode), MPI_SUCCESS);
    CHECK_RC(MPI_Add_error_code(MPI_ERR_ARG, &mycode2), MPI_SUCCESS);
    CHECK(mycode != myclass && mycode2 != mycode && mycode > MPI_ERR_LASTCODE);
    CHECK_CLASS(MPI_Add_error_code(mycode, &mycode2), MPI_ERR_ARG); /* not a class */
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *lastused >= mycode && *lastused >= mycode2);
    CHECK_RC(MPI_Error_class(mycode, &cls), MPI_SUCCESS);
    CHECK(cls == myclass);
    CHECK_RC(MPI_Error_class(mycode2, &cls), MPI_SUCCESS);
    CHECK(cls == MPI_ERR_ARG);
    CHECK_RC(MPI_Error_class(myclass, &cls), MPI_SUCCESS);
    CHECK(cls == myclass);
    CHECK_RC(MPI_Error_string(mycode, s, &len), MPI_SUCCESS);
    CHECK(len == 0 && s[0] == 0);
    CHECK_RC(MPI_Add_error_string(mycode, "my own error"), MPI_SUCCESS);
    CHECK_RC(MPI_Add_error_string(myclass, "my own class"), MPI_SUCCESS);
    CHECK_RC(MPI_Add_error_string(mycode, "my own error, again"), MPI_SUCCESS);
    CHECK_RC(MPI_Error_string(mycode, s, &len), MPI_SUCCESS);
    CHECK(strcmp(s, "my own error, again") == 0 && len == (int)strlen(s));
    CHECK_RC(MPI_Error_string(myclass, s, &len), MPI_SUCCESS);
    CHECK(strcmp(s, "my own class") == 0);
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_TAG, "no"), MPI_ERR_ARG);

    /* a user code through a user handler */
    CHECK_RC(MPI_Comm_create_errhandler(handler, &mine), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, mine), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_SELF, mycode), MPI_SUCCESS);
    CHECK(ncalls == 5 && last_code == mycode);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Errhandler_free(&mine), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_SELF, mycode), MPI_SUCCESS);
    CHECK(ncalls == 5);

    /* before init / after finalize errors are fatal; here only the return path */
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    CHECK_RC(MPI_Error_class(mycode, &cls), MPI_SUCCESS); /* still valid after finalize */
    CHECK(cls == myclass);
    (void)rank;
    return 0;
}
