"""Calibrated confidence for every verdict, and abstention on unsure alarms (docs/calibration.md).

- :mod:`.features` — features of a prediction and its evidence rows (pure, plus one read);
- :mod:`.model` — the per-label logistic + isotonic model, its JSON file and checks;
- :mod:`.apply` — the runner's step: confidence on each prediction, low-confidence alarms withheld;
- :mod:`.training` — targets from the matcher, leave-one-set-out evaluation, the threshold;
- :mod:`.refit` — ``ehrlib calibrate``: run the development sets, fit, write the file.
"""
