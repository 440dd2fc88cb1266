"""Finding models on disk (models/discover.py): a fake Hugging Face cache holding the tiny models.

The cache has the real layout (``models--org--name/snapshots/<revision>/`` with relative symlinks
into ``blobs/``, ``refs/main``), built by ``familykit.hf_cache``. Next to the good models it holds
broken ones: a missing shard, an unknown family, a truncated file, a dangling symlink, no
tokenizer, pickled weights only, a GGUF with a wrong magic, one cut short and one of an
architecture attnlab does not run. Each is listed as skipped with its reason; nothing raises.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.lab.realmodel import sources
from attnlab.models import discover
from attnlab.models.discover import (
    BadFile,
    DanglingLink,
    MissingShard,
    MissingTensor,
    NoConfig,
    NoSafetensors,
    NoTokenizer,
    Truncated,
    UnknownFamily,
    UnreadTokenizer,
)
from familykit import hf_cache

GGUFS = {"qwen2": "Q4_0", "gpt2": "F32", "smollm2": "K", "gemma2": "Q5_0"}


def _copy(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest)
    return dest


def _odd_gguf(path: Path, arch: str, tokenizer: str | None) -> Path:
    """A small GGUF of architecture ``arch`` (tokenizer model ``tokenizer``; ``None``: no tokenizer)."""
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), arch)
    if tokenizer is not None:
        writer.add_tokenizer_model(tokenizer)
        writer.add_token_list(["a", "b"])
    writer.add_tensor("token_embd.weight", np.zeros((2, 32), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture(scope="module")
def hub(families, tmp_path_factory):
    """(the cache's root, {name: the folder or file it was made from})."""
    work = tmp_path_factory.mktemp("sources")
    ggufs = work / "ggufs"
    ggufs.mkdir()
    for name, kind in GGUFS.items():
        shutil.copyfile(families.gguf(name, kind), ggufs / f"{name}-{kind}.gguf")
    good = {
        "HuggingFaceTB/tiny-smollm2": families.folder("smollm2"),
        "tiny/smollm2-bf16": families.folder("smollm2", "bfloat16"),
        "tiny/qwen2": families.folder("qwen2"),
        "tiny/bert": families.folder("bert"),
        "tiny/gemma3": families.folder("gemma3"),
        "tiny/sharded-qwen3": families.sharded("qwen3"),
        "tiny/ggufs": ggufs,
    }
    missing = _copy(families.sharded("gpt2"), work / "missing-shard")
    gone = sorted(missing.glob("model-*.safetensors"))[1]
    gone.unlink()
    unknown = _copy(families.folder("qwen2"), work / "unknown")
    config = json.loads((unknown / "config.json").read_text())
    (unknown / "config.json").write_text(json.dumps({**config, "model_type": "mamba"}))
    truncated = _copy(families.folder("qwen2"), work / "truncated")
    data = (truncated / "model.safetensors").read_bytes()
    (truncated / "model.safetensors").write_bytes(data[: len(data) // 2])
    untokenized = _copy(families.folder("gpt2"), work / "no-tokenizer")
    (untokenized / "tokenizer.json").unlink()
    pickled = _copy(families.folder("gpt2"), work / "pickled")
    (pickled / "model.safetensors").unlink()
    (pickled / "pytorch_model.bin").write_bytes(b"\x80\x02pickled")
    odd = work / "odd-ggufs"
    odd.mkdir()
    (odd / "magic.gguf").write_bytes(b"GGML" + bytes(60))
    whole = families.gguf("qwen2", "F32").read_bytes()
    (odd / "cut.gguf").write_bytes(whole[: len(whole) - 1000])
    _odd_gguf(odd / "rwkv.gguf", "rwkv6", "rwkv")
    _odd_gguf(odd / "bert.gguf", "bert", "bert")
    _odd_gguf(odd / "bare.gguf", "llama", None)
    unlisted = _copy(families.sharded("gpt2"), work / "unlisted")
    index = json.loads((unlisted / "model.safetensors.index.json").read_text())
    first = sorted(set(index["weight_map"].values()))[0]
    index["weight_map"]["transformer.extra.weight"] = first
    (unlisted / "model.safetensors.index.json").write_text(json.dumps(index))
    loose = work / "loose"
    loose.mkdir()
    shutil.copyfile(families.folder("gpt2") / "model.safetensors", loose / "adapter.safetensors")
    garbled = _copy(families.folder("gpt2"), work / "garbled")
    (garbled / "config.json").write_text('{"model_type": "gpt2",')
    broken = {
        "broken/missing-shard": missing,
        "broken/unknown": unknown,
        "broken/truncated": truncated,
        "broken/dangling": families.folder("gpt2"),
        "broken/no-tokenizer": untokenized,
        "broken/pickled": pickled,
        "broken/odd-ggufs": odd,
        "broken/unlisted": unlisted,
        "broken/loose": loose,
        "broken/garbled": garbled,
    }
    root = hf_cache(work / "hub", {**good, **broken})
    # An unfinished download: the snapshot's link is there, its blob is not.
    link = root / "models--broken--dangling" / "snapshots" / ("0" * 40) / "model.safetensors"
    (link.parent / os.readlink(link)).resolve().unlink()
    (root / "datasets--tiny--text").mkdir()  # not a model repository: passed by
    return root, {**good, **broken, "gone": gone, "first": first}


@pytest.fixture(scope="module")
def scan(hub):
    return discover.discover(cache=hub[0])


def test_every_good_model_is_found_with_its_family_size_and_dtype(scan, families):
    found = {f.name: f for f in scan.found}
    assert set(found) == {
        "HuggingFaceTB/tiny-smollm2",
        "tiny/smollm2-bf16",
        "tiny/qwen2",
        "tiny/bert",
        "tiny/gemma3",
        "tiny/sharded-qwen3",
        *(f"tiny/ggufs/{name}-{kind}.gguf" for name, kind in GGUFS.items()),
    }
    assert all(f.source == "hf-cache" for f in scan.found)
    facts = {n: (f.family, f.model_type, f.dtype, f.format, f.chat) for n, f in found.items()}
    assert facts["HuggingFaceTB/tiny-smollm2"] == ("llama", "llama", "float32", "safetensors", True)
    assert facts["tiny/smollm2-bf16"] == ("llama", "llama", "bfloat16", "safetensors", True)
    assert facts["tiny/bert"] == ("bert", "bert", "float32", "safetensors", False)
    assert facts["tiny/gemma3"] == ("gemma3", "gemma3_text", "float32", "safetensors", True)
    assert facts["tiny/sharded-qwen3"] == ("qwen3", "qwen3", "float32", "safetensors", True)
    assert facts["tiny/ggufs/qwen2-Q4_0.gguf"][:4] == ("qwen2", "qwen2", "Q4_0", "gguf")
    assert facts["tiny/ggufs/smollm2-K.gguf"][2] == "Q4_K_M"
    assert facts["tiny/ggufs/gpt2-F32.gguf"][2:5] == ("F32", "gguf", False)
    for name in ("smollm2", "qwen2", "bert", "gemma3"):  # every parameter once, a tied one too
        model, _ = families.model(name)
        entry = found["HuggingFaceTB/tiny-smollm2" if name == "smollm2" else f"tiny/{name}"]
        assert entry.parameters == model.num_parameters()
    assert found["tiny/sharded-qwen3"].parameters == families.model("qwen3")[0].num_parameters()
    assert len(found["tiny/sharded-qwen3"].files) > 1
    assert found["tiny/smollm2-bf16"].tensor_types == (("BF16", 20),)


@pytest.mark.oracle
def test_a_ggufs_parameters_and_types_are_gguf_readers(scan):
    from gguf import GGUFReader

    for entry in scan.found:
        if entry.format == "gguf":
            reader = GGUFReader(str(entry.path))
            assert entry.parameters == sum(int(t.n_elements) for t in reader.tensors), entry.name
            kinds = sorted(t.tensor_type.name for t in reader.tensors)
            assert sorted(k for k, n in entry.tensor_types for _ in range(n)) == kinds


def test_the_cache_is_read_through_its_symlinks_into_blobs(scan, hub):
    entry = next(f for f in scan.found if f.name == "tiny/qwen2")
    assert entry.path.name == "0" * 40 and entry.path.parent.name == "snapshots"
    weights = entry.files[0]
    assert weights.is_symlink() and weights.resolve().parent.name == "blobs"


def test_every_broken_model_is_skipped_with_why(scan, hub):
    root, made = hub
    why = {s.name: s.why for s in scan.skipped}
    truncated = made["broken/truncated"] / "model.safetensors"
    header = 8 + int.from_bytes(truncated.read_bytes()[:8], "little")
    full = (made["tiny/qwen2"] / "model.safetensors").stat().st_size
    cut = len(made["tiny/qwen2"].joinpath("model.safetensors").read_bytes()) // 2
    link = root / "models--broken--dangling" / "snapshots" / ("0" * 40) / "model.safetensors"
    assert why == {
        "broken/missing-shard": MissingShard(shard=made["gone"].name, index="model.safetensors.index.json"),
        "broken/unknown": UnknownFamily(family="mamba"),
        "broken/truncated": Truncated(file="model.safetensors", size=cut, needed=full),
        "broken/dangling": DanglingLink(file="model.safetensors", target=os.readlink(link)),
        "broken/no-tokenizer": NoTokenizer(),
        "broken/pickled": NoSafetensors(files=("pytorch_model.bin",)),
        "broken/odd-ggufs/magic.gguf": BadFile(file="magic.gguf", problem="bad_magic", detail=repr(b"GGML")),
        "broken/odd-ggufs/cut.gguf": why["broken/odd-ggufs/cut.gguf"],
        "broken/odd-ggufs/rwkv.gguf": UnknownFamily(family="rwkv6"),
        "broken/odd-ggufs/bert.gguf": UnreadTokenizer(tokenizer="bert"),
        "broken/odd-ggufs/bare.gguf": NoTokenizer(),
        "broken/unlisted": MissingTensor(tensor="transformer.extra.weight", shard=made["first"]),
        "broken/loose": NoConfig(),
        "broken/garbled": why["broken/garbled"],
    }
    garbled = why["broken/garbled"]
    assert isinstance(garbled, BadFile) and (garbled.file, garbled.problem) == ("config.json", "bad_json")
    assert "line 1" in garbled.detail  # the parser's words
    assert header < cut < full  # the header is whole, the data is not
    cut_gguf = why["broken/odd-ggufs/cut.gguf"]
    assert isinstance(cut_gguf, Truncated) and cut_gguf.file == "cut.gguf" and cut_gguf.needed > cut_gguf.size
    assert UnknownFamily(family="mamba").known == discover.KNOWN and "llama" in discover.KNOWN


def test_every_reason_is_worded_with_the_facts_it_states(scan):
    assert {type(s.why) for s in scan.skipped} == set(discover.REASONS)  # each kind of reason seen here
    for entry in scan.skipped:
        line = sources.skipped(entry.name, entry.why)
        assert line.startswith(f"{entry.name} is skipped: ")
        for fact, value in sources.claims(entry.why).items():
            assert value in line, (fact, value, line)
    assert sources.why(UnknownFamily(family="mamba")) == (
        "its family, mamba, is not one attnlab runs; it runs "
        "bert, distilbert, gemma, gemma2, gemma3, gpt2, llama, mistral, phi3, qwen2, qwen3, roberta."
    )


def test_a_models_folder_is_searched_a_few_levels_down(families, tmp_path):
    shutil.copytree(families.folder("qwen2"), tmp_path / "mine" / "qwen2-tiny")
    deep = tmp_path / "mine" / "ggufs" / "2024"
    deep.mkdir(parents=True)
    shutil.copyfile(families.gguf("gpt2", "Q8_0"), deep / "gpt2.gguf")
    shutil.copytree(families.folder("bert"), tmp_path / "mine" / "a" / "b" / "c" / "d" / "bert")  # too deep
    first = families.split_gguf("qwen2")
    shutil.copytree(first.parent, tmp_path / "mine" / "split")
    scan = discover.discover(tmp_path / "mine", hub=False)
    names = {f.name: f for f in scan.found}
    assert set(names) == {"qwen2-tiny", "ggufs/2024/gpt2.gguf", f"split/{first.name}"}
    assert all(f.source == "models-dir" for f in scan.found) and scan.skipped == ()
    split = names[f"split/{first.name}"]
    assert len(split.files) == 4 and split.parameters == names["qwen2-tiny"].parameters
    assert scan.places == (("models-dir", tmp_path / "mine"),)


def test_a_split_gguf_missing_a_part_is_skipped(families, tmp_path):
    first = families.split_gguf("qwen2")
    shutil.copytree(first.parent, tmp_path / "split")
    last = sorted((tmp_path / "split").glob("*.gguf"))[-1]
    last.unlink()
    scan = discover.discover(tmp_path, hub=False)
    skipped = [(s.name, s.why) for s in scan.skipped]
    assert skipped == [(f"split/{first.name}", MissingShard(shard=last.name, index=first.name))]


def test_a_models_folder_laid_out_as_a_cache_is_read_as_one(hub):
    scan = discover.discover(hub[0], hub=False)
    assert {f.name for f in scan.found} >= {"tiny/qwen2", "HuggingFaceTB/tiny-smollm2"}
    assert all(f.source == "models-dir" for f in scan.found)


def test_nothing_there_is_nothing_found(tmp_path):
    scan = discover.discover(tmp_path / "absent", cache=tmp_path / "no-cache")
    assert (scan.found, scan.skipped) == ((), ())


def test_the_cache_is_where_huggingface_hub_puts_it(tmp_path):
    assert discover.hub_cache({"HF_HUB_CACHE": "/a/hub", "HF_HOME": "/b"}) == Path("/a/hub")
    assert discover.hub_cache({"HF_HOME": "/b"}) == Path("/b/hub")
    assert discover.hub_cache({"XDG_CACHE_HOME": "/c"}) == Path("/c/huggingface/hub")
    assert discover.hub_cache({}) == Path.home() / ".cache" / "huggingface" / "hub"
    pytest.importorskip("huggingface_hub")
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "XDG_"))}
    for extra in ({"HF_HOME": str(tmp_path)}, {"HF_HUB_CACHE": str(tmp_path / "x")}, {}):
        program = "from huggingface_hub import constants; print(constants.HF_HUB_CACHE)"
        done = subprocess.run(
            [sys.executable, "-c", program], env={**env, **extra}, capture_output=True, text=True, check=True
        )
        assert Path(done.stdout.strip()) == discover.hub_cache(extra), extra


# Junk, a safetensors header length then junk, a GGUF magic then junk.
junk = (
    st.binary(max_size=200)
    | st.builds(lambda n, rest: n.to_bytes(8, "little") + rest, st.integers(0, 2**64 - 1), st.binary())
    | st.builds(b"GGUF".__add__, st.binary(max_size=120))
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["model.safetensors", "x.gguf", "config.json", "tokenizer.json"]), data=junk)
def test_any_bytes_in_a_model_file_are_skipped_never_raised(tmp_path_factory, families, name, data):
    folder = tmp_path_factory.mktemp("junk")
    shutil.copytree(families.folder("gpt2"), folder / "model")
    (folder / "model" / name).write_bytes(data)
    scan = discover.discover(folder, hub=False)
    for entry in scan.skipped:
        assert sources.why(entry.why)
    assert len(scan.found) + len(scan.skipped) >= 1


@pytest.mark.oracle
@pytest.mark.parametrize("kind", ["F32", "K"])
def test_a_gguf_header_holds_what_gguf_reader_reads(families, kind):
    from gguf import GGUFReader

    path = families.gguf("gemma2", kind)
    reader = GGUFReader(str(path))
    fields = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    arrays = tuple(k for k, v in fields.items() if isinstance(v, list))
    whole, skipped = discover.gguf_header(path, arrays=arrays), discover.gguf_header(path)
    assert whole.metadata == fields
    assert skipped.metadata == {k: len(v) if isinstance(v, list) else v for k, v in fields.items()}
    assert whole.tensors == {t.name: (t.tensor_type.name, int(t.n_elements)) for t in reader.tensors}
    assert whole.data_end == path.stat().st_size  # the last tensor ends the file


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its permissions")
def test_a_file_the_system_will_not_read_is_skipped(families, tmp_path):
    shutil.copytree(families.folder("gpt2"), tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").chmod(0)
    scan = discover.discover(tmp_path, hub=False)
    assert [s.why for s in scan.skipped] == [
        BadFile(file="model.safetensors", problem="unreadable", detail="Permission denied")
    ]


def test_a_weights_name_on_a_folder_is_skipped_as_unreadable(families, tmp_path):
    shutil.copytree(families.folder("gpt2"), tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").unlink()
    (tmp_path / "m" / "model.safetensors").mkdir()  # what open() refuses, root or not
    scan = discover.discover(tmp_path, hub=False)
    assert [(s.name, s.why) for s in scan.skipped] == [
        ("m", BadFile(file="model.safetensors", problem="unreadable", detail="Is a directory"))
    ]
    assert sources.why(scan.skipped[0].why) == "model.safetensors cannot be read (Is a directory)."
