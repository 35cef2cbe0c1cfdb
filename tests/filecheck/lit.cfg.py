# lit configuration of Ziggurat's FileCheck tests (run by `make test` as `lit tests/filecheck`).
import os
import sys

import lit.formats

config.name = "ziggurat"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir", ".ts", ".test"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["inputs", "lit.cfg.py"]  # noqa: F821
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")  # noqa: F821
config.environment["PYTHONUNBUFFERED"] = "1"  # noqa: F821
config.substitutions.append(("%python", sys.executable))  # noqa: F821
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "inputs")))  # noqa: F821
