/* boot_launcher_helper — a rank program that misbehaves on request, for the
 * launcher tests (tests/launcher_test.sh):
 *
 *     boot_launcher_helper MODE RANK CODE TAG
 *
 * Every rank connects (boot_init), creates the shared-memory entry
 * /dev/shm/fmpl-<job id>-test<rank> (which fmplrun must remove at the end), and
 * passes one fence. Then rank RANK does what MODE says while the others wait in a
 * second fence that therefore never completes (except in "ok", "status", "print"):
 *   ok       everyone finalises and exits 0
 *   kill     RANK kills itself with signal CODE
 *   early    RANK exits with status CODE without finalising
 *   status   everyone finalises; RANK then exits with status CODE
 *   abort    RANK calls boot_abort(CODE, "helper abort from rank RANK")
 *   hang     everyone sleeps forever (for --timeout and signals to fmplrun)
 *   print    everyone writes 200 numbered lines to stdout and 50 to stderr
 * TAG is ignored: the tests use it to find leftover processes with pgrep. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "boot/boot.h"
#include "test_util.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODE RANK CODE TAG\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int target = atoi(argv[2]), code = atoi(argv[3]);
    boot_t *b;
    CHECK_RC(boot_init(&b), FMPL_SUCCESS);
    int rank = boot_rank(b);

    char name[256];
    snprintf(name, sizeof name, "/fmpl-%s-test%d", boot_job_id(b), rank);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    CHECK(fd >= 0);
    close(fd);
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);

    if (strcmp(mode, "print") == 0) {
        char pad[120];
        memset(pad, 'x', sizeof pad - 1);
        pad[sizeof pad - 1] = 0;
        for (int i = 0; i < 200; i++) {
            printf("rank %d line %d %s\n", rank, i, pad + (i % 100));
            if (i % 4 == 0)
                fprintf(stderr, "rank %d error %d\n", rank, i / 4);
        }
        fflush(stdout);
    } else if (strcmp(mode, "hang") == 0) {
        for (;;)
            pause();
    } else if (rank == target) {
        if (strcmp(mode, "kill") == 0) {
            signal(code, SIG_DFL); /* sanitizers catch SIGSEGV: die for real */
            kill(getpid(), code);
            pause();
        } else if (strcmp(mode, "early") == 0) {
            _exit(code);
        } else if (strcmp(mode, "abort") == 0) {
            char msg[64];
            snprintf(msg, sizeof msg, "helper abort from rank %d", rank);
            boot_abort(b, code, msg);
        }
    }
    if (strcmp(mode, "ok") != 0 && strcmp(mode, "status") != 0 && strcmp(mode, "print") != 0) {
        boot_fence(b); /* never completes: the target rank does not join */
        fprintf(stderr, "rank %d: the fence completed although rank %d left\n", rank, target);
        return 1;
    }
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
    if (strcmp(mode, "status") == 0 && rank == target)
        return code;
    return 0;
}
