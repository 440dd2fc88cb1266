"""Model jobs: the work a real model does for the server, queued fairly and run by one worker.

- :mod:`.kinds`: one class per kind of job (a trace, a generation, a lab's run, a circuits
  run): its request, when two are one, how its work is measured, what the worker does for it;
- :mod:`.circuits`: the circuits views as circuits jobs (a patching sweep with progress and Cancel);
- :mod:`.texts`: what a job's text may be (checked before anything is queued);
- :mod:`.turns`: who a job is for (:class:`~.turns.Client`: an address and a session) and the
  order the line serves them in (clients in turn);
- :mod:`.rates`: measured seconds per unit of each kind's work, and the estimates made from them;
- :mod:`.line`: the line (:class:`~.line.Jobs`, the server's ``JOBS``): caps, ``Retry-After``,
  places, abandoned jobs, sharing, the finished traces kept;
- :mod:`.worker`: the worker process as the server sees it; :mod:`.work`: the worker's loop;
- :mod:`.kept`: what the jobs keep (finished traces in memory and on disk; the runs a worker reuses).

Every job is for a client: a route passes ``Jobs.of(Client(address, session))``
(``web/realmodel/line.client_of`` makes one from a request: its address and the page's tab).
"""
