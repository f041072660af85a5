"""The plain measurement table and what every CSV reader shares with it (``readers/_io.py``,
``readers/_checks.py``, ``gpuproj.files.read_text``): a trailing separator, decimal commas,
launch counts, the text an error quotes, files in UTF-16."""

import warnings
from pathlib import Path

import pandas as pd
import pytest

from gpuproj.errors import InputError, InputWarning
from gpuproj.profiles import ProfileTable, load, sniff

DATA = Path(__file__).parent / "data"
H100 = "h100-sxm5-80gb"


def _file(tmp_path, text, name="m.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_separator_at_the_end_of_every_row_is_dropped(tmp_path):
    """Rows ending in a comma have one field more than the header, as R's row names do; they
    were read as row names, every column moved one to the left (the times took the DRAM
    bytes, 100 s for 10 ms)."""
    plain = load(_file(tmp_path, "kernel,time_s,dram_bytes,fp32_flops\nk1,0.01,100,5\n"
                                 "k2,0.02,200,6\n", "plain.csv"), gpu=H100).df
    trailing = load(_file(tmp_path, "kernel,time_s,dram_bytes,fp32_flops\nk1,0.01,100,5,\n"
                                    "k2,0.02,200,6,\n"), gpu=H100).df
    pd.testing.assert_frame_equal(trailing, plain)
    assert trailing["kernel"].tolist() == ["k1", "k2"]
    assert trailing["time_s"].tolist() == [0.01, 0.02]
    # under a decimal-comma locale, a semicolon at the end
    semi = load(_file(tmp_path, "kernel;time_s;dram_bytes;fp32_flops\nk1;0,01;100;5;\n"
                                "k2;0,02;200;6;\n", "semi.csv"), gpu=H100).df
    pd.testing.assert_frame_equal(semi, plain)
    # with a gpu column, the GPU is read where it is (it was 'unknown GPU 0.01')
    t = load(_file(tmp_path, f"kernel,config,gpu,time_s,dram_bytes\nk1,a,{H100},0.01,100,\n"))
    assert t.df[["gpu", "time_s", "dram_bytes"]].values.tolist() == [[H100, 0.01, 100.0]]
    # the KernelTuner excerpt, whose last column is never empty, with a comma after each row
    kt = DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv"
    head, *rows = kt.read_text().splitlines()
    p = _file(tmp_path, "\n".join([head] + [r + "," for r in rows]) + "\n",
              "gemm_clblast_4096_4gpus.csv")
    pd.testing.assert_frame_equal(load(p, format="kerneltuner").df,
                                  load(kt, format="kerneltuner").df)


def test_r_row_names_are_still_row_names(tmp_path):
    # a first field that is a row name, the last field not empty: R's write.table
    t = load(_file(tmp_path, 'kernel,time_s,dram_bytes\n"1",k1,0.01,100\n"2",k2,0.02,\n'),
             gpu=H100).df
    assert t["kernel"].tolist() == ["k1", "k2"] and t["time_s"].tolist() == [0.01, 0.02]
    assert t["dram_bytes"].iloc[0] == 100 and pd.isna(t["dram_bytes"].iloc[1])


def test_launch_counts_are_whole_and_a_row_of_none_is_skipped(tmp_path):
    """1.5 launches weighed a kernel's time by 1.5 in the application's total, and a kernel of
    0 launches was listed and added nothing, without a word."""
    with pytest.raises(InputError, match="'1.5' is not a whole number of launches") as e:
        load(_file(tmp_path, f"kernel,config,gpu,time_s,launches\nk1,a,{H100},0.0125,2\n"
                             f"k2,a,{H100},0.0125,1.5\n"))
    assert (e.value.row, e.value.field) == (3, "launches")
    t = load(_file(tmp_path, f"kernel,config,gpu,time_s,launches\nk1,a,{H100},0.0125,2\n"
                             f"k2,a,{H100},0.0125,0\nk3,a,{H100},0.0125,\n"))
    assert t.df["kernel"].tolist() == ["k1", "k3"] and t.df["launches"].tolist() == [2, 1]
    assert [(s.row, s.reason) for s in t.skipped] == [(3, "launches = 0 (the kernel did not run)")]
    # a frame built in memory alike
    f = ProfileTable.from_frame(pd.DataFrame({"kernel": ["a", "b"], "config": ["1", "1"],
                                              "gpu": [H100, H100], "time_s": [1e-3, 1e-3],
                                              "launches": [0.0, 3.0]}), origin="nb")
    assert f.df["kernel"].tolist() == ["b"]
    assert f.skipped[0].reason == "index 0: launches = 0 (the kernel did not run)"


def test_decimal_commas_with_dots_between_thousands(tmp_path):
    """A German spreadsheet writes 1234.5 as "1.234,5": it was rewritten to "1.234.5" and
    refused, quoting the rewritten text."""
    t = load(_file(tmp_path, f"kernel;config;gpu;time_s;dram_bytes\nk1;a;{H100};0,0125;1.234,5\n"
                             f"k2;a;{H100};0,0125;1.234.567\nk3;a;{H100};0,0125;2,5\n"))
    assert t.df["dram_bytes"].tolist() == [1234.5, 1234567.0, 2.5]
    with pytest.raises(InputError, match="'1.234,5x' is not a number") as e:
        load(_file(tmp_path, f"kernel;config;gpu;time_s;dram_bytes\n"
                             f"k1;a;{H100};0,0125;1.234,5x\n"))
    assert (e.value.row, e.value.field) == (2, "dram_bytes")


def test_a_column_of_true_and_false_is_not_numbers(tmp_path):
    """pandas reads a column holding only true/false as booleans: a time of 'true' was 1 s,
    a launch count of 'TRUE' 1, without a word."""
    for col, text in (("time_s", "true"), ("launches", "TRUE")):
        cells = {"time_s": "1e-3", "launches": "2", col: text}
        with pytest.raises(InputError, match=f"'{text}' is not a number") as e:
            load(_file(tmp_path, f"kernel,gpu,time_s,launches\nk1,{H100},{cells['time_s']},"
                                 f"{cells['launches']}\n"))
        assert (e.value.row, e.value.field) == (2, col)
    # beside a blank cell pandas reads them as objects: quoted as written all the same
    with pytest.raises(InputError, match="'true' is not a number"):
        load(_file(tmp_path, f"kernel,gpu,time_s\na,{H100},true\nb,{H100},\nc,{H100},false\n"))


_SEMI = "kernel;config;gpu;time_s;dram_bytes;tile\n"


def _semicolon(tmp_path, *rows):
    """A semicolon-separated table of (kernel, time_s, dram_bytes, tile) rows on an H100."""
    return load(_file(tmp_path, _SEMI + "".join(f"{k};a{i};{H100};{t};{b};{n}\n"
                                                for i, (k, t, b, n) in enumerate(rows))))


def test_a_semicolon_table_that_shows_decimal_commas_has_dots_between_thousands(tmp_path):
    """A time of "0,5" can only be written with a decimal comma, so the file's "1.234" is 1234:
    it was read as 1.234, 1000x too small. The tuning parameter, whose "1.024" is 1024 too, stays a
    number; a kernel name and a configuration stay text as written."""
    t = _semicolon(tmp_path, ("k1", "0,5", "1.234", "1.024"), ("k1.234", "0,25", "1.234.567", "8"))
    assert t.df["time_s"].tolist() == [0.5, 0.25]
    assert t.df["dram_bytes"].tolist() == [1234.0, 1234567.0]
    assert t.df["tile"].tolist() == [1024, 8] and pd.api.types.is_numeric_dtype(t.df["tile"])
    assert t.df["kernel"].tolist() == ["k1", "k1.234"] and t.df["config"].tolist() == ["a0", "a1"]
    # the tuning parameter alone shows the style: it takes part
    t = _semicolon(tmp_path, ("k1", "1", "1.234", "0,5"))
    assert (t.df["dram_bytes"].tolist(), t.df["tile"].tolist()) == ([1234.0], [0.5])


def test_a_semicolon_table_that_shows_decimal_points_has_commas_between_thousands(tmp_path):
    t = _semicolon(tmp_path, ("k1", "0.5", "1,234", "1,024"), ("k2", "0.001", "2", "8"))
    assert t.df["time_s"].tolist() == [0.5, 0.001]
    assert t.df["dram_bytes"].tolist() == [1234.0, 2.0] and t.df["tile"].tolist() == [1024, 8]


def test_a_tab_separated_table_is_read_as_a_spreadsheets_export(tmp_path):
    """A spreadsheet's tab-delimited text (or a table pasted from one) is recognised without
    --format, as the comma-separated table it equals; it was 'cannot tell the format', and
    with --format 'missing required column kernel' (the header read as one column). Tabs are
    what a spreadsheet writes under any locale, so its numbers are read in the style they show,
    as a semicolon-separated file's; an error names the row and the field."""
    plain = load(_file(tmp_path, f"kernel,config,gpu,time_s,dram_bytes,tile\n"
                                 f"k1,a,{H100},0.5,1234,1024\nk2,b,{H100},0.001,2,8\n",
                       "plain.csv")).df
    path = _file(tmp_path, f"kernel\tconfig\tgpu\ttime_s\tdram_bytes\ttile\n"
                           f"k1\ta\t{H100}\t0.5\t1,234\t1,024\nk2\tb\t{H100}\t0.001\t2\t8\n",
                 "m.tsv")
    assert sniff(path) == "measurement"
    pd.testing.assert_frame_equal(load(path).df, plain)
    commas = _file(tmp_path, f"kernel\tconfig\tgpu\ttime_s\tdram_bytes\ttile\n"
                             f"k1\ta\t{H100}\t0,5\t1.234\t1.024\nk2\tb\t{H100}\t0,001\t2\t8\n",
                   "commas.tsv")
    pd.testing.assert_frame_equal(load(commas).df, plain)
    # Excel's "Unicode text": tab-separated UTF-16 with a byte-order mark and CRLF line ends
    unicode_text = tmp_path / "excel.txt"
    unicode_text.write_bytes(commas.read_text().replace("\n", "\r\n").encode("utf-16"))
    pd.testing.assert_frame_equal(load(unicode_text).df, plain)
    bad = _file(tmp_path, f"kernel\tgpu\ttime_s\nk1\t{H100}\t0.5\nk2\t{H100}\tfast\n",
                "bad.tsv")
    with pytest.raises(InputError, match="'fast' is not a number") as e:
        load(bad)
    assert (e.value.row, e.value.field) == (3, "time_s")


def test_spaces_around_a_hand_written_tables_names_are_not_part_of_them(tmp_path):
    """"kernel, time_s" read as the columns 'kernel' and ' time_s', and the time was missing;
    " 0.10" stayed a configuration of its own beside "0.10". Spaces inside a name stay."""
    plain = load(_file(tmp_path, f"kernel,config,gpu,time_s,dram_bytes\n"
                                 f"k 1,0.10,{H100},0.5,1234\nk2,2,{H100},0.001,2\n",
                       "plain.csv")).df
    spaced = load(_file(tmp_path, f"kernel, config , gpu, time_s, dram_bytes\n"
                                  f" k 1 , 0.10, {H100} , 0.5, 1234\nk2, 2, {H100}, 0.001, 2\n")).df
    pd.testing.assert_frame_equal(spaced, plain)
    assert spaced["kernel"].tolist() == ["k 1", "k2"] and spaced["config"].tolist() == ["0.10", "2"]
    # an error quotes the cell as the file writes it (pandas read '1e400' as inf)
    with pytest.raises(InputError, match="'1e400' is not a finite number"):
        load(_file(tmp_path, f"kernel, gpu, time_s, dram_bytes\nk1, {H100}, 0.5, 1e400\n"))
    # a name twice, once with a space, is the same column twice
    with pytest.raises(InputError, match="column 'time_s' appears twice"):
        load(_file(tmp_path, f"kernel,time_s, time_s\nk1,{H100},0.5\n"), gpu=H100)


def test_comment_lines_of_a_hand_written_table_are_skipped(tmp_path):
    """A note above the header ("# A100, 2026-12") made the file 'cannot tell the format' (with
    --format, 'missing required column kernel'), one between the rows '1 fields where the
    header has 3'. Rows and errors keep the file's line numbers; a '#' inside a row is text."""
    path = _file(tmp_path, f"# measured on the {H100}\n  # second note\nkernel,gpu,time_s\n"
                           f"k#1,{H100},0.5\n# a note between rows\nk2,{H100},0.25\n")
    assert sniff(path) == "measurement"
    t = load(path)
    assert t.df["kernel"].tolist() == ["k#1", "k2"] and t.df["time_s"].tolist() == [0.5, 0.25]
    assert t.df["_row"].tolist() == [4, 6]
    with pytest.raises(InputError, match="'fast' is not a number") as e:
        load(_file(tmp_path, f"# note\nkernel,gpu,time_s\nk1,{H100},0.5\n# note\n"
                             f"k2,{H100},fast\n", "bad.csv"))
    assert (e.value.row, e.value.field) == (5, "time_s")
    with pytest.raises(InputError, match="'time_s' appears twice") as e:
        load(_file(tmp_path, "# note\nkernel,time_s,time_s\nk1,0.5,0.5\n", "twice.csv"),
             gpu=H100)
    assert e.value.row == 2


def test_a_semicolon_table_that_shows_no_style_is_read_with_decimal_commas(tmp_path):
    """No number shows how the file writes decimals: "1,234" and a lone "1.234" are 1.234, as
    they were read before the style was detected."""
    t = _semicolon(tmp_path, ("k1", "1,234", "1.234", "8"), ("k2", "2", "1e9", "16"))
    assert t.df["time_s"].tolist() == [1.234, 2.0]
    assert t.df["dram_bytes"].tolist() == [1.234, 1e9]
    assert t.df["tile"].tolist() == [8, 16] and t.df["tile"].dtype == "int64"


def test_a_semicolon_table_with_both_styles_is_refused_naming_a_row_of_each(tmp_path):
    with pytest.raises(InputError, match=r"m.csv, row 3: numbers written with a decimal comma "
                                         r"\('0,5', row 3, field 'tile'\) and with a decimal "
                                         r"point \('0.5', row 2, field 'time_s'\)") as e:
        _semicolon(tmp_path, ("k1", "0.5", "2", "8"), ("k2", "1", "2", "0,5"))
    assert e.value.row == 3


def test_text_columns_of_a_semicolon_table_take_no_part_in_its_style(tmp_path):
    """A kernel named "1.5" and a column of text with "0.5" in it are no numbers with a decimal
    point: the file's "0,5" still makes "1.234" 1234, and they stay text as written."""
    t = load(_file(tmp_path, "kernel;config;gpu;time_s;dram_bytes;note\n"
                             f"1.5;0.5;{H100};0,5;1.234;fast\n"
                             f"k2;a;{H100};0,5;1;0.5\n"))
    assert t.df["kernel"].tolist() == ["1.5", "k2"] and t.df["config"].tolist() == ["0.5", "a"]
    assert t.df["note"].tolist() == ["fast", "0.5"]
    assert t.df["dram_bytes"].tolist() == [1234.0, 1.0]


def test_a_flag_of_a_semicolon_table_is_a_boolean_as_in_a_comma_separated_one(tmp_path):
    # read as text for its numbers' style, it stayed text; learned models use numeric columns
    for sep in ";,":
        t = load(_file(tmp_path, sep.join(("kernel", "gpu", "time_s", "flag")) + "\n"
                                 + sep.join(("k1", H100, "1", "True")) + "\n"
                                 + sep.join(("k2", H100, "2", "false")) + "\n"))
        assert t.df["flag"].tolist() == [True, False] and t.df["flag"].dtype == bool, sep


def test_a_comma_separated_table_reads_as_before(tmp_path):
    """The style is a semicolon file's question: a comma-separated table's "1.234" is 1.234,
    as pandas reads it."""
    t = load(_file(tmp_path, f"kernel,config,gpu,time_s,dram_bytes,tile\n"
                             f"k1,a,{H100},0.5,1.234,8\n"))
    assert (t.df["dram_bytes"].tolist(), t.df["tile"].tolist()) == ([1.234], [8])


def test_an_overflowing_number_is_quoted_as_the_file_writes_it(tmp_path):
    # pandas reads 1e400 as inf: the message quoted 'inf', which the file does not hold
    for cell in ("1e400", "inf"):
        with pytest.raises(InputError, match=f"'{cell}' is not a finite number") as e:
            load(_file(tmp_path, f"kernel,config,gpu,time_s,dram_bytes\n"
                                 f"k0,a,{H100},0.0125,5\nk1,a,{H100},0.0125,{cell}\n"))
        assert (e.value.row, e.value.field) == (3, "dram_bytes")
    with pytest.raises(InputError, match="'1e400' is not a finite number"):  # R's row names
        load(_file(tmp_path, 'kernel,time_s,dram_bytes\n"1",k1,0.01,1e400\n'), gpu=H100)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_utf16_file_is_read_by_its_byte_order_mark(tmp_path, encoding):
    """Windows PowerShell's `>` writes UTF-16 with a byte-order mark: such a file was "of no
    known format", and with --format every other byte was a NUL."""
    base = DATA / "ncu-handbuilt-h100-raw-base.csv"
    p = tmp_path / "utf16.csv"
    bom = {"utf-16-be": "\ufeff"}.get(encoding, "")  # utf-16 and utf-32 write their own mark
    p.write_bytes((bom + base.read_text()).encode(encoding))
    assert sniff(p) == "ncu-csv"
    pd.testing.assert_frame_equal(load(p).df, load(base).df)
    # a UTF-16 mark followed by what is no UTF-16 text
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xff\xfek\x00,\x00\x00\xd8")
    with pytest.raises(InputError, match="not valid UTF-16 text"):
        load(bad, format="measurement")


@pytest.mark.parametrize("header, missing", [("kernel,time_ms,dram_bytes", "time_s"),
                                             ("kernel,time", "time_s"), ("name,time_s", "kernel"),
                                             ("kernel,tme_s", "time_s"),
                                             ("Kernel,duration", "kernel")])
def test_a_hand_made_table_short_of_a_column_says_which(tmp_path, header, missing):
    """A CSV that no reader claims and that names a column of a measurement table, or a near
    miss of one, is taken for one short of a column, which the error names (and that the file
    may be of another format): it was "cannot tell the format of this file" unless two of
    kernel, config, gpu and time_s were there."""
    p = _file(tmp_path, f"{header}\nk1,1.0,1e9\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)  # the near miss: tested in test_cli_errors
        for read in (sniff, lambda p: load(p, gpu=H100)):
            with pytest.raises(InputError, match=f"^{p}: missing required column '{missing}' "
                                                 r"of a measurement table \(or pass --format: "
                                                 r"ncu-rep, .*\)$"):
                read(p)
    with pytest.raises(InputError, match="cannot tell the format"):  # nothing of one: no guess
        sniff(_file(tmp_path, "name,value\nk1,1.0\n"))


SEED = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "seed-report-4gpus"
GPU_BENCHES = SEED.parent / "gpu-benches"


def test_files_of_other_formats_are_not_taken_for_hand_made_tables():
    """Every captured file of another format sniffs as its own, not as a measurement table
    short of a column (the seed report and gpu-benches are read from shared/data/external
    where it is present)."""
    by_format = {"amaris": ["amaris-2gpus-calculate_temp.csv",
                            "amaris-9gpus-bpnn_adjust_weights.csv"],
                 "kerneltuner": ["kerneltuner-4gpus-convolution.csv",
                                 "kerneltuner-4gpus-gemm_clblast_4096.csv"],
                 "neusight": ["neusight-5gpus-bmm.csv", "neusight-5gpus-conv.csv"],
                 "nvprof": ["nvprof-v100-pcie-32gb-metrics.csv", "nvprof-v100-pcie-32gb-trace.csv"],
                 "ncu-rep": ["ncu-h100-sxm5-80gb.ncu-rep"],
                 "ncu-csv": [p.name for p in DATA.glob("ncu-*.csv")],
                 "nsys": [f"nsys/{p.name}" for p in (DATA / "nsys").glob("vernier-*")],
                 "pytorch": ["pytorch/rmsnorm-v100-pcie-16gb.pt.trace.json"],
                 "rocprof": ["rocprof/enccs-mini-nbody/results.csv",
                             "rocprof/omniperf-axes2-mi100/timestamps.csv",
                             "rocprof/omniperf-vcopy-mi100/pmc_perf_0.csv"],
                 "rocprofv3": ["rocprof/rocprofv3-jacobi-mi300a/omp_kernel_trace.csv",
                               "rocprof/rocprofv3-sdk-docs/counter_collection.csv",
                               "rocprof/rocprofv3-sdk-docs/kernel_trace.csv"]}
    files = {DATA / name: fmt for fmt, names in by_format.items() for name in names}
    files.update({p: "seed-report" for p in SEED.glob("runs_*_final.csv")})
    files.update({p: "gpu-benches"
                  for sweep in ("l2-cache", "cache", "roofline", "small-kernels", "stream")
                  for p in (GPU_BENCHES / f"gpu-{sweep}").glob("*.txt")})
    assert len(files) >= 25 and {p: sniff(p) for p in files} == files


def test_a_problem_is_one_per_configuration_on_every_gpu(tmp_path):
    """``problem`` groups a kernel's configurations into variants: a configuration that
    solved one problem on one GPU and another (or none) on a second would be ranked among
    other variants on each."""
    head = "kernel,config,problem,gpu,time_s\n"
    t = load(_file(tmp_path, head + f"k,a,1024,{H100},1e-3\nk,b,1024,{H100},2e-3\n"
                                    "k,a,1024,h200,1e-3\n"))
    assert list(t.df["problem"]) == ["1024"] * 3  # text as written, not the number 1024.0
    with pytest.raises(InputError, match="kernel k with config a has problem '2048' here and "
                                         "'1024' in row 2: a configuration solves one") as e:
        load(_file(tmp_path, head + f"k,a,1024,{H100},1e-3\nk,a,2048,h200,1e-3\n"))
    assert (e.value.row, e.value.field) == (3, "problem")
    # a row of no problem takes the one its configuration has on another GPU: three sizes
    # named on the H100 are no variants to rank from the H200's rows either
    t = load(_file(tmp_path, head + "".join(f"k,{c},n={c},{H100},{c}e-3\n" for c in (1, 2, 3))
                   + "".join(f"k,{c},,h200,{c}e-3\n" for c in (1, 2, 3))))
    from gpuproj.evaluate import evaluate

    assert evaluate(t, ["same"]).ranking().loc["same", "groups"] == 0
