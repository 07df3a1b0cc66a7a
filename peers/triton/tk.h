/*
 * tk.h — the Triton-AOT kernel table and launcher of the peer impls (peers/triton/).
 *
 * aot.py writes one tk_variant per compiled specialization (tk_table.c): the cubin, the entry
 * name, the launch metadata and the runtime arguments in the kernel's signature order (the
 * constexprs are compiled in and absent, except an int JIT turned into constexpr 1, kept as
 * TK_CONST so the call is checked against it). An adapter fills a tk_call by argument NAME;
 * tk_marshal (host only, unit-tested) orders and types the values, checks every assumption the
 * variant was compiled with (divisibility by 16, i32 range, constexpr values) and refuses the
 * call otherwise; tk_launch (launch.c, CUDA driver API) loads the module once per context and
 * launches it on the stream with Triton 3.6's trailing scratch pointers.
 */
#ifndef LS_TK_H
#define LS_TK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_kind { TK_PTR = 0, TK_I32, TK_I64, TK_F32, TK_CONST } tk_kind;

typedef struct tk_arg {
    const char *name;
    int kind;          /* tk_kind */
    int div16;         /* compiled assuming value (address) % 16 == 0 */
    long long value;   /* TK_CONST: the value compiled in */
} tk_arg;

typedef struct tk_variant {
    const char *kernel;               /* the @triton.jit function's name */
    const char *key;                  /* the constexpr combination (the spec's key) */
    const char *entry;                /* the cubin's entry symbol */
    const unsigned char *cubin, *cubin_end;
    int num_warps, num_ctas, shared, launch_pdl;
    long long global_scratch_size;    /* bytes per program; 0: the kernel takes NULL */
    int global_scratch_align;
    long long profile_scratch_size;
    int profile_scratch_align;
    int n_args;
    const tk_arg *args;               /* runtime args in signature order */
    int arch;                         /* compute capability compiled for (90: sm_90a); 0 unknown */
} tk_variant;

#define TK_MAX_ARGS 64

typedef struct tk_val {
    const char *name;
    int kind;                         /* TK_PTR, TK_I64 (any int), TK_F32 */
    union { const void *p; long long i; float f; } u;
} tk_val;

typedef struct tk_call {
    const tk_variant *v;
    unsigned grid[3];
    int n;
    tk_val vals[TK_MAX_ARGS];
} tk_call;

/* The ordered, typed values of a call: params[i] points at store[i]; the two scratch pointers
 * follow the n args (params[n], params[n+1]). */
typedef struct tk_packed {
    int n;
    union { uint64_t p; int32_t i32; int64_t i64; float f; } store[TK_MAX_ARGS];
    uint64_t scratch[2];              /* global, profile: CUdeviceptr, 0 = NULL */
    void *params[TK_MAX_ARGS + 2];
} tk_packed;

void tk_call_init(tk_call *c, const tk_variant *v, unsigned gx, unsigned gy, unsigned gz);
void tk_ptr(tk_call *c, const char *name, const void *p);
void tk_int(tk_call *c, const char *name, long long i);
void tk_f32(tk_call *c, const char *name, float f);
/* The value set for name, or NULL. */
const tk_val *tk_get(const tk_call *c, const char *name);

/* Orders and checks c against c->v; 0, or -1 with a one-line reason in err. A value set for a
 * name the variant does not take is allowed only when it is a NULL pointer (compiled as None). */
int tk_marshal(const tk_call *c, tk_packed *out, char *err, size_t cap);

/* The variant (kernel, key) of a table, or NULL. */
const tk_variant *tk_find(const tk_variant *tab, int n, const char *kernel, const char *key);
/* tk_find, or NULL with err = "<peer>: <kernel>[<key>] was not compiled (<built>)", built saying
 * which shapes the peer's spec does compile: the impls answer LS_OP_UNSUPPORTED with it. */
const tk_variant *tk_require(const tk_variant *tab, int n, const char *kernel, const char *key,
                             const char *peer, const char *built, char *err, size_t cap);

/* Marshals and launches on stream (a cudaStream_t / CUstream; NULL = default stream) in the
 * current context. Never synchronises; allocates only for a kernel whose metadata asks for
 * global scratch (none of the shipped variants: see the AOT test). 0; PEER_UNSUPPORTED (==
 * LS_OP_UNSUPPORTED) with err set when the current device is not the variant's arch
 * (peers/peer_arch.h: an sm_90 cubin on a Blackwell GPU); or -1 with err set. */
int tk_launch(const tk_call *c, void *stream, char *err, size_t cap);

/* PEER_UNSUPPORTED (err set) when the current device cannot run cubins built for arch, else 0
 * (also when it cannot tell). For an op that runs several launches: refuse before the first, so
 * an unsupported call writes nothing. The device's capability is cached per device. */
int tk_device_refuses(int arch, const char *who, char *err, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
