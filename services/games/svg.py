"""Small helpers for the games' SVG pictures (``Game.picture``): built with xml.etree, so
every text is escaped and the same view gives the same bytes."""

from __future__ import annotations

import xml.etree.ElementTree as ET


def _fmt(value: object) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def element(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    """A child element; ``font_size`` becomes ``font-size``, floats get one decimal."""
    child = ET.SubElement(parent, tag, {k.replace("_", "-"): _fmt(v) for k, v in attrs.items()})
    child.text = text
    return child


def titled_group(parent: ET.Element, ident: str, title: str) -> ET.Element:
    """A ``<g>`` with a stable id and a ``<title>`` (what screen readers and tooltips say)."""
    group = element(parent, "g", id=ident)
    element(group, "title", title)
    return group
