"""One module per action syntax a policy can be prompted for: its system prompt, writer and parser.

- `qwen`: Qwen3-VL's `computer_use` tool calls (0..1000 grid);
- `halo_json`: HALO's plain JSON objects (pixels);
- `browsergym`: BrowserGym's Python-call strings (pixels);
- `common`: the parse errors, argument checks and number writers they share.

`halo.agent.formats` (ActionFormat, SYSTEM_PROMPTS, format_action) and `halo.agent.parse`
(parse_action) dispatch to them.
"""
