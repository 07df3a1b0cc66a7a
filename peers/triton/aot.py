#!/usr/bin/env python3
"""
aot.py — ahead-of-time compile @triton.jit kernels of a peer package for one GPU target, without
importing the package (nor torch): the kernel and the jit helpers it calls are taken from the
package SOURCE file with Python's `ast` and compiled with triton.compile(ASTSource(...)).

    python3 aot.py --spec peers/sglang/kernels.py --src-root .peers/src --out DIR [--only NAME]
                   [--list] [--jobs N]

The spec module (one per peer) defines PKG ("<pkg>-<version>", the folder under --src-root),
SOURCES ({source file: shims}) and variants() yielding Variant objects (kernel, key, args).
Writes DIR/<kernel>__<key>.cubin, DIR/<kernel>__<key>.json (metadata), DIR/tk_blobs.S (the
cubins, .incbin) and DIR/tk_table.c, the C table of every variant (peers/triton/tk.h): cubin bytes, entry name, num_warps, shared memory,
launch_pdl, scratch sizes and the runtime arguments in signature order with the divisibility
assumption each was compiled with.

Specialization follows the JIT (triton/runtime/jit.py): a non-constexpr int is typed and given
the divisibility-by-16 attribute ("D") by triton's own native_specialize_impl, an int equal to 1
becomes constexpr 1 (the launcher then demands 1), None becomes constexpr None, a pointer gets
"D" when the spec says the runtime pointer will be 16-byte aligned (the launcher checks it and
refuses a call that breaks it).
"""
import argparse
import ast
import hashlib
import importlib.util
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

TARGET_ARCH = 90
TRITON_SERIES = "3.6."


class Ptr:
    """A pointer argument: element type ("bf16", "fp32", "i32") and whether JIT would see it
    16-byte aligned (torch allocations are; the launcher checks at launch)."""

    def __init__(self, ty, aligned=True):
        self.ty = ty
        self.aligned = aligned

    def __repr__(self):
        return f"Ptr({self.ty!r}, {self.aligned})"


class Variant:
    """One compiled specialization: kernel function name, source file, a key (unique per
    kernel), the values JIT would see for each argument (constexprs included) and launch
    options."""

    def __init__(self, kernel, src, key, args, num_warps, num_stages, launch_pdl=False):
        self.kernel = kernel
        self.src = src
        self.key = key
        self.args = args
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.launch_pdl = launch_pdl

    @property
    def stem(self):
        return f"{self.kernel}__{self.key}"


def load_spec(path):
    spec = importlib.util.spec_from_file_location("peer_spec", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["peer_spec"] = mod
    mod.Ptr, mod.Variant = Ptr, Variant
    spec.loader.exec_module(mod)
    return mod


def _is_jit_decorator(d):
    node = d.func if isinstance(d, ast.Call) else d
    return isinstance(node, ast.Attribute) and node.attr == "jit" and \
        isinstance(node.value, ast.Name) and node.value.id == "triton"


def load_source(path, shims, src_rel=None):
    """Executes the jit functions and the plain top-level assignments of `path` into one fresh
    namespace (compiled with the real file name and line numbers, so triton's inspect.getsource
    finds the text). Imports are not executed: names the kernels take from other modules come
    from `shims` (name -> python expression evaluated with triton/tl in scope). Returns it."""
    import triton
    import triton.language as tl
    ns = {"__name__": "peer_src", "__file__": path, "triton": triton, "tl": tl}
    for name, expr in shims.items():
        if isinstance(expr, tuple):  # (other source file of the package, function name in it)
            root = path[:len(path) - len(src_rel)] if src_rel and path.endswith(src_rel) else ""
            other = os.path.join(root, expr[0])
            ns[name] = load_source(other, {})[expr[1]]
            continue
        ns[name] = eval(expr, dict(ns))
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    _exec_body(tree.body, ns, path)
    return ns


def _exec_body(body, ns, path):
    """Runs the jit defs, plain defs and simple assignments of one statement list into ns; a
    top-level `if` (mamba_ssm.py: `if TRITON3:` picks its softplus) runs the branch its test
    selects when the test can be evaluated in ns, else neither branch."""
    for node in body:
        if isinstance(node, ast.If):
            try:
                test = eval(compile(ast.Expression(node.test), path, "eval"), ns)
            except Exception:
                continue
            _exec_body(node.body if test else node.orelse, ns, path)
            continue
        if isinstance(node, ast.FunctionDef) and any(_is_jit_decorator(d) for d in node.decorator_list):
            pass
        elif isinstance(node, ast.FunctionDef) and not node.decorator_list:
            pass  # a plain helper a top-level assignment calls (fla's _generate_softplus): a def runs nothing
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            pass
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            pass  # `s_softplus: tl.constexpr = tl.constexpr(...)` (fla/ops/utils/softplus.py)
        else:
            continue
        code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
        try:
            exec(code, ns)
        except Exception:  # an assignment or plain def that needs torch or the package (annotations
            # are evaluated when the def runs): not a kernel's business
            if isinstance(node, ast.FunctionDef) and node.decorator_list:
                raise


def specialize(fn, v):
    """(signature, constexprs, attrs) as the JIT would build them for v.args."""
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import native_specialize_impl
    sig, consts, attrs, runtime_args = {}, {}, {}, []
    names = fn.arg_names
    unknown = set(v.args) - set(names)
    if unknown:
        raise SystemExit(f"aot: {v.stem}: arguments not in {v.kernel}: {sorted(unknown)}")
    for i, p in enumerate(fn.params):
        name = p.name
        if name in v.args:
            val = v.args[name]
        elif p.has_default:
            val = p.default
        else:
            raise SystemExit(f"aot: {v.stem}: no value for argument {name}")
        if p.is_constexpr:
            sig[name] = "constexpr"
            consts[name] = val
            continue
        if isinstance(val, Ptr):
            sig[name] = "*" + val.ty
            div = val.aligned and not p.do_not_specialize_on_alignment
            if div:
                attrs[(i,)] = [["tt.divisibility", 16]]
            runtime_args.append({"name": name, "type": "*" + val.ty, "div16": int(div)})
            continue
        ty, key = native_specialize_impl(BaseBackend, val, False, not p.do_not_specialize,
                                         not p.do_not_specialize_on_alignment)
        ann = p.annotation_type  # e.g. "i64" for `N: tl.int64`: the JIT types it so (jit.py)
        if ann and ty != "constexpr":
            ty = ann
            if ann == "u1" or ann[:2] in ("fp", "bf") or p.do_not_specialize:
                key = None
        if ty == "constexpr":  # None, or an int equal to 1
            sig[name] = "constexpr"
            consts[name] = val
            if val is not None:
                runtime_args.append({"name": name, "type": "const", "value": val})
            continue
        sig[name] = ty
        div = key == "D"
        if div:
            attrs[(i,)] = [["tt.divisibility", 16]]
        runtime_args.append({"name": name, "type": ty, "div16": int(div)})
    return sig, consts, attrs, runtime_args


_ns_cache = {}


def compile_variant(spec_path, src_root, out_dir, v):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    spec = load_spec(spec_path)
    src = os.path.join(src_root, spec.PKG, v.src)
    if src not in _ns_cache:
        _ns_cache[src] = load_source(src, spec.SOURCES.get(v.src, {}), v.src)
    fn = _ns_cache[src][v.kernel]
    while not hasattr(fn, "params") and hasattr(fn, "fn"):  # @triton.heuristics/autotune wrappers:
        fn = fn.fn                                           # the spec gives their constexprs
    sig, consts, attrs, rargs = specialize(fn, v)
    opts = {"num_warps": v.num_warps, "num_stages": v.num_stages}
    if v.launch_pdl:
        opts["launch_pdl"] = True
    k = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", TARGET_ARCH, 32),
                       options=opts)
    md = k.metadata
    cubin = k.asm["cubin"]
    meta = {
        "kernel": v.kernel, "key": v.key, "entry": md.name, "num_warps": md.num_warps,
        "num_ctas": md.num_ctas, "shared": md.shared, "num_stages": v.num_stages,
        "launch_pdl": int(bool(getattr(md, "launch_pdl", False))),
        "launch_cooperative_grid": int(bool(getattr(md, "launch_cooperative_grid", False))),
        "global_scratch_size": int(md.global_scratch_size or 0),
        "global_scratch_align": int(md.global_scratch_align or 1),
        "profile_scratch_size": int(md.profile_scratch_size or 0),
        "profile_scratch_align": int(md.profile_scratch_align or 1),
        "args": rargs, "triton": triton.__version__, "arch": TARGET_ARCH,
        "constexprs": {n: (c if isinstance(c, (int, float, bool)) or c is None else str(c))
                       for n, c in consts.items()},
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
    }
    with open(os.path.join(out_dir, v.stem + ".cubin"), "wb") as f:
        f.write(cubin)
    with open(os.path.join(out_dir, v.stem + ".json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    return meta


ARG_KIND = {"i32": "TK_I32", "i64": "TK_I64", "u64": "TK_I64", "u1": "TK_I32", "fp32": "TK_F32",
            "const": "TK_CONST"}


def c_table(metas, cubin_paths, prefix):
    """The C table (tk_table.c) and the assembler file that embeds the cubins (tk_blobs.S,
    .incbin: no multi-megabyte C arrays to compile)."""
    asm = ["/* generated by peers/triton/aot.py — do not edit */", '.section .rodata']
    for i, path in enumerate(cubin_paths):
        asm += [f".balign 16", f".globl {prefix}_cubin_{i}", f".hidden {prefix}_cubin_{i}",
                f"{prefix}_cubin_{i}:", f'.incbin "{os.path.abspath(path)}"',
                f".globl {prefix}_cubin_{i}_end", f".hidden {prefix}_cubin_{i}_end",
                f"{prefix}_cubin_{i}_end:"]
    asm.append('.section .note.GNU-stack,"",@progbits')
    out = ["/* generated by peers/triton/aot.py — do not edit */", '#include "tk.h"', ""]
    for i, m in enumerate(metas):
        out.append(f"extern const unsigned char {prefix}_cubin_{i}[], {prefix}_cubin_{i}_end[];")
        out.append(f"static const tk_arg args_{i}[] = {{")
        for a in m["args"]:
            if a["type"].startswith("*"):
                out.append(f'  {{"{a["name"]}", TK_PTR, {a["div16"]}, 0}},')
            elif a["type"] == "const":
                out.append(f'  {{"{a["name"]}", TK_CONST, 0, {int(a["value"])}}},')
            else:
                out.append(f'  {{"{a["name"]}", {ARG_KIND[a["type"]]}, {a["div16"]}, 0}},')
        out.append("};")
    out.append(f"const tk_variant {prefix}_variants[] = {{")
    for i, m in enumerate(metas):
        out.append(f'  {{"{m["kernel"]}", "{m["key"]}", "{m["entry"]}", {prefix}_cubin_{i}, {prefix}_cubin_{i}_end, '
                   f'{m["num_warps"]}, {m["num_ctas"]}, {m["shared"]}, {m["launch_pdl"]}, '
                   f'{m["global_scratch_size"]}, {m["global_scratch_align"]}, '
                   f'{m["profile_scratch_size"]}, {m["profile_scratch_align"]}, '
                   f'(int)(sizeof args_{i} / sizeof args_{i}[0]), args_{i}, {m["arch"]}}},')
    out.append("};")
    out.append(f"const int {prefix}_n_variants = {len(metas)};")
    out.append(f'const char {prefix}_triton_version[] = "{metas[0]["triton"] if metas else ""}";')
    return "\n".join(out) + "\n", "\n".join(asm) + "\n"


def _job(a):
    return compile_variant(*a)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--src-root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--prefix", default="tk")
    ap.add_argument("--only", help="compile only variants whose stem contains this")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    import triton
    if not triton.__version__.startswith(TRITON_SERIES):
        raise SystemExit(f"aot: triton {triton.__version__}, need {TRITON_SERIES}x")
    spec = load_spec(args.spec)
    vs = [v for v in spec.variants() if not args.only or args.only in v.stem]
    stems = [v.stem for v in vs]
    if len(set(stems)) != len(stems):
        raise SystemExit("aot: duplicate variant keys in the spec")
    if args.list:
        for v in vs:
            print(v.stem)
        return
    os.makedirs(args.out, exist_ok=True)
    jobs = [(os.path.abspath(args.spec), os.path.abspath(args.src_root), args.out, v) for v in vs]
    if args.jobs > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as ex:
            metas = list(ex.map(_job, jobs))
    else:
        metas = [_job(j) for j in jobs]
    table, blobs = c_table(metas, [os.path.join(args.out, v.stem + ".cubin") for v in vs], args.prefix)
    with open(os.path.join(args.out, "tk_blobs.S"), "w") as f:
        f.write(blobs)
    with open(os.path.join(args.out, "tk_table.c"), "w") as f:
        f.write(table)
    print(f"aot: {len(metas)} variants for sm_{TARGET_ARCH} into {args.out}")


if __name__ == "__main__":
    main()
