r"""Planted bugs for the mutation harness (tests/mutation/run.py; format: tests/mutation/README.md).

Each mutant is one realistic kernel or engine bug, planted by replacing `find` (which must occur
exactly once in `file`) with `replace`. `expect` is a regex that the output of the default
`opgrad check` must match when the checker kills the mutant: it names the operator that must fail
(or, where the diagnosis is specific, the diagnosis). `isa` is the lowest ISA level whose code the
mutant touches and that the CPU must have for the mutant to matter. `fast` mutants form the quick
CI subset (`run.py --fast`): each is killed by the checker today and rebuilds in seconds; a fast
mutant may name its checker entries in `ops` (comma-separated), and `--fast` then runs
`opgrad check --op <ops>` instead of the whole default check (the full run always runs it all).

`opgrad check` prints one summary line per failing case, "  FAIL <op> <dtype> [<isa>] <layout>:
<why>" (the isa column since the checker runs every ISA level), so r"FAIL +softplus\b" means
"some softplus case fails" (and not softplus_default), and a layout is matched as
r"FAIL +\w+ +\w+ +(\w+ +)?strided\b".
"""

MUTANTS = [
    # ---------------------------------------------------------------- coefficient typo
    {
        "id": "softplus-log1p-coef",
        "cls": "coefficient typo",
        "file": "src/engine/simd/vmath.h",
        "find": "q = vfma(q, e, vset(-1.534873396e-01f));",
        "replace": "q = vfma(q, e, vset(-1.534973396e-01f));",
        "expect": r"FAIL +softplus\b",
        "isa": "scalar",
        "fast": False,
        "why": "one digit of the e^5 coefficient of the log1p(e)/e minimax polynomial (5th "
               "significant digit): softplus loses ~1e-5 relative where e = exp(-|beta x|) is large",
    },
    {
        "id": "gelu-exp-estrin-coef",
        "cls": "coefficient typo",
        "file": "src/ops/activation/gelu/gelu_kernel_simd.c",
        "find": "vf a = vfma(vset(1.6666665459e-1f), r, vset(5.0000001201e-1f));",
        "replace": "vf a = vfma(vset(1.6666665459e-1f), r, vset(5.0001001201e-1f));",
        "expect": r"FAIL +gelu\b",
        "isa": "scalar",
        "fast": True,
        "ops": "gelu",
        "why": "the r^2 coefficient of GELU's private Estrin copy of the expf polynomial mistyped "
               "(5.0000 -> 5.0001): e^r off by up to 1.2e-6 relative in both tanh-form kernels",
    },
    {
        "id": "elu-expm1-taylor-coef",
        "cls": "coefficient typo",
        "file": "src/ops/activation/elu/elu_kernel_simd.c",
        "find": "q = vfma(q, r, vset(3.333333333e-1f)); // 2 / 3!",
        "replace": "q = vfma(q, r, vset(3.333433333e-1f)); // 2 / 3!",
        "expect": r"FAIL +elu_(scaled|selu)\b",
        "isa": "scalar",
        "fast": False,
        "why": "the r^3 term of the expm1 Taylor polynomial in ELU's float fast path (non-default "
               "attributes and every backward from the input) off by 3e-5: a few ulp near |r| = ln2/2",
    },
    # ---------------------------------------------------------------- branch sign/factor
    {
        "id": "leaky-bwd-neg-sign",
        "cls": "branch sign/factor",
        "file": "src/ops/activation/leaky_relu/leaky_relu_kernel_simd.c",
        "find": "vstore(outs[0], vsel(vgt(vload(ins[1]), vset(0.0f)), g, vmul(g, c.slope)));",
        "replace": "vstore(outs[0], vsel(vgt(vload(ins[1]), vset(0.0f)), g, "
                   "vsub(vset(0.0f), vmul(g, c.slope))));",
        "expect": r"FAIL +leaky_(relu|neg|out)\b",
        "isa": "scalar",
        "fast": True,
        "ops": "leaky_relu,leaky_neg,leaky_out",
        "why": "LeakyReluBackward negates the x <= 0 branch (g * -slope): only half the gradient "
               "is wrong, so it is no global sign flip",
    },
    {
        "id": "hardswish-bwd-mid-sign",
        "cls": "branch sign/factor",
        "file": "src/ops/activation/hardswish/hardswish_kernel_simd.c",
        "find": "vf sh = vadd(x, c15);\n    vf sl = vsub(x, vsub(sh, c15)); // x + 1.5 = sh + sl",
        "replace": "vf sh = vsub(x, c15);\n    vf sl = vsub(x, vadd(sh, c15)); // x + 1.5 = sh + sl",
        "expect": r"FAIL +hardswish\b",
        "isa": "scalar",
        "fast": False,
        "why": "hardswish' middle piece (2x - 3) / 6 instead of (2x + 3) / 6: wrong on (-3, 3) only, "
               "the outer branches stay right",
    },
    {
        "id": "softplus-above-threshold-z",
        "cls": "branch sign/factor",
        "file": "src/ops/activation/softplus/softplus_kernel_simd.c",
        "find": "y = vsel(c.above, x, y);",
        "replace": "y = vsel(c.above, vmul(beta, x), y);",
        "expect": r"FAIL +softplus\b",
        "isa": "scalar",
        "fast": False,
        "why": "the beta x > threshold branch of the forward returns z = beta x instead of x (off "
               "by the factor beta there only; invisible at beta = 1)",
    },
    {
        "id": "elu-result-neg-sign",
        "cls": "branch sign/factor",
        "file": "src/ops/activation/elu/elu_kernel_simd.c",
        "find": "vdadd(vwiden(y), negcoef)",
        "replace": "vdadd(vwiden(y), vdmul(negcoef, vdset(-1.0)))",
        "expect": r"FAIL +elu_out\b",
        "isa": "scalar",
        "fast": False,
        "why": "EluBackward from the result uses inputScale (y - alpha scale) in the y <= 0 "
               "branch instead of inputScale (y + alpha scale)",
    },
    # ---------------------------------------------------------------- tail handling
    {
        "id": "ew-loop-tail-last",
        "cls": "tail handling",
        "file": "src/engine/simd/vec.h",
        "find": "memcpy((out)[k] + og_i, (win)[k], rest * sizeof(float));",
        "replace": "memcpy((out)[k] + og_i, (win)[k], (rest - 1) * sizeof(float));",
        "expect": r"FAIL +softplus\b",
        "isa": "avx2",
        "fast": False,
        "why": "OG_EW_LOOP's remainder copies back one element too few: the last element of every "
               "fp32 kernel call whose length is not a multiple of VLEN is never written",
    },
    {
        "id": "ew-loop16-tail-last",
        "cls": "tail handling",
        "file": "src/engine/simd/vec16.h",
        "find": "for (size_t og_j = 0; og_j < rest; og_j++)",
        "replace": "for (size_t og_j = 0; og_j + 1 < rest; og_j++)",
        "expect": r"FAIL +mish +(bfloat16|float16)\b",
        "isa": "avx2",
        "fast": False,
        "why": "the fused 16-bit loop's tail stores one element too few: the last bf16/fp16 output "
               "of a fused call is left unwritten",
    },
    {
        "id": "reduce-lanes-tail",
        "cls": "tail handling",
        "file": "src/engine/reduce_kernels.inc",
        "find": "t[j] = i + (size_t)j < n ? x[i + (size_t)j] : RED_IDENTITY;",
        "replace": "t[j] = i + (size_t)j + 1 < n ? x[i + (size_t)j] : RED_IDENTITY;",
        "expect": r"FAIL +reduce_sum\w*",
        "isa": "scalar",
        "fast": True,
        "ops": "reduce_sum,reduce_sum_keep0,reduce_sum_all,reduce_sum_outer",
        "why": "the lanes kernel's partial last group drops its last summand (padded with the "
               "identity instead): sums over a count that is not a multiple of 16 lose one term",
    },
    {
        "id": "softmax-row-tail-pad",
        "cls": "tail handling",
        "file": "src/ops/softmax/softmax_rows.inc",
        "find": "t[k] = k < rest ? LD1(x + k) : pad;",
        "replace": "t[k] = k + 1 < rest ? LD1(x + k) : pad;",
        "expect": r"FAIL +(log_)?softmax\w*",
        "isa": "scalar",
        "fast": False,
        "why": "a softmax row's tail is padded one element early: the last value of a row whose "
               "length is not a multiple of the step is replaced by the padding",
    },
    {
        "id": "nt-copy-tail",
        "cls": "tail handling",
        "file": "src/engine/convert_simd.c",
        "find": "for (; i < n; i++) dst[i] = src[i];",
        "replace": "for (; i + 1 < n; i++) dst[i] = src[i];",
        "expect": r"FAIL +\w+ +float32 +\w+ +large\b",
        "isa": "avx2",
        "fast": True,
        "why": "the non-temporal fp32 CopyOut (outputs of 16 MiB and more) skips the last element "
               "of its scalar remainder: only large outputs whose tile is not a multiple of VLEN",
    },
    # ---------------------------------------------------------------- ISA-only
    {
        "id": "avx2-vround-trunc",
        "cls": "ISA-only",
        "file": "src/engine/simd/vec.h",
        "find": "return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);",
        "replace": "return _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);",
        "expect": r"FAIL +(gelu\w*|mish_tanhx)\b",
        "isa": "avx2",
        "fast": False,
        "why": "AVX2's vround truncates instead of rounding to nearest: every range reduction "
               "(n = round(v / ln2)) leaves |r| up to ln2, outside its polynomial's range, on AVX2 only",
    },
    {
        "id": "avx2-tree8-half",
        "cls": "ISA-only",
        "file": "src/engine/reduce_kernels.inc",
        "find": "a = VCOMB(a, _mm256_permute2f128_ps(a, a, 1));",
        "replace": "a = VCOMB(a, _mm256_permute2f128_ps(a, a, 0));",
        "expect": r"FAIL +reduce_sum\w*",
        "isa": "avx2",
        "fast": False,
        "why": "the AVX2 lane tree of the 4-chunk group kernel adds the low 128-bit half to itself "
               "instead of the high half: chunk sums of >= 1024 contiguous summands wrong on AVX2",
    },
    {
        "id": "scalar-chunk-half",
        "cls": "ISA-only",
        "file": "src/engine/reduce_kernels.inc",
        "find": "l[i % OG_RED_LANES] = SCOMB(l[i % OG_RED_LANES], LOAD(base + i));",
        "replace": "l[i % OG_RED_LANES] = SCOMB(l[i % OG_RED_LANES], "
                   "LOAD(base + i % (OG_RED_CHUNK / 2)));",
        "expect": r"FAIL +reduce_sum\w*",
        "isa": "scalar",
        "fast": False,
        "why": "index slip in the scalar build's whole-chunk loop: every full chunk sums its first "
               "half twice (scalar kernel only; AVX2 / AVX-512 are right). Replaces "
               "scalar-chunks-group-offset, which stopped applying when chunks went one at a time",
    },
    {
        "id": "avx512-tree16-shuffle",
        "cls": "ISA-only",
        "file": "src/engine/reduce_kernels.inc",
        "find": "a = VCOMB(a, _mm512_shuffle_f32x4(a, a, 0x4E)); // + lanes 8..15",
        "replace": "a = VCOMB(a, _mm512_shuffle_f32x4(a, a, 0xB1)); // + lanes 8..15",
        "expect": r"FAIL +reduce_sum\w*",
        "isa": "avx512",
        "fast": False,
        "why": "the AVX-512 16-lane tree's last step uses the previous step's shuffle: lanes 8..15 "
               "never reach lane 0 (AVX-512 builds only)",
    },
    # ---------------------------------------------------------------- 16-bit rounding
    {
        "id": "bf16-avx2-truncate",
        "cls": "16-bit rounding",
        "file": "src/engine/simd/vec16.h",
        "find": "__m256i r = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));",
        "replace": "__m256i r = u; (void)lsb;",
        "expect": r"FAIL +\w+ +bfloat16 ",
        "isa": "avx2",
        "fast": False,
        "why": "AVX2 fp32 -> bf16 (fused 16-bit stores and the CopyOut converter) truncates "
               "instead of rounding to nearest even: every bf16 result up to 1 ulp low in magnitude",
    },
    {
        "id": "f16-scalar-truncate",
        "cls": "16-bit rounding",
        "file": "src/tensor/dtype.c",
        "find": "abs += 0xc8000fffu + mant_odd;",
        "replace": "abs += 0xc8000000u;",
        "expect": r"FAIL +\w+ +float16 .*truncates instead of rounding to nearest even",
        "isa": "scalar",
        "fast": True,
        "why": "og_f32_to_f16 truncates normal results: scalar kernels, vector tails, strided and "
               "per-element stores (reductions, row statistics) round fp16 toward zero",
    },
    {
        "id": "f16-avx2-copyout-truncate",
        "cls": "16-bit rounding",
        "file": "src/engine/convert_simd.c",
        "find": "_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);",
        "replace": "_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);",
        "expect": r"FAIL +\w+ +float16 ",
        "isa": "avx2",
        "fast": False,
        "why": "the AVX2 fp32 -> fp16 CopyOut converter (vcvtps2ph) rounds toward zero: buffered "
               "fp16 outputs and round-through-fp16 steps up to 1 ulp off",
    },
    {
        "id": "avx512-bf16-round-bias",
        "cls": "16-bit rounding",
        "file": "src/engine/simd/vec16.h",
        "find": "__m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));",
        "replace": "__m512i r = _mm512_add_epi32(u, _mm512_set1_epi32(0x0000));",
        "expect": r"FAIL +\w+ +bfloat16 ",
        "isa": "avx512",
        "fast": False,
        "why": "the AVX-512 bf16 rounding loses its 0x7fff bias: truncation except that odd "
               "results are bumped up (AVX-512 fused stores and CopyOut)",
    },
    # ---------------------------------------------------------------- reduction order
    {
        "id": "reduce-combine-reversed",
        "cls": "reduction order",
        "file": "src/engine/reduce.c",
        "find": "        for (int64_t b = 0; b < p->nblocks; b++)\n"
                "            ps_push(&m.total, partial_at(c, u * p->nblocks + b), c->k);\n",
        "replace": "        for (int64_t b = p->nblocks - 1; b >= 0; b--)\n"
                   "            ps_push(&m.total, partial_at(c, u * p->nblocks + b), c->k);\n",
        "expect": r"depends on the thread count",
        "isa": "scalar",
        "fast": False,
        "why": "the combine pass of a split reduction (few outputs, > 16384 summands, > 1 thread) "
               "pushes the block sums last to first: results differ from the 1-thread order",
    },
    {
        "id": "reduce-combine-sequential",
        "cls": "reduction order",
        "file": "src/engine/reduce.c",
        "find": "        for (int64_t b = 0; b < p->nblocks; b++)\n"
                "            ps_push(&m.total, partial_at(c, u * p->nblocks + b), c->k);\n"
                "        store_unit(c, &m, &up, ps_finish(&m.total, c->k));\n",
        "replace": "        float *acc = partial_at(c, u * p->nblocks); // running sum, block by block\n"
                   "        for (int64_t b = 1; b < p->nblocks; b++)\n"
                   "            c->k->add(acc, partial_at(c, u * p->nblocks + b), acc, (size_t)up.w);\n"
                   "        store_unit(c, &m, &up, acc);\n",
        "expect": r"depends on the thread count",
        "isa": "scalar",
        "fast": True,
        "why": "the combine pass of a split reduction adds the block sums left to right instead of "
               "the pairwise order: 1 thread and N threads differ from 4 blocks (65537 summands) on",
    },
    # ---------------------------------------------------------------- stride
    {
        "id": "ew-walk-carry-stride",
        "cls": "stride",
        "file": "src/engine/elementwise.c",
        "find": "offset += o->strides[d - 1];",
        "replace": "offset += o->strides[d];",
        "expect": r"FAIL +\w+ +\w+ +(\w+ +)?strided\b",
        "isa": "scalar",
        "fast": True,
        "why": "the elementwise gather/scatter odometer carries into the next dim with the inner "
               "dim's stride: every non-linear operand is read or written at wrong addresses "
               "after its first row",
    },
    {
        "id": "load-run-16bit-byte-stride",
        "cls": "stride",
        "file": "src/engine/copy.c",
        "find": "dst[i] = og_load_elem(src + i * stride * (int64_t)es, dt);",
        "replace": "dst[i] = og_load_elem(src + i * stride, dt);",
        "expect": r"FAIL +\w+ +(bfloat16|float16) +(\w+ +)?strided\b",
        "isa": "scalar",
        "fast": False,
        "why": "the strided 16-bit CopyIn path steps by `stride` bytes instead of stride elements "
               "(fp32 strided loads have their own path and stay right)",
    },
    {
        "id": "reduce-bcast-size1-stride",
        "cls": "stride",
        "file": "src/engine/reduce.c",
        "find": "return (td < 0 || t->dims[td] == 1 || dims[d] == 1) ? 0 : t->strides[td];",
        "replace": "return (td < 0 || dims[d] == 1) ? 0 : t->strides[td];",
        "expect": r"FAIL +fused_add_scale1\b",
        "isa": "scalar",
        "fast": False,
        "why": "the reduction engine's broadcast stride ignores size-1 dims of an input: a [1] "
               "scale read along a C-wide dim walks past its one element",
    },
    {
        "id": "reduce-fixed-input-in-row-buffer",
        "cls": "buffer aliasing",
        "file": "src/engine/reduce.c",
        "find": "stride[k], w, m->g[k]);",
        "replace": "stride[k], w, m->vals);",
        "expect": r"FAIL +fused_add_scale1? +(bfloat16|float16)\b",
        "isa": "scalar",
        "fast": True,
        "ops": "fused_add_scale,fused_add_scale1",
        "why": "a mapped column sum converts its row-invariant input (a 16-bit scale or bias) into "
               "the buffer that every row's mapped values are written to: from the first row on "
               "the map reads its own output as that input (16-bit gradBias / gradScale wrong)",
    },
    # ---------------------------------------------------------------- promotion
    {
        "id": "softmax-bwd-output-dtype",
        "cls": "promotion",
        "file": "src/ops/softmax/softmax_api.c",
        "find": "kernels64, 2, ins, out, axis, promoted, names,",
        "replace": "kernels64, 2, ins, out, axis, output->dtype, names,",
        "expect": r"FAIL +(log_)?softmax\w* +\w+ +(\w+ +)?mixed\b",
        "isa": "scalar",
        "fast": False,
        "why": "the softmax backwards compute in the output's dtype instead of the promoted one: "
               "an fp32 gradOutput for a 16-bit forward is rounded to 16 bits before the row sums",
    },
    {
        "id": "fas-gradbias-from-16bit-gradx",
        "cls": "promotion",
        "file": "src/ops/math/fused_add_scale/fused_add_scale_api.c",
        "find": "    if (gradX->dtype == ACL_FLOAT)\n",
        "replace": "",
        "expect": r"FAIL +fused_add_scale1? +(bfloat16|float16) ",
        "isa": "scalar",
        "fast": False,
        "why": "FusedAddScaleBackward sums gradBias from gradX even when gradX is 16-bit: the "
               "products are rounded to bf16/fp16 before the fp32 sum",
    },
    # ---------------------------------------------------------------- attribute ignored
    {
        "id": "softplus-bwd-beta-ignored",
        "cls": "attribute ignored",
        "file": "src/ops/activation/softplus/softplus_kernel_simd.c",
        "find": '    if (prm->beta == 1.0f)                                                                         \\\n        LOOP(2, 1, {                                                                               \\',
        "replace": '    if (1 /* beta = 1 */)                                                                         \\\n        LOOP(2, 1, {                                                                               \\',
        "expect": r"FAIL +softplus\b",
        "isa": "scalar",
        "fast": True,
        "ops": "softplus",
        "why": "SoftplusBackward always dispatches its beta = 1 loop: beta is ignored by the "
               "backward only (the forward still honours it)",
    },
    {
        "id": "elu-bwd-inputscale-dropped",
        "cls": "attribute ignored",
        "file": "src/ops/activation/elu/elu_kernel.h",
        "find": "p.grad_coef = (double)input_scale * p.negcoef;",
        "replace": "p.grad_coef = p.negcoef;",
        "expect": r"FAIL +elu_scaled\b",
        "isa": "scalar",
        "fast": False,
        "why": "EluBackward's x <= 0 coefficient forgets the chain-rule factor inputScale "
               "(alpha scale e^(x inputScale) instead of inputScale alpha scale e^(...))",
    },
    {
        "id": "leaky-bwd-default-slope",
        "cls": "attribute ignored",
        "file": "src/ops/activation/leaky_relu/leaky_relu_api.c",
        "find": "LEAKY_BWD_SCALAR_DTS, &p.slope));",
        "replace": "LEAKY_BWD_SCALAR_DTS, &p.slope));\n    p.slope = 0.01f; // negativeSlope's default",
        "expect": r"FAIL +leaky_(neg|out)\b",
        "isa": "scalar",
        "fast": False,
        "why": "LeakyReluBackward takes negativeSlope at its default 0.01 whatever the caller "
               "passes (the forward honours it)",
    },
    {
        "id": "softmax-fwd-dim-ignored",
        "cls": "attribute ignored",
        "file": "src/ops/softmax/softmax_api.c",
        "find": "kernels64, 1, ins, out, axis, compute, names,",
        "replace": "kernels64, 1, ins, out, self->ndim > 0 ? self->ndim - 1 : 0, compute, names,",
        "expect": r"FAIL +(log_)?softmax_dim0\b",
        "isa": "scalar",
        "fast": False,
        "why": "the softmax forwards always run along the last dim: `dim` is checked, then ignored",
    },
    # ---------------------------------------------------------------- tiling boundary
    {
        "id": "tiling-last-core-short",
        "cls": "tiling boundary",
        "file": "src/engine/tiling.c",
        "find": "if (n > t->total - s) n = t->total - s; // the last block may be partial",
        "replace": "if (n > t->total - s) n = t->total - s - 1; // the last block may be partial",
        "expect": r"FAIL +\w+ +\w+ +(\w+ +)?large\b",
        "isa": "scalar",
        "fast": False,
        "why": "the elementwise tiling clips the last core's partial block one element short: the "
               "last element of an output whose block count is not a multiple of the cores",
    },
    {
        "id": "rows-range-start",
        "cls": "tiling boundary",
        "file": "src/engine/rows.c",
        "find": "*start = core * base + (core < extra ? core : extra);",
        "replace": "*start = core * base + (core < extra ? core : 0);",
        "expect": r"FAIL +(log_)?softmax\w*",
        "isa": "scalar",
        "fast": True,
        "ops": "softmax,softmax_dim0,log_softmax,log_softmax_dim0",
        "why": "the row engine's ranges after the big ones start `extra` rows early: rows at the "
               "end are never computed when rows do not divide evenly over the ranges",
    },
    # ---------------------------------------------------------------- in-place
    {
        "id": "inplace-elu-attr-order",
        "cls": "in-place",
        "file": "src/ops/activation/elu/elu_api.c",
        "find": "return plan_elu(&og_op_InplaceElu, \"selfRef\", selfRef, alpha, scale, inputScale,",
        "replace": "return plan_elu(&og_op_InplaceElu, \"selfRef\", selfRef, alpha, inputScale, scale,",
        "expect": r"FAIL +elu\w*",
        "isa": "scalar",
        "fast": False,
        "why": "aclnnInplaceElu passes scale and inputScale in swapped order (aclnnElu is right): "
               "wrong whenever scale != inputScale",
    },
    {
        "id": "inplace-add-operand-order",
        "cls": "in-place",
        "file": "src/ops/math/add/add_api.c",
        "find": "return plan_add(&og_op_InplaceAdd, selfRef, other, alpha, selfRef, names, "
                "workspaceSize,",
        "replace": "return plan_add(&og_op_InplaceAdd, other, selfRef, alpha, selfRef, names, "
                   "workspaceSize,",
        "expect": r"FAIL +add\w*",
        "isa": "scalar",
        "fast": False,
        "why": "aclnnInplaceAdd computes other + alpha selfRef instead of selfRef + alpha other "
               "(right only for alpha = 1)",
    },
    # ---------------------------------------------------------------- matmul family (GEMM)
    {
        "id": "gemm-pack-b-transposed",
        "cls": "stride",
        "file": "src/engine/gemm.c",
        "find": "b->dtype, b->rs, b->cs",
        "replace": "b->dtype, b->cs, b->rs",
        "expect": r"FAIL +matmul\b",
        "isa": "scalar",
        "fast": False,
        "why": "the GEMM's CopyIn of B swaps its row and column strides: B is read transposed "
               "(every product whose B is not square and symmetric)",
    },
    {
        "id": "gemm-k-tail",
        "cls": "tail handling",
        "file": "src/engine/gemm.c",
        "find": "int64_t kcur = K - pc < p->kc ? K - pc : p->kc;",
        "replace": "int64_t kcur = K - pc < p->kc ? K - pc - 1 : p->kc;",
        "expect": r"FAIL +matmul\b",
        "isa": "scalar",
        "fast": True,
        "ops": "matmul",
        "why": "the last K slice of the GEMM is one short: the final term of every dot product is "
               "dropped (with the checker's KC of 3, a tail of 2 of 71 on the engine layouts)",
    },
    {
        "id": "gemm-accumulate-flag",
        "cls": "tiling boundary",
        "file": "src/engine/gemm.c",
        "find": "ldc, pc > 0);",
        "replace": "ldc, pc > p->kc);",
        "expect": r"FAIL +matmul +\w+ +\w+ +(large|wide|bcast_wide|sweep)\b",
        "isa": "scalar",
        "fast": False,
        "why": "the micro-kernel starts from 0 instead of the partial sums on the second K slice: "
               "the first slice is lost whenever K spans more than one KC block (the engine "
               "layouts with the checker's tiny KC, the 4101-term dot product of sweep)",
    },
    {
        "id": "gemm-epilogue-beta-twice",
        "cls": "attribute ignored",
        "file": "src/engine/gemm.c",
        "find": "for (int64_t j = 0; j < n; j++) z[j] += beta * d[j];",
        "replace": "for (int64_t j = 0; j < n; j++) z[j] += beta * beta * d[j];",
        "expect": r"FAIL +b?addb?mm\b",
        "isa": "scalar",
        "fast": True,
        "ops": "addmm,baddbmm",
        "why": "the GEMM epilogue applies beta twice to the addend (Addmm / Baddbmm with beta != 1 "
               "and != 0): beta^2 self instead of beta self",
    },
    {
        "id": "gemm-epilogue-alpha-skipped",
        "cls": "attribute ignored",
        "file": "src/engine/gemm.c",
        "find": "for (int64_t j = 0; j < n; j++) z[j] *= alpha;",
        "replace": "for (int64_t j = 0; j < n; j++) z[j] *= 1.0f;",
        "expect": r"FAIL +b?addb?mm\b",
        "isa": "scalar",
        "fast": False,
        "why": "the GEMM epilogue skips alpha: Addmm / Baddbmm compute beta self + mat1 @ mat2",
    },
    {
        "id": "gemm-avx2-last-row",
        "cls": "ISA-only",
        "file": "src/engine/gemm_simd.c",
        "find": "for (int j = 0; j < NV; j++) vstore(c + i * ldc + j * VLEN, acc[i][j]);",
        "replace": "for (int j = 0; j < NV; j++)\n"
                   "            vstore(c + i * ldc + j * VLEN, acc[i == MR - 1 && NV == 3 ? i - 1 : i][j]);",
        "expect": r"FAIL +matmul +\w+ +avx2 ",
        "isa": "avx2",
        "fast": False,
        "why": "the AVX2 4 x 24 micro-kernel (the only one with 3 vectors per row) stores its last "
               "row from the row above's accumulators: every 4th row of C is wrong at avx2 only",
    },
    {
        "id": "fused-gradx2-batch-fold",
        "cls": "broadcast reduction",
        "file": "src/ops/matmul/fused_matmul_api.c",
        "find": "g.K = s.M * og_mm_numel(s.batch, s.nbatch);",
        "replace": "g.K = s.M;",
        "expect": r"FAIL +fused_matmul\w* +\w+ +\w+ +(size1|large)\b.*gradient of 'x2'",
        "isa": "scalar",
        "fast": True,
        "ops": "fused_matmul,fused_matmul_relu,fused_matmul_gelu_erf,fused_matmul_gelu_tanh,fused_matmul_add,fused_matmul_mul,fused_matmul_16cast32",
        "why": "FusedMatmulBackward's gradX2 of a shared x2 (a Linear layer, x1 [B,M,K] @ x2 "
               "[K,N]) sums only the first batch: the batch is left out of the folded reduction",
    },
    {
        "id": "mm-cube-fp16-ignored",
        "cls": "attribute ignored",
        "file": "src/ops/matmul/matmul_common.c",
        "find": "return cubeMathType == USE_FP16 && promoted == ACL_FLOAT",
        "replace": "return cubeMathType == USE_HF32 && promoted == ACL_FLOAT",
        "expect": r"FAIL +matmul_cube2\b",
        "isa": "scalar",
        "fast": False,
        "why": "the matmul family tests cubeMathType against the wrong enumerator: USE_FP16 (2) "
               "computes exact fp32 products, USE_HF32 (3) rounds through fp16",
    },
    # ---------------------------------------------------------------- glu (issue 14)
    {
        "id": "swiglu-gate-wrong-half",
        "cls": "wrong operand",
        "file": "src/ops/glu/glu_kernel_simd.c",
        "find": "swiglu_fwd_chunk(m, in[0] + c, in[1] + c, out[0] + c);",
        "replace": "swiglu_fwd_chunk(m, in[1] + c, in[0] + c, out[0] + c);",
        "expect": r"FAIL +swiglu",
        "isa": "scalar",
        "fast": False,
        "why": "the fp32 SwiGlu forward gates the wrong half: silu(B) A instead of silu(A) B",
    },
    {
        "id": "swiglu-grad-halves-swapped",
        "cls": "wrong operand",
        "file": "src/ops/glu/glu_kernel_simd.c",
        "find": "memcpy(da, g, m * sizeof *g);\n    memcpy(db, s, m * sizeof *s);",
        "replace": "memcpy(da, s, m * sizeof *s);\n    memcpy(db, g, m * sizeof *g);",
        "expect": r"FAIL +swiglu",
        "isa": "scalar",
        "fast": False,
        "why": "SwiGluGrad writes the gradient of A into B's half of gradInput and the reverse",
    },
    {
        "id": "swiglu-grad-one-half",
        "cls": "missing output",
        "file": "src/ops/glu/glu_kernel_simd.c",
        "find": "    memcpy(db, s, m * sizeof *s);\n",
        "replace": "",
        "expect": r"FAIL +swiglu",
        "isa": "scalar",
        "fast": False,
        "why": "SwiGluGrad writes only the first half of gradInput (the gradient of A); B's half "
               "keeps whatever the buffer held",
    },
    {
        "id": "geglu-grad-wrong-gelu-form",
        "cls": "wrong formula",
        "file": "src/ops/glu/glu_kernel_simd.c",
        "find": "return p->approximate ? OG_FN(og_gelu_tanh_bwd) : OG_FN(og_gelu_erf_bwd);",
        "replace": "return p->approximate ? OG_FN(og_gelu_erf_bwd) : OG_FN(og_gelu_tanh_bwd);",
        "expect": r"FAIL +geglu",
        "isa": "scalar",
        "fast": True,
        "ops": "geglu_tanh,geglu_erf,geglu_erf_dim0,geglu_v3_left",
        "why": "GeGluBackward differentiates the other gelu form (erf for approximate = tanh and "
               "the reverse): the derivatives differ by up to ~1e-3",
    },
    {
        "id": "geglu-grad-halves-swapped",
        "cls": "wrong operand",
        "file": "src/ops/glu/glu_kernel_simd.c",
        "find": "memcpy(dlin, v, m * sizeof *v);\n    memcpy(dgat, u, m * sizeof *u);",
        "replace": "memcpy(dlin, u, m * sizeof *u);\n    memcpy(dgat, v, m * sizeof *v);",
        "expect": r"FAIL +geglu",
        "isa": "scalar",
        "fast": False,
        "why": "GeGluBackward writes the linear half's gradient into the gelu half of gradInput "
               "and the reverse",
    },

    # ---------------------------------------------------------------- norm (issue 14)
    {
        "id": "layer-norm-std-for-rstd",
        "cls": "branch sign/factor",
        "file": "src/ops/norm/norm_kernel_simd.c",
        "find": "vf xh = vmul(vsub(x, m), r);",
        "replace": "vf xh = vdiv(vsub(x, m), r);",
        "expect": r"FAIL +layer_norm\w*",
        "isa": "scalar",
        "fast": False,
        "why": "LayerNorm's forward divides x - mean by rstd (multiplies by the standard "
               "deviation) where it must multiply by rstd: rstd used where 1 / std is needed",
    },
    {
        "id": "layer-norm-dgamma-one-group",
        "cls": "broadcast reduction",
        "file": "src/ops/norm/norm_api.c",
        "find": "og_reduce_to_shape(&r, acc->dims, acc->ndim, out);",
        "replace": "int64_t first[OG_MAX_DIMS];\n    memcpy(first, acc->dims, sizeof first);\n"
                   "    first[0] = 1;\n    og_reduce_to_shape(&r, first, acc->ndim, out);",
        "expect": r"FAIL +(layer|rms)_norm\w* +\w+ +(\w+ +)?wide\b.*gradient of '(weight|bias|gamma)'",
        "isa": "scalar",
        "fast": False,
        "why": "the weight / bias gradients are not reduced over all the rows: only the first row "
               "group's partial sums (32 rows) reach gradWeight, gradBias and dgamma",
    },
    {
        "id": "layer-norm-dx-mean-term",
        "cls": "missing term",
        "file": "src/ops/norm/norm_kernel_simd.c",
        "find": "vstore(dx + i, vmul(r, vfnmadd(xh, mb, vsub(g, ma))));",
        "replace": "vstore(dx + i, vmul(r, vfnmadd(xh, mb, g)));",
        "expect": r"FAIL +layer_norm\w*.*gradient of 'x'",
        "isa": "scalar",
        "fast": True,
        "ops": "layer_norm,layer_norm_2d,layer_norm_no_affine,layer_norm_mask100",
        "why": "LayerNorm's dx forgets the mean's dependence on x: the -mean(dy gamma) term is "
               "dropped (the classic gradient of a normalization that treats the mean as a constant)",
    },
    {
        "id": "rows-stats-keepdim-ignored",
        "cls": "broadcast reduction",
        "file": "src/engine/rows.c",
        "find": "if (t->ndim == op->ndim && td >= 0) td--; // keepdim: t has a 1 there",
        "replace": "(void)t; // keepdim: t has a 1 there",
        "expect": r"FAIL +rms_norm\w*",
        "isa": "scalar",
        "fast": False,
        "why": "the row engine reads a per-row statistic of shape [A..., 1] (RmsNormGrad's rstd as "
               "the forward saves it, LayerNorm's mean / rstd) as if it were [A...]: the trailing "
               "1 is not skipped, so every row's statistic comes from the wrong place",
    },

    # ---------------------------------------------------------------- batch_norm (issue 14)
    {
        "id": "bn-dx-mean-forgotten",
        "cls": "wrong gradient",
        "file": "src/ops/batch_norm/batch_norm_coef.c",
        "find": "out[1][i] = (float)(-a * s1 * q->inv_k);",
        "replace": "out[1][i] = 0.0f;",
        "expect": r"FAIL +batch_norm +\w+ .*gradient of 'input'",
        "isa": "scalar",
        "fast": True,
        "ops": "batch_norm,batch_norm_noaffine",
        "why": "training-mode dx forgets that the batch mean depends on x: the -mean(dy w) term "
               "is dropped (the classic wrong BatchNorm gradient; GroupNorm shares the term)",
    },
    {
        "id": "bn-gradweight-first-n",
        "cls": "broadcast reduction",
        "file": "src/ops/batch_norm/batch_norm_coef.c",
        "find": "sdx += (double)in[1][r] + ((double)in[2][r] - (double)in[3][r]) * s1;",
        "replace": "if (r == 0) sdx += (double)in[1][r] + ((double)in[2][r] - (double)in[3][r]) * s1;",
        "expect": r"FAIL +batch_norm +\w+ .*gradient of 'weight'",
        "isa": "scalar",
        "fast": False,
        "why": "sum(dy (x - mean)) per channel covers only the first sample's row (n = 0) in "
               "the combine over n, not the batch: gradWeight (and the training dx that uses "
               "the sum) is wrong when N > 1",
    },
    {
        "id": "gn-rows-shift-dropped",
        "cls": "wrong formula",
        "file": "src/ops/batch_norm/group_norm_api.c",
        "find": "(const aclTensor *[]){x0_t, &m3, db_t, s2_t}, (int[]){x0_s, 2, db_s, s2_s}, 1,",
        "replace": "(const aclTensor *[]){x0_t, &m3, s2_t, s2_t}, (int[]){x0_s, 2, s2_s, s2_s}, 1,",
        "expect": r"FAIL +group_norm\w* ",
        "isa": "scalar",
        "fast": False,
        "why": "GroupNorm's row path turns the shifted row sum s2 = sum dy (x - x0) into "
               "sum dy (x - mean) with the wrong factor (s2 for sum dy): gradGamma and the dx "
               "that uses it are wrong",
    },
    {
        "id": "bn-running-var-biased",
        "cls": "attribute ignored",
        "file": "src/ops/batch_norm/batch_norm_api.c",
        "find": "pv.factor = (double)K / (double)(K - 1);",
        "replace": "pv.factor = 1.0;",
        "expect": r"FAIL +batch_norm_stats\b",
        "isa": "scalar",
        "fast": False,
        "why": "the running variance is updated with the biased batch variance instead of "
               "PyTorch's unbiased K/(K-1) var",
    },
    {
        "id": "bn-rstd-as-std",
        "cls": "wrong formula",
        "file": "src/ops/batch_norm/batch_norm_coef.c",
        "find": "out[0][i] = (float)(1.0 / sqrt((double)in[0][i] + q->eps));",
        "replace": "out[0][i] = (float)sqrt((double)in[0][i] + q->eps);",
        "expect": r"FAIL +(batch_norm|group_norm)\w* ",
        "isa": "scalar",
        "fast": False,
        "why": "std and its inverse confused: sqrt(var + eps) where 1 / sqrt(var + eps) is "
               "needed (saveInvstd, rstdOut, the scale of y and dx)",
    },

    # ---------------------------------------------------------------- loss family (issue 14)
    {
        "id": "loss-mean-wrong-count",
        "cls": "broadcast reduction",
        "file": "src/ops/loss/loss_api.c",
        "find": "a->params.scale = a->reduction == 1 ? 1.0f / (float)numel_of(dims, nd) : 1.0f;",
        "replace": "a->params.scale = a->reduction == 1 ? 1.0f / (float)a->in[1]->numel : 1.0f;",
        "expect": r"FAIL +(mse|l1)_loss_mean\b",
        "isa": "scalar",
        "fast": False,
        "why": "the mean backwards scale by 1/numel(self) instead of 1/N of the broadcast losses: "
               "wrong wherever self is broadcast against the target",
    },
    {
        "id": "sl1-threshold-one",
        "cls": "branch sign/factor",
        "file": "src/ops/loss/loss_kernel_simd.c",
        "find": "vstore(outs[0], vsel(vlt(ad, beta), quad, vsub(ad, hbeta)));",
        "replace": "vstore(outs[0], vsel(vlt(ad, vset(1.0f)), quad, vsub(ad, hbeta)));",
        "expect": r"FAIL +smooth_l1_loss_beta(05|0)\b",
        "isa": "scalar",
        "fast": True,
        "ops": "smooth_l1_loss_beta05,smooth_l1_loss_beta0,smooth_l1_loss_beta05_mean",
        "why": "SmoothL1's forward switches branches at |d| = 1 (the default beta) instead of beta",
    },
    {
        "id": "bce-bwd-no-weight",
        "cls": "attribute ignored",
        "file": "src/ops/loss/loss_kernel_simd.c",
        "find": 'vd sw = vdmul(s, vwiden(w));                                                           \\\n            vstore(outs[0],                                                                        \\',
        "replace": 'vd sw = s; (void)w;                                                           \\\n            vstore(outs[0],                                                                        \\',
        "expect": r"FAIL +binary_cross_entropy_weight\w*\b.*gradient of 'self'",
        "isa": "scalar",
        "fast": False,
        "why": "BinaryCrossEntropyBackward drops the weight: the forward is weighted, the gradient "
               "is not",
    },
    {
        "id": "bcel-pos-weight-wrong-term",
        "cls": "branch sign/factor",
        "file": "src/ops/loss/loss_kernel_simd.c",
        "find": "vd lw = vdfma(pw, td, one_t);",
        "replace": "vd lw = vdfma(vdset(1.0), td, vdmul(pw, one_t));",
        "expect": r"FAIL +bce_with_logits_(pos_weight|weights)\w*\b",
        "isa": "scalar",
        "fast": False,
        "why": "BCE with logits weights the negative term (1 - t) by posWeight instead of the "
               "positive term t",
    },

    # ---------------------------------------------------------------- cross_entropy (issue 14)
    {
        "id": "ce-ignore-index-used",
        "cls": "mask ignored",
        "file": "src/ops/cross_entropy/ce_kernel_simd.c",
        "find": "return v == p->ignore || v < 0 || v >= (int64_t)n ? -1 : v;",
        "replace": "return v < 0 || v >= (int64_t)n ? -1 : v;",
        "expect": r"FAIL +(cross_entropy|nll_loss)\w*_ignore\w*",
        "isa": "scalar",
        "fast": True,
        "ops": "cross_entropy_none_int32_ignore,cross_entropy_sum_weight_ignore,nll_loss_none_ignore",
        "why": "rows whose target is ignoreIndex still contribute (loss, weight, gradient) when "
               "ignoreIndex is a valid class; only out-of-range targets are dropped",
    },
    {
        "id": "ce-mean-counts-ignored",
        "cls": "reduction count",
        "file": "src/ops/cross_entropy/ce_kernel_simd.c",
        "find": "stats[0] = 0.0f, stats[1] = 0.0f;",
        "replace": "stats[0] = 0.0f, stats[1] = 1.0f;",
        "expect": r"FAIL +(cross_entropy|nll_loss)\w*mean\w*ignore",
        "isa": "scalar",
        "fast": False,
        "why": "the mean's denominator counts ignored rows (N instead of the total weight of the "
               "rows kept, without weights); NLL's totalWeightOut too",
    },
    {
        "id": "ce-mean-by-count",
        "cls": "reduction count",
        "file": "src/ops/cross_entropy/ce_kernel_simd.c",
        "find": "    stats[1] = wt;",
        "replace": "    stats[1] = 1.0f;",
        "expect": r"FAIL +(cross_entropy|nll_loss)\w*mean\w*weight|FAIL +nll_loss",
        "isa": "scalar",
        "fast": False,
        "why": "the weighted mean divides by the number of rows kept instead of the sum of their "
               "class weights",
    },
    {
        "id": "ce-grad-no-smoothing",
        "cls": "attribute ignored",
        "file": "src/ops/cross_entropy/ce_kernel_simd.c",
        "find": "vf b = vset(coef * p->smooth);",
        "replace": "vf b = vset(0.0f);",
        "expect": r"FAIL +cross_entropy_smooth\w*",
        "isa": "scalar",
        "fast": False,
        "why": "CrossEntropyLossGrad leaves out the label-smoothing term -eps/C w[c] of the "
               "smoothed one-hot target (the forward still smooths)",
    },
    {
        "id": "ce-grad-no-weight",
        "cls": "attribute ignored",
        "file": "src/ops/cross_entropy/ce_kernel_simd.c",
        "find": "    float wt = w ? w[t] : 1.0f;\n    double wsum",
        "replace": "    float wt = 1.0f;\n    double wsum",
        "expect": r"FAIL +cross_entropy\w*weight\w*",
        "isa": "scalar",
        "fast": False,
        "why": "CrossEntropyLossGrad does not scale a row's gradient by its class weight w[t]",
    },
    {
        "id": "nll-grad-no-weight",
        "cls": "attribute ignored",
        "file": "src/ops/cross_entropy/ce_kernel_simd.c",
        "find": "dx[t] = -(in[1][0] * (p->weighted ? in[2][t] : 1.0f));",
        "replace": "dx[t] = -in[1][0];",
        "expect": r"FAIL +nll_loss\w*",
        "isa": "scalar",
        "fast": False,
        "why": "NLLLossBackward forgets the class weight of the target",
    },

    # ---------------------------------------------------------------- dropout, embedding (issue 14)
    {
        "id": "emb-bwd-overwrite",
        "cls": "accumulation",
        "file": "src/ops/embedding/embedding_api.c",
        "find": "og_load_run(c->cv, g, p->grad.dtype, gs, buf, p->D);\n"
                "                for (int64_t d = 0; d < p->D; d++) acc[d] += buf[d];",
        "replace": "og_load_run(c->cv, g, p->grad.dtype, gs, buf, p->D);\n"
                   "                for (int64_t d = 0; d < p->D; d++) acc[d] = buf[d];",
        "expect": r"FAIL +embedding\b.*gradient of 'weight'",
        "isa": "scalar",
        "fast": True,
        "ops": "embedding,embedding_int32",
        "why": "EmbeddingDenseBackward stores each repeated index's gradient row over the last "
               "instead of adding it: a row's gradient is its last position's",
    },
    {
        "id": "emb-padding-not-zeroed",
        "cls": "attribute ignored",
        "file": "src/ops/embedding/embedding_api.c",
        "find": "if (r != p->padding) {\n            for (int64_t k = b; k < e; k++) { // position",
        "replace": "if (r != p->padding || true) {\n            for (int64_t k = b; k < e; k++) { // position",
        "expect": r"FAIL +embedding_padding\b",
        "isa": "scalar",
        "fast": False,
        "why": "paddingIdx ignored: the padding row gets the summed gradient of its positions",
    },
    {
        "id": "emb-freq-wrong-count",
        "cls": "branch sign/factor",
        "file": "src/ops/embedding/embedding_api.c",
        "find": "float n = (float)(e - b);",
        "replace": "float n = (float)(e - b + 1);",
        "expect": r"FAIL +embedding_freq\b",
        "isa": "scalar",
        "fast": False,
        "why": "scaleGradByFreq divides by the index count plus one (an off-by-one in the bucket "
               "bounds)",
    },
    {
        "id": "emb-fwd-oob-bound",
        "cls": "bounds",
        "file": "src/ops/embedding/embedding_api.c",
        "find": "if (r < 0 || r >= p->V) { // defined behaviour for a bad index: a zero row",
        "replace": "if (r < 0 || r > p->V) { // defined behaviour for a bad index: a zero row",
        "expect": r"FAIL +embedding_oob\b",
        "isa": "scalar",
        "fast": False,
        "why": "index == numEmbeddings passes the bound check: the lookup reads the row past the "
               "end of weight instead of writing zeros",
    },
    {
        "id": "dropout-bwd-no-scale",
        "cls": "branch sign/factor",
        "file": "src/ops/dropout/dropout_api.c",
        "find": "d.scale = (float)scale;",
        "replace": "d.scale = 1.0f;",
        "expect": r"FAIL +dropout_p10\b.*gradient of 'input'",
        "isa": "scalar",
        "fast": True,
        "ops": "dropout_p10,dropout_p50",
        "why": "DropoutBackward masks without the 1 / (1 - p) scale",
    },
    {
        "id": "dropout-bwd-scale-twice",
        "cls": "branch sign/factor",
        "file": "src/ops/dropout/dropout_api.c",
        "find": "d.scale = (float)scale;",
        "replace": "d.scale = (float)(scale * scale);",
        "expect": r"FAIL +dropout_p10\b.*gradient of 'input'",
        "isa": "scalar",
        "fast": False,
        "why": "DropoutBackward applies the 1 / (1 - p) scale twice",
    },
    {
        "id": "dropout-philox-weyl",
        "cls": "coefficient typo",
        "file": "src/ops/dropout/dropout_simd.c",
        "find": "#define PHILOX_W1 0xBB67AE85u",
        "replace": "#define PHILOX_W1 0xBB67AE87u",
        "expect": r"FAIL +dropout_p\d+\b.*forward (output|keep) differs",
        "isa": "scalar",
        "fast": False,
        "why": "a typo in Philox's second Weyl key increment: a different (still random-looking) "
               "mask that no longer follows the documented definition",
    },
    {
        "id": "dropout-chunk-counter",
        "cls": "index arithmetic",
        "file": "src/ops/dropout/dropout_api.c",
        "find": "p->offset + (uint64_t)i0 / 4, p->K",
        "replace": "p->offset + (uint64_t)i0 / 8, p->K",
        "expect": r"FAIL +dropout_p\d+ +\w+ +\w+ +(large|wide|sweep)\b",
        "isa": "scalar",
        "fast": False,
        "why": "each parallel chunk after the first starts its Philox counter at the wrong block "
               "(elements / 8 instead of / 4): masks of tensors past one chunk (8192) go wrong",
    },
    # ---------------------------------------------------------------- conv (issue 13)
    {
        "id": "conv-dx-wrong-flip",
        "cls": "index arithmetic",
        "file": "src/ops/conv/conv_gemm.c",
        "find": "split_k(g, row % g->KS, kk);\n    const char *yc",
        "replace": "split_k(g, g->KS - 1 - row % g->KS, kk);\n    const char *yc",
        "expect": r"FAIL +conv2d_5x5_gather +\w+ +\w+ +\w+:.*'input'",
        "isa": "scalar",
        "fast": True,
        "ops": "conv2d_5x5_gather",
        "why": "the stride-1 data product gathers gradOutput through the mirrored tap (the kernel "
               "flipped where the gather form needs it unflipped): gradInput wrong, forward right",
    },
    {
        "id": "conv-col2im-wrong-flip",
        "cls": "index arithmetic",
        "file": "src/ops/conv/conv_gemm.c",
        "find": "const float *cr = col + t * g->O;",
        "replace": "const float *cr = col + (g->KS - 1 - t) * g->O;",
        "expect": r"FAIL +conv2d_stride2 +\w+ +\w+ +\w+:.*'input'",
        "isa": "scalar",
        "fast": False,
        "why": "col2im (the data product at stride > 1) adds each tap's column at the mirrored "
               "tap's position: gradInput of strided convolutions wrong",
    },
    {
        "id": "conv-dw-padding-border",
        "cls": "boundary",
        "file": "src/ops/conv/conv_gemm.c",
        "find": "    op.a = GEN_MAT(&op, x, gen_im2col_a);\n    set_a(&q, x);",
        "replace": "    op.a = GEN_MAT(&op, x, gen_im2col_a);\n    set_a(&q, x);\n    q.g.in[2] -= q.g.pad[2] > 0;",
        "expect": r"FAIL +conv2d +\w+ +\w+ +\w+:.*'weight'",
        "isa": "scalar",
        "fast": False,
        "why": "the weight gradient's im2col stops one column short of the padding border: the "
               "windows that reach the right border lose their last input column in dW only",
    },
    {
        "id": "conv-bias-grad-one-image",
        "cls": "reduction",
        "file": "src/ops/conv/conv_api.c",
        "find": "r.dims[d] = dy->dims[d];",
        "replace": "r.dims[d] = d == 0 ? 1 : dy->dims[d];",
        "expect": r"FAIL +conv2d +\w+ +\w+ +\w+:.*'bias'",
        "isa": "scalar",
        "fast": True,
        "ops": "conv2d",
        "why": "gradBias is summed over H x W of the first image only, not reduced over N x H x W",
    },
    {
        "id": "conv-col-chunk-offset",
        "cls": "index arithmetic",
        "file": "src/ops/conv/conv_gemm.c",
        "find": "op.b.offset = n0 * y->strides[0];",
        "replace": "op.b.offset = 0;",
        "expect": r"FAIL +conv2d_stride2 +\w+ +\w+ +(large|wide)\b",
        "isa": "scalar",
        "fast": False,
        "why": "every chunk of images of the stride > 1 data product reads gradOutput from the "
               "first image: only inputs larger than one chunk go wrong",
    },
    {
        "id": "conv-depthwise-lane-tail",
        "cls": "index arithmetic",
        "file": "src/ops/conv/conv_dw_simd.c",
        "find": "acc[ow - full] = fmaf(dr[ow], xr[ow * sw], acc[ow - full]);",
        "replace": "acc[ow - full] = fmaf(dr[ow], xr[ow], acc[ow - full]);",
        "expect": r"FAIL +conv(2d_depthwise|1d_depthwise|_transpose2d_groups)\b",
        "isa": "scalar",
        "fast": False,
        "why": "the depthwise weight gradient's row tail ignores the stride: strided depthwise "
               "convolutions whose output rows are no multiple of 16 get a wrong dW",
    },
    {
        "id": "conv-winograd-g-typo",
        "cls": "coefficient typo",
        "file": "src/ops/conv/conv_winograd.c",
        "find": "t[3][b][j] = c24 * k0 + c12 * k1 + c6 * k2;",
        "replace": "t[3][b][j] = c24 * k0 + c12 * k1 + 0.1666 * k2;",
        "expect": r"FAIL +conv(2d|_transpose2d)_winograd\b",
        "isa": "scalar",
        "fast": False,
        "why": "1/6 written 0.1666 in one row of Winograd's kernel transform G: 4e-4 relative in "
               "a sixth of the transformed weights, far above the transforms' rounding bound",
    },
    {
        "id": "conv-winograd-at-sign",
        "cls": "branch sign/factor",
        "file": "src/ops/conv/conv_winograd_simd.c",
        "find": "o[3][c][l] = d12 + 8.0f * d34 + m5;",
        "replace": "o[3][c][l] = d12 + 8.0f * d34 - m5;",
        "expect": r"FAIL +conv(2d|_transpose2d)_winograd\b",
        "isa": "scalar",
        "fast": True,
        "ops": "conv2d_winograd",
        "why": "the last row of Winograd's output transform A^T subtracts the point at infinity: "
               "every fourth output row and column of each tile wrong",
    },
    {
        "id": "conv-f64-gather-stride",
        "cls": "index arithmetic",
        "file": "src/ops/conv/conv_gemm.c",
        "find": "put_elem(cv, yrow + (ow0 + m) * ys[4] * esz, q->bdt, out, o + j + m * s);",
        "replace": "put_elem(cv, yrow + (ow0 + m) * ys[4] * esz, q->bdt, out, o + j + m);",
        "expect": r"FAIL +conv2d_stride2 +float64 +\w+ +\w+:.*'input'",
        "isa": "scalar",
        "fast": False,
        "ops": "conv2d_stride2",
        "why": "the float64 stride gather (the data product at stride > 1, which float64 runs "
               "instead of col2im) writes gradOutput's columns side by side instead of s apart: "
               "float64 gradInput of strided convolutions wrong, every fp32 / 16-bit row right",
    },
    # ---------------------------------------------------------------- pool (issue 13)
    {
        "id": "pool-ceil-keeps-last-window",
        "cls": "index arithmetic",
        "file": "src/ops/pool/pool_api.c",
        "find": "if (ceil_mode && (out - 1) * s >= in + pad) out--;",
        "replace": "if (ceil_mode && (out - 1) * s > in + pad) out--;",
        "expect": r"FAIL +max_pool2d_ceil_drop\b",
        "isa": "scalar",
        "fast": False,
        "why": "off-by-one output size with ceilMode: a last window that starts exactly at "
               "in + pad (in the right padding alone) is kept, so out is one row/column too large",
    },
    {
        "id": "pool-avg-divisor-ignores-count-include-pad",
        "cls": "branch sign/factor",
        "file": "src/ops/pool/pool_api.c",
        "find": "return p->count_pad ? hpad * wpad : hn * (b - a);",
        "replace": "return (void)hn, hpad * wpad;",
        "expect": r"FAIL +avg_pool2d_exclude\b",
        "isa": "scalar",
        "fast": True,
        "ops": "avg_pool2d_exclude",
        "why": "the avg-pool divisor ignores countIncludePad: edge windows divide by the padded "
               "window size even when the padding must not count",
    },
    {
        "id": "pool-max-bwd-window-first",
        "cls": "index arithmetic",
        "file": "src/ops/pool/pool_plane.inc",
        "find": "if (k >= 0 && k < HW) gi[k] += grow[ow];",
        "replace": "(void)k; (void)HW; int64_t h0_ = oh * P->sh - P->ph, w0_ = ow * P->sw - P->pw; "
                   "gi[(h0_ < 0 ? 0 : h0_) * P->W + (w0_ < 0 ? 0 : w0_)] += grow[ow];",
        "expect": r"FAIL +max_pool2d\b.*gradient of 'self'",
        "isa": "scalar",
        "fast": False,
        "why": "the max-pool backward sends each gradient to its window's first element instead "
               "of the argmax the indices name",
    },
    {
        "id": "pool-adaptive-end-floor",
        "cls": "index arithmetic",
        "file": "src/ops/pool/pool_api.c",
        "find": "static int64_t ad_end(int64_t o, int64_t n, int64_t no) { return ((o + 1) * n + no - 1) / no; }",
        "replace": "static int64_t ad_end(int64_t o, int64_t n, int64_t no) { return (o + 1) * n / no; }",
        "expect": r"FAIL +adaptive_avg_pool2d\b",
        "isa": "scalar",
        "fast": True,
        "ops": "adaptive_avg_pool2d",
        "why": "the adaptive window end rounds down instead of up: windows of sizes that do not "
               "divide lose their last row/column (7 -> 3: [0, 2) instead of [0, 3))",
    },
    # ---------------------------------------------------------------- optim (issue 15)
    {
        "id": "optim-bias-correction-step",
        "cls": "off by one",
        "file": "src/ops/optim/optim_api.c",
        "find": "double t = step + 1; // upstream: the kernels count this update",
        "replace": "double t = step; // upstream: the kernels count this update",
        "expect": r"FAIL +apply_adam_w_v2(_amsgrad|_maximize)?_[pm]\b",
        "isa": "scalar",
        "fast": True,
        "ops": "apply_adam_w_v2_amsgrad_p",
        "why": "the bias corrections use t = step instead of step + 1 (ApplyAdamWV2 and "
               "FusedAdamw): 1 - beta^t off by a power; t = 0 divides by zero",
    },
    {
        "id": "optim-weight-decay-coupled",
        "cls": "wrong formula",
        "file": "src/ops/optim/optim_simd.c",
        "find": "vf pv = vmul(vload(p), vset(c->decay));",
        "replace": "vf pv = vload(p); gv = vadd(gv, vmul(pv, vset(1.0f - c->decay)));",
        "expect": r"FAIL +apply_adam_w_v2_[pm]\b",
        "isa": "scalar",
        "fast": False,
        "why": "Adam's L2 penalty instead of AdamW's decoupled decay: lr wd p added to the "
               "gradient (through the moments) instead of p scaled by 1 - lr wd",
    },
    {
        "id": "optim-found-inf-ignored",
        "cls": "missing branch",
        "file": "src/ops/optim/optim_api.c",
        "find": "if (p0->inf_slot >= 0 && read_f32(e, p0->inf_slot) == 1.0f) return;",
        "replace": "if (0 && p0->inf_slot >= 0 && read_f32(e, p0->inf_slot) == 1.0f) return;",
        "expect": r"FAIL +fused_adamw_found_inf_[pm]\b",
        "isa": "scalar",
        "fast": True,
        "ops": "fused_adamw_found_inf_p",
        "why": "FusedAdamw updates the parameters and moments although foundInf says the scaled "
               "gradients overflowed (the step must be skipped entirely)",
    },
    {
        "id": "optim-amsgrad-old-max",
        "cls": "wrong operand",
        "file": "src/ops/optim/optim_simd.c",
        "find": "vh = vmax(vload(vx), vv);",
        "replace": "vh = vload(vx);",
        "expect": r"FAIL +(apply_adam_w_v2_amsgrad|fused_adamw_scale)_p\b",
        "isa": "scalar",
        "fast": False,
        "why": "amsgrad keeps the old maximum instead of max(old, new v): the stored maximum and "
               "the denominator miss a grown second moment",
    },
    # ---------------------------------------------------------------- amp (issue 15)
    {
        "id": "foreach-norm-first-unit-only",
        "cls": "reduction",
        "file": "src/ops/amp/foreach.c",
        "find": "for (int64_t u = it->first_unit; u < it->first_unit + units; u++) {",
        "replace": "for (int64_t u = it->first_unit; u < it->first_unit + (units > 0); u++) {",
        "expect": r"FAIL +foreach_norm_l2\b",
        "isa": "scalar",
        "fast": True,
        "ops": "foreach_norm_l2",
        "why": "the norm keeps only its tensor's first unit's partial: a tensor larger than one "
               "unit (the large layout) loses the rest of its sum",
    },
    {
        "id": "amp-update-growth-late",
        "cls": "off by one",
        "file": "src/ops/amp/amp_update_scale.c",
        "find": "} else if ((int64_t)tracker + 1 == p->interval) {",
        "replace": "} else if ((int64_t)tracker == p->interval) {",
        "expect": r"FAIL +amp_update_scale_(grow|overflow)\b",
        "isa": "scalar",
        "fast": True,
        "ops": "amp_update_scale_grow,amp_update_scale_overflow",
        "why": "the scale grows one step late: the tracker is compared before the step's increment",
    },
    {
        "id": "foreach-unit-offset-global",
        "cls": "index arithmetic",
        "file": "src/ops/amp/foreach.c",
        "find": "int64_t e0 = (unit - it->first_unit) * FE_UNIT, e1 = e0 + FE_UNIT;",
        "replace": "int64_t e0 = (int64_t)unit * FE_UNIT, e1 = e0 + FE_UNIT;",
        "expect": r"FAIL +foreach_\w+\b",
        "isa": "scalar",
        "fast": False,
        "why": "a unit's elements are counted from the list's first unit instead of its tensor's: "
               "every tensor after the first is skipped",
    },
    # ---------------------------------------------------------------- compress (issue 15)
    {
        "id": "compress-topk-residual-keeps-sent",
        "cls": "missing update",
        "file": "src/ops/compress/compress_api.c",
        "find": "            y[i] = 0; // sent: the residual keeps nothing of it\n",
        "replace": "",
        "expect": r"FAIL +grad_compress_topk_(half|tenth)\b",
        "isa": "scalar",
        "fast": True,
        "ops": "grad_compress_topk_half,grad_compress_topk_tenth",
        "why": "top-k error feedback keeps the sent entries in the residual: they are sent again "
               "next step (sent + residual = 2 y for them)",
    },
    {
        "id": "compress-sign-scale-max",
        "cls": "wrong reduction",
        "file": "src/ops/compress/compress_api.c",
        "find": "    for (int64_t i = 0; i < n; i++) s += fabs((double)y[i]);\n    c->sums[core] = s;",
        "replace": "    for (int64_t i = 0; i < n; i++) s = fmax(s, fabs((double)y[i]));\n"
                   "    c->sums[core] = s * (double)n;",
        "expect": r"FAIL +grad_compress_sign\b",
        "isa": "scalar",
        "fast": False,
        "why": "the sign compressor's scale is max |y| (per chunk) instead of mean |y|",
    },
    {
        "id": "compress-sr-ignores-offset",
        "cls": "wrong index",
        "file": "src/ops/compress/compress_api.c",
        "find": "mix64(p->key + p->offset + (uint64_t)(i0 + i))",
        "replace": "mix64(p->key + (uint64_t)(i0 + i))",
        "expect": r"FAIL +grad_compress_cast_(fp16|bf16)_sr\b",
        "isa": "scalar",
        "fast": False,
        "why": "stochastic rounding draws from the element index alone, not offset + index: every "
               "step of a training run rounds the same elements up (biased over steps)",
    },
]
