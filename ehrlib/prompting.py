"""Prompt files (``ehrlib/prompts/*.txt``) and their loader, shared by every LLM caller.

A prompt is a ``string.Template`` file with ``$name`` placeholders. Its id is
``"<stem>@<sha8>"`` (sha8 of the file text): every record a prompt produces stores it,
so a changed prompt shows up in the run manifest and in each record it touched. The
pipeline, the LLM judge and the ontology builder all load prompts here, so none of them
has to import another to reuse the loader.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.resources
from dataclasses import dataclass
from string import Template

from ehrlib.errors import ConfigError

__all__ = ["PromptTemplate", "load_prompt", "get_prompt"]


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A prompt file with ``$name`` placeholders and its stable id ``<stem>@<sha8>``."""

    stem: str
    template: Template

    @property
    def prompt_id(self) -> str:
        digest = hashlib.sha256(self.template.template.encode("utf-8")).hexdigest()[:8]
        return f"{self.stem}@{digest}"

    def render(self, **values: str) -> str:
        try:
            return self.template.substitute(**values)
        except KeyError as exc:
            raise ConfigError(f"prompt {self.stem}: no value for placeholder {exc}") from None


def load_prompt(stem: str) -> PromptTemplate:
    """Load ``ehrlib/prompts/<stem>.txt`` from the installed package (ConfigError if absent)."""
    ref = importlib.resources.files("ehrlib").joinpath(f"prompts/{stem}.txt")
    if not ref.is_file():
        raise ConfigError(f"no prompt named {stem!r} in ehrlib/prompts")
    return PromptTemplate(stem, Template(ref.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=None)
def get_prompt(stem: str) -> PromptTemplate:
    """:func:`load_prompt`, read once per process (the files are part of the package)."""
    return load_prompt(stem)
