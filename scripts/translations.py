"""The app's translations: update the .ts sources from the code, build the .qm files.

    python scripts/translations.py update   # pyside6-lupdate over the app's Qt code, plus the
                                            # call sentences' templates (context "Sentence"),
                                            # the command line's texts ("CLI"), argparse's
                                            # ("argparse") and core/model_servers' marked
                                            # texts ("ModelServers")
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
#: the command line's code (no Qt): the texts of its tr() and N_() calls, context "CLI"
#: (cli/words.py), and launch/'s; __main__.py says stop-all's line without importing the cli
#: package
CLI_SOURCES = sorted(
    [
        *(ROOT / "desktop_agent" / "cli").glob("*.py"),
        # the sub-commands the command line hands to another face (mcp, eval, calibrate)
        *(ROOT / "desktop_agent" / "launch").glob("*.py"),
        ROOT / "desktop_agent" / "__main__.py",
    ]
)
CLI_CONTEXT = "CLI"
#: argparse's own texts (usage, its errors), the msgids of its gettext calls
ARGPARSE_CONTEXT = "argparse"
#: what a look for model servers found and the ways to get one (core/model_servers.CONTEXT):
#: the texts of its `_t("…")` marks, shown by the window and the command line
MODEL_SERVERS = ROOT / "desktop_agent" / "core" / "model_servers.py"
MODEL_SERVERS_CONTEXT = "ModelServers"
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


def cli_texts(paths: list[Path] = CLI_SOURCES) -> list[str]:
    """The first argument of every `tr("…")` and `N_("…")` of the command line's code (and
    of `say(…, "CLI", "…", …)` in __main__.py), in the order they appear."""
    found: list[str] = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            arguments = node.args
            if name == "say" and len(arguments) >= 3:
                arguments = arguments[2:]
            elif name not in ("tr", "N_"):
                continue
            first = arguments[0] if arguments else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append(first.value)
    return list(dict.fromkeys(found))


def marked_texts(path: Path = MODEL_SERVERS) -> list[str]:
    """The text of every `_t("…")` of `path`, in the order they appear."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_t" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append(first.value)
    return list(dict.fromkeys(found))


def argparse_texts() -> list[str]:
    """The msgids of argparse's gettext calls (`_("…")`, both forms of `ngettext`) in the
    argparse of the Python running this."""
    import argparse

    found: list[str] = []
    for node in ast.walk(ast.parse(Path(argparse.__file__).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            count = {"_": 1, "ngettext": 2}.get(node.func.id, 0)
            for argument in node.args[:count]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    found.append(argument.value)
    return list(dict.fromkeys(found))


def extra_contexts() -> dict[str, list[str]]:
    """The texts lupdate does not find (code without Qt), by context."""
    return {
        CONTEXT: sentence_templates(),
        CLI_CONTEXT: cli_texts(),
        ARGPARSE_CONTEXT: argparse_texts(),
        MODEL_SERVERS_CONTEXT: marked_texts(),
    }


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found: install PySide6-Essentials (scripts/bootstrap)")
    return found


def update() -> None:
    for ts in sorted(I18N.glob("desktop_agent_*.ts")):
        kept = {name: _context_messages(ts, name) for name in extra_contexts()}
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
        _put_contexts(ts, kept)
        print(f"updated {ts.relative_to(ROOT)}")


def _context_messages(ts: Path, name: str) -> dict[str, ET.Element]:
    if not ts.exists():
        return {}
    for context in ET.parse(ts).getroot().iter("context"):
        if context.findtext("name") == name:
            return {m.findtext("source") or "": m for m in context.iter("message")}
    return {}


def _put_contexts(ts: Path, kept: dict[str, dict[str, ET.Element]]) -> None:
    """The contexts lupdate does not know, written again after it: each with the texts the
    code has now, the translations kept, a new text unfinished."""
    tree = ET.parse(ts)
    root = tree.getroot()
    contexts = extra_contexts()
    for context in list(root.iter("context")):
        if context.findtext("name") in contexts:
            root.remove(context)
    for name, texts in contexts.items():
        context = ET.SubElement(root, "context")
        ET.SubElement(context, "name").text = name
        for text in texts:
            message = kept[name].get(text)
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
