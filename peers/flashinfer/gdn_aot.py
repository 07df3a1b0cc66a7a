#!/usr/bin/env python3
"""FlashInfer's CuTe-DSL GDN kernels for sm_90, compiled ahead of time (no GPU needed).

FlashInfer 0.7.2.post1 compiles its GDN decode and MTP-verify kernels at run time with the
CUTLASS DSL (nvidia-cutlass-dsl, a ~240 MB install whose MLIR compiler alone is 193 MB). The GPU
machine cannot take that (no network, <= 64 MiB per call), so this script runs the DSL here:
for every variant it builds FlashInfer's own `@cute.jit` launch function with the arguments
FlashInfer's Python passes on sm_90 (gdn_decode.py -> gdn_kernels/gdn_decode_pretranspose.py and
gdn_kernels/gdn_decode_mtp.py), and exports it with `export_to_c` (one .o and one .h per variant;
the cubin is inside the .o). It also writes `fi_gdn_variants.c` (a C glue function per variant
filling the DSL's tensor structs from `ls_fi_gdn_args`, and the variant table), `manifest.txt`, and
copies the DSL's `libcuda_dialect_runtime_static.a`, which the objects call (it calls cudart).
peers/flashinfer/CMakeLists.txt links all of it into the flashinfer impl when the folder exists.

Usage (scripts/peers.sh aot-flashinfer-gdn runs it):
  gdn_aot.py --dsl DIR --fi-src .peers/src/flashinfer-python-0.7.2.post1 --out .peers/aot/flashinfer-gdn
             [--shapes 16x32x128x128,8x16x128x128] [--tokens 2-8]
--dsl: a folder holding the installed DSL (pip install --target DIR nvidia-cutlass-dsl-libs-base
nvidia-cutlass-dsl-libs-cu13 nvidia-cutlass-dsl-libs-core cuda-bindings cuda-pathfinder protobuf,
for THIS machine's Python). FlashInfer's kernel files import torch only for types: a stand-in
module is given (no torch needed). Exit 2 with one line on bad arguments or a missing input.
"""
import argparse
import ctypes
import importlib
import os
import shutil
import sys
import types

# ------------------------------------------------------------------ variants (host-testable)

# MTP launch config on sm_90, FlashInfer's get_mtp_config (gdn_decode_mtp.py): by work units
# B*HV; the inline kernel below 129 work units (run_mtp_decode's use_inline_kernel). Buckets are
# (upper bound of B*HV, name); per bucket (tile_v, ilp_rows, use_smem_v) for T and
# disable_state_update = False (the per-token scatter path needs state writes on).
MTP_BUCKETS = ((64, "w64"), (128, "w128"), (448, "w448"), (1024, "w1024"), (1 << 62, "wmax"))


def mtp_config(work_units, T, V):
    """(tile_v, vec_size, ilp_rows, use_smem_v, inline) as FlashInfer picks them on sm_90
    with disable_state_update = False."""
    if work_units <= 64:
        tile_v, ilp, smem = 8, 2, False
    elif work_units <= 128:
        tile_v, ilp, smem = 16, 4, False
    elif work_units <= 448:
        tile_v, ilp, smem = (16, 2, False) if T <= 2 else (32, 4, False)
    elif work_units <= 1024:
        tile_v, ilp, smem = 32, 4, False
    else:
        tile_v, ilp, smem = 64, 4, True
        if T <= 2:  # state update on (scatter) and T <= 2
            ilp, smem = 8, False
    return min(tile_v, V), 4, ilp, smem, work_units <= 128


def bucket_of(work_units):
    for bound, name in MTP_BUCKETS:
        if work_units <= bound:
            return name
    raise AssertionError(work_units)


def parse_shapes(text):
    out = []
    for item in text.split(","):
        parts = item.split("x")
        if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"--shapes: {item!r} is not HxHVxKxV")
        H, HV, K, V = map(int, parts)
        if HV % H or K != 128 or V % 8 or V < 128:
            raise ValueError(f"--shapes: {item!r}: FlashInfer's sm_90 kernels need HV % H == 0, K == 128, "
                             "V >= 128 and V % 8 == 0")
        out.append((H, HV, K, V))
    return out


def parse_tokens(text):
    lo, _, hi = text.partition("-")
    try:
        lo, hi = int(lo), int(hi or lo)
    except ValueError:
        raise ValueError(f"--tokens: {text!r} is not N or N-M") from None
    if not 2 <= lo <= hi <= 8:
        raise ValueError(f"--tokens: {text!r}: verify token counts are 2..8")
    return list(range(lo, hi + 1))


def variants(shapes, tokens):
    """(name, kind, H, HV, K, V, T, bucket); bucket '' for decode."""
    out = []
    for H, HV, K, V in shapes:
        out.append((f"dec_h{H}_hv{HV}_k{K}_v{V}", "decode", H, HV, K, V, 1, ""))
        for T in tokens:
            for _, b in MTP_BUCKETS:
                out.append((f"mtp_h{H}_hv{HV}_k{K}_v{V}_t{T}_{b}", "mtp", H, HV, K, V, T, b))
    return out


# ------------------------------------------------------------------ tensors of each launch

# Each tensor argument as FlashInfer's Python builds it: (name, dtype, shape, stride, align), a
# str entry being a runtime value (a field of ls_fi_gdn_args), an int a compile-time one.
# q/k/v/a/b/o and the index tensors go through `from_dlpack(...).mark_layout_dynamic()`: every
# shape mode and every stride but the unit one dynamic. A_log and dt_bias are static. The decode
# pool is FlashInfer's fake [pool, HV, V, K] tensor (pool size and slot stride dynamic, the slot
# stride a multiple of 4); the MTP pool is its [pool*HV, V, K] reshape through
# mark_compact_shape_dynamic(mode=0) (and the dummy intermediate buffer likewise).
# The DSL's C structs list dynamic shapes, then dynamic strides, each in mode order
# (cute/export/c_header_generator.py): the glue fills them in that order.
def tensor_specs(kind, H, HV, K, V, T):
    def dyn(p, n_modes):  # all shapes dynamic, strides dynamic but the last (unit) one
        shape = ("B", "T", "H" if p in ("q", "k") else "HV", "K" if p in ("q", "k") else "V")[:n_modes]
        if n_modes == 3:
            shape = ("B", "T", "HV")
        return shape, tuple(f"{p}_s{i}" for i in range(n_modes - 1)) + (1,)

    specs = []
    if kind == "decode":
        specs.append(("h0_source", "f32", ("pool", HV, V, K), ("h0_stride", V * K, K, 1), 16))
    else:
        specs.append(("h0_source", "f32", ("pool_hv", V, K), (V * K, K, 1), 16))
        specs.append(("intermediate_states", "f32", ("inter_n", V, K), (V * K, K, 1), 16))
    specs.append(("A_log", "f32", (HV,), (1,), None))
    specs.append(("a", "bf16") + dyn("a", 3) + (None,))
    specs.append(("dt_bias", "bf16", (HV,), (1,), None))
    for p in ("q", "k", "v"):
        specs.append((p, "bf16") + dyn(p, 4) + (16,))
    specs.append(("b", "bf16") + dyn("b", 3) + (None,))
    specs.append(("o", "bf16") + dyn("o", 4) + (16,))
    for p in ("h0_indices", "h0_out_indices"):
        specs.append((p, "i32", ("B",), (1,), 16))
    specs.append(("cu_seqlens", "i32", ("B1",), (1,), 16))
    if kind == "mtp":
        specs.append(("ssm_state_indices", "i32", ("B", "T"), ("ssm_s0", 1), 16))
    return specs


# args passed twice: FlashInfer hands v, k, A_log, A_log as the (dead) ReplaySSM buffers
MTP_ALIASES = (("replayssm_rawv", "v"), ("replayssm_rawk", "k"), ("replayssm_g", "A_log"),
               ("replayssm_beta", "A_log"))

# the pointer field of ls_fi_gdn_args each tensor comes from
PTR_FIELD = {"h0_source": "state", "intermediate_states": "state", "h0_indices": "idx",
             "h0_out_indices": "out_idx", "cu_seqlens": "cu_seqlens", "ssm_state_indices": "ssm_idx"}


def glue_c(name, kind, specs):
    """C glue of one variant: ls_fi_gdn_args -> the DSL's structs -> its wrapper."""
    prefix = f"ls_fi_gdn_{name}"
    lines = [f'#include "{name}.h"', f"static {prefix}_Kernel_Module_t mod_{name};",
             f"static pthread_once_t once_{name} = PTHREAD_ONCE_INIT;",
             f"static void load_{name}(void) {{ {prefix}_Kernel_Module_Load(&mod_{name}); }}",
             f"static int run_{name}(const ls_fi_gdn_args *x, void *stream)", "{",
             "    cudaStream_t s = (cudaStream_t)stream;",
             f"    pthread_once(&once_{name}, load_{name});"]
    order = [sp[0] for sp in specs]
    if kind == "mtp":
        order += [a for a, _ in MTP_ALIASES]
    by = {sp[0]: sp for sp in specs}
    for arg in order:
        src = dict(MTP_ALIASES).get(arg, arg)
        _, _, shape, stride, _ = by[src]
        fields = [f"(void *)x->{PTR_FIELD.get(src, src)}"]
        dshape = [d for d in shape if isinstance(d, str)]
        dstride = [d for d in stride if isinstance(d, str)]
        if dshape:
            fields.append("{" + ", ".join(f"(int32_t)x->{d}" for d in dshape) + "}")
        if dstride:
            fields.append("{" + ", ".join(f"(int64_t)x->{d}" for d in dstride) + "}")
        lines.append(f"    {prefix}_Tensor_{arg}_t t_{arg} = {{{', '.join(fields)}}};")
    call = ", ".join(f"&t_{a}" for a in order)
    if kind == "mtp":
        call += ", 0"  # cache_intermediate_states, a runtime Boolean: off (states go by scatter)
    lines += [f"    return (int)cute_dsl_{prefix}_wrapper(&mod_{name}, {call}, s);", "}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------ the DSL run

def load_dsl(dsl_dir, fi_src):
    sys.path[:0] = [dsl_dir, os.path.join(dsl_dir, "nvidia_cutlass_dsl", "dsl_packages")]
    # the symbols the object dump resolves (cudart wrappers) come from the DSL's runtime
    rt = os.path.join(dsl_dir, "nvidia_cutlass_dsl", "cu13", "lib", "libcute_dsl_runtime.so")
    if not os.path.isfile(rt):
        raise FileNotFoundError(f"{rt} missing: install nvidia-cutlass-dsl-libs-cu13 into --dsl")
    ctypes.CDLL(rt, mode=ctypes.RTLD_GLOBAL)

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import torch_stand_in
    torch_stand_in.install()  # FlashInfer's kernel files use torch for annotations only
    pkg = os.path.join(fi_src, "flashinfer")
    for name, path in (("flashinfer", pkg), ("flashinfer.jit", None),
                       ("flashinfer.gdn_kernels", os.path.join(pkg, "gdn_kernels"))):
        m = types.ModuleType(name)
        m.__path__ = [path] if path else []
        sys.modules[name] = m
    core = types.ModuleType("flashinfer.jit.cute_dsl_core")
    core.build_and_load_cute_dsl_kernel = None  # FlashInfer's disk cache; export_to_c replaces it
    sys.modules["flashinfer.jit.cute_dsl_core"] = core
    import cutlass
    import cutlass.cute as cute
    import cuda.bindings.driver as cuda
    dec = importlib.import_module("flashinfer.gdn_kernels.gdn_decode_pretranspose")
    mtp = importlib.import_module("flashinfer.gdn_kernels.gdn_decode_mtp")
    return cutlass, cute, cuda, dec, mtp


def compile_variant(env, out, name, kind, H, HV, K, V, T, bucket):
    cutlass, cute, cuda, dec, mtp = env
    dt = {"f32": cutlass.Float32, "bf16": cutlass.BFloat16, "i32": cutlass.Int32}
    syms = {}

    def sym(n, wide=False):
        if n not in syms:  # strides are int64 (the slot stride a multiple of 4, as FlashInfer's)
            syms[n] = (cute.sym_int64(divisibility=4) if n == "h0_stride" else cute.sym_int64()) \
                if wide else cute.sym_int()
        return syms[n]

    fakes = {}
    for tname, dty, shape, stride, align in tensor_specs(kind, H, HV, K, V, T):
        # one symbol per (tensor, mode), as from_dlpack gives each tensor its own
        shp = tuple(sym(f"{tname}.{d}.{i}") if isinstance(d, str) else d for i, d in enumerate(shape))
        std = tuple(sym(d, wide=True) if isinstance(d, str) else d for d in stride)
        fakes[tname] = cute.runtime.make_fake_tensor(dt[dty], shape=shp, stride=std, assumed_align=align)
    scale = K ** -0.5
    opts = (cute.GPUArch("sm_90a"),)
    common = dict(softplus_beta=1.0, softplus_threshold=20.0, scale=scale, HV=HV, T=T, H=H, K=K, V=V,
                  use_initial_state=True, use_qk_l2norm=True, is_varlen=False, stream=cuda.CUstream(0))
    f = fakes
    if kind == "decode":
        fn = cute.compile[opts](
            dec.run_gdn_decode_kernel_small_batch_pretranspose, f["h0_source"], f["A_log"], f["a"],
            f["dt_bias"], f["q"], f["k"], f["v"], f["b"], f["o"], f["h0_indices"], f["h0_out_indices"],
            f["cu_seqlens"], use_pool_indexing=True, num_stages=dec.NUM_STAGES,
            blocks_per_state=dec.NUM_BLOCKS_PER_STATE, **common)
    else:
        wu = {"w64": 64, "w128": 128, "w448": 448, "w1024": 1024, "wmax": 1025}[bucket] // 1
        tile_v, vec, ilp, smem, inline = mtp_config(wu, T, V)
        run = mtp.run_gdn_verify_kernel_mtp_inline if inline else mtp.run_gdn_verify_kernel_mtp
        fn = cute.compile[opts](
            run, f["h0_source"], f["intermediate_states"], f["A_log"], f["a"], f["dt_bias"], f["q"],
            f["k"], f["v"], f["b"], f["o"], f["h0_indices"], f["h0_out_indices"], f["cu_seqlens"],
            f["ssm_state_indices"], f["v"], f["k"], f["A_log"], f["A_log"], tile_v=tile_v, vec_size=vec,
            disable_state_update=False, cache_intermediate_states=cutlass.Boolean(False),
            use_pool_indexing=False, ilp_rows=ilp, use_smem_v=smem, use_packed_fma=False,
            per_token_pool_scatter=True, cache_replayssm=False, **common)
    fn.export_to_c(out, name, f"ls_fi_gdn_{name}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsl", required=True)
    ap.add_argument("--fi-src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default="16x32x128x128,8x16x128x128")
    ap.add_argument("--tokens", default="2-8")
    a = ap.parse_args(argv)
    try:
        shapes, tokens = parse_shapes(a.shapes), parse_tokens(a.tokens)
    except ValueError as e:
        print(f"gdn_aot: {e}", file=sys.stderr)
        return 2
    for p, what in ((a.dsl, "--dsl"), (os.path.join(a.fi_src, "flashinfer", "gdn_kernels"), "--fi-src")):
        if not os.path.isdir(p):
            print(f"gdn_aot: {what}: {p} is not a folder", file=sys.stderr)
            return 2
    env = load_dsl(a.dsl, a.fi_src)
    tmp = a.out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    vs = variants(shapes, tokens)
    glue = ['/* generated by peers/flashinfer/gdn_aot.py: one entry per AOT variant */',
            "#include <pthread.h>", '#include "ls_fi_gdn.h"', ""]
    table = []
    for v in vs:
        name, kind, H, HV, K, V, T, bucket = v
        compile_variant(env, tmp, *v)
        glue.append(glue_c(name, kind, tensor_specs(kind, H, HV, K, V, T)))
        bound = dict((b, n) for n, b in MTP_BUCKETS).get(bucket, 0)
        table.append(f'    {{"{name}", {int(kind == "mtp")}, {H}, {HV}, {K}, {V}, {T}, {bound}LL, run_{name}}},')
        print(f"gdn_aot: {name}", file=sys.stderr)
    glue += ["const ls_fi_gdn_variant ls_fi_gdn_variants[] = {", *table, "};",
             f"const int ls_fi_gdn_n_variants = {len(table)};", ""]
    with open(os.path.join(tmp, "fi_gdn_variants.c"), "w") as fh:
        fh.write("\n".join(glue))
    lib = os.path.join(a.dsl, "nvidia_cutlass_dsl", "cu13", "lib", "libcuda_dialect_runtime_static.a")
    shutil.copy(lib, tmp)
    import cutlass
    with open(os.path.join(tmp, "manifest.txt"), "w") as fh:
        fh.write(f"flashinfer_src {os.path.abspath(a.fi_src)}\ncutlass_dsl {cutlass.__version__}\n"
                 f"arch sm_90a\nvariants {len(vs)}\n")
    shutil.rmtree(a.out, ignore_errors=True)
    os.rename(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
