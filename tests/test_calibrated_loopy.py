"""Calibrated cost models on real loopy kernels: pinned counts, generators, work removal, and
an end-to-end calibration on the CPU's OpenCL device (PoCL), small sizes."""

import json
import math
import re
import shutil
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import opencl_unusable, run_cli

lp = pytest.importorskip("loopy")

from gpuproj.calibrated import kernels as K
from gpuproj.calibrated.counting import count_kernel
from gpuproj.calibrated.features import parse_feature
from gpuproj.calibrated.generators import ALL_GENERATORS, KernelCollection, MatchCondition
from gpuproj.calibrated.work_removal import remove_work
from gpuproj.errors import InputError

DATA = Path(__file__).parent / "data"
SG = 32


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _feat(cv, name, tags=None):
    return parse_feature(name).evaluate(cv, tags)


@pytest.fixture(scope="module")
def mm_pf():
    return K.matmul_sq(256, prefetch=True)


@pytest.mark.parametrize("n", [512, 1024])
def test_tiled_matmul_counts_are_pinned(mm_pf, n):
    """Paper Sec. 2.1 / 8.3: 2n^3 flops as n^3 madds, n^3/16 loads of a and of b, n^2 stores,
    2n^3 local loads and 2n^3/16 local stores, 2n/16 barriers per work-item. Sub-group counts
    are per 32 work-items. Re-evaluated from one symbolic count for both sizes."""
    cv = count_kernel(mm_pf.program, SG).evaluate({"n": n})
    assert _feat(cv, "f_op_float32_madd") * SG * 2 == 2 * n**3
    assert _feat(cv, "f_op_float32_add") == 0 and _feat(cv, "f_op_float32_mul") == 0
    assert _feat(cv, "f_mem_access_tag:aLD", mm_pf.access_tags) == n**3 / 16
    assert _feat(cv, "f_mem_access_tag:bLD", mm_pf.access_tags) == n**3 / 16
    assert _feat(cv, "f_mem_access_global_float32_store") == n**2
    assert _feat(cv, "f_mem_access_local_float32_load") * SG == 2 * n**3
    assert _feat(cv, "f_mem_access_local_float32_store") * SG == 2 * n**3 / 16
    assert _feat(cv, "f_sync_barrier_local") == 2 * n / 16
    assert _feat(cv, "f_sync_kernel_launch") == 1
    assert _feat(cv, "f_thread_groups") == (n // 16) ** 2
    # Table 1: a has gid(0) stride 0, b gid(0) stride 16; both AFR n/16
    pa = "f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:0}_afr:>1"
    pb = "f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:16}_afr:>1"
    assert _feat(cv, pa) == n**3 / 16 and _feat(cv, pb) == n**3 / 16
    assert cv.afr[("a", "load")] == n / 16
    assert count_kernel(mm_pf.program, SG) is count_kernel(mm_pf.program, SG)  # cached


def test_untiled_matmul_has_uniform_a_loads_counted_per_subgroup():
    cv = count_kernel(K.matmul_sq(256, prefetch=False).program, SG).evaluate({"n": 256})
    n = 256
    uniform = parse_feature("f_mem_access_global_float32_load_lstrides:{0:0}")
    assert uniform.evaluate(cv) * SG == n**3  # a[i,k]: the same element for all of a sub-group
    assert uniform.granularities(cv) == {"subgroup"}
    assert _feat(cv, "f_mem_access_global_float32_load_lstrides:{0:1;1:0}") == n**3  # b
    assert cv.afr[("b", "load")] == n


def test_flops_kernel_counts_32_updates_per_iteration():
    mk = K.flops_pattern("madd", m=64, ng=(4, 2))
    cv = count_kernel(mk.program, SG).evaluate(mk.sizes)
    groups = 4 * 2
    assert _feat(cv, "f_thread_groups") == groups
    # 32 madds x m iterations per work-item, 256 work-items = 8 sub-groups per group
    assert _feat(cv, "f_op_float32_madd") == 32 * 64 * groups * 8
    # 31 adds summing the variables, 31 muls making distinct starting values
    assert _feat(cv, "f_op_float32_add") == 31 * groups * 8
    assert _feat(cv, "f_op_float32_mul") == 31 * groups * 8
    assert _feat(cv, "f_mem_access_global_float32") == 2 * groups * 256


@pytest.mark.parametrize("insn, ops", [
    ("out[i] = a[i] + b[i]*c[i]", {"madd": 1}),
    ("out[i] = a[i] - b[i]*c[i]", {"madd": 1}),  # one FFMA on the GPU, as a + b*c
    ("out[i] = a[i] - 4*b[i]", {"madd": 1}),  # the finite-difference stencil's
    ("out[i] = a[i] - b[i]*c[i]*a[i]", {"madd": 1, "mul": 1}),
    ("out[i] = -b[i]*c[i] + a[i]", {"madd": 1}),
    ("out[i] = a[i]*b[i] - c[i]", {"madd": 1}),
    ("out[i] = a[i] - b[i]", {"add": 1}),
    ("out[i] = a[i] - (-b[i])", {"add": 1}),
    ("out[i] = (a[i] - b[i])*c[i]", {"add": 1, "mul": 1}),
])
def test_multiply_adds_are_fused_when_the_product_is_subtracted(insn, ops):
    """Paper l.340: multiply-add sequences in expression trees count as one fused op; pymbolic
    reads a - b*c as a + (-1)*(b*c), which hid the product."""
    knl = lp.make_kernel("{[i]: 0<=i<n}", insn,
                         [lp.GlobalArg("a,b,c,out", np.float32, shape=("n",)),
                          lp.ValueArg("n", np.int32)], lang_version=(2018, 2))
    knl = lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")
    cv = count_kernel(knl, SG).evaluate({"n": 32})
    assert {o.name: v for o, v in cv.ops if v} == ops


def test_local_access_and_barrier_kernels():
    mk = K.local_access(m=100, ng=(2, 3))
    cv = count_kernel(mk.program, SG).evaluate(mk.sizes)
    sgs = 2 * 3 * 8
    assert _feat(cv, "f_mem_access_local_float32_load") == 101 * sgs
    assert _feat(cv, "f_mem_access_local_float32_store") == 101 * sgs
    mk = K.barriers(m=40, ng=(2, 2))
    assert _feat(count_kernel(mk.program, SG).evaluate(mk.sizes), "f_sync_barrier_local") == 40



@pytest.mark.parametrize("prefetch", [True, False])
def test_transpose_kernel_counts(prefetch):
    # b = a^T at n = 64: 4096 work-items (16x16 work-groups), each loading one element of a
    # and storing one of b, counted per work-item (the address varies within a sub-group); the tile
    # stores and loads each element once more in local memory, counted per sub-group of 32
    # (4096 / 32 = 128), behind one barrier
    mk = K.transpose(64, prefetch=prefetch)
    cv = count_kernel(mk.program, SG).evaluate(mk.sizes)
    assert mk.name == ("transpose_pf" if prefetch else "transpose_nopf")
    for name, tag in (("global_float32_load", "aLD"), ("global_float32_store", "bST")):
        assert _feat(cv, f"f_mem_access_{name}") == 64 * 64
        assert _feat(cv, f"f_mem_access_tag:{tag}", mk.access_tags) == 64 * 64
    local = 64 * 64 // SG if prefetch else 0
    assert _feat(cv, "f_mem_access_local_float32_load") == local
    assert _feat(cv, "f_mem_access_local_float32_store") == local
    assert _feat(cv, "f_sync_barrier_local") == (1 if prefetch else 0)

def test_work_removal_keeps_the_b_pattern_like_the_paper(mm_pf):
    """Sec. 7.1.1: remove_work(knl, remove_vars=["a", "c"]) keeps b's loads and loop."""
    prog = remove_work(mm_pf.program, remove_vars=["a", "c"])
    code = lp.generate_code_v2(prog).device_code()
    assert "tgt_read = tgt_read + b[" in code and " a[" not in code
    assert "__local" not in code and "barrier" not in code
    n = 256
    before = count_kernel(mm_pf.program, SG).evaluate({"n": n})
    after = count_kernel(prog, SG).evaluate({"n": n})
    (b0,) = [(a, v) for a, v in before.accesses if a.variable == "b"]
    (b1,) = [(a, v) for a, v in after.accesses if a.variable == "b"]
    assert b1[1] == b0[1] and b1[0].lid_strides == b0[0].lid_strides \
        and b1[0].gid_strides == b0[0].gid_strides
    assert _feat(after, "f_mem_access_global_float32_store") == n**2  # tgt_read_dest
    assert _feat(after, "f_mem_access_local") == 0 and _feat(after, "f_op_float32_madd") == 0
    with pytest.raises(InputError, match="not global arrays"):
        remove_work(mm_pf.program, keep_vars=["zz"])


def test_work_removal_stores_tgt_read_once_per_work_item():
    """Algorithm 3 stores tgt_read to one entry per work-item after every update: a removed
    store inside a sequential loop gave a tgt_read_dest store per iteration, (m - 1) x n."""
    knl = lp.make_kernel("{[i,k]: 0<=i<n and 1<=k<m}", "out[i, k] = 2*a[i, k] + b[i]",
                         [lp.GlobalArg("a,out", np.float32, shape=("n", "m")),
                          lp.GlobalArg("b", np.float32, shape=("n",)),
                          lp.ValueArg("n,m", np.int32)], lang_version=(2018, 2))
    knl = lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")
    prog = remove_work(knl, keep_vars=["b"])
    cv = count_kernel(prog, SG).evaluate({"n": 64, "m": 9})
    assert _feat(cv, "f_mem_access_global_float32_store") == 64
    assert _feat(cv, "f_mem_access_global_float32_load") == 64 * 8
    # the entry of the loop's first iteration (k = 1), inside the removed array's extent
    assert "tgt_read_dest[m * (32 * gid(0) + lid(0)) + 1] = tgt_read" in \
        lp.generate_code_v2(prog).device_code()


def test_generators_tags_and_match_conditions():
    names = {g.name for g in ALL_GENERATORS}
    assert len(names) >= 12
    assert {"flops_add_pattern", "flops_mul_pattern", "flops_madd_pattern",
            "flops_div_pattern", "gmem_access_pattern", "lmem_access_pattern",
            "barrier_pattern", "empty_kernel", "overlap_local_global", "matmul_sq",
            "dg_diff", "finite_diff", "transpose"} <= names
    kc = KernelCollection(ALL_GENERATORS)
    assert [g.name for g in kc.matching(["matmul_sq"])] == ["matmul_sq"]
    assert kc.matching(["matmul_sq", "finite_diff"]) == []  # superset: none has both
    inter = KernelCollection(ALL_GENERATORS, MatchCondition.INTERSECT)
    assert {g.name for g in inter.matching(["matmul_sq", "finite_diff"])} == \
        {"matmul_sq", "finite_diff"}
    ident = KernelCollection(ALL_GENERATORS, "identical")
    assert [g.name for g in ident.matching(["transpose", "application"])] == ["transpose"]
    sub = KernelCollection(ALL_GENERATORS, "subset")
    assert {g.name for g in sub.matching(["flops_madd_pattern", "flops", "microbenchmark",
                                          "barrier"])} == {"flops_madd_pattern"}
    # Cartesian product: 2 prefetch x 3 n = 6 (paper Sec. 7.1: omit prefetch -> both)
    assert len(kc.variants(["matmul_sq", "n:64,128,192"])) == 6
    assert len(kc.variants(["matmul_sq", "prefetch:True", "n:64,128,192"])) == 3
    dg = kc.variants(["dg_diff", "nelements:256"])
    assert sorted(k.variant["variant"] for k in dg) == sorted(K.DG_VARIANTS)
    assert len(kc.variants(["finite_diff", "n:224"])) == 2
    with pytest.raises(InputError, match="not allowed"):
        kc.variants(["matmul_sq", "dtype:float16"])
    with pytest.raises(InputError, match="no generator"):
        kc.variants(["no_such_generator"])


def test_a_tag_set_that_makes_no_kernel_is_an_error():
    # the combinations a generator drops (keep:<arrays> without removal, a size that is not a
    # multiple of the tile) left a tag set with no kernel, silently
    kc = KernelCollection(ALL_GENERATORS)
    for tags, field, why in [
            (["matmul_sq", "keep:a+c,b+c", "n:128"], "keep", "keep:a+c needs remove_work:True"),
            (["matmul_sq", "n:100"], "n", "n:100 is not a multiple of lsize_0:16"),
            (["dg_diff", "nelements:100"], "nelements", "nelements:100 is not a multiple of 16"),
            (["microbenchmark", "m:6"], "m", "m:6 is not a multiple of unroll:4")]:
        for call in (kc.check, kc.variants):
            with pytest.raises(InputError) as e:
                call(tags)
            assert e.value.field == field and e.value.message.endswith(why), tags
    # a combination dropped among others that make kernels is no error
    assert len(kc.variants(["matmul_sq", "keep:all,a+c", "n:128", "prefetch:True"])) == 1


def test_an_argument_no_selected_generator_has_is_an_error():
    # with several generators selected, a misspelt variant tag was dropped from each of them
    kc = KernelCollection(ALL_GENERATORS)
    with pytest.raises(InputError, match=r"^none of the 9 generators that tags "
                                         r"\['microbenchmark'\] select has argument\(s\) "
                                         r"\['mm'\]; their arguments: dtype, lsize_0, "):
        kc.check(["microbenchmark", "mm:64,128"])
    with pytest.raises(InputError, match=r"has argument\(s\) \['mm'\]"):
        kc.variants(["microbenchmark", "mm:64,128"])
    # an argument some of them have restricts those: the flops kernels to m = 64
    kernels = kc.variants(["microbenchmark", "m:64", "ng0:2"])
    assert {mk.sizes["m"] for mk in kernels if mk.name.startswith("flops_")} == {64}


def test_matmul_work_groups_are_square(tmp_path):
    # lsize_0 != lsize_1 reached kernels.matmul_sq, whose ValueError was a traceback (also
    # from `gpuproj predict --loopy` with such a kernel file)
    from gpuproj.calibrated.modelfile import load_kernel_file

    kc = KernelCollection(ALL_GENERATORS)
    kernels = kc.variants(["matmul_sq", "lsize_0:8,16", "lsize_1:8,16", "n:128",
                           "prefetch:True"])
    assert sorted((mk.variant["lsize_0"], mk.variant["lsize_1"]) for mk in kernels) == \
        [(8, 8), (16, 16)]  # the product less the non-square work-groups
    f = tmp_path / "k.yaml"
    f.write_text("generator: matmul_sq\nargs: {prefetch: true, n: 1024, lsize_0: 16, "
                 "lsize_1: 8}\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(f))}, field 'args\.lsize_1': "
                       r"generator matmul_sq makes no kernel of these argument values: "
                       r"lsize_1:8 is not lsize_0:16 \(matmul_sq needs square work-groups\)$"):
        load_kernel_file(f)


def test_case_study_kernels_count():
    for mk in (K.dg_diff(v, 256) for v in K.DG_VARIANTS):
        cv = count_kernel(mk.program, SG).evaluate(mk.sizes)
        # res[m,k,i] = sum_j: 3 matrices x 256 elements x 64 nodes x 64 madds per work-item
        assert _feat(cv, "f_op_float32_madd") * SG == 3 * 256 * 64 * 64
    for lsize in (16, 18):
        mk = K.finite_diff(224, lsize)
        cv = count_kernel(mk.program, SG).evaluate(mk.sizes)
        t = lsize - 2
        assert _feat(cv, "f_thread_groups") == (224 // t) ** 2
        # one tile element per work-item fetched: lsize^2 loads per group
        assert _feat(cv, f"f_mem_access_tag:fd{lsize}_uLD", mk.access_tags) == \
            (224 // t) ** 2 * lsize**2
        # per point 3 adds and the "- 4*u" as one madd (one FFMA on the GPU), counted per
        # sub-group over the whole work-group (loopy's rule): ceil(lsize^2/32) per group
        sgs = (224 // t) ** 2 * -(-lsize**2 // SG)
        assert _feat(cv, "f_op_float32_add") == 3 * sgs
        assert _feat(cv, "f_op_float32_madd") == sgs and _feat(cv, "f_op_float32_mul") == 0


# -- CUDA: what CudaRunner compiles and launches (no GPU needed) ---------------------------


def _bundled_model_kernels(resize=None):
    """Every measurement and evaluation kernel of the bundled model files (``resize``: a
    function of the model spec, such as scripts/case_studies.py's GPU sizes)."""
    from gpuproj.calibrated.modelfile import load_model_file
    from gpuproj.calibrated.study import measurement_kernels

    root = Path(__file__).parents[1] / "src" / "gpuproj" / "calibrated" / "models"
    out = []
    for path in sorted(root.glob("*.yaml")):
        spec = load_model_file(path)
        spec = resize(spec) if resize else spec
        kc = KernelCollection(ALL_GENERATORS, spec.match)
        out += measurement_kernels(spec)
        for entry in spec.evaluation:
            out += kc.variants(list(entry["tags"]))
    return out


def test_every_bundled_kernel_becomes_a_cuda_launch(tmp_path):
    """CudaRunner retargets each kernel to CUDA. The work-removed ones (which measure the
    memory costs) came out of remove_work half-processed for OpenCL, which loopy refuses to
    retarget: the CUDA path failed on all 32 of them before a GPU was ever reached."""
    from gpuproj.calibrated.timing import cuda_launch

    kernels = _bundled_model_kernels()
    removed = [mk for mk in kernels if "_rm_" in mk.name]
    assert len(kernels) == 108 and len(removed) == 32
    for mk in kernels:
        launch = cuda_launch(mk)
        # the launch passes the arguments in the order of the kernel's parameter list
        sig = re.search(rf'extern "C" __global__ .*?{launch.name}\((.*?)\)', launch.code)
        params = [re.findall(r"\w+", p)[-1] for p in sig.group(1).split(",")]
        assert params == [name for name, *_ in launch.args], mk.name
        assert min(launch.grid + launch.block) >= 1
        assert all(n >= 1 for _name, _dt, n, is_array in launch.args if is_array)
    # the case studies' GPU sizes (scripts/case_studies.py --sizes gpu): every size tag replaced,
    # none doubled, and each kernel's arrays within the H100's 80 GB many times over
    from conftest import load_script

    big = _bundled_model_kernels(load_script("case_studies").gpu_sized)
    assert len(big) == 114
    sizes = {}
    for mk in big:
        sizes.setdefault(mk.name, []).append(mk.sizes)
    assert [s["n"] for s in sizes["matmul_sq_pf"]] == [2048, 2560, 3072, 3584]
    assert [s["n"] for s in sizes["matmul_sq_pf_rm_b+c"]] == [2048, 2560, 3072]
    assert [s["nelements"] for s in sizes["dg_diff_plain"]] == [524288, 786432, 1048576, 1310720]
    assert all(s["ng0"] == 1024 and s["ng1"] == 64 for s in sizes["flops_madd_float32"])
    assert {s["ng0"] for s in sizes["empty"]} == {16, 256}  # launch overhead: few groups
    for mk in big:
        launch = cuda_launch(mk)
        assert sum(n * dt.itemsize for _n, dt, n, is_array in launch.args if is_array) < 4e9
    if shutil.which("nvcc") is None:
        return
    # one kernel of each generator compiles for sm_90 (the H100 and H200), a removed one too
    first = {}
    for mk in kernels:
        first.setdefault(mk.name.split("_rm_")[0].rsplit("_", 1)[0], mk)
    first["removed"] = removed[0]
    for key, mk in first.items():
        src = tmp_path / f"{key}.cu"
        src.write_text(cuda_launch(mk).code)
        p = subprocess.run(["nvcc", "-c", "-arch=sm_90", "-o", str(tmp_path / "k.o"), str(src)],
                           capture_output=True, text=True)
        assert p.returncode == 0, f"{mk.name}: {p.stderr}"


@pytest.mark.gpu
def test_cuda_runner_times_kernels():
    """On an NVIDIA GPU (scripts/calibrate_on_gpu.sh runs it): CuPy compiles and times a
    generated kernel, a work-removed one and a transposed-stride one; more work takes longer."""
    pytest.importorskip("cupy")
    from gpuproj.calibrated.timing import CudaRunner

    r = CudaRunner(warmup=1, repetitions=3)
    assert r.device_name.startswith("CUDA / ")
    t = r.time(K.dg_diff("pf_diff_mat_T", 64))
    assert len(t.samples_s) == 3 and t.median_s > 0
    removed = next(mk for mk in _bundled_model_kernels() if "_rm_" in mk.name)
    assert r.time(removed).median_s > 0
    small = r.time(K.flops_pattern("add", m=16, ng=(64, 1)))
    big = r.time(K.flops_pattern("add", m=4096, ng=(64, 1)))
    assert big.median_s > small.median_s


# -- running on the CPU's OpenCL device --------------------------------------------------


needs_opencl = pytest.mark.skipif(opencl_unusable() is not None,
                                  reason=str(opencl_unusable()))


@needs_opencl
def test_runner_times_kernels_on_opencl():
    from gpuproj.calibrated.timing import OpenCLRunner

    r = OpenCLRunner(warmup=1, repetitions=3)
    t = r.time(K.dg_diff("pf_diff_mat_T", 64))  # transposed strides are honoured
    assert len(t.samples_s) == 3 and t.median_s > 0
    small = r.time(K.flops_pattern("add", m=16, ng=(2, 1)))
    big = r.time(K.flops_pattern("add", m=256, ng=(2, 1)))
    assert big.median_s > small.median_s


@pytest.mark.skipif(not str(opencl_unusable()).startswith("OpenCL cannot build"),
                    reason="needs an OpenCL device whose compiler refuses every kernel")
def test_a_device_that_cannot_build_is_one_line(tmp_path, capsys):
    # pyopencl's build error is a page of log with a traceback; the user gets its cause
    from conftest import run_cli

    code, _, err = run_cli(capsys, "calibrate", str(DATA / "calibrated-pocl-tiny-model.yaml"),
                           "--out", str(tmp_path / "p.json"))
    assert code == 2 and "Traceback" not in err
    assert "error: OpenCL could not run kernel flops_madd_float32 on " in err.splitlines()[-1]


@needs_opencl
def test_a_kernel_the_device_refuses_is_one_line(tmp_path, capsys, monkeypatch):
    """The companion of the test above where OpenCL works (CI): the runner's timing raises
    the pyopencl.RuntimeError a refusing PoCL raises, and OpenCLRunner.time turns it into one
    error line with build_failure's cause, exit code 2, no traceback."""
    import pyopencl as cl
    from conftest import run_cli

    from gpuproj.calibrated.timing import OpenCLRunner

    def refuse(self, ex, args):
        raise cl.RuntimeError("clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\n"
                              "error: unknown target CPU 'generic'\n")

    monkeypatch.setattr(OpenCLRunner, "_samples", refuse)
    code, _, err = run_cli(capsys, "calibrate", str(DATA / "calibrated-pocl-tiny-model.yaml"),
                           "--out", str(tmp_path / "p.json"))
    assert code == 2 and "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith("gpuproj: error: OpenCL could not run kernel ")
    assert "the OpenCL compiler does not know this CPU (it calls it 'generic')" in last
    assert "BUILD_PROGRAM_FAILURE" not in err  # the cause, not pyopencl's page of log
    assert not (tmp_path / "p.json").exists()


@needs_opencl
def test_a_buffer_the_device_cannot_allocate_is_one_line(tmp_path, capsys):
    """An array above the device's largest allocation: pyopencl raises a LogicError
    (INVALID_BUFFER_SIZE), not the RuntimeError the runner caught, which ended in a traceback
    after the timing had begun."""
    import pyopencl as cl

    from gpuproj.bench.opencl import list_devices, pick_device

    # the gmem kernel's arrays are (16 ng1) x (16 ng0) floats: one a little above the limit
    ng = math.isqrt(pick_device(list_devices()).max_mem_alloc_size // (256 * 4)) + 1
    model = tmp_path / "m.yaml"
    model.write_text("output: f_wall_time\nexpression: p_g * f_mem_access_global\n")
    code, _, err = run_cli(capsys, "calibrate", str(model), "--tags", "gmem_access_pattern",
                           "--tags", f"ng0:{ng}", "--tags", f"ng1:{ng}", "--tags", "narrays:1",
                           "--repetitions", "1", "--out", str(tmp_path / "p.json"))
    assert code == 2 and "Traceback" not in err, err
    (line,) = err.splitlines()
    assert line.startswith(f"gpuproj: error: OpenCL could not run kernel gmem_float32_1arr_N at "
                           f"sizes {{'ng0': {ng}, 'ng1': {ng}}} on ")
    assert line.endswith("INVALID_BUFFER_SIZE")
    assert issubclass(cl.LogicError, cl.Error) and not issubclass(cl.LogicError, cl.RuntimeError)


@needs_opencl
@pytest.mark.slow
def test_cli_calibrates_evaluates_and_predicts_end_to_end(tmp_path):
    from click.testing import CliRunner

    from gpuproj.calibrated import predict_loopy
    from gpuproj.cli.main import cli

    model = tmp_path / "tiny.yaml"
    shutil.copy(DATA / "calibrated-pocl-tiny-model.yaml", model)
    out = tmp_path / "params.json"
    res = CliRunner().invoke(cli, ["calibrate", str(model), "--out", str(out),
                                   "--repetitions", "3", "--warmup", "1", "--evaluate",
                                   "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output[res.output.index("{"):])
    assert d["format"] == "gpuproj-calibrated-params" and d["n_kernels"] == 16
    assert set(d["params"]) == {"p_launch", "p_group", "p_madd", "p_add", "p_lmem", "p_g"}
    ev = d["evaluation"]
    assert len(ev["variants"]) == 2
    # recomputed from the measured and predicted times the JSON gives: per size measured by
    # both variants, the order of the variants by measured time against that by predicted
    # time; the ranking is correct where every size's orders agree
    by_size = {}
    for v in ev["variants"]:
        assert len(v["sizes"]) == len(v["measured_s"]) == len(v["predicted_s"]) > 0
        for size, m, p in zip(v["sizes"], v["measured_s"], v["predicted_s"]):
            by_size.setdefault(tuple(sorted(size.items())), []).append((v["name"], m, p))
    want = []
    for key, rows in sorted(by_size.items()):
        if len(rows) > 1:
            meas = [r[0] for r in sorted(rows, key=lambda r: r[1])]
            pred = [r[0] for r in sorted(rows, key=lambda r: r[2])]
            want.append({"sizes": dict(key), "measured": meas, "predicted": pred,
                         "ok": meas == pred})
    assert want and ev["ranking"] == want
    assert ev["ranking_correct"] is all(r["ok"] for r in want)
    # the geometric mean of |predicted - measured| / measured over both variants' kernels
    rel = [abs(p - m) / m for v in ev["variants"]
           for m, p in zip(v["measured_s"], v["predicted_s"])]
    assert ev["geomean_rel_error"] == pytest.approx(math.exp(sum(map(math.log, rel)) / len(rel)),
                                                    rel=1e-9)
    for v in ev["variants"]:
        r = [abs(p - m) / m for m, p in zip(v["measured_s"], v["predicted_s"])]
        assert v["rel_error"] == pytest.approx(
            [(p - m) / m for m, p in zip(v["measured_s"], v["predicted_s"])], rel=1e-9)
        assert v["geomean_rel_error"] == pytest.approx(
            math.exp(sum(map(math.log, r)) / len(r)), rel=1e-9)
    saved = json.loads(out.read_text())
    assert saved["params"] == d["params"]
    # predict a declarative loopy kernel with the saved parameters
    p = predict_loopy(DATA / "calibrated-matmul-kernel.yaml", out, {"n": 128})
    assert p["time_s"] > 0 and p["features"]["f_op_float32_madd"] * 32 == 128**3
    ps = predict_loopy(DATA / "calibrated-matmul-kernel.yaml", out, [{"n": 64}, {"n": 256}])
    assert ps[1]["time_s"] > ps[0]["time_s"]
    # and a generator kernel file
    gk = tmp_path / "k.yaml"
    gk.write_text("generator: matmul_sq\nargs: {prefetch: false, n: 64}\n")
    assert predict_loopy(gk, out, {"n": 128})["time_s"] > 0


GOOD_MODEL = "output: f_wall_time\nexpression: 'p_a * f_op_float32_add + p_b'\n"


@pytest.mark.parametrize("text, where", [
    ("output: f_wall_time\nexpression: 'p_a * * f_op_float32_add'\n", "expression"),
    ("output: f_wall_time\n", "field 'expression': missing key"),
    (GOOD_MODEL + "colour: red\n", "unknown key(s) ['colour']"),
    (GOOD_MODEL + "subgroup_size: 0\n", "field 'subgroup_size'"),
    (GOOD_MODEL + "measurement: [a]\n", "field 'measurement': expected a mapping"),
    (GOOD_MODEL + "measurement: {match: best}\n", "field 'measurement.match'"),
    (GOOD_MODEL + "measurement: {tag_sets: [a, b]}\n", "field 'measurement.tag_sets'"),
    (GOOD_MODEL + "evaluation: [{name: x}]\n", "entry 1 needs name and tags"),
    (GOOD_MODEL + "evaluation: {name: x}\n", "field 'evaluation': expected a list"),
    (GOOD_MODEL + "initial: [1]\n", "field 'initial': expected a mapping"),
    (GOOD_MODEL + "initial: {p_a: fast}\n", "field 'initial.p_a': expected a finite number, "
                                              "found 'fast'"),
    (GOOD_MODEL + "initial: {p_zz: 1}\n", "field 'initial': ['p_zz'] are not parameters"),
    (GOOD_MODEL + "signed: p_a\n", "field 'signed': expected a list"),
    (GOOD_MODEL + "signed: [p_b, p_zz]\n", "field 'signed': ['p_zz'] are not parameters"),
    # below: each was accepted, named no file or the wrong field, or came after the timing
    (GOOD_MODEL + "subgroup_size: true\n", "field 'subgroup_size'"),  # was a sub-group of 1
    ("output: f_wall_time\nexpression: 'p_a * f_op_float32_mad'\n",
     "field 'expression': feature 'f_op_float32_mad': unknown op 'mad'"),
    ("output: wall_time\nexpression: 'p_a * f_thread_groups'\n",
     "field 'output': feature 'wall_time'"),
    ("output: 3\nexpression: 'p_a * f_thread_groups'\n", "field 'output': expected text"),
    ("output: f_wall_time\nexpression: 'p_a * f_thread_groups + p_b * f_wall_time'\n",
     "field 'expression': f_wall_time is measured, not counted"),
    (GOOD_MODEL + "measurement: {tag_sets: [[empty_kernel], [empty_kernel, 'foo:16']]}\n",
     "field 'measurement.tag_sets': entry 2: generator empty_kernel has no argument(s) ['foo']"),
    (GOOD_MODEL + "measurement: {tag_sets: [[nosuchgen]]}\n",
     "field 'measurement.tag_sets': entry 1: no generator matches tags ['nosuchgen']"),
    (GOOD_MODEL + "measurement: {tag_sets: [[empty_kernel, 'ng0:0']]}\n",
     "field 'measurement.tag_sets': entry 1: generator empty_kernel: ng0:0 is not a positive "
     "integer"),
    (GOOD_MODEL + "evaluation: [{name: e1, tags: empty_kernel}]\n",
     "field 'evaluation': entry 1: tags must be a list"),  # was split into its characters
    (GOOD_MODEL + "evaluation: [{name: e1, tags: [empty_kernel, 'prefetch:maybe']}]\n",
     "field 'evaluation': entry 1: generator empty_kernel has no argument(s) ['prefetch']"),
    # tag sets that make no kernel vanished unsaid; an evaluation entry's was a KeyError in
    # --evaluate, after the parameters were written
    (GOOD_MODEL + "measurement: {tag_sets: [[empty_kernel], [matmul_sq, 'keep:a+c,b+c', "
                  "'n:128']]}\n",
     "field 'measurement.tag_sets': entry 2: generator matmul_sq makes no kernel of these "
     "argument values: keep:a+c needs remove_work:True"),
    (GOOD_MODEL + "evaluation: [{name: e1, tags: [finite_diff, 'n:100']}]\n",
     "field 'evaluation': entry 1: generator finite_diff makes no kernel of these argument "
     "values: n:100 is not a multiple of lsize - 2 = 14"),
    (GOOD_MODEL + "measurement: {tag_sets: [[matmul_sq, 'lsize_1:8']]}\n",
     "field 'measurement.tag_sets': entry 1: generator matmul_sq makes no kernel of these "
     "argument values: lsize_1:8 is not lsize_0:16 (matmul_sq needs square work-groups)"),
    # scipy refused these starts with a traceback after every kernel was timed
    (GOOD_MODEL + "initial: {p_a: .nan}\n", "field 'initial.p_a': expected a finite number, "
                                              "found nan"),
    (GOOD_MODEL + "initial: {p_b: -.inf}\n", "field 'initial.p_b': expected a finite number, "
                                               "found -inf"),
])
def test_cli_reports_bad_model_files(tmp_path, capsys, text, where):
    """Each mistake stops before any kernel runs, in a line naming the file and the field (an
    expression's is followed by the expression with a caret under the bad token)."""
    from conftest import run_cli

    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    code, _, err = run_cli(capsys, "calibrate", str(bad))
    first = err.splitlines()[0]
    assert code == 2 and "Traceback" not in err and str(bad) in first and where in first, err


def test_model_file_starting_values_and_signed_parameters(tmp_path):
    from gpuproj.calibrated.modelfile import load_model_file

    f = tmp_path / "m.yaml"
    f.write_text(GOOD_MODEL + "initial: {p_a: 2}\nsigned: [p_b]\n")
    spec = load_model_file(f)
    assert spec.initial == {"p_a": 2.0} and spec.signed == ("p_b",) and spec.subgroup_size == 32


def test_a_remove_work_transform_that_fails_names_the_kernel_file(tmp_path):
    # remove_work's error came out as "field 'keep': ...", naming no file and a field the
    # kernel file does not have
    from gpuproj.calibrated.modelfile import load_kernel_file

    f = tmp_path / "k.yaml"
    f.write_text((DATA / "calibrated-matmul-kernel.yaml").read_text().replace(
        "access_tags:", "  - [remove_work, {keep_vars: [zz]}]\naccess_tags:"))
    with pytest.raises(InputError, match=rf"^{re.escape(str(f))}, field 'transforms': "
                       r"transform 7 \(remove_work\): keep_vars \['zz'\] are not global "
                       r"arrays of matmul_pf \(\['a', 'b', 'c'\]\)$"):
        load_kernel_file(f)


def test_count_kernel_refuses_a_boolean_subgroup_size():
    prog = K.empty((16, 1), (2, 1)).program
    count_kernel(prog, 1)  # cached: True must not find it
    with pytest.raises(InputError, match="sub-group size must be a positive integer"):
        count_kernel(prog, True)


def test_the_kernel_file_examples_of_modelfile_run(tmp_path):
    """The module docstring's kernel files, as written (the generator one selected two
    variants: n has two defaults)."""
    import textwrap

    from gpuproj.calibrated import modelfile

    doc = modelfile.__doc__
    blocks = [textwrap.dedent(b.split("\n\n")[0]) for b in doc.split("::\n\n")[1:]]
    assert [b.split(":")[0] for b in blocks] == ["name", "generator", "domains"]
    for i, text in enumerate(blocks[1:]):
        f = tmp_path / f"k{i}.yaml"
        f.write_text(text)
        mk = modelfile.load_kernel_file(f)
        cv = count_kernel(mk.program, SG).evaluate({**mk.sizes, "n": 256})
        assert _feat(cv, "f_op_float32_madd") * SG == 256**3


# -- the whole pipeline on a simulated device ----------------------------------------

# the tiny model's parameters on the simulated device (s per unit of each feature)
TRUE_PARAMS = {"p_launch": 5e-6, "p_group": 2e-8, "p_madd": 1e-11, "p_add": 6e-12,
               "p_lmem": 3e-12, "p_g": 4e-11}


class SimulatedRunner:
    """A device on which a kernel takes exactly the tiny model's time at ``TRUE_PARAMS``, over
    the operation counts loopy gives for it: calibrating on it must give those parameters back,
    and predicting the evaluation variants must give their times. Runs `gpuproj calibrate` end
    to end where no OpenCL device can build kernels."""

    device_name = "simulated"

    def __init__(self, spec):
        self.spec = spec

    def time(self, mk):
        from gpuproj.calibrated.study import predict_kernels
        from gpuproj.calibrated.timing import Timing

        t = float(predict_kernels(self.spec.model, TRUE_PARAMS, [mk],
                                  self.spec.subgroup_size)[0])
        return Timing(mk.name, dict(mk.sizes), [t] * 3, t, [], self.device_name)


def test_cli_calibration_gives_back_a_simulated_devices_parameters(tmp_path, monkeypatch,
                                                                   capsys):
    from conftest import run_cli

    from gpuproj.calibrated import predict_loopy
    from gpuproj.calibrated import timing as T
    from gpuproj.calibrated.modelfile import load_model_file

    model = DATA / "calibrated-pocl-tiny-model.yaml"
    spec = load_model_file(model)
    monkeypatch.setattr(T, "make_runner", lambda device, **kw: SimulatedRunner(spec))
    out = tmp_path / "params.json"
    code, stdout, err = run_cli(capsys, "calibrate", str(model), "--out", str(out),
                                "--evaluate", "--json")
    assert code == 0, err
    d = json.loads(stdout)
    assert d["device"] == "simulated" and d["n_kernels"] == 16
    assert d["params"] == pytest.approx(TRUE_PARAMS, rel=1e-6)
    ev = d["evaluation"]
    assert ev["geomean_rel_error"] < 1e-6 and ev["ranking_correct"] is True
    assert [r["measured"] for r in ev["ranking"]] == [r["predicted"] for r in ev["ranking"]]
    # the saved parameters predict a declarative loopy kernel: the true cost of its counts
    p = predict_loopy(DATA / "calibrated-matmul-kernel.yaml", out, {"n": 128})
    assert p["features"]["f_op_float32_madd"] * SG == 128**3
    want = sum(TRUE_PARAMS[f"p_{k}"] * p["features"][f] for k, f in (
        ("launch", "f_sync_kernel_launch"), ("group", "f_thread_groups"),
        ("madd", "f_op_float32_madd"), ("add", "f_op_float32_add"),
        ("lmem", "f_mem_access_local_float32"), ("g", "f_mem_access_global_float32")))
    assert p["time_s"] == pytest.approx(want, rel=1e-6)
    # the text report: parameter table, fit, evaluation, where it wrote
    code, stdout, _ = run_cli(capsys, "calibrate", str(model), "--out", str(out), "--evaluate")
    assert code == 0
    assert stdout.startswith("tiny: 16 kernels on simulated")
    assert "ranking right" in stdout and stdout.rstrip().endswith(f"wrote {out}")
    # the residual says what it measures ('residual 1e-9 (relative)' did not)
    assert re.search(r"^least-squares residual [-0-9.e]+: the Euclidean norm of the 16 "
                     r"kernels' relative errors \(1 - predicted / measured\)$", stdout, re.M)


def test_cli_calibrate_shows_the_progress_of_counting_and_timing(tmp_path, monkeypatch,
                                                                  capsys):
    from conftest import run_cli

    import gpuproj.cli.calibrate as C
    from gpuproj.calibrated import timing as T
    from gpuproj.calibrated.modelfile import load_model_file

    model = DATA / "calibrated-pocl-tiny-model.yaml"
    monkeypatch.setattr(T, "make_runner", lambda device, **kw: SimulatedRunner(
        load_model_file(model)))
    shown = []

    def progress(items, description=""):
        shown.append((description, len(items)))
        return items

    monkeypatch.setattr(C, "progress", progress)
    code, _, err = run_cli(capsys, "calibrate", str(model), "--out", str(tmp_path / "p.json"))
    assert code == 0, err
    assert shown == [("counting", 16), ("timing kernels", 16)]
    # --evaluate times each evaluation variant (two sizes each) under its own bar
    shown.clear()
    code, _, err = run_cli(capsys, "calibrate", str(model), "--out", str(tmp_path / "p.json"),
                           "--evaluate")
    assert code == 0, err
    assert shown[2:] == [("timing prefetch", 2), ("timing no_prefetch", 2)]


def test_cli_calibrate_warns_as_every_command_does(tmp_path, monkeypatch, capsys):
    """A parameter no measurement determines was said as 'warning: ...', the one command
    without the 'gpuproj: ' of the others' warnings; --help had no examples, unlike the
    others (tests/test_docs_examples.py runs them)."""
    from conftest import run_cli

    from gpuproj.calibrated import timing as T
    from gpuproj.calibrated.modelfile import load_model_file

    tiny = DATA / "calibrated-pocl-tiny-model.yaml"
    monkeypatch.setattr(T, "make_runner", lambda device, **kw: SimulatedRunner(
        load_model_file(tiny)))
    # no measurement kernel does FP64 multiply-adds
    model = tmp_path / "m.yaml"
    model.write_text(tiny.read_text().replace("+ p_g * f_mem_access_global_float32", (
        "+ p_g * f_mem_access_global_float32 + p_x * f_op_float64_madd")))
    code, stdout, err = run_cli(capsys, "calibrate", str(model), "--out",
                                str(tmp_path / "p.json"))
    assert code == 0, err
    assert err.startswith("gpuproj: warning: p_x is not determined by the measurements")
    assert all(line.startswith("gpuproj: ") for line in err.splitlines())
    code, stdout, _ = run_cli(capsys, "calibrate", "--help")
    assert code == 0
    examples = stdout.split("Examples:\n")[1].split("\n\n")[0].splitlines()
    assert len(examples) == 3 and all(e.strip().startswith("gpuproj calibrate ")
                                      for e in examples)


class _FakeCupy:
    """The part of CuPy that CudaRunner uses, for a machine without a GPU: kernels compile to
    nothing and run in a time that grows with their grid (5 us + 1 ns per work-item). ``fail``:
    an exception for NVRTC to raise ("compile") or the launch ("launch"), as CuPy's would."""

    class CompileException(Exception):
        pass

    class CUDADriverError(RuntimeError):
        pass

    def __init__(self):
        self.compiled, self.clock, self.fail = [], 0.0, {}
        fake = self

        class Event:
            def record(self):
                self.t = fake.clock

            def synchronize(self):
                pass

        class Device:
            def __init__(self, i=0):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def synchronize(self):
                pass

        class RawModule:
            def __init__(self, code, options=()):
                fake.compiled.append(code)

            def get_function(self, name):
                if "compile" in fake.fail:
                    raise fake.fail["compile"]

                def kernel(grid, block, args):
                    if "launch" in fake.fail:
                        raise fake.fail["launch"]
                    assert name in fake.compiled[-1] and all(g >= 1 for g in grid + block)
                    fake.clock += 5e-6 + 1e-9 * np.prod(grid) * np.prod(block)
                return kernel

        self.cuda = types.SimpleNamespace(
            Event=Event, Device=Device,
            get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3,  # ms, as CuPy gives it
            runtime=types.SimpleNamespace(getDeviceProperties=lambda i: {"name": b"Fake H100"},
                                          CUDARuntimeError=type("CUDARuntimeError",
                                                                (RuntimeError,), {})),
            compiler=types.SimpleNamespace(CompileException=self.CompileException),
            driver=types.SimpleNamespace(CUDADriverError=self.CUDADriverError),
            memory=types.SimpleNamespace(OutOfMemoryError=type("OutOfMemoryError",
                                                               (MemoryError,), {})))
        self.RawModule = RawModule
        self.ones = lambda n, dtype: np.ones(1, dtype=dtype)  # contents never read


@pytest.mark.parametrize("stage, error, why", [
    ("compile", _FakeCupy.CompileException(
        "kern.cu(3): warning: unused\nkern.cu(12): error: identifier \"x\" is undefined\n\n"
        "1 error detected in the compilation of \"kern.cu\"."),
     'kern.cu(12): error: identifier "x" is undefined'),
    ("launch", _FakeCupy.CUDADriverError("CUDA_ERROR_INVALID_VALUE: invalid argument"),
     "CUDA_ERROR_INVALID_VALUE: invalid argument"),
])
def test_a_kernel_cuda_refuses_is_one_line(tmp_path, monkeypatch, capsys, stage, error, why):
    # CudaRunner caught nothing: NVRTC's log or CuPy's launch error ended in a traceback
    fake = _FakeCupy()
    fake.fail[stage] = error
    monkeypatch.setitem(sys.modules, "cupy", fake)
    model = tmp_path / "m.yaml"
    model.write_text("output: f_wall_time\nexpression: p_a * f_thread_groups\n")
    code, _, err = run_cli(capsys, "calibrate", str(model), "--device", "cuda", "--tags",
                           "empty_kernel", "--tags", "ng0:16", "--out", str(tmp_path / "p.json"))
    assert code == 2 and err == ("gpuproj: error: CUDA could not run kernel empty at sizes "
                                 f"{{'ng0': 16, 'ng1': 1}} on device 0: {why}\n")


def test_case_studies_run_through_the_cuda_runner_at_gpu_sizes(tmp_path, monkeypatch):
    """scripts/case_studies.py --device cuda --sizes gpu, as calibrate_on_gpu.sh runs it, with
    CuPy stood in: loopy's CUDA code of every kernel, the calibration on its timings, the
    variants' evaluation and the results written."""
    from conftest import load_script

    fake = _FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    cs = load_script("case_studies")
    assert cs.main(["--device", "cuda", "--sizes", "gpu", "--only", "finite_diff",
                    "--repetitions", "3", "--rounds", "2", "--out-dir", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "calibrated_fake-h100.json").read_text())
    assert rec["device"] == "CUDA / Fake H100" and rec["sizes"] == "gpu"
    study = rec["studies"]["finite_diff"]
    # 20 measurement kernels and 2 variants x 3 sizes, each compiled once per round
    assert len(study["measurements"]) == 20 and len(fake.compiled) == 2 * (20 + 6)
    variants = study["evaluation"]["variants"]
    assert {v["name"] for v in variants} == {"tile16", "tile18"}
    assert [s["n"] for s in variants[0]["sizes"]] == [8960, 13440, 17920]  # the GPU sizes
    assert (tmp_path / "calibrated_fake-h100_finite_diff_params.json").exists()
    # two rounds: the one reported in full is one of them, and the fragment gives their range
    rounds = study["rounds"]
    assert len(rounds) == 2
    assert study["evaluation"]["geomean_rel_error"] in [r["geomean_rel_error"] for r in rounds]
    md = (tmp_path / "calibrated_fake-h100.md").read_text()
    assert "#### Calibrated cost models" in md and "over 2 rounds" in md


class _NoRunner:
    """A device on which no kernel may run: the error must come first."""

    device_name = "none"

    def time(self, mk):
        raise AssertionError(f"kernel {mk.name} ran")


@pytest.mark.parametrize("lines, where", [
    ("expression: 'p_a * f_thread_groups + p_b * f_size:m'\n",
     "field 'expression': f_size:m: kernel empty has no size parameter 'm' (it has ng0, ng1)"),
    ("features: {f_i: f_op_float32_madd / f_mem_access_global_float32}\n"
     "expression: 'p_a * f_thread_groups + p_b * f_i'\n",
     "field 'features.f_i': user feature f_i = f_op_float32_madd / f_mem_access_global_float32 "
     "is not a finite number for kernel empty at sizes {'ng0': 16, 'ng1': 1}: float division "
     "by zero"),
    # these two came from calibrate(), after every kernel was timed
    ("expression: 'p_a * f_thread_groups + p_b * f_thread_groups / f_op_float32_add'\n",
     "field 'expression': the expression divides by f_op_float32_add, which is 0 for kernel "
     "empty ng0=16 ng1=1"),
    ("expression: 'p_a * f_thread_groups + p_b * f_size:ng0 + p_c'\n",
     "field 'measurement': 2 measurements cannot determine 3 parameters; add measurement "
     "kernels"),
])
def test_a_model_that_fails_on_a_kernel_fails_before_any_runs(tmp_path, monkeypatch, capsys,
                                                               lines, where):
    # a ZeroDivisionError traceback, or an error naming no file, after every kernel was timed
    from conftest import run_cli

    from gpuproj.calibrated import timing as T

    monkeypatch.setattr(T, "make_runner", lambda device, **kw: _NoRunner())
    model = tmp_path / "m.yaml"
    model.write_text("output: f_wall_time\n" + lines
                     + "measurement: {tag_sets: [[empty_kernel, 'ng0:16,64']]}\n")
    code, out, err = run_cli(capsys, "calibrate", str(model))
    assert code == 2 and out == "" and err == f"gpuproj: error: {model}, {where}\n"


def test_tag_sets_are_checked_again_under_another_match_condition(tmp_path, monkeypatch,
                                                                   capsys):
    # under --match, an evaluation entry that selects nothing stopped --evaluate only after
    # every measurement kernel was timed and the parameters were written
    from gpuproj.calibrated import timing as T

    monkeypatch.setattr(T, "make_runner", lambda device, **kw: _NoRunner())
    model = tmp_path / "m.yaml"
    model.write_text("output: f_wall_time\nexpression: p_a * f_thread_groups\n"
                     "measurement: {tag_sets: [[empty_kernel, launch, microbenchmark]]}\n"
                     "evaluation: [{name: e1, tags: [application, 'n:256']}]\n")
    code, out, err = run_cli(capsys, "calibrate", str(model), "--match", "identical",
                             "--evaluate", "-o", str(tmp_path / "p.json"))
    assert code == 2 and out == "" and err == (
        f"gpuproj: error: {model}, field 'evaluation': entry 1: no generator matches tags "
        "['application'] (identical)\n")
    assert not (tmp_path / "p.json").exists()


def test_the_default_file_name_is_made_safe(tmp_path, monkeypatch, capsys):
    # name: "../x/a b" wrote calibrated-../x/a b-<device>.json, outside the working directory
    from conftest import run_cli

    from gpuproj.calibrated import timing as T
    from gpuproj.calibrated.modelfile import load_model_file

    work = tmp_path / "work"
    work.mkdir()
    model = tmp_path / "m.yaml"
    model.write_text((DATA / "calibrated-pocl-tiny-model.yaml").read_text()
                     .replace("name: tiny", "name: '../x/a b'"))
    spec = load_model_file(model)
    runner = SimulatedRunner(spec)
    runner.device_name = "Sim/ulated .. GPU"
    monkeypatch.setattr(T, "make_runner", lambda device, **kw: runner)
    monkeypatch.chdir(work)
    code, out, err = run_cli(capsys, "calibrate", str(model))
    assert code == 0, err
    assert out.rstrip().endswith("wrote calibrated-x-a-b-sim-ulated-gpu.json")
    assert [p.name for p in tmp_path.rglob("*.json")] == ["calibrated-x-a-b-sim-ulated-gpu.json"]
    assert (work / "calibrated-x-a-b-sim-ulated-gpu.json").is_file()


def test_bad_tags_on_the_command_line_name_the_option(tmp_path, monkeypatch, capsys):
    from conftest import run_cli

    from gpuproj.calibrated import timing as T

    monkeypatch.setattr(T, "make_runner", lambda device, **kw: _NoRunner())
    code, _, err = run_cli(capsys, "calibrate", str(DATA / "calibrated-pocl-tiny-model.yaml"),
                           "--tags", "empty_kernel", "--tags", "ng0:0")
    assert code == 2 and "--tags" in err and "ng0:0 is not a positive integer" in err


class _Queue:
    def finish(self):
        pass


class _Event:
    profile = types.SimpleNamespace(start=0, end=1000)

    def wait(self):
        pass


@pytest.mark.parametrize("warmup", [0, 2])
def test_warmup_runs_as_many_untimed_launches_as_asked(monkeypatch, warmup):
    # --warmup 0 made one untimed launch all the same, on both runners
    from gpuproj.calibrated.timing import CudaRunner, OpenCLRunner

    r = OpenCLRunner.__new__(OpenCLRunner)
    r.queue, r.warmup, r.repetitions = _Queue(), warmup, 3
    launches = []

    def ex(queue, **args):
        launches.append(args)
        return _Event(), None

    assert r._samples(ex, {"n": 1}) == pytest.approx([1e-6] * 3)
    assert len(launches) == warmup + 3
    fake = _FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    t = CudaRunner(warmup=warmup, repetitions=3).time(K.empty((16, 1), (2, 1)))
    assert len(t.samples_s) == 3
    assert fake.clock == pytest.approx((warmup + 3) * (5e-6 + 32e-9))  # every launch counted


def test_case_studies_replay_the_timings_of_a_gpu_run(tmp_path):
    """--replay calibrates and predicts again from the committed H100 run's timings, measuring
    nothing: it gives the committed fragment's numbers (themselves a replay), and says so."""
    from conftest import load_script

    cs = load_script("case_studies")
    committed = Path(__file__).resolve().parents[1] / "docs" / "results" / \
        "calibrated_nvidia-h100-80gb-hbm3.json"
    assert cs.main(["--replay", str(committed), "--out-dir", str(tmp_path)]) == 0
    got = json.loads((tmp_path / committed.name).read_text())
    want = json.loads(committed.read_text())
    assert got["replayed"] == want["replayed"] and got["sizes"] == "gpu"
    # each study on its own timings: the microbenchmarks they share were timed once per
    # study, and one runner for all gave every study finite differences' times of them
    for name in ("matmul", "dg", "finite_diff"):
        assert [m["median_s"] for m in got["studies"][name]["measurements"]] == \
            [m["median_s"] for m in want["studies"][name]["measurements"]]
        # the wall time is the measuring run's: the replay's own (no timing) took its place
        assert got["studies"][name]["seconds"] == want["studies"][name]["seconds"]
    g, w = got["studies"]["finite_diff"], want["studies"]["finite_diff"]
    assert g["evaluation"]["geomean_rel_error"] == pytest.approx(
        w["evaluation"]["geomean_rel_error"], rel=1e-6)
    assert g["calibration"]["params"] == pytest.approx(w["calibration"]["params"], rel=1e-6)
    md = (tmp_path / "calibrated_nvidia-h100-80gb-hbm3.md").read_text()
    assert "calibrated and predicted again" in md and "(`--replay`)" in md
    # a kernel the run did not measure stops the replay, naming it
    runner = cs.ReplayRunner(want, "finite_diff")
    mk = types.SimpleNamespace(name="finite_diff_16x16", sizes={"n": 64},
                               label=lambda: "finite_diff_16x16 n=64")
    with pytest.raises(SystemExit, match="finite_diff_16x16 n=64 was not measured"):
        runner.time(mk)


@needs_opencl
def test_cli_calibrate_takes_a_bundled_model_by_name(tmp_path, monkeypatch, capsys):
    # an installed wheel has no src/ to name the paper's model files by: `matmul` is the
    # bundled matmul.yaml where no file of that name is in the working directory (a folder of
    # that name does not count); the device error shows it went past the model file
    monkeypatch.chdir(tmp_path)
    (tmp_path / "matmul").mkdir()
    code, _, err = run_cli(capsys, "calibrate", "matmul", "--device", "no-such-device")
    assert code == 2 and "no OpenCL device matches 'no-such-device'" in err, err


def test_cli_calibrate_names_the_bundled_models_for_an_unknown_name(tmp_path, monkeypatch,
                                                                     capsys):
    # a file of the name wins over a bundled model: an empty `matmul` is read, and refused
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "calibrate", "matrix", "--device", "pthread")
    assert code == 2
    assert "no file 'matrix', and no bundled model 'matrix' (bundled: dg, finite_diff, " \
           "matmul)" in err
    (tmp_path / "matmul").write_text("")
    code, _, err = run_cli(capsys, "calibrate", "matmul", "--device", "pthread")
    assert code == 2 and "matmul" in err and "bundled" not in err, err
