"""A class in real Chromium: two learners' pages and the teacher's (issue 33).

A push arrives on both learners' screens; a solve shows on the teacher's view; pause makes the
pages read-only and resume frees them; pacing keeps them to a section; names hide for the
projector; a snapshot shows picked answers without names; a reloaded page carries on (its
practice record back), and every page reconnects by itself after the server is killed and
resumed. Each page is axe-clean.
"""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import Recorder
from playwright.sync_api import expect

from classroomkit import ClassServer

pytestmark = pytest.mark.browser
PANEL = "#active-challenge"


def axe_clean(page, artifacts, name: str) -> None:
    results = Axe().run(page)
    (artifacts / f"axe-{name}.txt").write_text(results.generate_report(), encoding="utf-8")
    violations = results.response["violations"]
    found = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations]
    assert found == [], found


class Pages:
    """Pages in contexts of their own, each checked at the end: no request elsewhere, no console error."""

    def __init__(self, browser, server: ClassServer) -> None:
        self.browser, self.server, self.opened = browser, server, []

    def open(self, url: str):
        context = self.browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        recorder = Recorder()
        recorder.attach(page)
        self.opened.append((page, recorder))
        page.goto(url)
        return page, recorder

    def learner(self, nickname: str):
        page, recorder = self.open(self.server.join_url)
        page.locator("#nickname").fill(nickname)
        page.locator("#join").click()
        page.wait_for_url(re.compile(r"/(#.*)?$"))
        expect(page.locator("#summary")).to_contain_text("Output o = [")
        who = f"In class “{self.server.name}” as {nickname}"
        expect(page.locator("#class-bar .class-who")).to_have_text(who)
        expect(page.locator("#class-bar .class-status")).to_have_text("connected")
        return page, recorder

    def teacher(self):
        page, recorder = self.open(self.server.teacher_url)
        page.wait_for_url(re.compile(r"/class/teacher$"))  # the token has left the address bar
        expect(page.locator("#cl-live")).to_have_text("Live")
        return page, recorder

    def close(self) -> None:
        for page, recorder in self.opened:
            page.context.close()
            recorder.check(self.server.url)


@pytest.fixture
def class_server(tmp_path):
    with ClassServer("room-12", tmp_path) as server:
        yield server


def cell(teacher, table: str, row_text: str, column: int):
    return teacher.locator(f"#{table} tbody tr", has_text=row_text).locator("th, td").nth(column)


def test_two_learners_and_the_teacher(browser, class_server, artifacts):
    pages = Pages(browser, class_server)
    try:
        teacher, _ = pages.teacher()
        ada, _ = pages.learner("Ada")
        alan, _ = pages.learner("Alan")
        expect(teacher.locator("#cl-summary")).to_have_text("2 learners joined · 2 connected")
        expect(teacher.locator("#cl-learners-table tbody tr")).to_have_count(2)
        expect(cell(teacher, "cl-learners-table", "Ada", 2)).to_have_text("The explorer (drag q)")
        axe_clean(teacher, artifacts, "classroom-teacher")
        axe_clean(ada, artifacts, "classroom-learner")

        # push a challenge: it arrives on both screens; Ada opens it, Alan keeps working
        teacher.locator("#cl-push-challenge").select_option("double-q")
        teacher.locator("#cl-push-challenge-go").click()
        for page in (ada, alan):
            expect(page.locator("#class-bar .class-notice")).to_contain_text(
                "Your teacher pushed: Doubling q sharpens the shares")
        ada.locator("#class-bar .class-open").click()
        expect(ada.locator(PANEL)).to_have_attribute("data-challenge", "double-q")
        alan.locator("#class-bar .class-dismiss").click()
        expect(alan.locator("#class-bar .class-notice")).not_to_contain_text("pushed")

        # Ada solves it: the teacher's view shows it within the second
        ada.get_by_label(re.compile("^grows")).check()
        with ada.expect_response("**/api/notebook/study"):
            ada.locator(f'{PANEL} [data-action="check"]').click()
        expect(ada.locator('[data-feedback="double-q"]')).to_contain_text("✓ Goal met.")
        expect(cell(teacher, "cl-challenges-table", "Doubling q sharpens", 3)).to_have_text("1", timeout=1500)
        expect(cell(teacher, "cl-learners-table", "Ada", 4)).to_have_text("1")
        expect(teacher.locator("#cl-predictions-list")).to_contain_text("Doubling q sharpens the shares")

        # sorting from the keyboard: focus "Solved", Enter, and Ada (1 solved) comes last, then first
        solved = teacher.locator('#cl-learners-table button[data-key="solved"]')
        solved.focus()
        teacher.keyboard.press("Enter")
        expect(teacher.locator("#cl-learners-table tbody tr").last).to_contain_text("Ada")
        teacher.keyboard.press("Enter")
        expect(teacher.locator("#cl-learners-table tbody tr").first).to_contain_text("Ada")
        expect(teacher.locator('#cl-learners-table th[aria-sort="descending"]')).to_have_count(1)
        teacher.locator("#cl-filter").fill("ala")
        expect(teacher.locator("#cl-learners-table tbody tr")).to_have_count(1)
        teacher.locator("#cl-filter").fill("")

        # pause: both pages read-only; resume frees them
        teacher.locator("#cl-pause").click()
        for page in (ada, alan):
            expect(page.locator("#class-bar .class-notice")).to_contain_text("paused the room")
            expect(page.locator("main#main")).to_have_js_property("inert", True)
        # the button acts on what it shows (paused: "Resume"): wait for the teacher's view to say so,
        # or a second click before it does would ask to pause again
        expect(teacher.locator("#cl-pause")).to_have_attribute("aria-pressed", "true")
        teacher.locator("#cl-pause").click()
        expect(teacher.locator("#cl-pause")).to_have_attribute("aria-pressed", "false")
        for page in (ada, alan):
            expect(page.locator("main#main")).to_have_js_property("inert", False)

        # pace to the block: the explorer and practice are set aside, with the way to the block
        teacher.locator('#cl-pace-places input[value="block"]').check()
        teacher.locator("#cl-pace-apply").click()
        expect(alan.locator("#class-bar .class-notice")).to_contain_text(
            "Your teacher is keeping the class to: The transformer block.")
        expect(alan.locator("section#practice")).to_have_js_property("inert", True)
        expect(alan.locator("section#block")).to_have_js_property("inert", False)
        expect(alan.locator("#class-bar a.class-go")).to_have_attribute("href", "/#block")
        teacher.locator("#cl-pace-clear").click()
        expect(alan.locator("section#practice")).to_have_js_property("inert", False)

        # anonymise for the projector: no nickname anywhere on the teacher's page
        teacher.locator("#cl-anonymise").check()
        expect(teacher.locator("#cl-learners-table")).to_contain_text("Learner 1")
        assert "Ada" not in teacher.locator("#main").inner_text()
        assert "Alan" not in teacher.locator("#main").inner_text()

        # snapshot: pick Ada's check in her record, show it to the room, without a name
        teacher.locator("#cl-learners-table button.cl-open", has_text="Learner 1").click()
        expect(teacher.locator("#cl-detail-lines li")).to_have_count(1)
        teacher.locator("#cl-detail-lines input[type=checkbox]").check()
        teacher.locator("#cl-snap-show").click()
        expect(teacher.locator("#cl-room")).to_be_visible()
        expect(teacher.locator("#cl-room-cards figure")).to_have_count(1)
        expect(teacher.locator("#cl-room-cards")).to_contain_text("Answer 1")
        expect(teacher.locator("#cl-room-cards")).to_contain_text("“grows")
        axe_clean(teacher, artifacts, "classroom-teacher-room")

        # a reload carries on: the bar, the class, and Ada's practice record
        ada.reload()
        expect(ada.locator("#class-bar .class-status")).to_have_text("connected")
        expect(ada.locator('.history-group[data-challenge="double-q"] .history-checks li')).to_have_text(
            [re.compile(r"^Check 1 · “grows” · right$")])
    finally:
        pages.close()


def test_pages_reconnect_by_themselves_after_kill_9_and_resume(browser, tmp_path, artifacts):
    server = ClassServer("room-13", tmp_path).start()
    pages = Pages(browser, server)
    try:
        teacher, teacher_log = pages.teacher()
        ada, ada_log = pages.learner("Ada")
        for log in (teacher_log, ada_log):  # while the server is down, the browser says so
            log.allow(r"WebSocket connection to .* failed|ERR_CONNECTION_REFUSED|Failed to load resource")
        expect(teacher.locator("#cl-summary")).to_have_text("1 learner joined · 1 connected")
        server.kill()
        expect(ada.locator("#class-bar .class-status")).to_have_text("reconnecting…")
        expect(teacher.locator("#cl-live")).to_have_text("Reconnecting…")
        again = ClassServer("room-13", tmp_path, resume=True, port=server.port).start()
        pages.server = again
        try:
            expect(ada.locator("#class-bar .class-status")).to_have_text("connected", timeout=15000)
            expect(teacher.locator("#cl-live")).to_have_text("Live", timeout=15000)
            expect(teacher.locator("#cl-summary")).to_have_text("1 learner joined · 1 connected",
                                                                timeout=15000)
            teacher.locator("#cl-pause").click()
            expect(ada.locator("#class-bar .class-notice")).to_contain_text("paused the room")
        finally:
            pages.close()
            pages.opened = []
            again.stop()
    finally:
        pages.close()
        server.stop()
