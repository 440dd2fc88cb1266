"""The lab's local web app: a FastAPI app and its static page."""
