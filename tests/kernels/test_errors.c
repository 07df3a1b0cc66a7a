/* ls_fail / ls_last_error / ls_clear_error: formatting, return value, truncation, self-reference,
 * and the per-thread buffer. */
#include "ls_kernels.h"
#include "ls_test.h"

#include <pthread.h>
#include <string.h>

static void *other_thread(void *arg)
{
    int *seen_empty = (int *)arg;
    *seen_empty = ls_last_error()[0] == '\0'; /* main's error must not leak here */
    ls_fail("thread: own error %d", 7);
    return NULL;
}

int main(void)
{
    LS_CHECK(strcmp(ls_last_error(), "") == 0);
    LS_CHECK_EQ_INT(ls_fail("conv: width=%d not in 2..4", 5), -1);
    LS_CHECK(strcmp(ls_last_error(), "conv: width=5 not in 2..4") == 0);

    ls_clear_error();
    LS_CHECK(strcmp(ls_last_error(), "") == 0);

    /* Prefixing the previous message with ls_last_error() as an argument. */
    ls_fail("inner %s", "reason");
    ls_fail("outer: %s", ls_last_error());
    LS_CHECK(strcmp(ls_last_error(), "outer: inner reason") == 0);

    /* Long messages are truncated, end in "...", and never overflow. */
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ls_fail("long %s", big);
    size_t n = strlen(ls_last_error());
    LS_CHECK(n > 500 && n < 3000);
    LS_CHECK(strcmp(ls_last_error() + n - 3, "...") == 0);
    LS_CHECK(strncmp(ls_last_error(), "long xxx", 8) == 0);

    /* Thread-local: a thread sees "" and its own error does not replace ours. */
    ls_fail("main: mine");
    pthread_t t;
    int seen_empty = 0;
    LS_REQUIRE(pthread_create(&t, NULL, other_thread, &seen_empty) == 0);
    pthread_join(t, NULL);
    LS_CHECK(seen_empty);
    LS_CHECK(strcmp(ls_last_error(), "main: mine") == 0);
    return ls_test_exit();
}
