"""The app's translations: update the .ts sources from the code, build the .qm files.

    python scripts/translations.py update   # pyside6-lupdate over the app's Qt code, plus the
                                            # call sentences' templates (context "Sentence")
    python scripts/translations.py build    # pyside6-lrelease: every .ts → its .qm
    python scripts/translations.py check    # every .qm says what its .ts says (packaging/build)

The .ts files (resources/i18n/desktop_agent_<language>.ts) are the sources, kept in git and
translated there; the .qm files built from them are committed beside them, so that a wheel
built from a checkout (without PySide6 in its build environment) ships them. See
docs/translations.md.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
I18N = ROOT / "resources" / "i18n"
SENTENCES = ROOT / "desktop_agent" / "core" / "sentences.py"
#: the code whose tr() / translate() texts lupdate reads
SOURCES = sorted([*(ROOT / "desktop_agent" / "ui").glob("*.py"), ROOT / "desktop_agent" / "app.py"])
#: the context of the call sentences' templates (core/sentences.CONTEXT)
CONTEXT = "Sentence"
#: the names in core/sentences.py that hold templates: the first argument of these calls,
#: the values of these tables, and the names assigned a template
_CALLS = {"_phrase", "Phrase", "_in_window"}
_TABLES = {"_ROLE_NOUNS", "_CLICK_VERBS"}
_ASSIGNED = {"template", "_GENERIC"}


def sentence_templates(path: Path = SENTENCES) -> list[str]:
    """Every template of core/sentences.py, in the order they appear there."""
    found: list[str] = []

    def strings(node: ast.AST | None) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.IfExp):
            return strings(node.body) + strings(node.orelse)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = strings(node.left), strings(node.right)
            return [a + b for a in left for b in right] if left and right else []
        return []

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "id", None)
            if name in _CALLS:
                found += strings(node.args[0])
            if name == "_in_window":  # it says the window when one is known
                found += [text + " in {window}" for text in strings(node.args[0])]
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {getattr(target, "id", None) for target in targets}
            if names & _TABLES and isinstance(node.value, ast.Dict):
                for value in node.value.values:
                    found += strings(value)
            elif names & _ASSIGNED:
                found += strings(node.value)
    return list(dict.fromkeys(found))


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found: install PySide6-Essentials (scripts/bootstrap)")
    return found


def update() -> None:
    for ts in sorted(I18N.glob("desktop_agent_*.ts")):
        kept = _sentence_messages(ts)
        subprocess.run(
            [
                _tool("pyside6-lupdate"),
                *map(str, SOURCES),
                "-no-obsolete",
                "-locations",
                "none",
                "-ts",
                str(ts),
            ],
            check=True,
        )
        _put_sentences(ts, kept)
        print(f"updated {ts.relative_to(ROOT)}")


def _sentence_messages(ts: Path) -> dict[str, ET.Element]:
    if not ts.exists():
        return {}
    for context in ET.parse(ts).getroot().iter("context"):
        if context.findtext("name") == CONTEXT:
            return {m.findtext("source") or "": m for m in context.iter("message")}
    return {}


def _put_sentences(ts: Path, kept: dict[str, ET.Element]) -> None:
    tree = ET.parse(ts)
    root = tree.getroot()
    for context in list(root.iter("context")):
        if context.findtext("name") == CONTEXT:
            root.remove(context)
    context = ET.SubElement(root, "context")
    ET.SubElement(context, "name").text = CONTEXT
    for text in sentence_templates():
        message = kept.get(text)
        if message is None:
            message = ET.Element("message")
            ET.SubElement(message, "source").text = text
            ET.SubElement(message, "translation", {"type": "unfinished"})
        context.append(message)
    ET.indent(tree, space="    ")
    body = ET.tostring(root, encoding="unicode")
    ts.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", encoding="utf-8"
    )


def build(out: Path = I18N) -> None:
    for ts in sorted(I18N.glob("desktop_agent_*.ts")):
        qm = out / ts.with_suffix(".qm").name
        subprocess.run([_tool("pyside6-lrelease"), "-silent", str(ts), "-qm", str(qm)], check=True)
        print(f"built {qm}")


def out_of_date(ts: Path) -> list[str]:
    """The messages of `ts` that its .qm does not translate as the .ts says (every one when
    there is no .qm): "context: source" each."""
    from PySide6.QtCore import QTranslator

    translator = QTranslator()
    qm = ts.with_suffix(".qm")
    loaded = qm.is_file() and translator.load(str(qm))
    wrong = []
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            source = message.findtext("source") or ""
            wanted = message.findtext("translation") or ""
            if not loaded or translator.translate(name, source) != wanted:
                wrong.append(f"{name}: {source}")
    return wrong


def check() -> None:
    for ts in sorted(I18N.glob("desktop_agent_*.ts")):
        wrong = out_of_date(ts)
        if wrong:
            raise SystemExit(
                f"{ts.with_suffix('.qm').relative_to(ROOT)} is older than its .ts "
                f"({len(wrong)} messages, first {wrong[0]!r}): python scripts/translations.py build"
            )


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "update":
        update()
    elif command == "build":
        build(Path(sys.argv[2]) if len(sys.argv) > 2 else I18N)
    elif command == "check":
        check()
    else:
        raise SystemExit("usage: scripts/translations.py update|build [OUT_DIR]|check")
