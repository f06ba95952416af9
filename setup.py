"""Package layout only (metadata lives in pyproject.toml).

`halo` is one namespace package spread over two folders, so that imports read like the
architecture (docs/design.md): clients/halo/ holds the SDK ({v1,errors,agent,client,runs}),
the apps ({rollout,trainers,evaluation}, with the embedded torch model in embedded/) and the
`halo` command (cli/); services/halo/ holds {runtime,sites,tasks} and the services {env,reward,
policy,trainer}. setuptools needs an explicit package -> folder map for that.
"""

from setuptools import find_namespace_packages, setup


def _packages(root: str) -> dict[str, str]:
    return {name: f"{root}/{name.replace('.', '/')}" for name in find_namespace_packages(root, include=["halo", "halo.*"])}


package_dir = {**_packages("services"), **_packages("clients")}
setup(packages=sorted(package_dir), package_dir=package_dir)
