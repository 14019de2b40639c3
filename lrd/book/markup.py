r"""Text that a user controls (a model name, a folder, a string parameter), written into the
book's MyST markdown so that it shows literally: never as markup, never as HTML.

MyST renders raw HTML found in markdown into the page (a folder named
``x<img src=1 onerror=alert(1)>`` ran its handler in the built chapter), and a backtick in a
name closed the code span or the fence around it. Each helper escapes for the place its text
lands in, by CommonMark's rules (https://spec.commonmark.org/0.31.2/):

* :func:`text` -- running text: ASCII punctuation backslash-escaped, ``/`` and ``,`` aside (any
  other may start a construct: ``<`` raw HTML, ``&`` an entity, ``{`` a role, ``$`` maths, ``[`` a
  link, ``:`` a colon fence), line endings as spaces;
* :func:`code` -- a code span, delimited by a backtick run longer than any inside it (a code
  span's content is literal; the renderer escapes its HTML);
* :func:`cell` -- a code span inside a pipe-table cell (``|`` escaped, as GFM tables need);
* :func:`fence` -- the backtick fence of a fenced block (a code block, a directive) that holds
  ``body``: longer than any backtick run in it, so no line of the body closes it.

Examples
--------
>>> print(text("x<img src=1 onerror=alert(1)>"))
x\<img src\=1 onerror\=alert\(1\)\>
>>> print(code("a`b"), code("`a"))
``a`b`` `` `a ``
>>> print(fence("```bash\nls\n```"))
````
"""

from __future__ import annotations

import re

#: ASCII punctuation that :func:`text` leaves alone: neither starts a MyST construct anywhere.
_PLAIN = "/,"
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
_LINE_ENDINGS = re.compile(r"\r\n|\r|\n")


def _one_line(value: object) -> str:
    return _LINE_ENDINGS.sub(" ", str(value))


def text(value: object) -> str:
    """``value`` as literal running text of one line (ASCII punctuation backslash-escaped)."""
    return _PUNCTUATION.sub(lambda m: m[0] if m[0] in _PLAIN else "\\" + m[0], _one_line(value))


def _longest_run(value: str, char: str = "`") -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", value)), default=0)


def code(value: object) -> str:
    """``value`` as one inline code span (line endings as spaces): the backtick string that
    delimits it is longer than any run of backticks inside, and a space pads content that starts
    or ends with a backtick (CommonMark strips one such space on each side)."""
    body = _one_line(value)
    if not body:
        return "` `"
    ticks = "`" * (_longest_run(body) + 1)
    pad = body[0] == "`" or body[-1] == "`" or (body[0] == " " and body[-1] == " " and body.strip() != "")
    return f"{ticks} {body} {ticks}" if pad else f"{ticks}{body}{ticks}"


def cell(value: object) -> str:
    """:func:`code` for a cell of a pipe table: a ``|`` would end the cell, inside a code span
    too, unless escaped (the table reads ``\\|`` as ``|``)."""
    return code(value).replace("|", "\\|")


def fence(body: str, *, at_least: int = 3) -> str:
    """The backtick fence for a fenced block holding ``body``: ``at_least`` backticks, or one
    more than the longest backtick run in ``body``."""
    return "`" * max(at_least, _longest_run(body) + 1)
