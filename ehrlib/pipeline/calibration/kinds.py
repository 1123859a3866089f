"""The calibrator model kinds, apart from the models (the CLI lists them without numpy)."""
from __future__ import annotations

__all__ = ["MODEL_KINDS", "DEFAULT_MODEL"]

#: the model kinds ``fit_calibrator`` and the file know
MODEL_KINDS = ("gbm", "logistic")
#: the kind ``ehrlib calibrate`` fits unless told otherwise (chosen leave-one-set-out, docs/calibration.md)
DEFAULT_MODEL = "gbm"
