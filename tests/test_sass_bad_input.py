"""Damaged SASS inputs give one line naming the file and the entry or row (exit 2, no
traceback), and a --sass that holds none of the profile's kernels is an error, not a
projection that silently ignored it."""

import json

import pytest
from conftest import run_cli
from sass_handcount import KERNELS
from sass_helpers import listing, ncu_source_csv

from gpuproj.errors import InputError
from gpuproj.sass import parse_file

SM90_JSON = listing(90, "json")


def _damaged_json(tmp_path, damage):
    d = json.loads(SM90_JSON.read_text())
    damage(d)
    p = tmp_path / "damaged.json"
    p.write_text(json.dumps(d))
    return p


def _set_insn(k, key, value):
    def damage(d):
        d[1][0]["sass-instructions"][k][key] = value
    return damage


def _set_fn(n, key, value):
    def damage(d):
        d[1][n][key] = value
    return damage


def _replace_fn(n, value):
    def damage(d):
        d[1][n] = value
    return damage


def _set_insn_entry(k, value):
    def damage(d):
        d[1][0]["sass-instructions"][k] = value
    return damage


def _set_major(d):
    d[0]["SM"]["version"]["major"] = "x"


# (damage, what the message says besides the file)
JSON_DAMAGE = {
    "null instruction": (_set_insn_entry(2, None),
                         r"functions\[0\] \(atomic_dot_f32\), sass-instructions\[2\] is null"),
    "function a string": (_replace_fn(1, "abc"), r'functions\[1\] is "abc", not a function'),
    "function a number": (_replace_fn(1, 5), r"functions\[1\] is 5, not a function"),
    "function a list": (_replace_fn(1, [1]), r"functions\[1\] is a list, not a function"),
    "opcode a number": (_set_insn(2, "opcode", 7),
                        r"field 'opcode': functions\[0\] \(atomic_dot_f32\), "
                        r"sass-instructions\[2\]: 7 is not text"),
    "opcode empty": (_set_insn(2, "opcode", ""), r"sass-instructions\[2\]: no opcode"),
    "major not a number": (_set_major, r"field 'SM.version.major': header: \"x\" is not an "
                                       "integer"),
    "start not a number": (_set_fn(0, "start", "x"),
                           r"field 'start': functions\[0\] \(atomic_dot_f32\): \"x\" is not an "
                           "integer"),
    "name a number": (_set_fn(0, "function-name", 12),
                      r"field 'function-name': functions\[0\]: 12 is not a function name"),
    "no name": (_set_fn(0, "function-name", None), r"functions\[0\]: null .* not a function name"),
    # the later one of a name won without a word
    "a name twice": (lambda d: d[1][1].update({"function-name": d[1][0]["function-name"]}),
                     r"field 'function-name': functions\[1\] \(atomic_dot_f32\): a second "
                     "function of this name"),
}


@pytest.mark.parametrize("case", list(JSON_DAMAGE))
def test_damaged_nvdisasm_json_names_the_file_and_entry(tmp_path, case):
    damage, said = JSON_DAMAGE[case]
    p = _damaged_json(tmp_path, damage)
    with pytest.raises(InputError, match=said) as e:
        parse_file(p)
    assert e.value.path == str(p) and str(e.value).startswith(str(p))


@pytest.mark.parametrize("case", ["null instruction", "function a string", "opcode a number",
                                  "major not a number", "name a number"])
def test_sass_diff_of_damaged_json_is_one_line_exit_2(tmp_path, capsys, case):
    p = _damaged_json(tmp_path, JSON_DAMAGE[case][0])
    code, _, err = run_cli(capsys, "sass", "diff", str(listing(80)), str(p))
    assert code == 2
    assert err.startswith(f"gpuproj: error: {p}") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def _profile(tmp_path, kernels):
    p = tmp_path / "profile.csv"
    p.write_text("kernel,config,gpu,time_s,dram_bytes,fp32_flops\n" + "".join(
        f"{k},n=1,h100-sxm5-80gb,1e-4,1e6,1e6\n" for k in kernels))
    return p


def test_predict_with_damaged_json_is_one_line_exit_2(tmp_path, capsys):
    p = _damaged_json(tmp_path, JSON_DAMAGE["null instruction"][0])
    code, _, err = run_cli(capsys, "predict", str(_profile(tmp_path, ["div_f32"])), "-t", "h200",
                           "--sass", str(p))
    assert code == 2 and err.startswith(f"gpuproj: error: {p}")
    assert len(err.strip().splitlines()) == 1


def _cut_ncu_page(tmp_path, cut_to):
    """The sm_90 source page with the row of address 0x7f3a2c000120 cut to ``cut_to``; the
    row number (1-based) of that row."""
    text = ncu_source_csv(parse_file(listing(90)), KERNELS, 256 * 1024, 100)
    lines = text.splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith('"0x7f3a2c000120",'))
    p = tmp_path / "page.csv"
    p.write_text("\n".join(lines[:k] + [cut_to] + lines[k + 1:]) + "\n")
    return p, k + 1


@pytest.mark.parametrize("cut_to, fields", [('"0x7f3a2c000120",', 2), ('"0x7f3a2c000120"', 1)])
def test_ncu_source_page_row_cut_short_is_an_error(tmp_path, capsys, cut_to, fields):
    # cut after the comma: an IndexError; cut to the address alone: the instruction was lost
    p, row = _cut_ncu_page(tmp_path, cut_to)
    with pytest.raises(InputError, match=f"{fields} field\\(s\\) where the header has 7") as e:
        parse_file(p, 90)
    assert (e.value.path, e.value.row) == (str(p), row)
    code, _, err = run_cli(capsys, "sass", "diff", str(p), str(listing(100)),
                           "--arch", "sm_90,sm_100")
    assert code == 2 and err.startswith(f"gpuproj: error: {p}, row {row}: ")
    assert len(err.strip().splitlines()) == 1


def test_ncu_source_page_whole_still_reads(tmp_path):
    text = ncu_source_csv(parse_file(listing(90)), KERNELS, 256 * 1024, 100)
    p = tmp_path / "page.csv"
    p.write_text(text + "\n")   # a trailing blank line is no row
    whole = parse_file(listing(90))
    got = parse_file(p, 90)
    assert sorted(got.functions) == sorted(KERNELS)
    assert all(len(got[k].instructions) == len(whole[k].instructions) for k in KERNELS)


def test_predict_sass_matching_no_kernel_is_an_error(tmp_path, capsys):
    # it projected as without --sass, exit 0, saying so only among the assumptions
    profile = _profile(tmp_path, ["not_in_the_listing", "nor_this"])
    code, out, err = run_cli(capsys, "predict", str(profile), "-t", "h200",
                             "--sass", str(listing(90)))
    assert code == 2 and out == ""
    assert err.startswith(f"gpuproj: error: {listing(90)}: no kernel of the profile is in "
                          "this source's code, so nothing would be compared")
    assert "atomic_dot_f32" in err and "not_in_the_listing" in err
    assert len(err.strip().splitlines()) == 1


def test_predict_sass_matching_some_kernels_notes_the_others(tmp_path, capsys):
    profile = _profile(tmp_path, ["div_f32", "not_in_the_listing"])
    code, out, err = run_cli(capsys, "predict", str(profile), "-t", "h200",
                             "--sass", str(listing(90)))
    assert code == 0, err
    assert "'not_in_the_listing' not found in the source SASS" in out



@pytest.mark.parametrize("cell, fld", [(0, "Address"), (1, "Source")])
def test_ncu_source_page_row_without_address_or_instruction_is_an_error(tmp_path, cell, fld):
    # the row was skipped: one instruction, and its counts, gone without a word
    fields = ["0x7f3a2c000120", "FFMA R9, -R3, R8, 1", "0", "8,192", "262,144", "262,144", ""]
    fields[cell] = ""
    p, row = _cut_ncu_page(tmp_path, ",".join(f'"{v}"' for v in fields))
    with pytest.raises(InputError, match="no (address|instruction)") as e:
        parse_file(p, 90)
    assert (e.value.path, e.value.row, e.value.field) == (str(p), row, fld)


def test_target_code_matching_no_kernel_is_an_error_in_the_api_too(tmp_path):
    """--target-sass whose functions are none of the kernels left the target counts NaN and
    the projection unchanged; the check is in the library, so predict() says it as well."""
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    other = tmp_path / "other.sass"
    other.write_text("\t.section\t.text.k,\"ax\",@progbits\n        .global         k\nk:\n"
                     ".text.k:\n        /*0000*/                   EXIT ;\n.L_x_0:\n"
                     "        /*0010*/                   BRA `(.L_x_0);\n")
    table = load(_profile(tmp_path, ["div_f32"]))
    with pytest.raises(InputError, match="no kernel of the profile is in this target "
                                         "h200-sxm-141gb's code") as e:
        predict(table, targets=["h200"], sass=listing(90), target_sass=other)
    assert str(e.value.path) == str(other)


def _edited_listing(tmp_path, find, edit):
    """The sm_90 listing with the first line of div_f32 that holds ``find`` edited by ``edit``
    (a function of the line, as bytes); the path and the line's number (1-based)."""
    lines = listing(90).read_bytes().split(b"\n")
    start = lines.index(b'\t.section\t.text.div_f32,"ax",@progbits')
    k = next(i for i in range(start, len(lines)) if find in lines[i])
    lines[k] = edit(lines[k])
    p = tmp_path / "edited.sass"
    p.write_bytes(b"\n".join(lines))
    return p, k + 1


@pytest.mark.parametrize("find, edit, said", [
    # the FFMA was skipped: sass diff reported sm_90 with one FP32 FMA fewer, exit 0
    pytest.param(b"FFMA R9, -R3, R8, 1 ;", lambda ln: ln.replace(b" ;", b""),
                 r"'/\*0120\*/ FFMA R9, -R3, R8, 1' is no instruction as nvdisasm and "
                 "cuobjdump print one", id="no semicolon"),
    pytest.param(b"/*0120*/", lambda ln: ln.replace(b"/*0120*/", b"/*01g0*/"),
                 r"'/\*01g0\*/ FFMA R9, -R3, R8, 1 ;' is no instruction", id="offset not hex"),
    pytest.param(b"/*0120*/", lambda ln: ln.split(b"FFMA")[0] + b";",
                 "an instruction offset without an instruction", id="no instruction"),
    # the branch went nowhere: the block after it counted 0
    pytest.param(b"@!P0 BRA", lambda ln: ln.replace(b".L_x_32", b".L_x_99"),
                 "BRA to label '.L_x_99', which div_f32 does not define", id="unknown label"),
    # read as U+FFFD, the byte became part of the opcode (an unknown one: counted as other)
    pytest.param(b"FFMA R9, -R3, R8, 1 ;", lambda ln: ln.replace(b"FFMA", b"FF\xe9MA"),
                 r"not a UTF-8 text file \(byte 0xe9 at offset \d+\)", id="not UTF-8"),
])
def test_damaged_text_listing_line_names_the_file_and_line(tmp_path, capsys, find, edit, said):
    p, row = _edited_listing(tmp_path, find, edit)
    with pytest.raises(InputError, match=said) as e:
        parse_file(p)
    assert (e.value.path, e.value.row) == (str(p), row)
    code, out, err = run_cli(capsys, "sass", "diff", str(listing(80)), str(p), "--kernel",
                             "div_f32")
    assert code == 2 and out == ""
    assert err.startswith(f"gpuproj: error: {p}, row {row}: ")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_ncu_source_page_not_utf8_names_the_row(tmp_path):
    text = ncu_source_csv(parse_file(listing(90)), KERNELS, 256 * 1024, 100)
    lines = text.encode().split(b"\n")
    k = next(i for i, ln in enumerate(lines) if ln.startswith(b'"0x7f3a2c000120",'))
    lines[k] = lines[k].replace(b"FFMA", b"F\xffMA", 1)
    p = tmp_path / "page.csv"
    p.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError, match="not a UTF-8 text file") as e:
        parse_file(p, 90)
    assert (e.value.path, e.value.row) == (str(p), k + 1)


@pytest.mark.parametrize("cell, value, fld, said", [
    # carried over, the target's FFMA ran on more threads than executed it
    pytest.param(5, "262,145", "Predicated-On Thread Instructions Executed",
                 "262,145 predicated-on of 262,144 thread instructions executed",
                 id="predicated-on"),
    pytest.param(4, "262,176", "Thread Instructions Executed",
                 r"262,176 thread instructions from 8,192 warp instructions \(at most 32 "
                 r"threads each\)", id="threads"),
])
def test_ncu_source_page_counts_beyond_their_warps_or_threads_are_an_error(
        tmp_path, capsys, cell, value, fld, said):
    fields = ["0x7f3a2c000120", "FFMA R9, -R3, R8, 1", "0", "8,192", "262,144", "262,144", ""]
    fields[cell] = value
    p, row = _cut_ncu_page(tmp_path, ",".join(f'"{v}"' for v in fields))
    with pytest.raises(InputError, match=said) as e:
        parse_file(p, 90)
    assert (e.value.path, e.value.row, e.value.field) == (str(p), row, fld)
    code, _, err = run_cli(capsys, "sass", "diff", str(p), str(listing(100)),
                           "--arch", "sm_90,sm_100")
    assert code == 2 and err.startswith(f"gpuproj: error: {p}, row {row}, field '{fld}': ")
    assert len(err.strip().splitlines()) == 1
