"""Content as data: sections, papers, 17 connections, MathML from LaTeX."""

from __future__ import annotations

import re
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


CODE = re.compile(
    r"\battnlab\.\w"  # a module path: attnlab.engine.KVCache
    r"|\b\w+_\w+_\w+"  # a snake_case name of three parts: multi_head_attention, n_kv_head
    r"|\b[a-z]{2,}_[a-z]{2,}"  # enable_gqa (maths' d_k, W_O and n_kv stay)
    r"|\b(?:True|False|None)\b"
    r"|\b[A-Z]{2,}[A-Z][a-z]{2,}\b"  # KVCache (not SSMs)
    r"|\w\(\)"
)


def prose_strings(node, key: str = "") -> list[str]:
    """Every string of the content a learner reads as prose (LaTeX sources, links and ids left out)."""
    if isinstance(node, dict):
        skip = ("latex", "url", "id", "html")
        return [t for k, v in node.items() if k not in skip for t in prose_strings(v, k)]
    if isinstance(node, list):
        return [t for v in node for t in prose_strings(v, key)]
    return [node] if isinstance(node, str) else []


def test_no_code_identifier_in_the_pages_prose():
    """The main page's prose, its "In attnlab:" notes included, names what the engine does in words: no
    module path, function, parameter or class name (attnlab.engine.KVCache, enable_gqa, True)."""
    texts = prose_strings(content.content())
    items = [i for g in content.content()["connections"]["groups"] for i in g["items"]]
    notes = [i["attnlab"] for i in items if i["attnlab"]]
    assert len(notes) == 7 and set(notes) <= set(texts)
    assert [t for t in texts if CODE.search(t)] == []
    assert any("KV cache and grouped-query attention" in n for n in notes)
    for bad in ("attnlab.engine.RoPE", "KVCache", "enable_gqa", "n_kv_head", "multi_head_attention", "True"):
        assert CODE.search(bad), bad


def test_each_open_link_names_the_lab_it_opens():
    """Two connections open different labs with different words; one lab is opened with the same words
    from every connection, and the words are its title's head ("Open the KV cache lab")."""
    from attnlab.lab.connections import registry

    links = [(i["title"], i["open"]) for g in content.content()["connections"]["groups"] for i in g["items"]]
    by_href: dict[str, set[str]] = {}
    for _, link in links:
        if link:
            by_href.setdefault(link["href"], set()).add(link["text"])
    assert all(len(texts) == 1 for texts in by_href.values())
    texts = [next(iter(t)) for t in by_href.values()]
    assert len(set(texts)) == len(texts) == len(registry.ENTRIES)
    opened = dict(links)
    assert opened["KV cache memory"] == {"text": "Open the KV cache lab", "href": "/connections/kv"}
    assert opened["Attention costs"] == {"text": "Open the FlashAttention lab", "href": "/connections/flash"}
    for e in registry.ENTRIES:
        head = e.title.split(":")[0].lower().removeprefix("the ")
        assert e.short.lower() == head and e.open_text == f"Open the {e.short} lab"


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
