"""The `halo` command and everything that needs both sides of the system.

The top layer: the only package that may import the services (to start them in-process, to bench
them) and the apps (trainers, evaluation) together. Nothing below imports it.
"""
