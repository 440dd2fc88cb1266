"""Where the model work runs, in words: the worker's mode and, in a thread, why."""

from __future__ import annotations


def worker_why(mode: str, fallback: dict | None) -> dict:
    """``{"text", "claims"}`` for the Real model view's status: where model work runs and why.

    ``mode`` is ``"process"``, ``"thread"`` or ``""`` (not started); ``fallback`` the
    worker's reason for a thread (``models.jobs.worker.Worker.fallback``), as data.
    """
    if mode == "process":
        text = "Model work runs in a process of its own, beside the server."
    elif mode == "":
        text = "Model work starts in a process of its own with the first model job."
    elif fallback is None:
        text = "Model work runs in a thread of the server, as it was started."
    elif fallback["cause"] == "died_early":
        text = (
            f"Model work runs in a thread of the server: the worker process ended with code "
            f"{fallback['exit_code']} before it was ready, {fallback['tries']} times in a row. "
            "A later job tries a process again."
        )
    else:
        text = (
            "Model work runs in a thread of the server: no worker process could start "
            f"({fallback['error']}). A later job tries a process again."
        )
    return {"text": text, "claims": {"mode": mode or None, **(fallback or {})}}
