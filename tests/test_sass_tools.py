"""Getting SASS with NVIDIA's tools. The integration tests compile and disassemble for real and
are skipped where nvcc or nvdisasm is absent."""

import json
import shutil

import pytest
from sass_helpers import DATA, listing

import gpuproj.sass as S
from gpuproj import nvidia_tools
from gpuproj.errors import InputError, MissingToolError
from gpuproj.sass import tools


def _have(*names):
    try:
        for n in names:
            tools.find_tool(n)
        return True
    except MissingToolError:
        return False


needs_tools = pytest.mark.skipif(not _have("nvcc", "nvdisasm"),
                                 reason="nvcc and nvdisasm not installed")


def test_parse_arch():
    assert tools.parse_arch("sm_80") == 80 and tools.parse_arch("9.0") == 90
    assert tools.parse_arch("sm_90a") == 90 and tools.parse_arch(" 120 ") == 120
    with pytest.raises(InputError):
        tools.parse_arch("volta")


def test_arch_name_keeps_the_architecture_and_family_suffix():
    # sm_90a was named sm_90: it is another target (wgmma, setmaxnreg), with code of its own
    assert [tools.arch_name(a) for a in ("sm_90a", "90A", "9.0a", "compute_100f", 80, "8.6")] \
        == ["sm_90a", "sm_90a", "sm_90a", "sm_100f", "sm_80", "sm_86"]
    with pytest.raises(InputError, match="'sm_90x' is not a GPU architecture"):
        tools.arch_name("sm_90x")


def test_missing_tool_says_what_to_install(monkeypatch):
    monkeypatch.setattr(nvidia_tools.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(nvidia_tools.shutil, "which", lambda name: None)
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    monkeypatch.setattr(nvidia_tools.Path, "is_file", lambda self: False)
    with pytest.raises(MissingToolError, match=r"gpuproj\[sass\].*nvidia-cuda-nvdisasm"):
        tools.find_tool("nvdisasm")
    with pytest.raises(MissingToolError, match="CUDA toolkit"):
        tools.find_tool("nvcc")


def test_cu_needs_arch():
    with pytest.raises(InputError, match="needs an architecture"):
        S.load_sass(DATA / "src" / "fixture_kernels.cu")


def test_listing_arch_mismatch():
    with pytest.raises(InputError, match="not sm_90"):
        S.load_sass(listing(80), "sm_90")
    assert S.load_sass(listing(80), "sm_80").arch == 80


@needs_tools
def test_unsupported_arch_is_a_clear_error():
    with pytest.raises(InputError, match="cannot compile for sm_70.*cuobjdump -sass"):
        S.load_sass(DATA / "src" / "fixture_kernels.cu", "sm_70")


@needs_tools
@pytest.mark.slow
def test_compile_and_disassemble_matches_fixture(tmp_path):
    """nvcc + nvdisasm -json + the cubin's ELF symbols give the committed listing."""
    src = tmp_path / "k.cu"
    shutil.copy(DATA / "src" / "fixture_kernels.cu", src)
    p = S.load_sass(src, "sm_80")
    assert p.arch == 80 and p.fmt == "nvdisasm-json"
    ref = S.parse_file(listing(80))
    if tools.tool_version("nvcc") not in (DATA / "MANIFEST.txt").read_text():
        pytest.skip("another nvcc than the one that made the fixtures")
    for name, f in ref.functions.items():
        got = [(i.offset, i.opcode, i.target, i.call_offset) for i in p[name].instructions]
        want = [(i.offset, i.opcode, i.target, i.call_offset) for i in f.instructions]
        assert got == want, name
    # the internal subroutine came from the ELF symbol table
    assert "$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath" in p["sqrt_f32"].symbols


def _fatbin(tmp_path, *archs):
    """The fixture kernels compiled into a fatbin with a cubin for each of ``archs`` ("90a")."""
    import subprocess

    fatbin = tmp_path / "k.fatbin"
    codes = [x for a in archs for x in ("-gencode", f"arch=compute_{a},code=sm_{a}")]
    subprocess.run([tools.find_tool("nvcc"), "-fatbin", *codes, "-o", str(fatbin),
                    str(DATA / "src" / "fixture_kernels.cu")], check=True)
    return fatbin


@needs_tools
@pytest.mark.slow
def test_fatbin_extraction(tmp_path):
    if not _have("cuobjdump"):
        pytest.skip("cuobjdump not installed")
    fatbin = _fatbin(tmp_path, "80", "90")
    with pytest.raises(InputError, match="pass --arch"):
        S.load_sass(fatbin)
    p = S.load_sass(fatbin, "sm_90")
    assert p.arch == 90 and "sin_f32" in p.functions


@needs_tools
@pytest.mark.slow
def test_executable_with_a_cubin_without_kernels(tmp_path):
    """nvcc links one cubin without any kernel next to the kernels' own, per architecture, into
    an executable: it is skipped, not 'no functions in nvdisasm JSON'."""
    if not _have("cuobjdump"):
        pytest.skip("cuobjdump not installed")
    import subprocess

    src = tmp_path / "kmain.cu"
    src.write_text((DATA / "src" / "fixture_kernels.cu").read_text() + "int main(){return 0;}\n")
    exe = tmp_path / "kexe"
    subprocess.run([tools.find_tool("nvcc"), "-o", str(exe), str(src),
                    "-gencode", "arch=compute_80,code=sm_80",
                    "-gencode", "arch=compute_90,code=sm_90"], check=True)
    progs = S.load_sass_archs(exe, "sm_80,sm_90")
    assert [p.arch for p in progs.values()] == [80, 90]
    assert all("div_f32" in p.functions for p in progs.values())
    cubins = tools.extract_cubins(exe, "sm_80")
    assert sorted(tools.has_code(c.read_bytes()) for _, c in cubins) == [False, True]


def test_a_tool_named_in_the_environment_must_exist(monkeypatch, tmp_path):
    # GPUPROJ_NVCC pointing at nothing quietly ran the nvcc on PATH instead
    monkeypatch.setenv("GPUPROJ_NVCC", str(tmp_path / "nvcc"))
    with pytest.raises(MissingToolError, match=r"GPUPROJ_NVCC=.*nvcc is not an executable"):
        tools.find_tool("nvcc")


def test_architectures_named_twice_are_an_error():
    with pytest.raises(InputError, match="sm_90 named twice"):
        S.load_sass_archs(DATA / "src" / "fixture_kernels.cu", "sm_90,90")
    with pytest.raises(InputError, match="^sm_90a named twice"):
        S.load_sass_archs(DATA / "src" / "fixture_kernels.cu", "sm_90a,9.0a")


@needs_tools
def test_an_architecture_specific_target_keeps_its_name(tmp_path, capsys):
    """`sass diff K.cu --arch sm_90a,sm_90` was refused as sm_90 named twice, and sm_90a,sm_100a
    compiled for both but headed its columns sm_90 and sm_100."""
    from conftest import run_cli

    src = tmp_path / "k.cu"
    shutil.copy(DATA / "src" / "fixture_kernels.cu", src)
    progs = S.load_sass_archs(src, "sm_90a,sm_90")
    assert list(progs) == ["sm_90a", "sm_90"] and {p.arch for p in progs.values()} == {90}
    code, out, err = run_cli(capsys, "sass", "diff", str(src), "--arch", "sm_90a,sm_100a",
                             "--kernel", "div_f32", "--json")
    assert code == 0, err
    d = json.loads(out)["div_f32"]
    assert d["archs"] == ["sm_90a", "sm_100a"] and d["instructions"].keys() == {"sm_90a",
                                                                               "sm_100a"}
    code, out, err = run_cli(capsys, "sass", "diff", str(src), "--arch", "sm_90a,sm_90",
                             "--kernel", "div_f32")
    assert code == 0, err
    assert "sm_90a" in out.splitlines()[2]  # the table's header


@needs_tools
@pytest.mark.slow
def test_a_binary_with_sm_90_and_sm_90a_cubins_tells_them_apart(tmp_path):
    # the ELF headers of the two are alike: both were read as sm_90, their kernels merged
    if not _have("cuobjdump"):
        pytest.skip("cuobjdump not installed")
    fatbin = _fatbin(tmp_path, "90", "90a")
    with pytest.raises(InputError, match="holds cubins for sm_90, sm_90a; pass --arch"):
        S.load_sass(fatbin)
    for arch in ("sm_90", "sm_90a"):
        assert [a for a, _ in tools.extract_cubins(fatbin, arch)] == [arch]
        assert "sin_f32" in S.load_sass(fatbin, arch).functions
    with pytest.raises(InputError, match="no cubin for sm_100a embedded"):
        tools.extract_cubins(fatbin, "sm_100a")


@needs_tools
@pytest.mark.parametrize("source,says", [
    # nvcc prints each error with the source line and a caret under it: the last lines of its
    # output were carets and the error count, the first error itself was cut off
    ("__global__ void k(float* a){ a[0] = undefined_thing + ; }\n",
     r'error: identifier "undefined_thing" is undefined \| .*error: expected an expression'),
    # a file without a kernel named the deleted temporary cubin
    ("int f(int x) { return x + 1; }\n", r"-empty\.cu: compiles to no kernel"),
])
def test_a_source_that_gives_no_sass_says_why(tmp_path, source, says):
    # the name starts with '-': it reached nvcc as an option
    src = tmp_path / "-empty.cu"
    src.write_text(source)
    with pytest.raises(InputError, match=says):
        S.load_sass(src, "sm_80")


@needs_tools
def test_an_architecture_specific_target_compiles_for_its_features(tmp_path):
    # sm_90a was compiled as sm_90, which refuses the sm_90a-only instruction
    src = tmp_path / "a.cu"
    src.write_text('__global__ void k(float* a) { asm volatile("setmaxnreg.inc.sync.aligned.u32 '
                   '232;"); a[threadIdx.x] *= 2.f; }\n')
    assert S.load_sass(src, "sm_90a").arch == 90
    with pytest.raises(InputError, match="nvcc for sm_90 failed: .*setmaxnreg"):
        S.load_sass(src, "sm_90")


def test_cubins_are_picked_by_their_file_names_without_the_tools(tmp_path, monkeypatch):
    """cuobjdump names an sm_90a cubin k.2.sm_90a.cubin; its ELF header is an sm_90 one. A
    binary built for sm_90a alone serves the catalog's sm_90 GPUs (predict --sass asks for the
    GPU's isa, sm_90: it failed with "no cubin for sm_90"), and a binary without the
    architecture says what it holds. cuobjdump stood in for: this runs without a toolkit."""
    from pathlib import Path

    def held(*names):
        def run(args, what, path=None, cwd=None):
            for n in names:  # not ELF: the file name is all that tells the architecture
                (Path(cwd) / n).write_bytes(b"not an ELF file")
            return ""
        monkeypatch.setattr(tools, "_run", run)

    monkeypatch.setattr(tools, "find_tool", lambda name: name)
    held("app.1.sm_90a.cubin")
    assert [a for a, _ in tools.extract_cubins("app", "sm_90")] == ["sm_90a"]
    assert [a for a, _ in tools.extract_cubins("app", "sm_90a")] == ["sm_90a"]
    held("app.1.sm_90.cubin", "app.2.sm_90a.cubin")
    assert [a for a, _ in tools.extract_cubins("app", "sm_90")] == ["sm_90"]
    assert [a for a, _ in tools.extract_cubins("app")] == ["sm_90", "sm_90a"]
    with pytest.raises(InputError, match=r"no cubin for sm_80 embedded \(it holds sm_90, "
                                         r"sm_90a\)"):
        tools.extract_cubins("app", "sm_80")
