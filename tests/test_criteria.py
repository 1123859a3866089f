"""The clinical criteria shared by the note writer, the criterion tool and the offline rules."""
from __future__ import annotations

import pytest

from ehrlib.criteria import compare, criterion, criterion_holds, load_criteria
from ehrlib.errors import ConfigError


def test_operators_on_known_answers():
    assert criterion_holds(">=", 100.4, 100.4) and not criterion_holds("<", 90, 90)
    assert criterion_holds("<=", 7.0, 7.5) and criterion_holds(">", 101.0, 100.4)
    assert criterion_holds("~", 1.0, 1.0) is False  # an unknown operator holds for nothing
    assert compare(65.0, "<", 65.0) is False
    with pytest.raises(KeyError):
        compare(1.0, "~", 1.0)


def test_packaged_criteria_load_and_unknown_ids_are_config_errors():
    crits = load_criteria()
    assert crits and all(c.id == cid for cid, c in crits.items())
    with pytest.raises(ConfigError, match="unknown clinical criterion"):
        criterion("no_such_state")


def test_packaged_criteria_are_those_of_their_text():
    """The packaged criteria come from the document every reader of the file shares: the same
    criteria as parsing the file's text with the pure-Python safe loader.
    """
    from importlib import resources

    from ehrlib.criteria import CRITERIA_RESOURCE, parse_criteria

    text = resources.files("ehrlib").joinpath("data", CRITERIA_RESOURCE).read_text(encoding="utf-8")
    assert dict(load_criteria()) == dict(parse_criteria(text))
