"""An ElementTree as an XML 1.0 document every parser accepts.

ElementTree escapes ``<``, ``&`` and quotes, but writes any other character
as it is, and XML 1.0 has no way to write most C0 controls (a terminal
escape, a bell), lone surrogates or U+FFFE / U+FFFF at all, not even as
character references: one such character in a deployment name, a
hand-edited lockfile value or an environment variable's value echoed in a
warning makes the whole JUnit file unreadable to the CI's report parser.
They are written as ``\\xNN`` / ``\\uNNNN``, as error lines write controls.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

# The complement of XML 1.0's Char production (tab, LF and CR are allowed).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written out."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100
                        else f"\\u{ord(m.group(0)):04x}", text)


def xml_document(root: ET.Element) -> str:
    """``root`` indented and serialized with its declaration, every text,
    tail and attribute value made writable first."""
    for el in root.iter():
        if el.text:
            el.text = xml_text(el.text)
        if el.tail:
            el.tail = xml_text(el.tail)
        for k, v in el.attrib.items():
            el.set(k, xml_text(v))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
