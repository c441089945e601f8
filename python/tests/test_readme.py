"""The README's five-line Python example runs from the repository root and prints the
fixture's expected message."""

import json
import re
import subprocess
import sys

from conftest import FIXTURES, REPO, read_text


def test_readme_example_parses_the_fixture():
    readme = read_text(REPO / "README.md")
    section = readme[readme.index("## Python") :]
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(example.strip().splitlines()) == 5
    out = subprocess.run([sys.executable, "-c", example], cwd=REPO, capture_output=True, text=True, check=True)
    expected = json.loads(read_text(FIXTURES / "smollm3" / "tool-call.expected.json"))
    assert json.loads(out.stdout) == expected
