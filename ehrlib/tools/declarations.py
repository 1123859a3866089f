"""Tool declarations for model backends, generated from the tools' signatures and docstrings.

``ehrlib.llm.tool_spec_from_function`` turns a typed function with a Google-style
docstring into a provider-neutral ToolSpec; here we render it for google-genai
(FunctionDeclaration with ``parameters_json_schema``) and for OpenAI-compatible servers
(``{"type": "function", "function": {...}}``). Snapshot tests pin the output, so a
docstring edit that changes what a model sees shows up in review.
"""
from __future__ import annotations

from typing import Any

from ehrlib.llm.records import ToolSpec, tool_spec_from_function

__all__ = ["tool_specs", "openai_tools", "genai_function_declarations"]


def tool_specs(toolset: Any) -> list[ToolSpec]:
    return [tool_spec_from_function(fn, name=name) for name, fn in toolset.tools.items()]


def openai_tools(toolset: Any) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` entries."""
    return [{"type": "function", "function": {"name": s.name, "description": s.description,
                                              "parameters": dict(s.parameters_json_schema)}}
            for s in tool_specs(toolset)]


def genai_function_declarations(toolset: Any) -> list[Any]:
    """google-genai ``types.FunctionDeclaration`` objects."""
    from google.genai import types  # deferred: google-genai is a heavy import; only the Gemini backend needs it

    return [types.FunctionDeclaration(name=s.name, description=s.description,
                                      parameters_json_schema=dict(s.parameters_json_schema))
            for s in tool_specs(toolset)]
