"""Every ```python block of README.md and docs/*.md runs, in order per page,
on the simulated GPU, so the snippets users copy stay true.

Blocks of one page share a namespace (a later block may use an earlier one's
names). Snippets that stand for the user's own code use `...`, `epochs`,
`loader`, `train_step` and `local_rank`; the harness gives those small
stand-ins. They run in a scratch folder (a snippet may write a file) that
sees the checkout's `data/`, so they can name data files as users do.
"""

from __future__ import annotations

import glob
import os
import re

import pytest

from conftest import SOURCE_DIR

BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def pages() -> list[str]:
    found = [os.path.join(SOURCE_DIR, "README.md")]
    found += sorted(glob.glob(os.path.join(SOURCE_DIR, "docs", "*.md")))
    return [p for p in found if BLOCK.search(open(p, encoding="utf-8").read())]


def test_the_pages_with_snippets_are_the_expected_ones():
    # A page losing its snippets (or a broken fence) must not silently empty this test.
    names = {os.path.relpath(p, SOURCE_DIR) for p in pages()}
    assert {"README.md", "docs/python.md", "docs/extending.md", "docs/chase.md"} <= names


@pytest.mark.parametrize("page", pages(), ids=lambda p: os.path.relpath(p, SOURCE_DIR))
def test_snippets_run(page, monkeypatch, capsys, tmp_path):
    os.symlink(os.path.join(SOURCE_DIR, "data"), tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    namespace = {
        "__name__": "__snippet__",
        "epochs": 2,
        "loader": range(3),
        "train_step": lambda batch: None,
        "local_rank": 0,
    }
    blocks = BLOCK.findall(open(page, encoding="utf-8").read())
    assert blocks
    for number, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"{os.path.basename(page)} block {number}", "exec"), namespace)
        except Exception as error:  # name the block, not just the line in it
            pytest.fail(f"{os.path.relpath(page, SOURCE_DIR)}, python block {number}: "
                        f"{type(error).__name__}: {error}\n{code}")
    capsys.readouterr()
