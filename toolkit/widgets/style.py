"""How the forms colour their lines: CSS classes (``ct-status-info``, ``ct-status-ok``,
``ct-status-error``) coloured by the JupyterLab theme's variables, one set for the light
theme and one for the dark (the page marks it on ``<body data-jp-theme-light=...>``): no
single variable is readable on both. Every form and the picker carry the style sheet
(:func:`style_sheet`); the fallbacks serve pages without a theme.

>>> print(coloured("3 item(s) <ok>", "error"))
<span class='ct-status-error'>3 item(s) &lt;ok&gt;</span>
>>> "data-jp-theme-light='false'" in CSS
True
"""

from __future__ import annotations

import html

import ipywidgets as w

#: The colours of the levels of a line: light theme (and no theme), then the dark theme.
CSS = """
.ct-status-info {color: var(--jp-ui-font-color1, inherit);}
.ct-status-ok {color: var(--jp-success-color0, #1b5e20);}
.ct-status-error {color: var(--jp-error-color0, #b71c1c);}
body[data-jp-theme-light='false'] .ct-status-ok {color: var(--jp-success-color1, #81c784);}
body[data-jp-theme-light='false'] .ct-status-error {color: var(--jp-error-color2, #e57373);}
"""

LEVELS: tuple[str, ...] = ("info", "ok", "error")


def coloured(text: str, level: str = "info") -> str:
    """``text`` (escaped) in a span of the level's CSS class, ``ct-status-<level>``."""
    level = level if level in LEVELS else "info"
    return f"<span class='ct-status-{level}'>{html.escape(text)}</span>"


def style_sheet() -> w.HTML:
    """The style sheet of the levels' colours, as a widget that takes no room (CSS class
    ``ct-style``)."""
    sheet = w.HTML(f"<style>{CSS}</style>", layout=w.Layout(display="none"))
    sheet.add_class("ct-style")
    return sheet


__all__ = ["CSS", "LEVELS", "coloured", "style_sheet"]
