"""The app in the students' language: English (the source text) and Brazilian Portuguese.

Translations are GNU gettext catalogues, ``sandbox/locale/<language>/LC_MESSAGES/*.po``, read by the small
pure-Python reader below (so nothing has to be compiled at build time; every ``.po`` file of a language is
merged into one catalogue, which lets each part of the app keep its own file). The source text is the
message id: an untranslated message shows in English, never as a key.

Use ``_("text")`` where a string is shown, at the moment it is shown, so that switching the language
(``set_language``) changes every label on the next frame without a restart. Text kept in module-level
tables is marked with ``N_("text")`` (which returns it unchanged, for the catalogue check) and passed
through ``_()`` when drawn. Formatted messages translate the pattern, then fill it:
``_("{n} bodies").format(n=n)``.

The language at start-up is, in order: ``set_language`` (the panel's Language box or ``--lang``), the
``SANDBOX_LANG`` environment variable, then the system locale (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``,
``LANG``); anything that is not Portuguese falls back to English.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

LOCALE_DIR = Path(__file__).parent / "locale"
SOURCE_LANGUAGE = "en"
LANGUAGES = {"en": "English", "pt_BR": "Português (Brasil)"}
"""Language code → its name in that language (what the Language box lists)."""

_catalogues: dict[str, dict[str, str]] = {}
_current: str | None = None


def _unquote(text: str) -> str:
    """The value of one C-style quoted .po string literal (``"..."``), escapes resolved."""
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise ValueError(f"expected a quoted string in the catalogue, got {text!r}")
    return ast.literal_eval(text)


def read_po(path: str | Path) -> dict[str, str]:
    """The translations of one gettext ``.po`` file as ``{msgid: msgstr}``: multi-line strings are joined,
    the header (empty msgid), untranslated entries (empty msgstr) and fuzzy entries are left out."""
    entries: dict[str, str] = {}
    msgid = msgstr = None
    field = None
    fuzzy = next_fuzzy = False

    def flush() -> None:
        if msgid and msgstr and not fuzzy:
            entries[msgid] = msgstr

    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        try:
            if not line:
                continue
            if line.startswith("#"):
                if line.startswith("#,") and "fuzzy" in line:
                    next_fuzzy = True
                continue
            if line.startswith("msgid "):
                flush()
                msgid, msgstr, field = _unquote(line[6:]), None, "id"
                fuzzy, next_fuzzy = next_fuzzy, False
            elif line.startswith("msgstr "):
                msgstr, field = _unquote(line[7:]), "str"
            elif line.startswith('"'):
                if field == "id":
                    msgid += _unquote(line)
                elif field == "str":
                    msgstr += _unquote(line)
                else:
                    raise ValueError("a string outside an entry")
            else:
                raise ValueError(f"unknown line {line[:40]!r}")
        except (ValueError, SyntaxError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    flush()
    return entries


def catalogue(language: str) -> dict[str, str]:
    """Every translation of ``language`` (all its ``.po`` files merged), read once; empty for English."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
    if language not in _catalogues:
        merged: dict[str, str] = {}
        for path in sorted((LOCALE_DIR / language / "LC_MESSAGES").glob("*.po")):
            merged.update(read_po(path))
        _catalogues[language] = merged
    return _catalogues[language]


def system_language(environ: dict[str, str] | None = None) -> str:
    """The language the environment asks for: ``SANDBOX_LANG``, then the POSIX locale variables;
    Portuguese of any country maps to ``pt_BR``, anything else to English."""
    env = os.environ if environ is None else environ
    for name in ("SANDBOX_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        for part in value.split(":"):
            code = part.split(".")[0].split("@")[0]
            if not code or code in ("C", "POSIX"):
                continue
            if code.lower().startswith("pt"):
                return "pt_BR"
            return SOURCE_LANGUAGE
    return SOURCE_LANGUAGE


def language() -> str:
    """The language now in use (its code, a key of ``LANGUAGES``)."""
    global _current
    if _current is None:
        _current = system_language()
    return _current


def set_language(code: str) -> None:
    """Switch every translated string to ``code`` from the next call of ``_`` on (no restart)."""
    global _current
    catalogue(code)  # refuses an unknown code and reads the catalogue before the switch
    _current = code


def _(text: str) -> str:
    """``text`` (an English source string) in the current language; itself when untranslated."""
    lang = language()
    if lang == SOURCE_LANGUAGE:
        return text
    return catalogue(lang).get(text, text)


def N_(text: str) -> str:
    """Mark ``text`` for translation without translating it now (module-level tables); pass it through
    ``_`` where it is shown."""
    return text
