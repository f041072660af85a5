"""The bundled GPU catalog: every file loads, every number has a kind and a source, numbers are
consistent with each other, names resolve, ceilings fall back as documented."""

import math
import re
from pathlib import Path

import pytest
import yaml
from conftest import load_script

from gpuproj.catalog import (
    BUNDLED_DIR,
    load_catalog,
    normalize_name,
    parse_gpu,
    read_gpu_file,
    resolve,
)
from gpuproj.catalog.schema import LIST_FIELDS, SOURCE_KINDS, THROUGHPUT_FIELDS, VALUE_FIELDS
from gpuproj.errors import InputError, InputWarning, UnknownGPUError
from gpuproj.files import parse_yaml

FILES = sorted(BUNDLED_DIR.glob("*.yaml"))
REQUIRED_IDS = """tesla-c2070 gtx-480 gtx-680 tesla-k20 tesla-k40 gtx-titan quadro-k5200 gtx-970
gtx-980 gtx-titan-x gtx-1080 gtx-1080-ti titan-xp tesla-p4 tesla-p100-pcie-16gb tesla-p100-sxm2-16gb
titan-v v100-pcie-16gb v100-pcie-32gb v100-sxm2-16gb v100-sxm2-32gb gtx-1650 gtx-1660-ti tesla-t4
rtx-2080-ti titan-rtx a100-pcie-40gb a100-sxm4-40gb a100-pcie-80gb a100-sxm4-80gb a30 a10 a40
rtx-a4000 rtx-a6000 rtx-3060 rtx-3060-laptop rtx-3070 rtx-3080 rtx-3090 l4 l40 l40s rtx-4070
rtx-4080 rtx-4090 rtx-6000-ada h100-pcie-80gb h100-sxm5-80gb h200-sxm-141gb b200 rtx-5090 r9-fury
r9-nano mi50 mi60 mi100 mi210 mi250 mi250x mi300x mi325x rx-6900-xt rx-7900-xtx radeon-pro-w7900
max-1550 max-1550-stack max-1100""".split()


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def test_at_least_60_gpus_and_all_required_ids(cat):
    assert len(FILES) >= 60
    missing = [i for i in REQUIRED_IDS if i not in cat.gpus]
    assert not missing


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_number_has_kind_and_source(path):
    raw = yaml.safe_load(path.read_text())
    assert raw["schema_version"] == 1
    assert raw["id"] == path.stem, "file name must be the id"
    n = 0
    for sec, allowed in (("values", set(VALUE_FIELDS) | set(LIST_FIELDS)),
                         ("peak", set(THROUGHPUT_FIELDS)),
                         ("measured", set(THROUGHPUT_FIELDS))):
        for k, e in (raw.get(sec) or {}).items():
            assert k in allowed, f"{sec}.{k}"
            assert set(e) == {"value", "kind", "source"}, f"{sec}.{k}"
            assert e["kind"] in SOURCE_KINDS, f"{sec}.{k}"
            assert isinstance(e["source"], str) and len(e["source"]) >= 12, (
                f"{sec}.{k} source too vague")
            if e["kind"] == "derived":
                assert e["source"].startswith("derived"), f"{sec}.{k} must say how it was derived"
            if e["kind"] == "database":  # a third-party value must say what backs it up
                assert "Corroborated by" in e["source"], f"{sec}.{k} must say what corroborates it"
            if sec == "measured":
                assert e["kind"] == "measurement", f"{sec}.{k}"
            vals = e["value"] if isinstance(e["value"], list) else [e["value"]]
            assert all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                       for v in vals), f"{sec}.{k}"
            n += 1
    assert n >= 8
    gpu = read_gpu_file(path)  # the loader's own validation
    assert gpu.id == raw["id"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_fp32_peak_matches_lanes_times_clock(path):
    """FP32 FMA peak = SMs x lanes x 2 x boost clock within 2 % (datasheets round)."""
    g = read_gpu_file(path)
    sms, lanes, clk = g.value("sm_count"), g.value("fp32_lanes_per_sm"), g.value("boost_clock_hz")
    peak = g.peak("fp32_fma_flops_per_s")
    if any(math.isnan(x) for x in (sms, lanes, clk, peak)):
        pytest.skip("no lane count / clock / peak to compare")
    assert sms * lanes * 2 * clk == pytest.approx(peak, rel=0.02)
    lanes64, p64 = g.value("fp64_lanes_per_sm"), g.peak("fp64_fma_flops_per_s")
    if not (math.isnan(lanes64) or math.isnan(p64)):
        assert sms * lanes64 * 2 * clk == pytest.approx(p64, rel=0.02)


# shared-memory (LDS) bytes per clock per SM or CU where the vendor documents a rate other than
# 32 banks x 4 B: Fermi's 64 per shader clock (the CUDA guide, cc 2.x: 32 bits per bank per two
# clocks), Turing's 64 (NVIDIA's GA102 whitepaper), AMD's by ISA (CDNA white papers,
# ROCm Compute Profiler, RDNA ISA guides; CDNA 4 doubles the read rate)
SHARED_BYTES_PER_CLOCK = {"sm_20": 64, "sm_75": 64, "gfx906": 128, "gfx908": 128, "gfx90a": 128,
                          "gfx942": 128, "gfx950": 256, "gfx1030": 128, "gfx1100": 128}
# L1 bytes per clock per AMD CU: one vector L1 line (GPUOpen on GCN, ROCm Compute Profiler's
# vL1D peak per gfx; the CDNA 3 white paper doubles line and bus to 128 B); per Intel Xe-HPC
# core: Intel's Hot Chips 34 L1 figure, 105 TB/s on 128 cores at 1.6 GHz
L1_BYTES_PER_CLOCK = {"gfx803": 64, "gfx906": 64, "gfx908": 64, "gfx90a": 64, "gfx942": 128,
                      "gfx950": 128, "xe-hpc": 512}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_derived_shared_memory_and_l1_peaks_follow_the_clock(path):
    """A derived shared-memory or L1 peak is SMs (CUs) x bytes per clock x boost clock, so a
    change of clock or SM count in the file must carry over to it; on NVIDIA GPUs 32 banks x 4 B
    unless NVIDIA says otherwise. A derived NVIDIA L1 peak is the shared-memory one: one block,
    one rate (GA102 whitepaper); an AMD one is a vector L1 line per clock."""
    g = read_gpu_file(path)
    shared, l1 = (g.peaks.get(k) for k in ("shared_bw_bytes_per_s", "l1_bw_bytes_per_s"))
    if not any(e is not None and e.kind == "derived" for e in (shared, l1)):
        pytest.skip("no derived shared-memory or L1 peak")
    isa = g.isa.split(":")[0]
    per_sm_clock = g.value("sm_count") * g.value("boost_clock_hz")
    if shared is not None and shared.kind == "derived":
        per_clock = SHARED_BYTES_PER_CLOCK.get(
            isa, g.value("shared_banks") * g.value("shared_bank_width_bytes"))
        assert shared.value == pytest.approx(per_sm_clock * per_clock, rel=1e-3)
    if l1 is not None:
        assert l1.kind == "derived"
        expected = (shared.value if g.vendor == "NVIDIA"
                    else per_sm_clock * L1_BYTES_PER_CLOCK[isa])
        assert l1.value == pytest.approx(expected, rel=1e-3)


# NVIDIA L2 read bytes per clock, whole GPU: the A100 whitepaper's figures for the A100 and V100
L2_BYTES_PER_CLOCK = {"sm_70": 2048, "sm_80": 5120}


def test_derived_nvidia_l2_peaks_follow_the_clock():
    """A derived NVIDIA L2 peak is the documented bytes per clock x boost clock."""
    checked = set()
    for path in FILES:
        g = read_gpu_file(path)
        e = g.peaks.get("l2_bw_bytes_per_s")
        if g.vendor == "NVIDIA" and e is not None:
            expected = L2_BYTES_PER_CLOCK[g.isa] * g.value("boost_clock_hz")
            assert e.kind == "derived" and e.value == pytest.approx(expected, rel=1e-3), g.id
            checked.add(g.isa)
    assert checked == set(L2_BYTES_PER_CLOCK)  # no entry of the table checks nothing


# NVIDIA L1 bytes per clock per SM where an NVIDIA document states one: the GA102 whitepaper's
# 64 for Turing and 128 for GA10x ("128 bytes/clock per SM versus 64 bytes/clock in Turing",
# "Total L1 bandwidth"). The Volta, GA100, Hopper, Ada and Blackwell documents describe the L1
# in words or give its size only (docs/catalog.md), so those GPUs have no L1 peak.
NVIDIA_L1_BYTES_PER_CLOCK = {"sm_75": 64, "sm_86": 128}


def test_nvidia_l1_peaks_only_where_nvidia_states_the_rate():
    """Every Turing and GA10x GPU has a derived L1 peak = SMs x the whitepaper's bytes per clock
    x boost clock (three pinned by hand); no other NVIDIA GPU has one: an L1 peak of another
    architecture needs a document that states its rate, and this table's entry."""
    pinned = {"rtx-2080-ti": 68 * 64 * 1.545e9,     # 6.72 TB/s
              "rtx-3090": 82 * 128 * 1.695e9,       # 17.8 TB/s
              "a40": 18.7e12}                       # 84 x 128 x 1.739 GHz (37.4 TFLOP/s / 256 / 84)
    seen, checked = set(), set()
    for path in FILES:
        g = read_gpu_file(path)
        if g.vendor != "NVIDIA":
            continue
        isa, l1 = g.isa.split(":")[0], g.peaks.get("l1_bw_bytes_per_s")
        if isa not in NVIDIA_L1_BYTES_PER_CLOCK:
            assert l1 is None, f"{g.id}: an L1 peak without an NVIDIA rate for {isa}"
            continue
        assert l1 is not None and l1.kind == "derived", g.id
        expected = (g.value("sm_count") * NVIDIA_L1_BYTES_PER_CLOCK[isa]
                    * g.value("boost_clock_hz"))
        assert l1.value == pytest.approx(expected, rel=1e-3), g.id
        if g.id in pinned:
            assert l1.value == pytest.approx(pinned[g.id], rel=1e-3), g.id
            checked.add(g.id)
        seen.add(isa)
    assert seen == set(NVIDIA_L1_BYTES_PER_CLOCK) and checked == set(pinned)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_internal_consistency(path):
    g = read_gpu_file(path)
    ws, warps, threads = (g.value(k)
                          for k in ("warp_size", "max_warps_per_sm", "max_threads_per_sm"))
    if not math.isnan(warps):
        assert warps * ws == threads
    for fma, am in (("fp32_fma_flops_per_s", "fp32_addmul_flops_per_s"),
                    ("fp64_fma_flops_per_s", "fp64_addmul_flops_per_s")):
        if not math.isnan(g.peak(fma)):
            assert g.peak(am) == pytest.approx(g.peak(fma) / 2)
    optin, per_sm = g.value("smem_per_block_optin_bytes"), g.value("smem_per_sm_bytes")
    if not math.isnan(optin):
        assert optin + (0 if math.isnan(g.value("reserved_smem_per_block_bytes"))
                        else g.value("reserved_smem_per_block_bytes")) <= per_sm
    # sustained never far above peak: measured/peak of DRAM bandwidth in (0.2, 1.02]
    m, p = g.measured("dram_bw_bytes_per_s"), g.peak("dram_bw_bytes_per_s")
    if not math.isnan(m):
        assert 0.2 < m / p <= 1.02
    carve = g.values.get("smem_carveouts_bytes")
    if carve is not None:
        assert max(carve.value) == per_sm
    # an L3 sits behind the L2: larger than it, and a bandwidth only with a size
    l3 = g.value("l3_size_bytes")
    if not math.isnan(l3):
        assert l3 > g.value("l2_size_bytes")
    l3_bw = (g.peak("l3_bw_bytes_per_s"), g.measured("l3_bw_bytes_per_s"))
    if not all(math.isnan(v) for v in l3_bw):
        assert not math.isnan(l3)


def test_a_value_the_schema_lacks_is_a_key_error_not_nan(cat):
    """A misspelt property must not read as "unknown for this GPU"."""
    g = cat.resolve("h100-sxm5-80gb")
    assert g.value("sm_count") == 132
    with pytest.raises(KeyError, match="'sm_cout' is not a catalog value"):
        g.value("sm_cout")


def test_nvidia_occupancy_limits_by_compute_capability(cat):
    """Spot values of the CUDA Programming Guide table."""
    expect = {  # isa: (max warps, max blocks, smem/SM KB, opt-in KB, reserved B)
        "sm_70": (64, 32, 96, 96, 0), "sm_75": (32, 16, 64, 64, 0),
        "sm_80": (64, 32, 164, 163, 1024), "sm_86": (48, 16, 100, 99, 1024),
        "sm_89": (48, 24, 100, 99, 1024),
        "sm_90": (64, 32, 228, 227, 1024), "sm_110": (48, 24, 228, 227, 1024)}
    # every compute capability of the table is that of a catalog GPU: none is checked on none
    assert set(expect) <= {g.isa for g in cat}
    for g in cat:
        if g.isa in expect:
            w, b, s, o, r = expect[g.isa]
            got = (g.value("max_warps_per_sm"), g.value("max_blocks_per_sm"),
                   g.value("smem_per_sm_bytes") / 1024,
                   g.value("smem_per_block_optin_bytes") / 1024,
                   g.value("reserved_smem_per_block_bytes"))
            assert got == (w, b, s, o, r), g.id
            assert g.value("regs_per_sm") == 65536 and g.value("max_regs_per_thread") == 255
            assert g.value("shared_banks") == 32 and g.value("shared_bank_width_bytes") == 4


def test_amd_wave_sizes_and_multi_die_runtime_device(cat):
    for g in cat:
        if g.vendor == "AMD":
            want = 32 if g.architecture.startswith("RDNA") else 64
            assert g.value("warp_size") == want, g.id
    for gid in ("mi250", "mi250x"):
        g = cat.gpus[gid]
        assert "GCD" in g.runtime_device
        assert g.value("sm_count") in (104, 110)
        assert g.peak("dram_bw_bytes_per_s") == pytest.approx(3276.8e9 / 2)
    for gid in ("max-1550", "max-1550-stack", "max-1100"):
        assert cat.gpus[gid].runtime_device


def test_l1_data_cache_size_has_one_route_per_gpu(cat):
    """The largest L1 data cache one SM / CU holds loads in comes either from
    ``l1_cache_size_bytes_per_sm`` (an array apart from shared memory: AMD's vector L1, RDNA's
    vector L0, Maxwell/Pascal's L1/texture cache) or, where one array holds both (NVIDIA since
    Volta), from ``l1_shared_size_bytes_per_sm`` less the least of ``smem_carveouts_bytes``;
    never both, so the two routes cannot disagree."""
    kib = 1024
    pinned = {  # ROCm 'GPU hardware specifications'; CUDA C++ Programming Guide, cc 5.x / 6.x
        "mi210": 16, "mi300x": 32, "mi355x": 32, "mi50": 16, "r9-nano": 16,
        "rx-6900-xt": 16, "rx-7900-xtx": 32,  # RDNA's per-CU vector L0
        "gtx-980": 24, "tesla-p100-pcie-16gb": 24, "gtx-1080": 48, "tesla-p4": 48}
    for gid, size in pinned.items():
        assert cat.gpus[gid].value("l1_cache_size_bytes_per_sm") == size * kib, gid
    for g in cat:
        separate = "l1_cache_size_bytes_per_sm" in g.values
        assert not (separate and "smem_carveouts_bytes" in g.values), g.id
        assert not (separate and "l1_shared_size_bytes_per_sm" in g.values), g.id
        cc = int(g.isa[3:]) if g.vendor == "NVIDIA" else None
        if g.vendor == "AMD" or cc is not None and 50 <= cc < 70:
            assert separate, g.id
        if cc is not None and cc >= 70:  # the derived route has both of its numbers
            assert {"l1_shared_size_bytes_per_sm", "smem_carveouts_bytes"} <= set(g.values), g.id
            carve = g.values["smem_carveouts_bytes"].value
            assert 0 < g.value("l1_shared_size_bytes_per_sm") - min(carve), g.id


# Max 1550 figures of the whole card, which one stack (its device in Level Zero's FLAT mode)
# has half of; the others are per Xe core (or a clock, a sub-group, a work-group), alike
MAX_1550_CARD_TOTALS = {"memory_size_bytes", "memory_bus_bits", "sm_count", "l2_size_bytes"}
MAX_1550_PER_CORE = {"warp_size", "boost_clock_hz", "fp32_lanes_per_sm", "fp64_lanes_per_sm",
                     "l1_shared_size_bytes_per_sm", "max_threads_per_block", "smem_per_sm_bytes",
                     "smem_per_block_bytes"}


def test_a_max_1550_stack_is_half_the_card(cat):
    """max-1550-stack is one stack of max-1550: half of each card total (every peak rate too,
    all of them summed over the card's Xe cores) and each per-core figure alike, read from the
    two files; every value is in one of the two sets, so a field added to one file must be
    added to the other and sorted here. The names stay apart: the card's runtime name (Level
    Zero gives a stack the same) is the card, and no name of one is a name of the other."""
    card, stack = cat.gpus["max-1550"], cat.gpus["max-1550-stack"]
    assert set(card.values) == set(stack.values) == MAX_1550_CARD_TOTALS | MAX_1550_PER_CORE
    for k in MAX_1550_CARD_TOTALS:
        assert stack.value(k) == card.value(k) / 2, k
    for k in MAX_1550_PER_CORE:
        assert stack.value(k) == card.value(k), k
    assert set(card.peaks) == set(stack.peaks) and card.peaks
    for k in card.peaks:
        assert stack.peak(k) == pytest.approx(card.peak(k) / 2, rel=1e-12), k
    assert not card.measureds and not stack.measureds
    for gid, other in (("max-1550", "max-1550-stack"), ("max-1550-stack", "max-1550")):
        assert other in cat.gpus[gid].runtime_device
    assert cat.resolve("Intel(R) Data Center GPU Max 1550").id == "max-1550"
    for name in ("Max 1550", "GPU Max 1550", "1550", "Ponte Vecchio 1550"):
        assert cat.resolve(name).id == "max-1550", name
    for name in ("Max 1550 stack", "Max 1550 (one stack)", "max1550 tile"):
        assert cat.resolve(name).id == "max-1550-stack", name
    assert not ({normalize_name(n) for n in (card.id, card.name, *card.aliases)}
                & {normalize_name(n) for n in (stack.id, stack.name, *stack.aliases)})


def test_measured_values_from_public_benchmarks(cat):
    h = cat.gpus["h100-pcie-80gb"]
    # gpu-stream/h100_pcie.txt: max triad 1832 GB/s, max init 2018 GB/s, max read 1942 GB/s
    assert h.measured("dram_bw_bytes_per_s") == 1832e9
    assert h.measured("dram_write_bw_bytes_per_s") == 2018e9
    assert h.measured("dram_read_bw_bytes_per_s") == 1942e9
    assert "gpu-stream/h100_pcie.txt" in h.measureds["dram_bw_bytes_per_s"].source
    # gpu-l2-cache/rx6900xt.txt: the Infinity Cache plateau between 16 and 64 MiB, 1959.6 GB/s
    rx = cat.gpus["rx-6900-xt"]
    assert rx.measured("l3_bw_bytes_per_s") == pytest.approx(1959.6e9)
    assert rx.value("l3_size_bytes") == 128 * 2**20
    # gpu-latency/a100_40.txt at 206295 kB (the point nearest 256 MiB past 4 x the 40 MB L2):
    # 573.3 cycles at 1410 MHz
    a100 = cat.gpus["a100-sxm4-40gb"]
    assert a100.measured("dram_latency_s") == pytest.approx(573.3 / 1410e6)
    assert "201 MiB" in a100.measureds["dram_latency_s"].source
    # the RX 6900 XT's point lies past 4 x its 128 MiB Infinity Cache: 561642 kB, 1837.9 cycles
    assert rx.measured("dram_latency_s") == pytest.approx(1837.9 / 2570e6)
    # seed report: TITAN V sustained_bandwidth_gbps 299.936, the size of a device-to-device
    # copy over its time: the copy reads and writes that size, 2 x 299.936 GB/s of DRAM traffic
    titan_v = cat.gpus["titan-v"]
    assert titan_v.measured("dram_bw_bytes_per_s") == pytest.approx(2 * 299.936e9)
    assert "x 2" in titan_v.measureds["dram_bw_bytes_per_s"].source
    for gid in ("v100-pcie-16gb", "a100-sxm4-80gb", "a40", "l40", "h200-sxm-141gb", "mi100",
                "mi210", "rx-6900-xt", "rtx-2080-ti", "rtx-4070", "gtx-titan-x"):
        assert cat.gpus[gid].measureds, gid


RUNTIME_NAMES = {
    "NVIDIA A100-SXM4-80GB": "a100-sxm4-80gb", "Tesla V100-PCIE-32GB": "v100-pcie-32gb",
    "NVIDIA H100 80GB HBM3": "h100-sxm5-80gb", "NVIDIA A100-PCIE-40GB": "a100-pcie-40gb",
    "NVIDIA A100 80GB PCIe": "a100-pcie-80gb", "Tesla P100-PCIE-16GB": "tesla-p100-pcie-16gb",
    "Tesla P4": "tesla-p4", "Tesla T4": "tesla-t4", "NVIDIA L4": "l4", "NVIDIA TITAN V": "titan-v",
    "NVIDIA GeForce GTX TITAN X": "gtx-titan-x", "NVIDIA GeForce RTX 2080 Ti": "rtx-2080-ti",
    "NVIDIA GeForce RTX 4070": "rtx-4070", "NVIDIA GeForce RTX 3060 Laptop GPU": "rtx-3060-laptop",
    "AMD Instinct MI250X": "mi250x", "NVIDIA H200": "h200-sxm-141gb", "RTX 3090": "rtx-3090",
    "RTX Titan": "titan-rtx", "TITAN RTX": "titan-rtx", "GTX 680": "gtx-680", "K20": "tesla-k20",
    "K40": "tesla-k40", "Tesla K40c": "tesla-k40", "AMD Instinct MI100": "mi100",
    "NVIDIA_A100-SXM4-40GB": "a100-sxm4-40gb", "gfx942": None,
    "NVIDIA Thor": "jetson-agx-thor", "Thor": "jetson-agx-thor", "sm_110": "jetson-agx-thor",
}


@pytest.mark.parametrize("name,gid", [(k, v) for k, v in RUNTIME_NAMES.items() if v])
def test_resolve_runtime_names(cat, name, gid):
    assert cat.resolve(name).id == gid
    assert cat.resolve(name.upper()).id == gid
    assert cat.resolve(name.lower()).id == gid


def test_resolve_ambiguous_lists_candidates(cat):
    for name, members in (("V100", ["v100-pcie-16gb", "v100-sxm2-32gb"]),
                          ("H100", ["h100-pcie-80gb", "h100-sxm5-80gb"]),
                          ("P100", ["tesla-p100-pcie-16gb", "tesla-p100-sxm2-16gb"]),
                          ("gfx90a", ["mi210", "mi250x"])):
        with pytest.raises(UnknownGPUError, match="ambiguous") as e:
            cat.resolve(name)
        for m in members:
            assert m in str(e.value)


def test_resolve_unknown_suggests(cat):
    with pytest.raises(UnknownGPUError, match="did you mean.*rtx-4090"):
        cat.resolve("RTX 4909")
    with pytest.raises(UnknownGPUError, match="unknown GPU"):
        cat.resolve("Voodoo 2")
    # a short name is compared with the leading words of the catalog's names ('h10O' was far
    # from every whole name), and letter Os typed for zeros are read as the zeros
    for name, ids in (("h10O", "h100-nvl-94gb, h100-pcie-80gb, h100-sxm5-80gb"),
                      ("a1OO", "a100-pcie-40gb, a100-pcie-80gb, a100-sxm4-40gb, a100-sxm4-80gb"),
                      ("tesla k4o", "tesla-k40")):
        with pytest.raises(UnknownGPUError, match=f"did you mean {ids}\\?"):
            cat.resolve(name)


def test_resolve_does_not_take_a_name_for_its_variant(cat):
    """Every word of 'GeForce RTX 2080' is in 'GeForce RTX 2080 Ti', which it resolved to
    without a word (46 against 68 SMs); a word the match adds that names a variant makes it
    another GPU, which the suggestions still offer. Words a vendor adds are no variant."""
    for name, variant in (("GeForce RTX 2080", "rtx-2080-ti"), ("GeForce GTX 1660", "gtx-1660-ti"),
                          ("Radeon RX 7900", "rx-7900-xtx")):
        with pytest.raises(UnknownGPUError, match=f"unknown GPU '{name}'; did you mean .*"
                                                  + variant):
            cat.resolve(name)
    assert cat.resolve("NVIDIA GeForce RTX 3060 Laptop GPU").id == "rtx-3060-laptop"
    assert cat.resolve("Tesla K40").id == "tesla-k40"
    with pytest.raises(UnknownGPUError, match="the GPU name is empty"):
        cat.resolve(" ")


def test_resolve_isa_when_unique(cat):
    assert cat.resolve("gfx908").id == "mi100"
    with pytest.raises(UnknownGPUError, match="ambiguous"):  # Tesla C2070 and GTX 480
        cat.resolve("sm_20")


def test_ceiling_measured_derived_peak(cat):
    h100 = cat.gpus["h100-pcie-80gb"]
    nvl = cat.gpus["h100-nvl-94gb"]
    c = h100.ceiling("dram_bw_bytes_per_s")
    assert (c.kind, c.value) == ("measured", 1832e9)
    # H100 NVL has no measurement: peak x reference measured/peak (Van Lanker Sec. 4.1)
    d = nvl.ceiling("dram_bw_bytes_per_s", reference=h100)
    assert d.kind == "derived"
    assert d.value == pytest.approx(3.9e12 * 1832e9 / 2.0e12)
    p = nvl.ceiling("dram_bw_bytes_per_s")
    assert (p.kind, p.value) == ("peak", 3.9e12)
    m = nvl.ceiling("launch_overhead_s")
    assert m.kind == "missing" and math.isnan(m.value)


def test_a_derived_ceiling_is_at_most_the_peak(cat):
    """The H100 SXM5's compiled integer adds ran at 1.95x the Programming Guide's rate (half of
    them issue on the FMA pipe); carried over, that ratio gave a P100 and a K40 more adds per
    clock than they have lanes. The derived value stops at the peak, and its note says why."""
    h100, p100 = cat.gpus["h100-sxm5-80gb"], cat.gpus["tesla-p100-pcie-16gb"]
    name = "int32_add_ops_per_s"
    assert h100.measured(name) / h100.peak(name) > 1.9
    d = p100.ceiling(name, reference=h100)
    assert (d.kind, d.value) == ("derived", p100.peak(name))
    assert "taken as 1" in d.note and d.note.ratio == pytest.approx(1.945, abs=0.01)


def test_ceiling_falls_to_the_peak_when_two_benchmarks_measured_the_pair(cat):
    """TITAN V (seed report: 0.30 of 0.65 TB/s) against the A100 SXM4 80 GB (gpu-benches: 1.76
    of 2.04): different benchmarks, so both sides take their peak; within one benchmark
    (gpu-benches on the A100 and the V100, `gpuproj bench` on the H100 and H200), measured;
    where only one of the two has a peak, measured on both sides."""
    titan_v, a100, v100 = (cat.gpus[g] for g in ("titan-v", "a100-sxm4-80gb", "v100-pcie-16gb"))
    a = titan_v.ceiling("dram_bw_bytes_per_s", reference=a100)
    b = a100.ceiling("dram_bw_bytes_per_s", reference=titan_v)
    assert (a.kind, a.value) == ("peak", titan_v.peak("dram_bw_bytes_per_s"))
    assert (b.kind, b.value) == ("peak", a100.peak("dram_bw_bytes_per_s"))
    assert "not comparable" in a.note
    c = a100.ceiling("dram_bw_bytes_per_s", reference=v100)  # both gpu-benches
    assert (c.kind, c.value) == ("measured", a100.measured("dram_bw_bytes_per_s"))
    h100, h200 = cat.gpus["h100-sxm5-80gb"], cat.gpus["h200-sxm-141gb"]
    e = h200.ceiling("dram_bw_bytes_per_s", reference=h100)  # both gpuproj bench
    assert (e.kind, e.value) == ("measured", h200.measured("dram_bw_bytes_per_s"))
    assert h200.ceiling("dram_bw_bytes_per_s", reference=a100).kind == "peak"
    # the A100's L2 has a peak (5120 B per clock), our H200's none: both keep their measured
    # L2, where the A100's peak against the H200's measurement would favour the A100
    assert not math.isnan(a100.peak("l2_bw_bytes_per_s"))
    assert math.isnan(h200.peak("l2_bw_bytes_per_s"))
    for g, ref in ((a100, h200), (h200, a100)):
        f = g.ceiling("l2_bw_bytes_per_s", reference=ref)
        assert (f.kind, f.value) == ("measured", g.measured("l2_bw_bytes_per_s"))


def test_user_gpu_file_by_path_and_env(tmp_path, monkeypatch):
    doc = {"schema_version": 1, "id": "my-gpu", "vendor": "Acme", "name": "Acme X1",
           "architecture": "Hypo", "isa": "sm_99", "aliases": ["Acme Hypothetical X1"],
           "values": {"sm_count": {"value": 10, "kind": "user", "source": "my guess for the X1"}},
           "peak": {"dram_bw_bytes_per_s": {"value": 1e12, "kind": "user",
                                            "source": "vendor rumour 2026"}}}
    p = tmp_path / "my-gpu.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert resolve(str(p)).id == "my-gpu"
    assert load_catalog(extra=[p]).resolve("Acme Hypothetical X1").value("sm_count") == 10
    with pytest.raises(UnknownGPUError):
        load_catalog().resolve("acme x1")
    # the path is read on every load, so a notebook can change it without restarting
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(tmp_path))
    assert load_catalog().resolve("acme x1").id == "my-gpu"
    monkeypatch.delenv("GPUPROJ_GPU_PATH")
    assert "my-gpu" not in load_catalog()
    # two user files of one id: which is meant cannot be told, so neither is taken
    two = tmp_path / "two"
    two.mkdir()
    (two / "my-gpu.yaml").write_text(p.read_text())
    (two / "zz.yaml").write_text(yaml.safe_dump({**doc, "name": "Acme X2"}))
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(two))
    with pytest.raises(InputError, match="zz.yaml, field 'id': GPU id 'my-gpu' is also given "
                                         "by .*my-gpu.yaml: keep one"):
        load_catalog()
    # a .yml file is read as a .yaml one; a path entry that is no folder is said (it was
    # passed over without a word)
    yml = tmp_path / "yml"
    yml.mkdir()
    (yml / "my-gpu.yml").write_text(p.read_text())
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(yml))
    assert load_catalog().resolve("acme x1").id == "my-gpu"
    for entry, what in ((p, "a file"), (tmp_path / "none", "not there")):
        monkeypatch.setenv("GPUPROJ_GPU_PATH", str(entry))
        with pytest.warns(InputWarning, match=f"names {entry}, which is {what}: it is "
                                              "searched for GPU files only as a folder"):
            load_catalog()


def test_bad_files_name_the_field(tmp_path):
    base = {"schema_version": 1, "id": "bad", "vendor": "X", "name": "Bad", "architecture": "A",
            "isa": "i"}
    with pytest.raises(InputError, match="lacks source"):
        parse_gpu({**base, "values": {"sm_count": {"value": 1, "kind": "user"}}}, path="bad.yaml")
    with pytest.raises(InputError, match="kind 'guess'"):
        parse_gpu({**base, "values": {"sm_count": {"value": 1, "kind": "guess", "source": "x"}}})
    with pytest.raises(InputError, match="schema_version"):
        parse_gpu({**base, "schema_version": 2})


def _entry(value, kind="user"):
    return {"value": value, "kind": kind, "source": "x"}


@pytest.mark.parametrize("edit, where", [
    # each was a traceback: unhashable kind, .items() of a non-mapping, a 0 or 1e308 warp
    # size dividing the lanes or overflowing the occupancy arithmetic
    ({"values": {"sm_count": _entry(1, kind=["user"])}}, "field 'values.sm_count': kind"),
    ({"values": True}, "field 'values': expected a mapping"),
    ({"measured": [1]}, "field 'measured': expected a mapping"),
    ({"aliases": 5}, "field 'aliases': expected a list"),
    ({"values": {"warp_size": _entry(0)}}, "field 'values.warp_size': value 0: leave"),
    ({"peak": {"dram_bw_bytes_per_s": _entry(0)}}, "field 'peak.dram_bw_bytes_per_s': value 0"),
    ({"values": {"warp_size": _entry(1e308)}},
     "field 'values.warp_size': value 1e+308 is outside the plausible range 1 to 4096"),
    ({"values": {"sm_count": _entry(10.5)}}, "field 'values.sm_count': value 10.5 is not a whole"),
])
def test_values_no_model_can_use_name_the_field(edit, where):
    base = {"schema_version": 1, "id": "bad", "vendor": "X", "name": "Bad", "architecture": "A",
            "isa": "i"}
    with pytest.raises(InputError) as e:
        parse_gpu({**base, **edit}, path="bad.yaml")
    assert where in str(e.value)
    # what may be 0 or fractional still reads
    g = parse_gpu({**base, "values": {"reserved_smem_per_block_bytes": _entry(0),
                                      "boost_clock_hz": _entry(1.4105e9)}})
    assert g.value("reserved_smem_per_block_bytes") == 0


@pytest.mark.parametrize("edit, where", [
    # each read before: a TypeError in `gpus show` or `gpus list`, or a GPU named "['x']"
    ({"memory_type": {"a": 1}}, "field 'memory_type': expected text, found a mapping"),
    ({"release_year": "soon"}, "field 'release_year': expected a year such as 2024, found 'soon'"),
    ({"vendor": ["x"]}, "field 'vendor': expected text, found a list"),
    ({"notes": True}, "field 'notes': expected text, found true/false"),
    ({"schema_version": True}, "field 'schema_version': schema_version True is not supported"),
    ({"aliases": ["ok", {"a": 1}]}, "field 'aliases[1]': expected text, found a mapping"),
    ({"values": {"sm_count": {"value": 1, "kind": "user", "source": [1]}}},
     "field 'values.sm_count.source': expected text, found a list"),
    # byte counts are whole and not negative, each number of a list too
    ({"values": {"smem_carveouts_bytes": _entry([0, 8192.5])}},
     "field 'values.smem_carveouts_bytes': value 8192.5 is not a whole number"),
    ({"values": {"smem_carveouts_bytes": _entry([0, -0.0])}},
     "field 'values.smem_carveouts_bytes': value -0.0 is not a finite non-negative number"),
])
def test_identity_and_source_text_of_the_wrong_kind_name_the_field(edit, where):
    base = {"schema_version": 1, "id": "bad", "vendor": "X", "name": "Bad", "architecture": "A",
            "isa": "i"}
    with pytest.raises(InputError) as e:
        parse_gpu({**base, **edit}, path="bad.yaml")
    assert str(e.value).startswith(f"bad.yaml, {where}")
    # a number written without quotes is its text; a carve-out of 0 bytes is one
    g = parse_gpu({**base, "isa": 90, "release_year": 2024,
                   "values": {"smem_carveouts_bytes": _entry([0, 8192])}})
    assert (g.isa, g.release_year, g.values["smem_carveouts_bytes"].value) == ("90", 2024,
                                                                               [0, 8192])


def test_a_path_that_is_no_gpu_file_says_so(tmp_path):
    # an UnknownGPUError still: a reader names the row of a profile's GPU column
    with pytest.raises(UnknownGPUError, match="^/nonexistent.yaml: no such file$"):
        resolve("/nonexistent.yaml")
    with pytest.raises(UnknownGPUError, match=f"^{tmp_path}: not a GPU file"):
        resolve(str(tmp_path))
    # a name with a / may be a GPU's too (an OpenGL renderer string, ROCm's "AMD Instinct
    # MI250X / MI250"): no file is meant, and the catalog's hint is all there is to say
    with pytest.raises(UnknownGPUError, match="^unknown GPU 'RTX 3080/PCIe'; did you mean "
                                              ".*rtx-3080"):
        resolve("RTX 3080/PCIe")


def test_numbers_written_without_a_decimal_point(tmp_path):
    # PyYAML reads 3e12 (YAML 1.1: no decimal point) as a string; users write it so
    p = tmp_path / "x.yaml"
    p.write_text("schema_version: 1\nid: x\nvendor: X\nname: X\narchitecture: A\nisa: i\n"
                 "peak:\n  dram_bw_bytes_per_s: {value: 3e12, kind: user, source: me}\n"
                 "  fp32_fma_flops_per_s: {value: fast, kind: user, source: me}\n")
    with pytest.raises(InputError, match="fp32_fma_flops_per_s.*'fast' is not a finite"):
        read_gpu_file(p)
    p.write_text(p.read_text().replace("value: fast", "value: 5e13"))
    g = read_gpu_file(p)
    assert g.peak("dram_bw_bytes_per_s") == 3e12 and g.peak("fp32_fma_flops_per_s") == 5e13


def test_bad_yaml_and_python_tags_are_input_errors(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("schema_version: 1\nid: x\nname: [unclosed\n")
    with pytest.raises(InputError, match=r"x\.yaml, row 4: not valid YAML"):
        read_gpu_file(p)
    # the safe loader builds plain data only: a tag that would run code is refused
    p.write_text("schema_version: !!python/object/apply:os.getcwd []\n")
    with pytest.raises(InputError, match=r"x\.yaml, row 1: not valid YAML: could not determine"):
        read_gpu_file(p)


def test_aliases_keys_given_twice_and_huge_files_are_input_errors(tmp_path):
    # a billion-laughs file took 12 GB and a minute, then printed its expansion; a second
    # peak replaced the first and a second id renamed the GPU, silently
    p = tmp_path / "x.yaml"
    p.write_text("schema_version: 1\nid: x\nvalues:\n  a: &a [1, 1]\n  b: [*a, *a]\n")
    with pytest.raises(InputError, match=r"x\.yaml, row 5: not valid YAML: an alias \(\*a\)"):
        read_gpu_file(p)
    p.write_text("schema_version: 1\nid: x\npeak:\n  dram: 1\n  dram: 2\n")
    with pytest.raises(InputError, match=r"x\.yaml, row 5: not valid YAML: key 'dram' given "
                                         "twice"):
        read_gpu_file(p)
    p.write_text("schema_version: 1\nid: x\nnotes: " + "n" * 1_000_001 + "\n")
    with pytest.raises(InputError, match=r"x\.yaml: 1000033 characters: over the 1000000"):
        read_gpu_file(p)


def test_libyaml_and_python_loaders_read_the_catalog_alike(monkeypatch):
    # parse_yaml takes libyaml's loader where PyYAML has it; the pure-Python one is the fallback
    texts = [p.read_text() for p in FILES]
    fast = [parse_yaml(t, "f") for t in texts]
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    assert [parse_yaml(t, "f") for t in texts] == fast == [yaml.safe_load(t) for t in texts]


def test_catalog_doc_table_is_current():
    """docs/catalog.md carries the generated table; regenerate with scripts/catalog_table.py."""
    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "catalog.md").read_text()
    assert load_script("catalog_table").table_markdown() in doc, (
        "run: python scripts/catalog_table.py --write")


def test_readme_counts_the_bundled_gpus():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    n = len(list(BUNDLED_DIR.glob("*.yaml")))
    assert f"catalog of {n} GPUs" in readme


@pytest.mark.parametrize("name,says", [
    # the Turing card nvidia-smi calls so: "quadro" was dropped and {rtx, 6000} matched the Ada
    ("Quadro RTX 6000", "unknown GPU 'Quadro RTX 6000'"),
    # the chip of both cards, as ROCm names either; ROCm's name of the MI250 and MI250X device
    ("Fiji", "ambiguous: it matches r9-fury .*r9-nano"),
    ("AMD Instinct MI250X / MI250", "ambiguous: it matches mi250 .*mi250x"),
])
def test_names_that_mean_no_single_catalog_gpu(name, says):
    with pytest.raises(UnknownGPUError, match=says):
        resolve(name)


def test_isa_with_target_features_as_rocm_prints_it(cat):
    assert cat.resolve("gfx908:sramecc+:xnack-").id == "mi100"
    assert cat.resolve("Quadro K5200").id == "quadro-k5200"  # a product line its name has


@pytest.mark.parametrize("edit,field,says", [
    # a unit beside the value was dropped: 80 GB read as 80 bytes
    ("  memory_size_bytes: {value: 80, unit: GB, kind: user, source: me}\n",
     "values.memory_size_bytes.unit", "unknown field"),
    ("peak:\n  dram_bw_bytes_per_s: {value: 2.0e12, kind: measurement, source: me}\n",
     "peak.dram_bw_bytes_per_s", "not 'measurement'"),
    ("measured:\n  dram_bw_bytes_per_s: {value: 2.0e12, kind: datasheet, source: me}\n",
     "measured.dram_bw_bytes_per_s", "needs kind 'measurement' or 'user'"),
])
def test_entries_say_what_they_are(tmp_path, edit, field, says):
    p = tmp_path / "x.yaml"
    head = "schema_version: 1\nid: x\nvendor: X\nname: X\narchitecture: A\nisa: i\n"
    p.write_text(head + ("values:\n" + edit if edit.startswith("  ") else edit))
    with pytest.raises(InputError, match=f"field '{re.escape(field)}': .*{says}"):
        read_gpu_file(p)


def test_user_files_may_not_claim_every_name_or_one_id_twice(tmp_path):
    head = "schema_version: 1\nvendor: X\nname: X\narchitecture: A\nisa: i\n"
    p = tmp_path / "x.yaml"
    p.write_text(head + "id: x\naliases: [NVIDIA GPU]\n")  # "" once vendor words are dropped
    with pytest.raises(InputError, match=r"field 'aliases\[0\]': 'NVIDIA GPU' names no GPU"):
        read_gpu_file(p)
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(head + "id: dup\n")
    b.write_text(head + "id: dup\n")
    with pytest.raises(InputError, match="GPU id 'dup' is also given by"):
        load_catalog(extra=[a, b])


def test_a_user_alias_that_takes_a_bundled_gpus_name_is_said_at_load(tmp_path):
    # it broke the resolution of every profile of that GPU, said only when one was read
    p = tmp_path / "mine.yaml"
    p.write_text("schema_version: 1\nid: mine\nvendor: X\nname: My GPU\narchitecture: A\n"
                 "isa: i\naliases: [NVIDIA H100 80GB HBM3]\n")
    with pytest.warns(InputWarning, match=r"mine.yaml, field 'aliases\[0\]': 'NVIDIA H100 80GB "
                                          r"HBM3' is also a name of h100-sxm5-80gb"):
        load_catalog(extra=[p])


def test_a_user_file_that_replaces_a_bundled_gpu_is_said_once_and_keeps_its_names(
        tmp_path, monkeypatch, capsys):
    """A user file of a bundled GPU's id replaced it without a word, and an ncu profile's
    'NVIDIA H100 80GB HBM3' (a bundled alias the file lacks) became unknown."""
    import warnings

    from conftest import run_cli

    p = tmp_path / "mine.yaml"
    p.write_text("schema_version: 1\nid: h100-sxm5-80gb\nvendor: NVIDIA\nname: My Future GPU\n"
                 "architecture: Hopper\nisa: sm_90x\n"
                 "peak:\n  dram_bw_bytes_per_s: {value: 10.0e12, kind: user, source: guess}\n")
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(tmp_path))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cat = load_catalog()
        for _ in range(3):  # said when the catalog loads, not on every resolve
            assert resolve("NVIDIA H100 80GB HBM3").name == "My Future GPU"
            load_catalog()
    said = [str(w.message) for w in seen if issubclass(w.category, InputWarning)]
    assert said == [f"{p.resolve()}, field 'id': 'h100-sxm5-80gb' is the id of the bundled H100 "
                    "SXM5 80GB: this file replaces it, and the bundled GPU's names now name "
                    "this file's (give the file another id if it describes another GPU)"]
    assert cat.resolve("H100 SXM5 80GB").peak("dram_bw_bytes_per_s") == 10.0e12
    assert cat.resolve("my future gpu").id == "h100-sxm5-80gb"
    # the command line: one warning line, then the answer
    again = tmp_path / "again"  # another path: a catalog not loaded yet
    again.mkdir()
    (again / "mine.yaml").write_text(p.read_text())
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(again))
    code, out, err = run_cli(capsys, "gpus", "resolve", "NVIDIA H100 80GB HBM3")
    assert (code, out) == (0, "h100-sxm5-80gb\n")
    assert err.startswith(f"gpuproj: warning: {again.resolve()}/mine.yaml, field 'id': ")
    assert err.count("\n") == 1
    # a file given by path (load_catalog(extra=...)) is said alike; another user GPU's id is no
    # bundled one
    monkeypatch.delenv("GPUPROJ_GPU_PATH")
    with pytest.warns(InputWarning, match="is the id of the bundled H100 SXM5 80GB"):
        load_catalog(extra=[p])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_catalog(extra=[tmp_path / "mine.yaml"]).resolve("h200")
    # a file of the bundled GPU's name corrects its values (`gpuproj bench --gpu ID` writes
    # one): every command would repeat the warning
    same = tmp_path / "same.yaml"
    same.write_text(p.read_text().replace("My Future GPU", "H100 SXM5 80GB"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_catalog(extra=[same]).resolve("NVIDIA H100 80GB HBM3").peak(
            "dram_bw_bytes_per_s") == 10.0e12


def test_a_throughput_or_value_the_schema_lacks_is_a_key_error_in_every_accessor(cat):
    """``ceiling``, ``peak`` and ``measured`` gave NaN for a misspelt name (``dram_bw``), where
    ``value`` raised; a real field a GPU lacks is still NaN."""
    g = cat.resolve("h200")
    a100 = cat.resolve("a100-sxm4-80gb")
    for get in (g.peak, g.measured, g.ceiling, lambda n: g.ceiling(n, a100)):
        with pytest.raises(KeyError, match="'dram_bw' is not a catalog throughput; the "
                                           "throughputs are .*dram_bw_bytes_per_s"):
            get("dram_bw")
    with pytest.raises(KeyError, match="'sm_cnt' is not a catalog value"):
        g.value("sm_cnt")
    # a throughput asked of value(): which accessors have it
    with pytest.raises(KeyError, match=r"'dram_bw_bytes_per_s' is a throughput: peak\(\), "
                                       r"measured\(\) or ceiling\(\)"):
        g.value("dram_bw_bytes_per_s")
    # a field no bundled file has (the hierarchical models ask for it with each precision's
    # FMA rate) and one this GPU lacks
    for name in ("fp16_addmul_flops_per_s", "tensor_int8_ops_per_s"):
        assert name in THROUGHPUT_FIELDS
    assert math.isnan(g.peak("fp16_addmul_flops_per_s"))
    assert math.isnan(g.measured("tensor_fp64_flops_per_s"))
    c = g.ceiling("fp16_addmul_flops_per_s")
    assert c.kind == "missing" and math.isnan(c.value)


def test_every_name_the_code_asks_a_gpu_for_is_a_field():
    """Every constant name src/ passes to ``value``, ``peak``, ``measured``, ``ceiling`` or a
    ceiling book: none relies on an unknown name reading as NaN."""
    import ast

    fields = set(VALUE_FIELDS) | set(THROUGHPUT_FIELDS)
    asked = []
    for path in (Path(__file__).resolve().parents[1] / "src" / "gpuproj").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                    and (isinstance(node.func, ast.Attribute) and node.func.attr in (
                        "value", "peak", "measured", "ceiling", "relative")
                         or isinstance(node.func, ast.Name) and node.func.id == "book")):
                asked.append((path.name, node.args[0].value))
    assert len(asked) > 30
    assert [a for a in asked if a[1] not in fields] == []


def test_an_id_cut_short_suggests_the_gpus_it_begins(cat):
    # spelling distance put mi100 first and left the user to see that mi300 is no id
    with pytest.raises(UnknownGPUError, match=r"unknown GPU 'mi300'; did you mean mi300a, "
                                              r"mi300x\?"):
        cat.resolve("mi300")
