"""The `halo` command and everything that needs both sides of the system.

The top layer: the only package that may import the services (to start them in-process, to bench
them) and the apps (trainers, evaluation) together. Nothing below imports it.

A subcommand imports what it runs inside the function that runs it: `halo --help` and every
command load only their own heavy dependencies (Playwright, torch, transformers, tinker).
"""
