"""conv_kernels.py of a srcdemo source tree (TEST ONLY; tests/python/srcdemo.py): the tests copy
this file into two folders and plant a slowdown in one (DELAY_S)."""
import time

VERSION = "1"
DELAY_S = 0.0


def conv_update(p, tuning, kernel):
    if DELAY_S:
        time.sleep(DELAY_S)
    return kernel(p, tuning)
