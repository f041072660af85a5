"""The HTML report: self-contained, with the prediction table and every picture, and the same
numbers as ``gpuproj predict --json``; checked in headless Chromium where it can be had.

The profile is real: Rodinia hotspot (calculate_temp) measured with nvprof on a GTX 680 and a
Tesla P100 by Amaris et al. (CC-BY-4.0, tests/data/README.md); the P100 row is the target's
measurement the report shows beside the prediction."""

import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import run_cli as run_main

from gpuproj.cli.main import cli
from gpuproj.errors import InputError

DATA = Path(__file__).parent / "data"
PROFILE = DATA / "amaris-2gpus-calculate_temp.csv"
ARGS = ["--format", "amaris", "--source", "gtx-680", "--target", "tesla-p100-pcie-16gb,gtx-980",
        "--method", "hierarchical,roofline"]


class Page(HTMLParser):
    """The parts of the report a test looks at: body attributes, images, table cells."""

    def __init__(self, text):
        super().__init__()
        self.body, self.images, self.links = {}, [], []
        self.tables = {}  # id -> list of rows (attrs, {data-col: data-value})
        self._table = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "img":
            self.images.append(a)
        elif tag == "table":
            self._table = a.get("id")
            if self._table:
                self.tables[self._table] = []
        elif tag == "tr" and self._table and "data-target" in a:
            self.tables[self._table].append((a, {}))
        elif tag == "td" and self._table and "data-col" in a and self.tables[self._table]:
            self.tables[self._table][-1][1][a["data-col"]] = a["data-value"]
        for k in ("src", "href"):
            if k in a and tag not in ("img",):
                self.links.append(a[k])

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None


def run_cli(args):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def report_html(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    run_cli(["report", str(PROFILE), *ARGS, "--max-kernels", "1", "-o", str(out)])
    return out


@pytest.fixture(scope="module")
def predict_json():
    return json.loads(run_cli(["predict", str(PROFILE), *ARGS, "--json"]).stdout)


def check_numbers(page: Page, pj: dict):
    """Every prediction and application row of ``predict --json`` is in the page's tables with
    the same values (the page stores the exact float repr in data-value)."""
    rows = {(a["data-kernel"], a["data-config"], a["data-target"], a["data-method"]): v
            for a, v in page.tables["predictions"]}
    assert len(rows) == len(pj["predictions"]) > 0
    for p in pj["predictions"]:
        v = rows[(p["kernel"], p["config"], p["target"], p["method"])]
        for col in ("source_time_s", "time_s", "low_s", "high_s", "speedup"):
            assert float(v[col]) == pytest.approx(p[col], rel=1e-12), col
    app = {(a["data-method"], a["data-target"]): v for a, v in page.tables["application"]}
    assert len(app) == len(pj["application"])
    for p in pj["application"]:
        v = app[(p["method"], p["target"])]
        for col in ("source_time_s", "time_s", "low_s", "high_s", "speedup"):
            assert float(v[col]) == pytest.approx(p[col], rel=1e-12), col
        # the measured total and the error, as `predict` prints them (they were missing)
        if p.get("measured_s") is not None:
            assert float(v["measured_s"]) == pytest.approx(p["measured_s"], rel=1e-12)
            assert float(v["error_pct"]) == pytest.approx(
                100 * (p["time_s"] / p["measured_s"] - 1), rel=1e-12)
        else:
            assert v["measured_s"] == v["error_pct"] == ""


def test_report_is_self_contained(report_html, predict_json):
    text = report_html.read_text(encoding="utf-8")
    page = Page(text)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    # projection bars, one roofline per target, the quadrant-split view
    assert len(page.images) == 4
    assert all(im["src"].startswith("data:image/png;base64,") for im in page.images)
    assert all(im.get("alt") for im in page.images)
    assert not [x for x in page.links if re.match(r"(https?:)?//", x)]
    assert "<link" not in text and "@import" not in text
    check_numbers(page, predict_json)
    # the P100 measurement stands beside the P100 predictions; the GTX 980 has none
    from gpuproj.profiles import load

    p100 = load(PROFILE, format="amaris").on("tesla-p100-pcie-16gb").df["time_s"].iloc[0]
    meas = {a["data-target"]: v["measured_s"] for a, v in page.tables["predictions"]}
    assert float(meas["tesla-p100-pcie-16gb"]) == p100
    assert meas["gtx-980"] == ""
    # the catalog section names values and their sources
    assert 'id="catalog-tesla-p100-pcie-16gb"' in text and "measured source" in text
    # and the assumptions what the band held on data sources it was not fitted on
    assert "the band held the measured time in" in " ".join(text.split())


def test_report_on_many_targets_compares_them_first(tmp_path):
    from gpuproj.plots import MAX_PANELS

    out = tmp_path / "many.html"
    run_cli(["report", "examples/rodinia-p100-nvprof.csv", "-t", "h100*,h200*,mi3*",
             "-m", "bandwidth,hierarchical", "-o", str(out)])
    page = Page(out.read_text(encoding="utf-8"))
    alts = [im["alt"] for im in page.images]
    # the nine targets compared, then projection bars and rooflines of the four fastest only
    assert alts[:2] == ["targets compared", "projection bars"]
    assert len([a for a in alts if a.startswith("roofline")]) == MAX_PANELS == 4
    assert "roofline tesla-p100-pcie-16gb to h100-pcie-80gb" not in alts  # the slowest
    # the assumptions grouped as `predict` prints them: e.g. one line for the GPUs at peak
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    text = out.read_text(encoding="utf-8")
    lines = predict(load("examples/rodinia-p100-nvprof.csv"), targets=["h100*", "h200*", "mi3*"],
                    methods=["bandwidth", "hierarchical"]).assumption_lines()
    assert all(f"<li>{html.escape(n)}</li>" in text for n in lines)
    assert any(", " in n.split(" at peak")[0] for n in lines if " at peak" in n)


def test_report_refuses_other_extensions(tmp_path):
    from gpuproj.profiles import load
    from gpuproj.report import write_report

    with pytest.raises(InputError, match="html"):
        write_report(tmp_path / "r.pdf", load(PROFILE, format="amaris"), "gtx-680",
                     ["gtx-980"])


def test_catalog_values_read_in_their_units():
    # the report's catalog tables and `gpus show` share one formatter; sizes are binary, as
    # the catalog reads them (the H100's "51200 KB" L2 is 50 MiB, not 52.4 MB)
    from gpuproj.units import readable

    assert readable("dram_bw_bytes_per_s", 3.35e12) == "3.35 TB/s"
    assert readable("fp64_fma_flops_per_s", 6.7e13) == "67 TFLOP/s"
    assert readable("l2_size_bytes", 5.24288e7) == "50 MiB"
    assert readable("launch_overhead_s", 2.5e-6) == "2.5 us"
    assert readable("sm_count", 132.0) == "132"
    assert readable("dram_bw_bytes_per_s", float("inf")) == "-"


# headless Chromium ---------------------------------------------------------------------------
@pytest.fixture(scope="session")
def chromium():
    """Debian's chromium: the installed one, else installed with apt-get where this test runs
    as root, else the test is skipped with the reason."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    apt = shutil.which("apt-get")
    if not apt or not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("chromium is not installed and cannot be installed (needs root and apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        for cmd in ([apt, "update"],
                    [apt, "install", "-y", "--no-install-recommends", "chromium"]):
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env,
                               check=False)
            if r.returncode != 0:
                pytest.skip(f"{' '.join(cmd[:2])} failed: {r.stderr.strip()[-300:]}")
    except subprocess.TimeoutExpired:
        pytest.skip("installing chromium took longer than 15 minutes")
    path = shutil.which("chromium")
    if not path:
        pytest.skip("apt-get installed no chromium executable")
    return path


def browse(chromium, url, tmp_path, *extra):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'ud'}",
           *extra, url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


@pytest.mark.slow
def test_report_in_chromium(chromium, report_html, predict_json, tmp_path):
    url = report_html.resolve().as_uri()
    dom = browse(chromium, url, tmp_path, "--virtual-time-budget=10000", "--dump-dom").stdout
    page = Page(dom)
    b = page.body
    assert b.get("data-ready") == "yes", b
    assert b["data-js-errors"] == "0"
    n = len(page.images)
    assert n == 4
    assert b["data-images-total"] == b["data-images-loaded"] == b["data-images-visible"] == str(n)
    assert b["data-images-failed"] == "0"
    check_numbers(page, predict_json)
    shot = tmp_path / "page.png"
    browse(chromium, url, tmp_path, "--window-size=1280,2400", f"--screenshot={shot}")
    assert shot.stat().st_size > 50_000  # text, tables and pictures, not a blank page


def test_report_to_a_gpu_from_a_file(tmp_path):
    # a target the catalog does not hold, given as its file (docs/catalog.md): the report names
    # it, draws its roofline and lists its values, as `predict --target FILE` does
    from gpuproj.catalog import BUNDLED_DIR

    text = (BUNDLED_DIR / "h200-sxm-141gb.yaml").read_text()
    gpu = tmp_path / "my-gpu.yaml"
    gpu.write_text(re.sub(r"(?m)^id: .*$", "id: my-gpu", text, count=1))
    out = tmp_path / "r.html"
    run_cli(["report", str(PROFILE), "--format", "amaris", "--source", "gtx-680", "--target",
             str(gpu), "--method", "roofline", "--max-kernels", "1", "-o", str(out)])
    page = Page(out.read_text())
    assert {a["data-target"] for a, _ in page.tables["predictions"]} == {"my-gpu"}
    assert any("roofline gtx-680 to my-gpu" in i.get("alt", "") for i in page.images)


def test_catalog_values_of_the_source_per_target(tmp_path):
    """The P100 has no measured values: the models derive its ceilings from each target's
    measured/peak ratio, so the table shows one used value per target, naming it."""
    from gpuproj.catalog import resolve
    from gpuproj.units import readable

    out = tmp_path / "r.html"
    run_cli(["report", "examples/rodinia-p100-nvprof.csv", "-t", "a100-sxm4-80gb,h200",
             "-m", "hierarchical", "-o", str(out)])
    text = out.read_text(encoding="utf-8")
    p100 = text[text.index('id="catalog-tesla-p100'):text.index('id="catalog-a100')]
    row = re.search(r"<tr><td><code>dram_bw_bytes_per_s</code>.*?</tr>", p100).group(0)
    g, f = resolve("tesla-p100-pcie-16gb"), "dram_bw_bytes_per_s"
    used = [readable(f, g.ceiling(f, resolve(t)).value) for t in ("a100-sxm4-80gb", "h200")]
    assert used == ["631 GB/s", "666 GB/s"]
    assert f'<td class="num">{used[0]}<br>{used[1]}</td>' in row
    assert "derived: peak × a100-sxm4-80gb&#x27;s measured/peak 0.863" in row
    assert "derived: peak × h200-sxm-141gb&#x27;s measured/peak 0.910" in row
    # a target's values are derived against the source alone: one line
    h200 = text[text.index('id="catalog-h200'):]
    assert "<br>" not in re.search(r"<tr><td><code>dram_bw_bytes_per_s</code>.*?</tr>",
                                   h200).group(0)


def test_report_of_a_profile_of_several_gpus_asks_for_one(tmp_path, capsys):
    path = DATA / "amaris-9gpus-bpnn_adjust_weights.csv"
    code, _, err = run_main(capsys, "report", str(path), "-t", "h200", "-o",
                            str(tmp_path / "r.html"))
    assert code == 2 and err.strip().splitlines() == [
        f"gpuproj: error: {path}: the profile holds several GPUs (gtx-680, gtx-970, gtx-980, "
        "gtx-titan, gtx-titan-x, quadro-k5200, tesla-k20, tesla-k40, tesla-p100-pcie-16gb); "
        "pass --source with one of them"]


def test_report_says_when_rows_beat_the_roofline(tmp_path):
    # `predict` warned on the terminal only; the page presented the projections without it
    p = tmp_path / "x.csv"
    p.write_text("kernel,config,gpu,time_s,fp32_flops,dram_bytes\n"
                 "fast,c,h100-sxm5-80gb,1e-9,1e9,1e8\nb,c,h100-sxm5-80gb,2e-4,1e9,4e8\n")
    out = tmp_path / "x.html"
    run_cli(["report", str(p), "-t", "h200", "-o", str(out)])
    assert re.search(r'class="note warning">1 of 2 rows measured on h100-sxm5-80gb ran faster '
                     r"than its datasheet roofline allows", out.read_text(encoding="utf-8"))


def test_report_counts_skipped_projections_and_rows(tmp_path):
    # a row no method can use is one row; a row hierarchical-ext cannot time on a GPU pair (its
    # shared-memory bytes alone, without an L2 ceiling) is one projection per target
    p = tmp_path / "x.csv"
    p.write_text("kernel,config,gpu,time_s,flops,dram_bytes,shared_bytes,working_set_bytes\n"
                 "k,c,rtx-2080-ti,1e-3,1e6,1e6,0,1e6\nj,c,rtx-2080-ti,1e-6,0,0,4096,4096\n"
                 "i,c,rtx-2080-ti,1e-6,,,,\n")
    out = tmp_path / "x.html"
    run_cli(["report", str(p), "-t", "titan-v,gtx-titan-x", "-m", "hierarchical-ext",
             "-o", str(out)])
    items = re.findall(r"<li>(\d+ (?:row|projection)\(s\)): ", out.read_text(encoding="utf-8"))
    assert sorted(items) == ["1 row(s)", "2 projection(s)"]


def test_report_rooflines_say_which_method_they_project_by(tmp_path):
    """The rooflines draw Eq. 9 alone (``hierarchical``); the table beside them holds the
    default method, hierarchical-ext, whose suite H100 -> B200 shared_bank_conflict is 1.74 ms
    against the panel's 0.82 ms. The caption said only "the projected interval"."""
    p = tmp_path / "x.csv"
    p.write_text("kernel,config,gpu,time_s,fp32_flops,dram_bytes\nb,c,h100-sxm5-80gb,2e-4,1e9,4e8\n")
    out = tmp_path / "x.html"
    run_cli(["report", str(p), "-t", "h200", "-o", str(out)])
    page = out.read_text(encoding="utf-8")
    assert 'data-method="hierarchical-ext"' in page
    caption = re.search(r'id="fig-roofline-h200-sxm-141gb">.*?<figcaption>(.*?)</figcaption>',
                        page).group(1)
    assert "projected by the <code>hierarchical</code> method" in caption


def test_report_draws_its_rooflines_under_the_progress_it_is_given(tmp_path):
    """`gpuproj report` passes its progress bar (stderr on a terminal): the rooflines, about
    2 s each, are drawn under it, one step per target."""
    from gpuproj.profiles import load
    from gpuproj.report import build_report

    seen = []

    def progress(items, description=""):
        seen.append((list(items), description))
        return seen[-1][0]

    html = build_report(load(PROFILE, format="amaris"), "tesla-p100-pcie-16gb",
                        ["gtx-980", "h200"], max_kernels=1, progress=progress)
    assert seen == [(["gtx-980", "h200-sxm-141gb"], "drawing rooflines")]
    assert html.count('id="fig-roofline-') == 2


def test_report_gives_each_gpus_catalog_note(tmp_path):
    # the T4's note says its long kernels run below the speed its peaks give: a caveat a
    # reader of its projections needs beside its values; the P100 has no note, so no paragraph
    from gpuproj.catalog import resolve

    out = tmp_path / "r.html"
    run_cli(["report", "examples/rodinia-p100-nvprof.csv", "-t", "tesla-t4", "-m", "roofline",
             "--max-kernels", "1", "-o", str(out)])
    text = out.read_text(encoding="utf-8")
    t4 = text[text.index('id="catalog-tesla-t4'):]
    note = html.escape(resolve("tesla-t4").notes)
    assert "A 70 W board" in note and f'</h3><p class="note">{note}</p><table' in t4
    p100 = text[text.index('id="catalog-tesla-p100'):text.index('id="catalog-tesla-t4')]
    assert resolve("tesla-p100-pcie-16gb").notes is None
    assert '</h3><table class="catalog">' in p100
