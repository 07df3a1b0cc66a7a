"""tree_kernels.py: a stand-in for the kernel file of your own tree, which tree_impl.py loads from
each source folder: copy it into two folders and change one. Host runtime (numpy). The pool rows
(pool/copy, pool/accept, ...) need all three state ops: the pool they time runs on the impl's own."""
from conv_update import conv_update_host  # a sibling: the bridge puts tree_impl.py's folder on sys.path

VERSION = "1"


def conv_update(p, tuning):
    return conv_update_host(p, tuning)


def state_copy(p, tuning):  # slot src[i] -> dst[i] of every buffer, all layers
    for main, _spec, _item_bytes in p.buf:
        main[:, p.dst] = main[:, p.src]


def state_accept(p, tuning):  # speculative step[i] of slot dst[i] -> its main state; -1: none
    take = p.step >= 0
    dst, step = p.dst[take], p.step[take]
    for main, spec, _item_bytes in p.buf:
        if spec is not None:
            main[:, dst] = spec[:, dst, step]


def state_zero(p, tuning):
    for main, _spec, _item_bytes in p.buf:
        main[:, p.dst] = 0
