"""The offline (rule-based) backend of every EHR-Inspector stage, and the surface baseline.

Importing this package registers the ``offline`` backend with
:func:`ehrlib.pipeline.stages.register_backend` (see :mod:`.register`).
"""
from __future__ import annotations

from ehrlib.pipeline.offline.register import offline_stages  # noqa: E402  (registers the backend)

__all__ = ["offline_stages"]
