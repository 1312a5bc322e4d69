"""Package discovery only; all metadata lives in pyproject.toml.

`connectors/` and `state/` sit beside `streams_on_spark/` in the repo but install as
`streams_on_spark.connectors` and `streams_on_spark.state`. pyproject's declarative
`packages.find` cannot rename directories, so the package list is computed here.

Every directory under the three roots is a package, with or without `__init__.py`: that is
exactly what the editable install (`make setup`) can import, so a built wheel never ships less
than the tests saw, and new subpackages need no edit here. No top-level `connectors` or
`state` package is ever produced.
"""
from setuptools import find_namespace_packages, setup

ROOTS = {
    "streams_on_spark": "streams_on_spark",
    "streams_on_spark.connectors": "connectors",
    "streams_on_spark.state": "state",
}


def _packages():
    found = []
    for name, directory in ROOTS.items():
        found.append(name)
        subs = find_namespace_packages(directory, exclude=["__pycache__", "*.__pycache__"])
        found.extend(f"{name}.{sub}" for sub in subs)
    return sorted(set(found))


setup(packages=_packages())
