"""The page's connections as live labs: one folder per lab, one shape for all.

A lab is ``lab/connections/<name>/`` (its ``LAB``, :mod:`.shape`), its practice
words ``lab/data/connections/<name>.json`` and its line in :mod:`.registry`.
What every lab shares lives here: its controls (:mod:`.controls`), the
pictures' data (:mod:`.pictures`), the page's answer (:mod:`.page`), practice
and its study (:mod:`.study`), export (:mod:`.export`) and, for a lab with a
model part, what it asks a real model for and what came back (:mod:`.live`). The routes
(``web/connections``) and the page (``js/connections``) serve every lab alike.
"""
