/* device_uuid.c — see device_uuid.h. */
#include "device_uuid.h"

int ls_format_gpu_uuid(const unsigned char bytes[16], char *buf, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    if (!buf || cap <= LS_UUID_TEXT_LEN) {
        if (buf && cap > 0)
            buf[0] = '\0';
        return -1;
    }
    char *p = buf;
    for (const char *s = "GPU-"; *s; s++)
        *p++ = *s;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) /* groups of 4, 2, 2, 2, 6 bytes */
            *p++ = '-';
        *p++ = hex[bytes[i] >> 4];
        *p++ = hex[bytes[i] & 15];
    }
    *p = '\0';
    return 0;
}
