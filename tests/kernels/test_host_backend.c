/* The host backend table: devices, memory, copies, streams, events, graphs and profiler, and
 * that its kernel entries are the reference kernels. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "ls_kernels.h"
#include "ls_test.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

int main(void)
{
    const ls_runtime *be = ls_runtime_host();
    LS_REQUIRE(be != NULL);

    /* device */
    LS_CHECK_EQ_INT(be->device_count(), 1);
    LS_CHECK_EQ_INT(be->set_device(0), 0);
    LS_CHECK_EQ_INT(be->set_device(1), -1);
    LS_CHECK(strstr(ls_last_error(), "1") != NULL);
    ls_device_info info;
    memset(&info, 0x5a, sizeof info);
    LS_CHECK_EQ_INT(be->device_info(0, &info), 0);
    LS_CHECK(strcmp(info.name, "host") == 0);
    LS_CHECK(info.sm_count >= 1);
    LS_CHECK_EQ_INT(info.driver_version, 0);
    LS_CHECK(strcmp(info.pci_bus_id, "") == 0);
    LS_CHECK(strcmp(info.uuid, "") == 0);
    LS_CHECK(info.total_bytes > 0);
    LS_CHECK(info.free_bytes >= 0 && info.free_bytes <= info.total_bytes);
    LS_CHECK_EQ_INT(be->device_info(3, &info), -1);

    /* memory: 64-byte aligned, usable, zero size valid */
    const size_t sizes[] = {0, 1, 63, 64, 1000, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = be->mem_alloc(sizes[i]);
        LS_CHECK(p != NULL);
        if (!p)
            continue;
        LS_CHECK_EQ_INT((uintptr_t)p % 64, 0);
        LS_CHECK_EQ_INT(be->mem_set(p, 0xab, sizes[i], NULL), 0);
        size_t bad = 0;
        for (size_t j = 0; j < sizes[i]; j++)
            bad += p[j] != 0xab;
        LS_CHECK_EQ_INT(bad, 0);
        be->mem_free(p);
    }
    ls_clear_error();
    LS_CHECK(be->mem_alloc(SIZE_MAX - 10) == NULL);
    LS_CHECK(strstr(ls_last_error(), "mem_alloc") != NULL);
    be->mem_free(NULL);

    /* copies */
    unsigned char src[256], dst[256], back[256];
    for (int i = 0; i < 256; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    unsigned char *dev = be->mem_alloc(256), *dev2 = be->mem_alloc(256);
    LS_REQUIRE(dev && dev2);
    memset(back, 0, sizeof back);
    LS_CHECK_EQ_INT(be->copy_h2d(dev, src, 256), 0);
    LS_CHECK_EQ_INT(be->copy_d2d(dev2, dev, 256, NULL), 0);
    LS_CHECK_EQ_INT(be->copy_d2h(back, dev2, 256), 0);
    LS_CHECK(memcmp(back, src, 256) == 0);
    LS_CHECK_EQ_INT(be->copy_h2d(NULL, src, 4), -1);
    LS_CHECK(strstr(ls_last_error(), "dst") != NULL);
    LS_CHECK_EQ_INT(be->copy_d2h(dst, NULL, 4), -1);
    LS_CHECK(strstr(ls_last_error(), "src") != NULL);
    LS_CHECK_EQ_INT(be->copy_d2h(NULL, NULL, 0), 0); /* zero bytes: nothing to do */
    /* upload: the copy_h2d of small lists; whole 4-byte words, at most LS_UPLOAD_MAX_BYTES */
    memset(back, 0, sizeof back);
    LS_CHECK_EQ_INT(be->upload(dev2, src, 256, NULL), 0);
    LS_CHECK_EQ_INT(be->copy_d2h(back, dev2, 256), 0);
    LS_CHECK(memcmp(back, src, 256) == 0);
    LS_CHECK_EQ_INT(be->upload(dev2, src, 6, NULL), -1);
    LS_CHECK(strstr(ls_last_error(), "6 bytes") != NULL);
    LS_CHECK_EQ_INT(be->upload(dev2 + 2, src, 4, NULL), -1);
    LS_CHECK(strstr(ls_last_error(), "aligned") != NULL);
    LS_CHECK_EQ_INT(be->upload(dev2, src, LS_UPLOAD_MAX_BYTES + 4, NULL), -1);
    LS_CHECK(strstr(ls_last_error(), "at most") != NULL);
    be->mem_free(dev);
    be->mem_free(dev2);

    /* streams and events */
    ls_stream s = NULL;
    LS_CHECK_EQ_INT(be->stream_create(&s), 0);
    LS_CHECK(s != NULL);
    ls_event *e0 = NULL, *e1 = NULL;
    LS_CHECK_EQ_INT(be->event_create(&e0), 0);
    LS_CHECK_EQ_INT(be->event_create(&e1), 0);
    double us = -1.0;
    LS_CHECK_EQ_INT(be->event_elapsed_us(e0, e1, &us), -1); /* never recorded */
    LS_CHECK(strstr(ls_last_error(), "never recorded") != NULL);
    LS_CHECK_EQ_INT(be->event_record(e0, s), 0);
    struct timespec ts = {0, 3000000}; /* 3 ms */
    nanosleep(&ts, NULL);
    LS_CHECK_EQ_INT(be->event_record(e1, s), 0);
    LS_CHECK_EQ_INT(be->sync(s), 0);
    LS_CHECK_EQ_INT(be->event_elapsed_us(e0, e1, &us), 0);
    LS_CHECK(us >= 3000.0 && us < 2e6);
    LS_CHECK_EQ_INT(be->event_elapsed_us(e1, e0, &us), 0);
    LS_CHECK(us <= -3000.0);
    LS_CHECK_EQ_INT(be->event_destroy(e0), 0);
    LS_CHECK_EQ_INT(be->event_destroy(e1), 0);
    LS_CHECK_EQ_INT(be->stream_destroy(s), 0);

    /* graphs unsupported (NULL entries), profiler is a no-op */
    LS_CHECK(be->graph_begin == NULL && be->graph_end == NULL);
    LS_CHECK(be->graph_launch == NULL && be->graph_destroy == NULL);
    LS_CHECK(be->hold_create == NULL && be->hold_enqueue == NULL && be->hold_release == NULL);
    LS_CHECK_EQ_INT(be->profiler_start(), 0);
    LS_CHECK_EQ_INT(be->profiler_stop(), 0);

    /* the "host" impl: on the host runtime, every op wired and validating its params */
    const ls_impl *im = ls_impl_get("host");
    LS_REQUIRE(im);
    LS_CHECK(strcmp(im->runtime, "host") == 0 && im->abi_version == LS_IMPL_ABI && im->n_knobs == 0);
    LS_CHECK(ls_impl_default(be) == im);
    LS_CHECK_EQ_INT(be->caps & (LS_RT_DEVICE_MEMORY | LS_RT_GRAPHS | LS_RT_HOLD | LS_RT_PCI), 0);
    LS_CHECK(im->conv_update && im->gdn && im->kda && im->ssu);
    LS_CHECK(im->state_copy && im->state_accept && im->state_zero);
    LS_CHECK_EQ_INT(im->conv_update(NULL, NULL, NULL), -1);
    LS_CHECK(strstr(ls_last_error(), "conv") != NULL);
    LS_CHECK_EQ_INT(im->kda(NULL, NULL, NULL), -1);
    LS_CHECK(strstr(ls_last_error(), "kda") != NULL);
    LS_CHECK_EQ_INT(im->state_zero(NULL, NULL, NULL), -1);

    /* state_zero through the table really zeroes */
    int32_t dst_idx[1] = {1};
    unsigned char *buf = be->mem_alloc(3 * 8);
    LS_REQUIRE(buf);
    memset(buf, 0x77, 24);
    ls_state_params sp;
    memset(&sp, 0, sizeof sp);
    sp.n_buffers = 1, sp.layers = 1, sp.slots = 3, sp.count = 1, sp.dst = dst_idx;
    sp.buf[0].main = buf, sp.buf[0].item_bytes = 8;
    LS_CHECK_EQ_INT(im->state_zero(&sp, NULL, NULL), 0);
    LS_CHECK(buf[7] == 0x77 && buf[8] == 0 && buf[15] == 0 && buf[16] == 0x77);
    be->mem_free(buf);
    return ls_test_exit();
}
