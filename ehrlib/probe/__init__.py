"""Probes of what an LLM backbone knows before it uses any tool (paper Appendix L)."""
