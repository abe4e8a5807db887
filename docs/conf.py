"""Sphinx configuration: `bash scripts/docs.sh` builds the site into docs/_build/html (warnings are errors).

Markdown pages (myst-parser), the API reference from the docstrings (autodoc, autosummary; the docstrings' ``name : text`` parameter
lines are read by docs/_ext/humanize_docstrings.py),
a gallery of runnable examples that draw figures (sphinx-gallery, executed at every build), and the
component catalogue generated from the registries (the ``catalogue`` directive, docs/_ext/humanize_catalogue.py).
"""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's humanize, not an installed copy elsewhere
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the examples use rule-based attacks and packaged data only
os.environ.setdefault("MPLBACKEND", "Agg")

import humanize  # noqa: E402

project = "humanize-bench"
author = "humanize-bench developers"
copyright = "humanize-bench developers, MIT licence"
release = version = humanize.__version__ if hasattr(humanize, "__version__") else "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx_gallery.gen_gallery",
    "humanize_catalogue",
    "humanize_docstrings",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "examples", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5"]

myst_heading_anchors = 4  # [text](page.md#a-heading) links, as on GitHub
myst_enable_extensions = ["colon_fence"]

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports = []
autosummary_generate = True

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "reset_modules": ("matplotlib",),
    "abort_on_example_error": True,
}

html_theme = "furo"
html_title = "humanize-bench"
html_static_path = ["_static"]
html_css_files = ["catalogue.css"]
pygments_style = "sphinx"
smartquotes = False  # commands and flags (--no-deps) stay as typed
autosummary_ignore_module_all = False  # a module's reference is its __all__

#: the public modules of the reference (docs/reference.md): a name one of them re-exports from another
#: is documented once, under the module it is defined in (docs/_ext/humanize_docstrings.py)
REFERENCE_MODULES = ("humanize.attacks", "humanize.detectors", "humanize.quality", "humanize.cost",
                     "humanize.generation", "humanize.defenses", "humanize.testing", "humanize.benchmarks",
                     "humanize.benchmarks.data", "humanize.benchmarks.evaluation", "humanize.models",
                     "humanize.exceptions")
import humanize_docstrings  # noqa: E402

humanize_docstrings.DOCUMENTED = REFERENCE_MODULES
