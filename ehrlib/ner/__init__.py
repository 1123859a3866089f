"""The NER extraction baseline (paper §5.4, Appendix I): a trained token tagger that finds
statements in place of the framework's extraction, verification unchanged.

- :mod:`.bio` — tokens, gold spans <-> BIO tags;
- :mod:`.tagger` — features, training, greedy decoding, the pickle-free model file;
- :mod:`.training` — the training corpora and the manifest;
- :mod:`.extractor` — the ``extraction="ner"`` stage;
- :mod:`.evaluate` — leave-one-set-out against the framework's extraction;
- :mod:`.cli` — ``ehrlib train-ner`` and ``ehrlib eval-ner``.
"""
