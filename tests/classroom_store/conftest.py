"""The class store's tests run on SQLite and on a throwaway PostgreSQL (``classroomkit``)."""

from classroomkit import pg_cluster, pg_url  # noqa: F401 - fixtures
