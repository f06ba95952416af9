"""The policy gateway: one Sample API over vLLM, Tinker, OpenAI-compatible APIs and the embedded policy."""
