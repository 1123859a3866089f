"""Calibrated confidence for every verdict, and abstention on unsure alarms (docs/calibration.md).

- :mod:`.features` — features of a prediction and its evidence rows (pure, plus one read);
- :mod:`.encoding` — feature rows to a matrix; out-of-fold isotonic maps;
- :mod:`.model` — the per-label models (logistic or boosted trees), their JSON file and checks;
- :mod:`.trees` — gradient-boosted trees exported from scikit-learn, applied with numpy;
- :mod:`.apply` — the runner's step: confidence on each prediction, low-confidence alarms withheld;
- :mod:`.training` — targets from the matcher, leave-one-set-out evaluation, the threshold;
  ``ehrlib calibrate`` (:mod:`ehrlib.bench.calibrate`) runs the development sets, fits, writes the file.
"""
