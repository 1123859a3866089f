"""Every user-facing error is an EhrlibError; the former ValueErrors stay ValueErrors."""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import RecordError
from ehrlib.errors import ConfigError, EhrlibError, RunError
from ehrlib.llm.errors import LLMCallError, MalformedReply
from ehrlib.tools.env import ToolArgumentError
from ehrlib.tools.items import ItemKeyError
from ehrlib.tools.timespec import TimeSpecError


@pytest.mark.parametrize("cls", [RecordError, TimeSpecError, ToolArgumentError, ItemKeyError])
def test_input_errors_are_ehrlib_and_value_errors(cls):
    assert issubclass(cls, EhrlibError) and issubclass(cls, ValueError)
    assert cls("x").exit_code == 2


def test_run_failures_exit_1_and_input_errors_exit_2():
    assert issubclass(LLMCallError, RunError) and issubclass(MalformedReply, RunError)
    assert LLMCallError("down").exit_code == 1 and RunError("x").exit_code == 1
    assert ConfigError("x").exit_code == 2
