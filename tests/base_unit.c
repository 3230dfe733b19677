/* base_unit.c — unit tests of the base layer: messages, streaming copies, settings, back-off,
 * futex. */
#include "base/base.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

struct seen {
    int n, found;
};

static void count_setting(const base_setting_t *s, void *arg)
{
    struct seen *seen = arg;
    seen->n++;
    if (strcmp(s->name, "FMPL_TEST_SIZE") == 0 && strcmp(s->value, "3145728") == 0 && s->from_env)
        seen->found = 1;
}

int main(void)
{
    /* every code has its own message; out-of-range codes are handled */
    for (int c = 0; c < FMPL_ERR_LAST; c++) {
        CHECK(base_strerror(c) != NULL);
        CHECK(strcmp(base_strerror(c), "unknown error code") != 0);
        for (int d = 0; d < c; d++)
            CHECK(strcmp(base_strerror(c), base_strerror(d)) != 0);
    }
    CHECK(strcmp(base_strerror(-5), "unknown error code") == 0);
    CHECK(strcmp(base_strerror(FMPL_ERR_LAST), "unknown error code") == 0);

    /* streaming copies: every head alignment, short and long lengths, nothing outside */
    {
        enum { ROOM = 4096 + 256 };
        static unsigned char src[ROOM], dst[ROOM + 64];
        for (int i = 0; i < ROOM; i++)
            src[i] = (unsigned char)(i * 7 + 3);
        const size_t lens[] = {0, 1, 15, 63, 64, 65, 127, 200, 1000, 4096};
        for (size_t off = 0; off < 16; off++)
            for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
                memset(dst, 0xee, sizeof dst);
                base_copy_stream(dst + 16 + off, src + off, lens[k]);
                CHECK(memcmp(dst + 16 + off, src + off, lens[k]) == 0);
                for (size_t i = 0; i < 16 + off; i++)
                    CHECK(dst[i] == 0xee);
                for (size_t i = 16 + off + lens[k]; i < sizeof dst; i++)
                    CHECK(dst[i] == 0xee);
            }
    }

    /* settings: suffixes, defaults, booleans, strings, and the record of them */
    setenv("FMPL_TEST_SIZE", "3M", 1);
    CHECK(base_env_int("FMPL_TEST_SIZE", 7, 0, 1ll << 40, "test") == 3 * 1024 * 1024);
    unsetenv("FMPL_TEST_UNSET");
    CHECK(base_env_int("FMPL_TEST_UNSET", 42, 0, 100, "test") == 42);
    setenv("FMPL_TEST_BOOL", "off", 1);
    CHECK(base_env_bool("FMPL_TEST_BOOL", 1, "test") == 0);
    setenv("FMPL_TEST_BOOL2", "Yes", 1);
    CHECK(base_env_bool("FMPL_TEST_BOOL2", 0, "test") == 1);
    CHECK(strcmp(base_env_str("FMPL_TEST_STR_UNSET", "dflt", "test"), "dflt") == 0);
    struct seen seen = {0, 0};
    base_env_foreach(count_setting, &seen);
    CHECK(seen.n == 5);
    CHECK(seen.found == 1);

    /* back-off: spins first when not oversubscribed (never yielding unasked), yields at
     * once when oversubscribed, sleeps after the spin (or yield) period */
    setenv("FMPL_SPIN_US", "1000000", 1);
    base_backoff_configure(0, 0);
    base_backoff_t b;
    base_backoff_init(&b);
    CHECK(base_backoff_next(&b) == BASE_BACKOFF_SPIN);
    /* past 2 us of spinning: every 64th poll asks to yield if a peer needs the CPU */
    int asked = 0, others = 0;
    uint64_t t_spin = base_time_ns();
    while (base_time_ns() - t_spin < 5000 || asked < 2) {
        base_backoff_action_t a = base_backoff_next(&b);
        if (a == BASE_BACKOFF_YIELD_IF_NEEDED)
            asked++;
        else if (a != BASE_BACKOFF_SPIN)
            others++;
        CHECK(base_time_ns() - t_spin < 1000000000ull);
    }
    CHECK(others == 0);
    /* past the spin period: sleep, with no unconditional yield in between */
    setenv("FMPL_SPIN_US", "100", 1);
    base_backoff_configure(0, 0);
    base_backoff_init(&b);
    base_backoff_action_t a;
    t_spin = base_time_ns();
    while ((a = base_backoff_next(&b)) == BASE_BACKOFF_SPIN || a == BASE_BACKOFF_YIELD_IF_NEEDED)
        CHECK(base_time_ns() - t_spin < 1000000000ull);
    CHECK(a == BASE_BACKOFF_SLEEP);
    CHECK(base_time_ns() - t_spin >= 100000);
    /* oversubscribed: yields while the job's ranks are all that run here (1000 of them,
     * more than the tasks running), sleeps at once when more tasks run than the job's 1
     * rank and the CPUs online (this process and one busy child per CPU) */
    setenv("FMPL_YIELD_US", "1000000", 1);
    base_backoff_configure(1, 1000);
    base_backoff_init(&b);
    CHECK(base_backoff_next(&b) == BASE_BACKOFF_YIELD);
    enum { BUSY_MAX = 256 };
    pid_t busy[BUSY_MAX];
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int nbusy = online > 0 && online < BUSY_MAX ? (int)online : 0;
    for (int i = 0; i < nbusy; i++) {
        busy[i] = fork();
        CHECK(busy[i] >= 0);
        if (busy[i] == 0)
            for (;;)
                ;
    }
    base_backoff_configure(1, 1);
    base_backoff_init(&b);
    a = base_backoff_next(&b);
    for (int i = 0; i < nbusy; i++) {
        kill(busy[i], SIGKILL);
        waitpid(busy[i], NULL, 0);
    }
    CHECK(nbusy == 0 || a == BASE_BACKOFF_SLEEP);
    setenv("FMPL_SPIN_US", "0", 1);
    setenv("FMPL_YIELD_US", "0", 1);
    base_backoff_configure(0, 0);
    base_backoff_init(&b);
    base_backoff_next(&b);
    CHECK(base_backoff_next(&b) == BASE_BACKOFF_SLEEP);

    /* placement: CPUs 0-3 (no sysfs topology beyond this machine's: one thread per
     * core), auto gives whole-core domains, core one CPU each, round robin beyond */
    cpu_set_t four, out;
    CPU_ZERO(&four);
    for (int c = 0; c < 4; c++)
        CPU_SET(c, &four);
    CHECK(base_cpu_place(&four, 2, 1, 0, &out) == 2 && CPU_ISSET(2, &out) && CPU_ISSET(3, &out));
    CHECK(base_cpu_place(&four, 2, 0, 1, &out) == 1 && CPU_ISSET(0, &out));
    CHECK(base_cpu_place(&four, 3, 2, 0, &out) == 1 && CPU_ISSET(2, &out));
    CHECK(base_cpu_place(&four, 1, 0, 0, &out) == 4 && CPU_EQUAL(&four, &out));
    CHECK(base_cpu_place(&four, 6, 5, 0, &out) == 1 && CPU_ISSET(1, &out));
    CHECK(base_cpu_place(&four, 6, 5, 1, &out) == 1 && CPU_ISSET(1, &out));
    char text[32];
    CPU_SET(6, &four);
    base_cpu_text(&four, text, sizeof text);
    CHECK(strcmp(text, "0-3,6") == 0);
    CPU_ZERO(&four);
    base_cpu_text(&four, text, sizeof text);
    CHECK(strcmp(text, "") == 0);
    CHECK(base_cpu_place(&four, 2, 0, 0, &out) == 0 && CPU_COUNT(&out) == 0);

    /* futex: a wait on a value that differs returns at once; a timed wait times out */
    uint32_t word = 1;
    CHECK(base_futex_wait(&word, 0, -1) == FMPL_SUCCESS);
    uint64_t t0 = base_time_ns();
    CHECK(base_futex_wait(&word, 1, 2000000) == FMPL_ERR_TIMEOUT);
    CHECK(base_time_ns() - t0 >= 1000000);
    base_futex_wake(&word, 1);

    CHECK(base_ncpus() >= 1);
    printf("base_unit: all checks passed\n");
    return 0;
}
