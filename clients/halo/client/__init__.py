from halo.client import fleet as _fleet  # noqa: F401  (registers the fleet client: EnvClient("a:1,b:2") is one)
