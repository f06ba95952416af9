"""Package layout only (metadata lives in pyproject.toml).

`halo` is one namespace package spread over two folders, so that imports read like the
architecture: clients/halo/{v1,client,agent,trainers} and services/halo/{env,reward,policy,
trainer,sites,runtime}. setuptools needs an explicit package -> folder map for that.
"""

from setuptools import find_namespace_packages, setup


def _packages(root: str) -> dict[str, str]:
    return {name: f"{root}/{name.replace('.', '/')}" for name in find_namespace_packages(root, include=["halo", "halo.*"])}


package_dir = {**_packages("services"), **_packages("clients")}
setup(packages=sorted(package_dir), package_dir=package_dir)
