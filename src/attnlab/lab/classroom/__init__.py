"""A class in the lab: what is recorded, the teacher's view, pacing, snapshots, exports, every word.

``names`` (class names, nicknames, aliases), ``places`` (the sections and labs a
class can be kept to, and what a push may open), ``record`` (the events a class
keeps, read from the server's own study answers), ``view`` (the teacher's live
view: rows, counts, prediction distributions, one learner's attempts), ``snapshot``
(chosen answers side by side, without names), ``export`` (CSV and JSON), ``page``
(the pages' and the bar's words), ``terminal`` (``attnlab class``'s words).
The class's data lives in ``attnlab.classroom_store``; this package never imports
it: it computes on the plain records the web layer hands it.
"""
