"""Started Pythons run this first while the fast-lane guard is on (``modelguard.py``)."""

import os

import modelguard

if os.environ.get(modelguard.ENV):
    modelguard.install(os.environ[modelguard.ENV])
modelguard.chain_sitecustomize()
