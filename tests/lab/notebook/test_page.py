"""What the server writes into index.html: every module's words and the first answers' sentences."""

from attnlab.lab import numbers as fmt
from attnlab.lab.explorer import page as explorer_page
from attnlab.lab.explorer.examples import WORKED_SEQUENCE
from attnlab.lab.notebook import playback, prose
from attnlab.lab.notebook.page import EXPORTS, first_sentences, index_page, page_words
from attnlab.lab.page import shared_fills, shared_words


def test_the_index_page_gets_every_modules_words_once():
    served = index_page()
    words = served["words"]
    for part in (shared_words(), explorer_page.page_words(), page_words()):
        for key, value in part.items():
            assert words[key] == value
    assert set(served["fills"]) == set(shared_fills()) | set(explorer_page.first_sentences()) | set(
        first_sentences()
    )
    assert set(prose.page_text()) <= set(first_sentences())


def test_the_notebooks_first_sentences_are_the_labs():
    said = first_sentences()
    assert said["held_title"] == "Held example · 3 queries · 3 sources"
    duration = playback.script_summary()["duration"]
    assert said["playback_time"] == f"0.0 s of {fmt.rounded(duration)} s" == "0.0 s of 31 s"
    assert said["playback_hint"].startswith(f"A {fmt.rounded(duration)}-second guided explanation")
    assert said["notebook_footer"].endswith(f" · {WORKED_SEQUENCE.id}")


def test_each_export_says_the_name_of_the_file_it_saved():
    files = page_words()["export"]["files"]
    assert set(files) == set(EXPORTS)
    for kind, file in files.items():
        assert file == {"name": EXPORTS[kind], "saved": f"Saved {EXPORTS[kind]}."}
