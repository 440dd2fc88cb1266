"""Content as data: sections, papers, 17 connections, MathML from LaTeX."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from attnlab.lab import content

MATHML = "{http://www.w3.org/1998/Math/MathML}"


def test_sections_and_papers():
    c = content.content()
    assert c["why"]["heading"] == "Why It Matters for Modern Models"
    assert len(c["why"]["paragraphs"]) == 3
    assert c["questions"]["items"][0].startswith("In what sense is each attention head")
    papers = c["papers"]["items"]
    assert [p["year"] for p in papers] == [2017, 2015, 2023]
    assert all(p["url"].startswith("https://") for p in papers)


def test_seventeen_connections_grouped_as_on_the_page():
    groups = content.content()["connections"]["groups"]
    assert [len(g["items"]) for g in groups] == [6, 2, 8, 1]
    assert sum(len(g["items"]) for g in groups) == 17
    notes = {i["title"]: i["attnlab"] for g in groups for i in g["items"]}
    assert "RoPE" in notes["Position encoding"]
    assert "KV cache" in notes["KV cache memory"] and "grouped-query" in notes["KV cache memory"]
    assert "tiled attention" in notes["Attention costs"]
    assert "masks" in notes["Sparse selection"]
    assert "multi-head" in notes["Copy via attention"]


def test_every_math_block_is_well_formed_mathml_with_its_latex():
    blocks = content.content()["math"]["blocks"]
    displays = [b for b in blocks if b["kind"] == "display"]
    assert len(displays) == 3  # each equation once (issue 13)
    for b in displays:
        root = ET.fromstring(b["html"])
        assert root.tag == MATHML + "math"
        assert root.get("display") == "block"
        assert root.get("alttext") == b["latex"]
    block = ET.fromstring(displays[-1]["html"])
    assert block.find(f".//{MATHML}mtable") is not None  # the two aligned equations
    assert "&" not in "".join(block.itertext())


def test_inline_math_in_prose_is_escaped_text_plus_mathml():
    html = content.prose("a < b and $d_k$ & more")
    assert html.startswith("a &lt; b and <math alttext=\"d_k\"")
    assert html.endswith("</math> &amp; more")
    variance = next(b for b in content.content()["math"]["blocks"] if "variance" in b.get("text", ""))
    wrapped = ET.fromstring(f"<p xmlns:m='{MATHML[1:-1]}'>{variance['html']}</p>")
    assert len(wrapped.findall(f"{MATHML}math")) == 6


def test_every_attnlab_name_a_connection_cites_exists():
    import re

    import attnlab.engine

    notes = [
        i["attnlab"] for g in content.content()["connections"]["groups"] for i in g["items"]
        if i["attnlab"]
    ]
    names = {n for note in notes for n in re.findall(r"attnlab\.engine\.(\w+)", note)}
    assert names >= {"RoPE", "KVCache", "tiled_attention", "multi_head_attention"}
    for name in names:
        assert hasattr(attnlab.engine, name), name


def test_core_math_shows_each_equation_once():
    from attnlab.lab.content import content

    latex = [b["latex"] for b in content()["math"]["blocks"] if b["kind"] == "display"]
    assert latex and len(latex) == len(set(latex))


def test_every_line_the_page_places_is_in_the_content():
    from attnlab.lab.explorer.examples import WORKED_SEQUENCE

    c = content.content()
    first = c["papers"]["items"][0]
    assert first["byline"] == "Vaswani et al. · 2017 · NeurIPS"
    assert first["link_label"] == "Read paper: Attention Is All You Need"
    connections = c["connections"]
    total = sum(len(g["items"]) for g in connections["groups"])
    heading = {"text": f"Other connections ({total})", "claims": {"count": total}}
    assert connections["count_heading"] == heading
    item = connections["groups"][0]["items"][0]
    assert item["heading"] == f"{item['title']}:" and item["relation_sentence"] == f"{item['relation']}."
    assert c["footer"] == f"Guided attention notebook · worked study · {WORKED_SEQUENCE.id}"
