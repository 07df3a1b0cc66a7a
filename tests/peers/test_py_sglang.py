"""py_sglang without a GPU or torch (peers/sglang_py/, docs/peers.md "py_sglang"): SGLang's kernel
modules load from a source tree with only the listed stubs; the files loaded (the content hash's
input), the stubbed names and the skipped package inits are reported; bad sources are refused by
name; two trees (before/after) keep their own modules; the tensors each op hands SGLang's wrapper
are laid out as SGLang's model code lays them out; and the JIT specialisation of SGLang's own call
on sm_90 is the AOT impl's (jit_spec.py). Runs on fake_torch (shapes, strides, addresses; no data),
capturing the Triton launches instead of running them. Exit 77 without triton 3.6 or the sources.

    python3 tests/peers/test_py_sglang.py REPO
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "peers"))
sys.path.insert(0, os.path.join(ROOT, "peers", "sglang_py"))
from aot_preamble import sources  # noqa: E402

SSU = "sglang/kernels/ops/mamba/triton_ops/mamba_ssm.py"
CONV = "sglang/kernels/ops/mamba/causal_conv1d_triton.py"
# the pool ops' ptr_table.py and the KDA decode's kda_packed_decode.py came with the py_sglang
# extraction list (scripts/peers.sh): an older .peers/src is a skip until re-fetched
SRC = sources(ROOT, "sglang-0.5.23", [SSU, CONV, "sglang/kernels/ops/memory/ptr_table.py",
                                      "sglang/kernels/ops/attention/kda_packed_decode.py"])
TREE = os.path.join(SRC, "sglang-0.5.23")

import fake_torch  # noqa: E402

fake_torch.install()
import jit_spec  # noqa: E402
import py_sglang  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def raises(fn, exc, needle):
    try:
        fn()
    except exc as e:
        return needle in str(e)
    return False


sg = py_sglang._load_sg_source()

# ---------------------------------------------------------------- loading, stubs, files
t = sg.SourceTree(TREE)
check(t.version.startswith("sglang") and t.root == os.path.abspath(TREE), f"PATH source resolves ({t.version})")
m = t.load("sglang.kernels.ops.mamba.triton_ops.mamba_ssm")
t.load("sglang.kernels.ops.mamba.causal_conv1d_triton")
check(t.files() == sorted([os.path.join(os.path.abspath(TREE), SSU), os.path.join(os.path.abspath(TREE), CONV)]),
      "files() = exactly the two kernel files loaded")
check(t.stubbed() == sorted(f"sglang.kernels.jit.utils.{n}" for n in
                            ("is_arch_support_pdl", "is_hip_runtime", "cache_once", "load_jit", "make_cpp_args")),
      "stubbed() lists the jit.utils names the two modules import, nothing else")
check("sglang.kernels.ops.mamba" in t.skipped_inits() and "sglang" in t.skipped_inits(),
      "package __init__.py files are not run (listed)")
check(m.selective_state_update.__code__.co_filename.startswith(os.path.abspath(TREE)),
      "selective_state_update is the tree's own code")
check(m.is_arch_support_pdl() is True, "stub is_arch_support_pdl: sm_90 -> True (as SGLang's arch.py)")
check(raises(lambda: t.load("sglang.kernels.ops.no_such_module"), ImportError, "sglang.kernels.ops.no_such_module"),
      "a module neither in the tree nor stubbed: ImportError naming it")
check(raises(lambda: sg.SourceTree("9.9.9"), ValueError, "9.9.9"), "an unknown version is refused by name")
check(raises(lambda: sg.SourceTree("/nonexistent/sglang-tree"), ValueError, "/nonexistent/sglang-tree"),
      "a PATH without sglang/ is refused by name")
check(sg.resolve(None)[1].startswith("sglang " + sg.pinned_version()),
      "no source (a module loaded with --impl-path): the pinned version")

# ---------------------------------------------------------------- layouts SGLang's model code gives
inst = jit_spec.instance(TREE)
check(not inst.errors, f"every kernel module of the pinned tree loads ({inst.errors})")
check(set(inst.ops()) == {"ssu", "conv_update", "gdn", "kda", "conv_delta", "state_copy", "state_zero",
                          "state_accept"}, f"ops: {sorted(inst.ops())}")
info = inst.source_info()
check(all(f.startswith(os.path.abspath(TREE)) for f in info["files"]) and len(info["files"]) >= 6,
      f"source files all inside the tree ({len(info['files'])})")
check("sglang.srt.utils.is_sm90_supported" in info["stubbed"], "the gating module's srt.utils names are stubbed")


def launch(case, inst_=inst):
    op, make, tuning = jit_spec.CASES[case]
    tun = dict({"py.layout": "model", "py.decode": "auto"}, **tuning)
    rc = []
    ls = jit_spec.capture(lambda: rc.append(inst_.ops()[op](make(), tun)))
    return rc[0], ls


rc, ls = launch("ssu/decode/B128")
v = ls[0].values if ls else {}
# nemotron-h-8b tp 2: nh 64, hd 64, ds 128, ng 4 -> conv_dim 4096 + 2*512 = 5120, proj 4096 + 5120 + 64
check(rc == 0 and len(ls) == 1 and ls[0].kernel == "_selective_scan_update_kernel", "ssu: one SGLang launch")
check(v.get("stride_x_batch") == 5120 and v.get("stride_B_batch") == 5120 and v.get("stride_C_batch") == 5120,
      "ssu: x, B, C are views into the conv output (row stride conv_dim 5120, mamba.py)")
check(v.get("stride_dt_batch") == 9280 and v.get("stride_dt_dim") == 0,
      "ssu: dt is a view into the projection (row stride 9280) expanded over head_dim")
check(v.get("stride_A_dim") == 0 and v.get("stride_A_dstate") == 0 and v.get("stride_D_dim") == 0
      and v.get("stride_dt_bias_dim") == 0 and ls[0].constexprs.get("TIE_HDIM") is True,
      "ssu: A, D, dt_bias expanded with stride 0 -> TIE_HDIM")
rc, ls = launch("ssu/decode/B128/linstate-layout")
check(rc == 0 and ls[0].values.get("stride_x_batch") == 4096, "ssu py.layout=linstate: linstate's contiguous x")
rc, ls = launch("conv/verify/gdn/B128/T4")
check(rc == 0 and ls[0].constexprs.get("stride_x_dim") == 1 and ls[0].constexprs.get("stride_x_token") == 8192
      and ls[0].constexprs.get("stride_o_token") == 8192,
      "conv verify: x and out [B,T,C] seen as (B, C, T) (mamba.py's transpose), strides constexpr")
rc, ls = launch("kda/verify/B128/T4")
check(rc == 0 and ls[0].constexprs.get("IS_VARLEN") is True, "kda verify: q/k/v [1, B*T, H, K] with cu_seqlens")

rc, ls = launch("pool/copy/qwen")
check(rc == 0 and [L.kernel for L in ls] == ["_fused_slot_copy_kernel"] and ls[0].grid == (64, 1, 36),
      "pool copy: MambaPool.copy_from's one fused conv launch (the temporal copy is torch indexing)")
rc, ls = launch("pool/accept/qwen/T4")
check(rc == 0 and [L.kernel for L in ls] == ["_fused_mamba_state_scatter_with_mask_kernel",
                                             "_fused_conv_window_scatter_with_mask_kernel"],
      "pool accept: the state scatter, then the window scatter per conv tensor (source rows given)")
one = jit_spec.pool_params("state_zero")
one.buf, one.n_buffers = one.buf[:1], 1
check(inst.ops()["state_zero"](one, {}) == py_sglang.UNSUPPORTED, "pool op on one buffer: unsupported")

# ---------------------------------------------------------------- input copies: made once per case
made = []


def bench_case(inst_, keys, rounds=23, verify_key="V"):
    """The bench's call pattern: case_begin, the verification call, then rounds over the rotated
    layers (eager warm-up and timing, or graph capture then replays that call no Python)."""
    inst_.case_begin()
    seq = [verify_key] + [k for _ in range(rounds) for k in keys]
    for i, k in enumerate(seq):
        inst_._pack(k, lambda k=k, i=i: made.append((k, i)) or k)


ic = py_sglang.Instance(TREE, "host")
bench_case(ic, ["L0", "L1", "L2"])
check([k for k, _ in made] == ["V", "L0", "L1", "L2"], f"case 1: one copy per input set ({made})")
made.clear()
bench_case(ic, ["L0", "L1", "L2"])  # the next case at the same addresses, other values
check([k for k, _ in made] == ["V", "L0", "L1", "L2"] and max(i for _, i in made) <= 3,
      f"case 2 at the same addresses: copied again, in its verification call and first round only ({made})")
made.clear()
many = [f"R{i}" for i in range(24)]
bench_case(ic, many, verify_key="X")
made.clear()
bench_case(ic, many, verify_key="X", rounds=1)  # a graph case: one eager round, then capture
check(len(made) == 25 and max(i for _, i in made) <= 24,
      f"24 rotated layers, same addresses twice: 25 copies, all in the first round ({len(made)})")
made.clear()
bench_case(ic, ["M0"], verify_key="W")  # a new case at new addresses, one rotated layer
bench_case(ic, ["M0"], verify_key="W")
check([k for k, _ in made] == ["W", "M0", "W", "M0"], f"one rotated layer: copied once per case ({made})")

# ---------------------------------------------------------------- the AOT impl against SGLang's call
for case, expect in (("ssu/decode/B128", [["div16", "batch", "True", "False"]]),
                     ("ssu/verify/B128/T4", [["div16", "batch", "True", "False"]]),
                     ("gdn/decode/B128", []),
                     # varlen as SGLang calls it (cu_seqlens); NP2_T is read only for EAGLE trees
                     ("gdn/verify/B128/T4", [["constexpr", "NP2_T", "512", "1"]]),
                     ("kda/verify/B128/T4", [["constexpr", "NP2_T", "512", "1"]]),
                     ("conv_delta/kda/B128/T4", [])):
    rows = jit_spec.run_case(inst, case)
    check(len(rows) == 1 and rows[0]["differences"] == expect,
          f"{case}: JIT vs AOT {rows[0].get('aot_variant')} differ only in {expect} (got {rows[0]['differences']})")

# ---------------------------------------------------------------- two trees, one changed launch choice
tmp = tempfile.mkdtemp(prefix="ls_py_sglang_")
try:
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    for d in (a, b):
        for rel in (SSU, CONV):
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            shutil.copy(os.path.join(TREE, rel), os.path.join(d, rel))
    path = os.path.join(b, SSU)
    src = open(path).read()
    old = "((8, 1) if dstate <= 128"
    check(old in src, "the SSU wrapper's (BLOCK_SIZE_M, num_warps) table is where expected")
    open(path, "w").write(src.replace(old, "((8, 4) if dstate <= 128"))
    git = shutil.which("git")
    if git:
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t")
        for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "planted"], ["tag", "planted-v1"]):
            subprocess.run([git, "-C", b, *cmd], check=True, env=env, capture_output=True)
    ia, ib = py_sglang.Instance(a, "cuda"), py_sglang.Instance(b, "cuda")
    check(not git or ib.source_info()["git_describe"].startswith("planted-v1"),
          f"a git checkout records git describe ({ib.source_info()['git_describe']!r})")
    check(ia.source_info()["git_describe"] == "", "a plain folder records no git describe")
    inner = os.path.join(b, "vendor")
    os.makedirs(os.path.join(inner, "sglang"))
    check(git is None or sg.resolve(inner)[2] == "",
          "a tree inside another repository (e.g. .peers/src in linstate's) records no git describe")
    py = os.path.join(b, "python")
    os.makedirs(os.path.join(py, "sglang"))
    check(git is None or sg.resolve(b)[0] == py and sg.resolve(b)[2].startswith("planted-v1"),
          "a checkout's top folder resolves to its python/ folder, with the checkout's git describe")
    check(set(ia.ops()) == {"ssu", "conv_update"}, f"a tree without the GDN/KDA files offers ssu and conv only "
          f"({sorted(ia.ops())}; errors name the missing modules: {sorted(ia.errors)})")
    warps = {}
    for name, i in (("a", ia), ("b", ib), ("a again", ia)):
        _, ls_ssu = launch("ssu/decode/B128", i)
        _, ls_conv = launch("conv/decode/gdn/B128", i)
        warps[name] = (ls_ssu[0].options.num_warps, ls_conv[0].options.num_warps)
    check(warps == {"a": (1, 4), "b": (4, 4), "a again": (1, 4)},
          f"before/after: only the changed wrapper's launch differs, each tree runs its own code ({warps})")
    check(ia.source_info()["files"] != ib.source_info()["files"], "the two trees' file lists differ (own paths)")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

# ---------------------------------------------------------------- jit_spec's command line
tool = os.path.join(ROOT, "peers", "sglang_py", "jit_spec.py")
r = subprocess.run([sys.executable, tool, "--case", "no/such/case"], capture_output=True, text=True)
check(r.returncode == 2 and "no/such/case" in r.stderr, "jit_spec: an unknown case is bad input (exit 2, named)")
r = subprocess.run([sys.executable, tool, "--cache", "/nonexistent/cache"], capture_output=True, text=True)
check(r.returncode == 2 and "/nonexistent/cache" in r.stderr, "jit_spec: a missing --cache folder is bad input")

# ---------------------------------------------------------------- the module's dict (contract)
d = py_sglang.linstate_impl(TREE, "host")
check(d["name"] == "py_sglang" and d["ops"] == {} and "graph" in d["caps"] and callable(d["layout"]),
      "linstate_impl on the host runtime: the contract's dict, no ops (Triton needs a GPU)")
check("mamba.py" in d["layout"]("ssu") and d["knobs"][0][0] == "py.layout", "layout callback and knobs")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
