/* ls_runtime_get: "host" always, "cuda" only with CUDA, unknown names rejected by name. */
#include "ls_kernels.h"
#include "ls_test.h"

#include <string.h>

int main(void)
{
    const ls_runtime *h = ls_runtime_get("host");
    LS_REQUIRE(h != NULL);
    LS_CHECK(h == ls_runtime_host());
    LS_CHECK(strcmp(h->name, "host") == 0);
    LS_CHECK_EQ_INT(h->abi_version, LS_RUNTIME_ABI);

    ls_clear_error();
    const ls_runtime *c = ls_runtime_get("cuda");
#ifdef LS_HAVE_CUDA
    LS_CHECK(c != NULL && strcmp(c->name, "cuda") == 0);
#else
    LS_CHECK(c == NULL);
    LS_CHECK(strstr(ls_last_error(), "built without CUDA") != NULL);
    LS_CHECK(ls_runtime_cuda() == NULL);
#endif

    LS_CHECK(ls_runtime_get("tpu") == NULL);
    LS_CHECK(strstr(ls_last_error(), "'tpu'") != NULL);
    LS_CHECK(ls_runtime_get("Host") == NULL); /* names are exact */
    LS_CHECK(strstr(ls_last_error(), "'Host'") != NULL);
    LS_CHECK(ls_runtime_get("") == NULL);
    LS_CHECK(ls_runtime_get(NULL) == NULL);
    LS_CHECK(strstr(ls_last_error(), "NULL") != NULL);
    return ls_test_exit();
}
