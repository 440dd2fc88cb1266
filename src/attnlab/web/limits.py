"""``GET /api/limits``: the lab's limits (``attnlab.lab.limits``), so the page never writes its own."""

from __future__ import annotations

from fastapi import APIRouter

from attnlab.lab.limits import page_limits

router = APIRouter(prefix="/api", tags=["lab"])


@router.get("/limits")
def get_limits() -> dict:
    """The largest magnitude, the source counts, the token caps and the sampling ranges the lab takes."""
    return page_limits()
