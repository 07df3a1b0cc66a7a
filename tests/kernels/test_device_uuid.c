/* ls_format_gpu_uuid: nvidia-smi's text form of a GPU UUID, and a too-small buffer refused. */
#include <string.h>

#include "device_uuid.h"
#include "ls_test.h"

int main(void)
{
    const unsigned char b[16] = {0x8e, 0x4b, 0x0a, 0x11, 0x22, 0x33, 0x44, 0x55,
                                 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xff};
    char buf[48];
    LS_CHECK_EQ_INT(ls_format_gpu_uuid(b, buf, sizeof buf), 0);
    LS_CHECK(strcmp(buf, "GPU-8e4b0a11-2233-4455-6677-8899aabbccff") == 0);
    LS_CHECK_EQ_INT((int)strlen(buf), LS_UUID_TEXT_LEN);
    char small[LS_UUID_TEXT_LEN];
    memset(small, 'x', sizeof small);
    LS_CHECK_EQ_INT(ls_format_gpu_uuid(b, small, sizeof small), -1);
    LS_CHECK(small[0] == '\0');
    return ls_test_exit();
}
