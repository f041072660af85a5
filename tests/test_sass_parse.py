"""Parsing SASS listings, classifying opcodes and building control-flow graphs (no NVIDIA tools
needed: fixtures in tests/data/sass were produced by scripts/make_sass_fixtures.py)."""

import warnings

import pytest
from sass_helpers import ARCHS, JSON_ARCHS, listing

from gpuproj.errors import InputError
from gpuproj.sass import (
    build_cfg,
    canonical_counts,
    classify,
    opcodes,
    parse_file,
    parse_ncu_source_csv,
    parse_text,
    static_counts,
)

KERNELS = {"div_f32", "div_f64", "sqrt_f32", "exp_f32", "log_f32", "sin_f32", "fma_loop_f32",
           "fma_loop_f64", "hfma2_f16", "smem_reduce_f32", "atomic_dot_f32"}


@pytest.mark.parametrize("opcode,operands,column,flops", [
    ("FFMA", "R0,R1,R2,R3", "fp32.fma", 2), ("FFMA.RM", "", "fp32.fma", 2),
    ("FADD.FTZ", "", "fp32.add", 1), ("FMUL", "", "fp32.mul", 1),
    ("DFMA", "", "fp64.fma", 2), ("DADD", "", "fp64.add", 1), ("DMUL.RP", "", "fp64.mul", 1),
    ("HFMA2", "R9,R2,R5,R0", "fp16.fma", 4), ("HADD2", "", "fp16.add", 2),
    ("HFMA2.MMA", "R3,-RZ,RZ,0,2.38e-07", "move", 0), ("FFMA2", "", "fp32.fma", 4),
    ("HADD2.F32", "R0,-RZ,R2.H0_H0", "convert", 0),
    ("HADD2.F32", "R0,R2.H0_H0,-RZ.H0_H0", "convert", 0),
    ("HADD2.F32", "R0,R1.H0_H0,R2.H0_H0", "fp16.add", 2),
    ("MUFU.RCP", "", "fp32.special", 1), ("MUFU.EX2", "", "fp32.special", 1),
    ("MUFU.RCP64H", "", "fp64.special", 0), ("FSETP.GE.AND", "", "fp32.other", 0),
    ("F2I.NTZ", "", "convert", 0), ("IMAD.WIDE", "", "int", 0), ("LDG.E.64", "", "ld.global", 0),
    ("STS", "", "st.shared", 0), ("LDL", "", "ld.local", 0), ("ULDC.64", "", "ld.const", 0),
    ("ATOMS.ADD", "", "atomic.shared", 0), ("RED.E.ADD.F32.FTZ.RN", "", "atomic.global", 0),
    ("BAR.SYNC.DEFER_BLOCKING", "", "barrier", 0), ("BRA", "", "control", 0),
    ("CALL.REL.NOINC", "", "call", 0), ("HMMA.16816.F32", "", "tensor", 0),
])
def test_classify(opcode, operands, column, flops):
    c = classify(opcode, operands)
    assert (c.column, c.flops) == (column, flops)


@pytest.mark.parametrize("arch", [75, 80, 90])
def test_half_to_float_is_a_conversion_not_fp16_work(arch):
    """``__half2float`` compiles to ``HADD2.F32 R0, -RZ, R2.H0_H0`` (sm_75: ``-RZ.H0_H0``
    last), an add of zero into FP32 counted as 2 FP16 adds, 2 FLOPs, where the ``HFMA2 -RZ, RZ``
    constant move counts none. The kernel's FP work is its FMUL by 3."""
    f = parse_file(listing(arch, source="idiom_kernels"))["half_to_float"]
    assert [i.op.column for i in f.instructions if i.base == "HADD2"] == ["convert"]
    got = static_counts(f).canonical()
    assert {k: v for k, v in got.items() if v} == {"fp32_mul_thread_inst": 1, "fp32_flops": 1,
                                                    "flops": 1}


def test_unknown_opcode_warns_once_and_counts_as_other():
    opcodes._warned.discard("ZZNEWOP")
    with pytest.warns(UserWarning, match="ZZNEWOP"):
        assert classify("ZZNEWOP.X").category == "other"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert classify("ZZNEWOP.Y", "R1").column == "other"   # no second warning


def test_canonical_counts_packed_and_special():
    c = canonical_counts([(classify("HFMA2", "R0,R1,R2,R3"), 3), (classify("MUFU.RSQ"), 2),
                          (classify("DFMA"), 5)])
    assert c["fp16_fma_thread_inst"] == 6 and c["fp16_flops"] == 12
    assert c["fp32_special_thread_inst"] == 2 and c["fp32_flops"] == 2
    assert c["fp64_flops"] == 10 and c["flops"] == 24


@pytest.mark.parametrize("arch", ARCHS)
def test_text_fixture_has_all_kernels(arch):
    p = parse_file(listing(arch))
    assert p.arch == arch and p.fmt == "nvdisasm-text"
    assert set(p.functions) == KERNELS


@pytest.mark.parametrize("arch", JSON_ARCHS)
def test_json_and_text_agree(arch):
    t, j = parse_file(listing(arch)), parse_file(listing(arch, "json"))
    assert j.fmt == "nvdisasm-json" and j.arch == arch
    for name in KERNELS:
        a = [(i.offset, i.predicate, i.opcode, i.target, i.call_offset)
             for i in t[name].instructions]
        b = [(i.offset, i.predicate, i.opcode, i.target, i.call_offset)
             for i in j[name].instructions]
        assert a == b, name


def test_cuobjdump_and_nvdisasm_agree():
    c, n = parse_file(listing(75, tool="cuobjdump")), parse_file(listing(75))
    assert c.fmt == "cuobjdump-text" and c.arch == 75
    for name in KERNELS:
        a = [(i.offset, i.opcode, i.target, i.call_offset) for i in c[name].instructions]
        b = [(i.offset, i.opcode, i.target, i.call_offset) for i in n[name].instructions]
        assert a == b, name


def test_an_application_listing_keeps_the_sections_of_one_architecture(tmp_path):
    # `cuobjdump -sass app` of an nvcc-built executable: an empty section comes before the one
    # with the code (the listing read as having no SASS), and a build for two architectures
    # has a section each (the first was kept without a word)
    body = listing(75, tool="cuobjdump").read_text()
    empty = ("\nFatbin elf code:\n================\narch = sm_75\ncode version = [1,8]\n"
             "host = linux\ncompile_size = 64bit\n\n\tcode for sm_75\n\t.target\tsm_75\n\n")
    app = tmp_path / "app.sass"
    app.write_text(empty + body)
    got = parse_file(app)
    assert got.arch == 75 and set(got.functions) == set(parse_file(listing(75)).functions)
    two = tmp_path / "two.sass"
    two.write_text(empty + body + body.replace("sm_75", "sm_80").replace("SM75", "SM80"))
    with pytest.raises(InputError, match="holds SASS for sm_75, sm_80; pass --arch"):
        parse_file(two)
    assert parse_file(two, 80).arch == 80 and parse_file(two, 75).arch == 75
    with pytest.raises(InputError, match="listing is for sm_75, sm_80, not sm_90"):
        parse_file(two, 90)


def test_filler_dropped_and_predicates_kept():
    text = """
    .target sm_80
    //--------------------- .text.k --------------------------
    .section .text.k,"ax",@progbits
    k:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/              @!PT LDS RZ, [RZ] ;
        /*0020*/               @P0 FFMA R2, R3, R4, R5 ;
        /*0030*/                   EXIT ;
    .L_x_0:
        /*0040*/                   BRA `(.L_x_0) ;
    """
    f = parse_text(text)["k"]
    assert [i.offset for i in f.instructions] == [0x0, 0x20, 0x30, 0x40]
    assert f.instructions[1].predicated and f.instructions[1].predicate == "@P0"


def test_cfg_div_f32_regions_and_blocks():
    f = parse_file(listing(80))["div_f32"]
    g = build_cfg(f)
    assert set(g.regions) == {"kernel", "__cuda_sm3x_div_rn_noftz_f32_slowpath"}
    assert g.regions["__cuda_sm3x_div_rn_noftz_f32_slowpath"] == 0x1C0
    entry = g.blocks[0]
    assert entry.instructions[-1].text() == "@P0 EXIT" and entry.succs == [0x60]
    call = [b for b in g.blocks.values() if b.calls]
    assert len(call) == 1 and call[0].calls == [0x1C0]
    # the trailing `BRA self` + NOP padding belongs to no region
    assert any(b.region is None for b in g.blocks.values())


def test_cfg_loop_and_static_counts():
    f = parse_file(listing(90))["fma_loop_f32"]
    g = build_cfg(f)
    assert list(g.loops) == [0x170] and g.loops[0x170] == {0x170}
    c = static_counts(f, trips=10)
    can = c.canonical()
    # 4 FFMA + 1 FMUL per iteration, 3 + 3 FADD outside the loop
    assert can["fp32_fma_thread_inst"] == 40 and can["fp32_mul_thread_inst"] == 10
    assert can["fp32_add_thread_inst"] == 6
    assert any("every loop trip count set to 10" in n for n in c.notes)
    c1 = static_counts(f)
    assert c1.canonical()["fp32_fma_thread_inst"] == 4
    assert any("trip count assumed 1" in n for n in c1.notes)


def test_uniform_predicate_branch_is_conditional():
    f = parse_file(listing(100))["fma_loop_f32"]
    g = build_cfg(f)
    loop = [b for b in g.blocks.values() if b.loops]
    assert loop and loop[0].instructions[-1].opcode == "BRA.U"
    assert len(loop[0].succs) == 2   # back to itself and out


@pytest.mark.parametrize("arch, diverged", [(75, 0), (80, 0), (90, 5)])
def test_code_after_a_convergence_branch_is_reached_and_counted(arch, diverged):
    """``BRA.DIV`` (``BRA.DIV target`` on sm_75, ``BRA.DIV UR4, target`` from sm_80 on) is
    taken only where the warp has diverged. Read as unconditional, the converged warp's SHFL
    after it lay in no region and counted 0. The diverged path's shuffles are in a
    subroutine (entered on 0 of its calls) before sm_90, inline from sm_90 on."""
    f = parse_file(listing(arch, source="idiom_kernels"))["shfl_sum"]
    g = build_cfg(f)
    div = [b for b in g.blocks.values() if b.instructions[-1].opcode == "BRA.DIV"]
    assert div and all(len(b.succs) == 2 for b in div)
    # nothing but the trailing `BRA self` + NOP padding outside the kernel and its subroutine
    assert {b.instructions[-1].base for b in g.blocks.values() if b.region is None} == {
        "BRA", "NOP"}
    c = static_counts(f)
    assert sum(c.per_insn[i.offset] for i in f.instructions if i.base == "SHFL") == 5 + diverged


@pytest.mark.parametrize("arch", [80, 90])
def test_json_on_its_own_finds_the_subroutine_after_a_convergence_branch(arch):
    # the converged path after `BRA.DIV`, reached by no branch, was taken for the entry of
    # the shuffle subroutine that the JSON names no offset of (sm_80: 0x120, not 0x530)
    t = parse_file(listing(arch, source="idiom_kernels"))["shfl_sum"]
    j = parse_file(listing(arch, "json", source="idiom_kernels"))["shfl_sum"]
    assert j.symbols == t.symbols
    assert ([(i.offset, i.target, i.call_offset) for i in j.instructions]
            == [(i.offset, i.target, i.call_offset) for i in t.instructions])


def test_slowpath_static_fraction():
    f = parse_file(listing(80))["sqrt_f32"]
    c0 = static_counts(f).canonical()
    c1 = static_counts(f, slowpath_calls=1.0).canonical()
    assert c0["fp32_flops"] == 7          # MUFU.RSQ + 2 FMUL + 2 FFMA
    # the slow path __cuda_sm20_sqrt_rn_f32_slowpath (0x1b0-0x310), its predicated
    # instructions counted as executed: FADD 0x220 0x2a0, FFMA 0x250 0x2b0 0x2c0, MUFU.RSQ
    # 0x260, FMUL 0x270 0x280 0x2d0 -> 2 + 3 x 2 + 1 + 3 = 12 FLOP per call entering it
    assert c1["fp32_flops"] == 7 + 12 == 19
    assert (c1["fp32_fma_thread_inst"], c1["fp32_mul_thread_inst"], c1["fp32_add_thread_inst"],
            c1["fp32_special_thread_inst"]) == (2 + 3, 2 + 3, 2, 1 + 1)
    half = static_counts(f, slowpath_calls=0.5).canonical()
    assert half["fp32_flops"] == 7 + 0.5 * 12 == 13
    assert half["fp32_fma_thread_inst"] == 2 + 0.5 * 3


NCU = '''"Kernel Name","k"
"Address","Source","Instructions Executed","Thread Instructions Executed",\
"Predicated-On Thread Instructions Executed"
"0x7f0000000100","MOV R1, c[0x0][0x28]","2,048","65,536","65,536"
"0x7f0000000110","@P0 FFMA R2, R3, R4, R5","2,048","65,536","16,384"
"0x7f0000000120","@!P0 BRA 0x7f0000000140","2,048","65,536","65,536"
"0x7f0000000130","MUFU.RCP R2, R2","1,024","32,768","32,768"
"0x7f0000000140","EXIT","2,048","65,536","65,536"
'''


def test_ncu_source_csv():
    p = parse_ncu_source_csv(NCU, "mem.csv", arch=70)
    f = p["k"]
    assert [i.offset for i in f.instructions] == [0, 0x10, 0x20, 0x30, 0x40]
    assert f.instructions[2].target == 0x40
    assert f.counts[0x10] == (2048.0, 65536.0, 16384.0)
    from gpuproj.sass import measured_counts
    c = measured_counts(f).canonical()
    assert c["fp32_fma_thread_inst"] == 16384 and c["fp32_special_thread_inst"] == 32768


def test_bad_inputs(tmp_path):
    with pytest.raises(InputError, match="no SASS instructions"):
        parse_text("hello")
    bad = tmp_path / "x.csv"
    bad.write_text('"Kernel Name","k"\n"Address","Source"\n"0x0","EXIT"\n')
    with pytest.raises(InputError, match="Instructions Executed"):
        parse_file(bad)
    bad.write_text("just text\n")
    with pytest.raises(InputError, match="not a SASS listing"):
        parse_file(bad)
    bad.write_text('"Kernel Name","k"\n"Address","Source","Instructions Executed"\n'
                   '"zz","EXIT","1"\n')
    with pytest.raises(InputError, match="row 3"):
        parse_file(bad)


def test_offsets_out_of_order_name_the_line(tmp_path):
    # a line moved or doubled by hand left an empty basic block: an IndexError in build_cfg
    lines = listing(90).read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if "/*0010*/" in ln)
    with pytest.raises(InputError, match="instruction at 0x0010 after one at 0x0010") as e:
        parse_text("\n".join(lines[:k + 1] + [lines[k]] + lines[k + 1:]))
    assert e.value.row == k + 2
    bad = tmp_path / "x.csv"
    bad.write_text('"Kernel Name","k"\n"Address","Source","Instructions Executed"\n'
                   '"0x10","FADD R0, R1, R2","1"\n"0x0","EXIT","1"\n')
    with pytest.raises(InputError, match="instruction at 0x0000 after one at 0x0010") as e:
        parse_file(bad)
    assert e.value.row == 4


def test_a_listing_cut_short_is_said_and_its_missing_kernels_too():
    # the first 3000 bytes of the sm_90 listing: two kernels, the second cut after a few
    # instructions; compared with the whole sm_80 listing, nine kernels are in one input only
    import warnings

    from gpuproj.errors import InputWarning
    from gpuproj.sass.report import diff_programs

    cut = listing(90).read_text()[:3000]
    with pytest.warns(InputWarning, match=r"smem_reduce_f32 ends at 0x[0-9a-f]+ without the "
                                          "branch to itself .* looks cut short"):
        short = parse_text(cut, "cut.sass")
    assert list(short.functions) == ["atomic_dot_f32", "smem_reduce_f32"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a whole listing ends every kernel with it
        whole = parse_file(listing(80))
    with pytest.warns(InputWarning, match=r"9 kernel\(s\) not in every input, left out: "
                                          r"hfma2_f16 \(not in sm_90\)"):
        got = diff_programs({80: whole, 90: short})
    assert list(got) == ["atomic_dot_f32", "smem_reduce_f32"]


def test_a_dual_issue_pair_of_maxwell_and_pascal_is_read_whole():
    # `cuobjdump -sass` (CUDA 12 or older) for sm_5x/sm_6x closes a dual-issue pair with '}'
    # and no ';': its second instruction, here the branch, was dropped without a word
    text = """
\tcode for sm_61
\t\tFunction : k
        /*0008*/                   MOV R1, c[0x0][0x20] ;                 /* 0x4c98078000870001 */
        /*0010*/                   ISETP.NE.AND P0, PT, RZ, c[0x0][0x158], PT ;
        /*0018*/         {         IADD R4, R4, c[0x0][0x150] ;     /* 0x4c10000005470404 */
        /*0028*/              @!P0 BRA 0x38         }
                                                                  /* 0x001ff400fe0007fb */
        /*0030*/                   FADD R4, R4, R4 ;
        /*0038*/                   EXIT ;
        /*0040*/                   BRA 0x40 ;
"""
    f = parse_text(text)["k"]
    assert [(i.offset, i.text()) for i in f.instructions[2:4]] == [
        (0x18, "IADD R4, R4, c[0x0][0x150]"), (0x28, "@!P0 BRA 0x38")]
    assert f.instructions[3].target == 0x38
